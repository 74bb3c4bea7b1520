//! Deterministic builder of synthetic v2 controls.
//!
//! The graphs the spec was written from are proprietary, so the lab makes its own: valid v2
//! images written in the producer's order (payloads, then the header CRC over normalized
//! payloads, then the section-40 values). Payload bytes come from SplitMix64 seeded by the
//! caller, implemented here so the bytes never change with a dependency's version.
//!
//! Sections whose record layout is public hold real, mutually consistent records (layers,
//! operations, SH operations, patches, and the coefficient / PPU-instruction / load-state index
//! tables), so the vendor's own reader walks them; command, coefficient, load-state and PPU
//! instruction payloads stay opaque seeded bytes.

mod graph;
mod profiles;

pub use graph::*;
pub use profiles::*;

use crate::nbg::crc_rules::{combine_v2_file_crc, v2_normalized_checksum_payload};
use crate::nbg::fieldmap::{self as fm, Overflow, Writer};
use crate::nbg::format::records::{self as rec, operation_type as op_type, source_type};
use crate::nbg::format::{MAGIC, V2_VERSION, section, v2 as f};

/// Why a build did not give an image: an unknown name, or a value that does not fit its field
/// (the field map's writer refuses it; the builder never truncates or zeroes it).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// No profile or capture set of that name.
    #[error("no builder profile or capture set is named `{0}`")]
    Unknown(String),
    /// A value the field map refused.
    #[error(transparent)]
    Overflow(#[from] Overflow),
    /// The writer failed (a streamed image only).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl BuildError {
    /// As an I/O error, for a caller that writes the image (a writer's own error unchanged).
    pub fn into_io(self) -> std::io::Error {
        match self {
            BuildError::Io(e) => e,
            e => std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
        }
    }
}

/// SplitMix64: tiny, fast and fixed forever, which is what a committed control needs.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64-bit word of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (bias is irrelevant for test data).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// `n` bytes: the next words of the stream, little-endian, the last one cut short.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

/// One section as the builder lays it out.
#[derive(Clone, Debug, PartialEq)]
pub struct SectionSpec {
    /// Section type (`format::section`), written to the directory entry.
    pub kind: u32,
    /// Payload alignment in bytes (0 or 1: none), written to the directory entry.
    pub alignment: u32,
    /// Record size in bytes (1 for opaque payloads), written to the directory entry.
    pub entry_size: u32,
    /// The payload bytes.
    pub payload: Vec<u8>,
}

/// A whole image before emission: sections in directory order plus their file placement.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// The header's hardware target (offset 0x08, also called product or CID).
    pub target: u32,
    /// The sections in directory (type) order.
    pub sections: Vec<SectionSpec>,
    /// Directory indices in the order their payloads appear in the file.
    pub file_order: Vec<usize>,
    /// Extra padding bytes placed before each payload (indexed like `file_order`), on top of
    /// what the section's alignment requires.
    pub extra_gap: Vec<u64>,
    /// Bytes after the last payload that no section owns.
    pub tail: Vec<u8>,
}

/// A section payload generated while it is written, never held: `len` bytes of
/// `Rng::new(seed).bytes(len)`, for images larger than memory should hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// Directory index of the section it fills (its `payload` in the layout is ignored).
    pub section: usize,
    /// Payload size in bytes.
    pub len: u64,
    /// Seed of the `Rng` stream the payload is.
    pub seed: u64,
}

/// Bytes generated per write; a multiple of 8, so chunks continue the same word stream.
const GENERATE_CHUNK: usize = 4 << 20;

impl Generated {
    /// The whole payload in memory (what `Layout::write` streams).
    pub fn bytes(&self) -> Vec<u8> {
        Rng::new(self.seed).bytes(self.len as usize)
    }

    /// Feed the payload to `f` in chunks.
    fn each_chunk(&self, mut f: impl FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
        let mut rng = Rng::new(self.seed);
        let mut left = self.len;
        while left > 0 {
            let n = left.min(GENERATE_CHUNK as u64) as usize;
            f(&rng.bytes(n))?;
            left -= n as u64;
        }
        Ok(())
    }
}

impl Layout {
    /// Write the image in producer order and return its bytes.
    pub fn emit(&self) -> Result<Vec<u8>, BuildError> {
        let mut out = Vec::new();
        self.write(&mut out, None)?;
        Ok(out)
    }

    /// Write the image in producer order to `w`, streaming: memory is the header, directory
    /// and the held payloads, never the `generated` one.
    pub fn write(
        &self,
        w: &mut impl std::io::Write,
        generated: Option<&Generated>,
    ) -> Result<(), BuildError> {
        let n = self.sections.len();
        let is_generated = |i: usize| generated.filter(|g| g.section == i);
        let len =
            |i: usize| is_generated(i).map_or(self.sections[i].payload.len() as u64, |g| g.len);
        let crcs: Vec<u32> = (0..n)
            .map(|i| match is_generated(i) {
                Some(g) => {
                    let mut h = crc32fast::Hasher::new();
                    // Invariant: `each_chunk` fails only when its callback does, and this one
                    // always returns `Ok`.
                    g.each_chunk(|c| {
                        h.update(c);
                        Ok(())
                    })
                    .expect("hashing cannot fail");
                    h.finalize()
                }
                None => crc32fast::hash(&self.sections[i].payload),
            })
            .collect();
        let dir_offset = (f::HEADER_SIZE as u32) + f::SUB_HEADER_SIZE;
        let head_len = u64::from(dir_offset) + n as u64 * u64::from(f::SECTION_HEADER_SIZE);
        let mut cursor = head_len;
        let mut offsets = vec![0u64; n];
        for (pos, &i) in self.file_order.iter().enumerate() {
            let s = &self.sections[i];
            cursor += self.extra_gap.get(pos).copied().unwrap_or(0);
            if s.alignment > 1 {
                cursor = cursor.next_multiple_of(u64::from(s.alignment));
            }
            offsets[i] = cursor;
            cursor += len(i);
        }
        let total = cursor + self.tail.len() as u64;

        let mut image = Vec::with_capacity(head_len as usize);
        let sub = {
            use fm::v2_sub_header as sh;
            let mut w = Writer::new(sh::SIZE);
            w.put_u32(&sh::section_headers_offset, dir_offset)
                .put_u32(&sh::section_header_size, f::SECTION_HEADER_SIZE)
                .put_u32(&sh::section_header_count, n as u32);
            w.finish()?
        };
        for (i, s) in self.sections.iter().enumerate() {
            use fm::v2_section_header as sh;
            let mut w = Writer::new(sh::SIZE);
            w.put_u32(&sh::kind, s.kind)
                .put_uint(&sh::offset, offsets[i])
                .put_uint(&sh::size, len(i))
                .put_u32(&sh::alignment, s.alignment)
                .put_u32(&sh::entry_size, s.entry_size);
            image.extend_from_slice(&w.finish()?);
        }
        // Producer order: header CRC over normalized payloads, then the section-40 values.
        let listing: Vec<_> = (0..n)
            .map(|i| (self.sections[i].kind, offsets[i], len(i), crcs[i]))
            .collect();
        let crc = combine_v2_file_crc(&listing, |_, _| {
            let checksum = self.sections.iter().find(|s| s.kind == section::CHECKSUM);
            crc32fast::hash(&v2_normalized_checksum_payload(
                checksum.map_or(&[][..], |c| &c.payload),
            ))
        });
        let header = {
            use fm::v2_header as h;
            let mut w = Writer::new(h::SIZE);
            w.put_bytes(&h::magic, &MAGIC)
                .put_u32(&h::version, V2_VERSION)
                .put_u32(&h::target, self.target)
                .put_u32(&h::crc_sum, crc)
                .put_u32(&h::total_size_low, total as u32)
                .put_u32(&h::total_size_high, (total >> 32) as u32)
                .put_u32(&h::sub_header_offset, f::HEADER_SIZE as u32)
                .put_u32(&h::sub_header_size, f::SUB_HEADER_SIZE)
                .put_u32(&h::sub_header_count, f::SUB_HEADER_COUNT);
            w.finish()?
        };
        w.write_all(&header)?;
        w.write_all(&sub)?;
        w.write_all(&image)?;

        let mut written = head_len;
        for &i in &self.file_order {
            let s = &self.sections[i];
            write_zeros(w, offsets[i] - written)?;
            match is_generated(i) {
                Some(g) => g.each_chunk(|c| w.write_all(c))?,
                None if s.kind == section::CHECKSUM => {
                    use fm::v2_checksum_record as c;
                    let mut payload = s.payload.clone();
                    for r in payload.chunks_exact_mut(c::SIZE) {
                        let Some(v) = fm::View::new(&c::RECORD, r) else {
                            continue;
                        };
                        let kind = v.u32(&c::section_type);
                        if let Some(t) = self.sections.iter().position(|s| s.kind == kind) {
                            r[c::checksum_value.offset..c::checksum_value.end()]
                                .copy_from_slice(&crcs[t].to_le_bytes());
                        }
                    }
                    w.write_all(&payload)?;
                }
                None => w.write_all(&s.payload)?,
            }
            written = offsets[i] + len(i);
        }
        Ok(w.write_all(&self.tail)?)
    }
}

fn write_zeros(w: &mut impl std::io::Write, mut n: u64) -> std::io::Result<()> {
    const ZEROS: [u8; 4096] = [0; 4096];
    while n > 0 {
        let k = n.min(ZEROS.len() as u64) as usize;
        w.write_all(&ZEROS[..k])?;
        n -= k as u64;
    }
    Ok(())
}
