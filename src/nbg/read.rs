//! Bounds-checked little-endian reads over file bytes, in memory or from a file.
//!
//! Every read names the file offset it needed, so a short file fails with `truncated` at the
//! exact place instead of panicking. Over a file, reads are positioned reads of exactly the
//! bytes asked for, so the parser holds only what it decodes, never the payload.

use crate::nbg::crc_index::Flip;
use crate::nbg::failure::{Code, Failure};
use crate::nbg::stream::FileSource;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Where the parser reads from.
#[derive(Clone, Debug)]
pub enum Source<'data> {
    /// The whole file, borrowed.
    Memory(&'data [u8]),
    /// A file read with positioned reads.
    File(Arc<FileSource>),
}

/// A view of file bytes with checked accessors.
#[derive(Clone, Debug)]
pub struct Data<'data> {
    source: Source<'data>,
    /// When the bytes are a one-byte flip of an indexed base: range CRCs without a pass.
    flip: Option<Flip<'data>>,
    /// Where every read is noted, when a sweep asks which bytes a parse reads.
    reads: Option<&'data ReadLog>,
    /// Which stage of the parse reads through this view (noted with every read).
    stage: Stage,
    /// Bytes read, added up when a sweep counts the work of its reparses.
    work: Option<&'data AtomicU64>,
}

/// The stage of a parse a read belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stage {
    /// Every rule but the records'.
    #[default]
    Rules,
    /// Layers, operations, SH, SW, hardware-init and PPU parameter records and their
    /// references (`records::check`): in check-only mode nothing after it reads what it read,
    /// so a flip only it reads is judged by it alone (`NbgFamily::recheck_records`).
    Records,
}

/// The byte ranges a parse read through a `Data`, other than for a CRC or hash, by stage: a
/// byte outside all of them decides nothing but checksums, so a flip of it needs no new parse
/// of the rest.
#[derive(Debug, Default)]
pub struct ReadLog(Mutex<Vec<(u64, u64, Stage)>>);

impl ReadLog {
    fn note(&self, start: u64, end: u64, stage: Stage) {
        // A poisoned log still holds whole entries.
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((start, end, stage));
    }

    /// One bit per byte of a file of `len` bytes and per stage: set where some read of the
    /// stage covered it (`Stage::Rules`, then `Stage::Records`).
    pub fn into_maps(self, len: u64) -> [ReadMap; 2] {
        let mut bits = [0, 1].map(|_| vec![0u64; (len as usize).div_ceil(64)]);
        for (s, e, stage) in self.0.into_inner().unwrap_or_else(|p| p.into_inner()) {
            let map = &mut bits[usize::from(stage == Stage::Records)];
            for o in s.min(len)..e.min(len) {
                map[(o / 64) as usize] |= 1 << (o % 64);
            }
        }
        bits.map(ReadMap)
    }
}

/// Which bytes a parse read (`ReadLog::into_map`).
#[derive(Debug)]
pub struct ReadMap(Vec<u64>);

impl ReadMap {
    /// Whether the byte at `offset` was read (true past the end: nothing is claimed there).
    pub fn read(&self, offset: u64) -> bool {
        self.0
            .get((offset / 64) as usize)
            .is_none_or(|w| w >> (offset % 64) & 1 == 1)
    }
}

/// Bytes handed to a visitor at once when walking a range of a file.
const VISIT_BYTES: u64 = 1 << 20;

impl<'data> Data<'data> {
    /// A view of a file held whole in memory.
    pub fn new(bytes: &'data [u8]) -> Self {
        Data {
            source: Source::Memory(bytes),
            flip: None,
            reads: None,
            stage: Stage::Rules,
            work: None,
        }
    }

    /// A view of `bytes` that notes every read in `log`.
    pub fn recording(bytes: &'data [u8], log: &'data ReadLog) -> Self {
        Data {
            source: Source::Memory(bytes),
            flip: None,
            reads: Some(log),
            stage: Stage::Rules,
            work: None,
        }
    }

    /// A view of `bytes`, a one-byte flip of `flip`'s base: every range CRC comes from the
    /// base's index (`Data::crc32`, the check-only fingerprints) instead of a pass.
    pub fn flipped(bytes: &'data [u8], flip: Flip<'data>) -> Self {
        Data {
            source: Source::Memory(bytes),
            flip: Some(flip),
            reads: None,
            stage: Stage::Rules,
            work: None,
        }
    }

    /// This view, adding every byte it reads to `work` (the sweep's deterministic work count:
    /// what its reparses read, whatever the machine).
    pub fn counting(self, work: &'data AtomicU64) -> Self {
        Data {
            work: Some(work),
            ..self
        }
    }

    /// This view, its reads noted as `stage`'s.
    pub fn staged(&self, stage: Stage) -> Self {
        Data {
            stage,
            ..self.clone()
        }
    }

    /// Note a read of `[start, end)` in the log and the work count.
    fn note(&self, start: u64, end: u64) {
        if let Some(log) = self.reads {
            log.note(start, end, self.stage);
        }
        if let Some(w) = self.work {
            w.fetch_add(end - start, Ordering::Relaxed);
        }
    }

    /// The flip these bytes are, if any.
    pub fn flip(&self) -> Option<&Flip<'data>> {
        self.flip.as_ref()
    }

    /// A file read with positioned reads; I/O errors are kept by `file` and reported by the
    /// caller as input errors, never as NBG failures.
    pub fn file(file: Arc<FileSource>) -> Data<'static> {
        Data {
            source: Source::File(file),
            flip: None,
            reads: None,
            stage: Stage::Rules,
            work: None,
        }
    }

    /// The whole file when it is in memory (a read of every byte).
    pub fn memory(&self) -> Option<&'data [u8]> {
        self.note(0, self.len());
        self.held()
    }

    /// The whole file when it is in memory, for a parsed graph to keep for later commands:
    /// not a read by the parse.
    pub fn held(&self) -> Option<&'data [u8]> {
        match &self.source {
            Source::Memory(b) => Some(b),
            Source::File(_) => None,
        }
    }

    /// Where reads go: memory or a file.
    pub fn source(&self) -> &Source<'data> {
        &self.source
    }

    /// The file size in bytes.
    pub fn len(&self) -> u64 {
        match &self.source {
            Source::Memory(b) => b.len() as u64,
            Source::File(f) => f.len(),
        }
    }

    /// Whether the file has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `len` bytes at `offset`, or `truncated` naming what was being read. Callers bound `len`
    /// before asking: over a file this allocates `len` bytes.
    pub fn slice(&self, offset: u64, len: u64, what: &str) -> Result<Cow<'data, [u8]>, Failure> {
        let end = offset.checked_add(len);
        match end {
            Some(end) if end <= self.len() => Ok(self.range(offset, end)),
            _ => Err(Failure::new(
                Code::Truncated,
                offset,
                format!(
                    "{what} needs {len} bytes at 0x{offset:x} but the file has {} bytes",
                    self.len()
                ),
            )),
        }
    }

    /// Bytes `[start, end)`, already known to lie inside the file.
    pub fn range(&self, start: u64, end: u64) -> Cow<'data, [u8]> {
        self.note(start, end);
        match &self.source {
            Source::Memory(b) => Cow::Borrowed(&b[start as usize..end as usize]),
            Source::File(f) => {
                let mut buf = vec![0; (end - start) as usize];
                f.read_at_or_note(start, &mut buf);
                Cow::Owned(buf)
            }
        }
    }

    /// Walk `[start, end)` (inside the file) in pieces of at most 1 MiB that start at multiples
    /// of `align` bytes from `start`; `f` gets each piece's file offset. In memory, one piece.
    pub fn visit<E>(
        &self,
        start: u64,
        end: u64,
        align: u64,
        mut f: impl FnMut(u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.note(start, end);
        if let Source::Memory(b) = &self.source {
            return f(start, &b[start as usize..end as usize]);
        }
        let step = (VISIT_BYTES / align).max(1) * align;
        let mut at = start;
        while at < end {
            let next = end.min(at + step);
            f(at, &self.range(at, next))?;
            at = next;
        }
        Ok(())
    }

    /// CRC-32 of `[start, end)` (inside the file); a checksum, not noted as a read.
    pub fn crc32(&self, start: u64, end: u64) -> u32 {
        if let Some(f) = &self.flip {
            return f.range(start, end);
        }
        if let Source::Memory(b) = &self.source {
            return crate::nbg::fingerprint::crc32(&b[start as usize..end as usize]);
        }
        let mut h = crc32fast::Hasher::new();
        let _ = self.visit(start, end, 1, |_, p| {
            h.update(p);
            Ok::<(), ()>(())
        });
        h.finalize()
    }

    /// The little-endian u32 at `offset`, or `truncated` naming `what`.
    pub fn u32(&self, offset: u64, what: &str) -> Result<u32, Failure> {
        let b = self.slice(offset, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// A file offset or length as an index into the bytes: every one the parser hands out is
/// bounded by the file it read, so it fits; one that does not saturates, and the access through
/// `get` that follows finds nothing.
pub fn index(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Little-endian u32 at `offset` of a buffer nobody has checked, when it holds one (a header
/// word of a file nbg may refuse).
pub fn le32_at(bytes: &[u8], offset: usize) -> Option<u32> {
    let w = bytes.get(offset..offset.checked_add(4)?)?;
    Some(le32(w, 0))
}

/// Little-endian u32 at `offset` inside an already bounds-checked record.
pub fn le32(record: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes([
        record[offset],
        record[offset + 1],
        record[offset + 2],
        record[offset + 3],
    ])
}

/// Compose a 64-bit value from its low and high words.
pub fn compose64(low: u32, high: u32) -> u64 {
    (u64::from(high) << 32) | u64::from(low)
}

/// A NUL-terminated strict UTF-8 name inside a fixed field and the bytes after its NUL;
/// `None` when invalid.
pub fn fixed_name(field: &[u8]) -> Option<(&str, NameTail)> {
    fixed_text(field).map(|(text, tail)| (text, NameTail(tail.to_vec())))
}

/// `fixed_name` borrowed: the text and the bytes after its NUL, nothing copied (a check that
/// keeps no name allocates nothing).
pub fn fixed_text(field: &[u8]) -> Option<(&str, &[u8])> {
    let nul = field.iter().position(|&b| b == 0)?;
    let text = std::str::from_utf8(&field[..nul]).ok()?;
    Some((text, &field[nul + 1..]))
}

/// The bytes a fixed-width name field holds after its terminating NUL. Producers leave old
/// bytes there (a real Realtek 0x0001000e network name does), so they are kept whole and
/// re-encoded exactly; JSON shows them as lowercase hex, only when one is non-zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameTail(pub Vec<u8>);

impl NameTail {
    /// Whether every byte after the NUL is zero (the usual NUL padding).
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&b| b == 0)
    }
}

impl serde::Serialize for NameTail {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::digest::hex(&self.0))
    }
}
