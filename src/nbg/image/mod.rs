//! `NbgImage`: one owner for every byte from 0 to EOF, and lossless re-emission.
//!
//! Built from a successful parse, the ledger assigns each byte exactly one owner class
//! (`decoded-record`, `alignment`, `padding`, `preserved-opaque`, `connection-tail`) and keeps
//! non-owning views (`section-covered-view` over the final 512 bytes when owners already hold
//! them, `nested-reference` for table entries that point into another table's data). The
//! constructor proves that owners are sorted, contiguous, non-overlapping and cover exactly
//! `[0, file size)`; it returns a failure, never an image, when it cannot.
//!
//! Emission concatenates the owned ranges of the source and verifies length and SHA-256 (and,
//! for an image in memory, every byte). An image over a file (`NbgImage::from_file`) holds
//! ranges, never the payload: padding is checked and emission streamed with positioned reads
//! of at most 1 MiB, and its SHA-256 is compared with the parse's own streamed pass. A semantic
//! change turns the image into a `ChangedImage`, a different type that can be hashed and
//! compared but has no way to produce bytes for a file: its `emit` always returns
//! `EmitError::SemanticChange`.
//!
//! Gap convention: in the gap before a section with a declared alignment `a > 1` whose offset
//! is a multiple of `a`, the first `align_up(previous end, a) - previous end` bytes are
//! `alignment` (the minimum the declaration requires); every other unowned byte is `padding`.
//! v1 declares no alignments, so its gaps are padding.

mod gaps;

use gaps::*;

use crate::digest::Hash256;
use crate::nbg::failure::{Code, Failure, fail};
use crate::nbg::family::NbgFamily;
use crate::nbg::family::{Origin, Owner, OwnerClass, View, ViewClass};
use crate::nbg::format::CONNECTION_REGION_SIZE;
use crate::nbg::parse::Graph;
use crate::nbg::read::{Data, Source};
use crate::nbg::stream::FileSource;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, OnceLock};

/// Result of re-emitting an unchanged image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reconstruction {
    /// Always true: a reconstruction exists only when emission matched the source.
    pub identical: bool,
    /// SHA-256 of the emitted bytes.
    pub sha256: Hash256,
    /// Bytes emitted.
    pub bytes: u64,
}

/// Why emission was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EmitError {
    /// The image carries a semantic-change marker; it may be hashed, never emitted.
    SemanticChange {
        /// The markers of every change made, in order.
        changes: Vec<String>,
    },
    /// The concatenated owned ranges differ from the source (length, a byte, or the hash).
    NotIdentical {
        /// Where the difference was found (0 for a hash mismatch).
        offset: u64,
        /// `length`, `byte` or `sha256`.
        what: &'static str,
    },
    /// Reading the source file or writing the emitted bytes failed.
    Io {
        /// The I/O error, with the file it concerns.
        message: String,
    },
}

impl std::fmt::Display for EmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmitError::SemanticChange { changes } => {
                write!(
                    f,
                    "emission refused after a semantic change ({})",
                    changes.join("; ")
                )
            }
            EmitError::NotIdentical { offset, what } => {
                write!(
                    f,
                    "reconstruction differs from the source at 0x{offset:x} ({what})"
                )
            }
            EmitError::Io { message } => write!(f, "emission failed: {message}"),
        }
    }
}

impl std::error::Error for EmitError {}

/// An immutable, fully owned view of one NBG's bytes.
#[derive(Debug)]
pub struct NbgImage<'data> {
    /// The bytes in memory, or the file they are read from.
    source: Data<'data>,
    /// SHA-256 of the whole file: the parse's streamed pass for a file image, set when built;
    /// hashed once, when first asked, for an image in memory.
    sha256: OnceLock<Hash256>,
    format: &'static str,
    owners: Vec<Owner>,
    views: Vec<View>,
    /// The re-emission's result, computed once (the image never changes).
    reconstruction: OnceLock<Result<Reconstruction, EmitError>>,
}

impl<'data> NbgImage<'data> {
    /// Build and prove the ledger of a graph parsed from bytes in memory.
    pub fn new(graph: &Graph<'data>) -> Result<Self, Failure> {
        Self::build(graph, Data::new(graph.bytes()))
    }

    /// Build and prove the ledger of a graph parsed from `file` (`open::parse_source`): the
    /// image holds ranges, not bytes. I/O errors are kept by `file` (see `FileSource::error`);
    /// the caller reports them as input errors.
    pub fn from_file(
        graph: &Graph<'_>,
        file: Arc<FileSource>,
    ) -> Result<NbgImage<'static>, Failure> {
        let image = NbgImage::build(graph, Data::file(file))?;
        // Invariant: `build` left the cell empty, so setting it cannot fail.
        let _ = image.sha256.set(graph.file().sha256);
        Ok(image)
    }

    fn build(graph: &Graph<'_>, source: Data<'data>) -> Result<Self, Failure> {
        let claims = graph.claims(&|at, len| source.slice(at, len, "coefficients").ok());
        let mut views = graph.views();
        let owners = fill_gaps(&source, claims)?;
        prove(&owners, source.len())?;
        if let Some(v) = connection_view(&owners, source.len()) {
            views.push(v);
        }
        views.sort_by(|a, b| (a.start, a.end, &a.label).cmp(&(b.start, b.end, &b.label)));
        Ok(NbgImage {
            source,
            sha256: OnceLock::new(),
            format: graph.format(),
            owners,
            views,
            reconstruction: OnceLock::new(),
        })
    }

    /// The family's format name (`nbg-v1`, `nbg-v2`).
    pub fn format(&self) -> &'static str {
        self.format
    }

    /// The ledger: sorted, contiguous owners covering `[0, len)`.
    pub fn owners(&self) -> &[Owner] {
        &self.owners
    }

    /// The non-owning views, sorted by range and label.
    pub fn views(&self) -> &[View] {
        &self.views
    }

    /// The file size in bytes.
    pub fn len(&self) -> u64 {
        self.source.len()
    }

    /// Whether the file is empty (never true for a parsed graph).
    pub fn is_empty(&self) -> bool {
        self.source.is_empty()
    }

    /// The source bytes `[start, end)` clipped to the file: borrowed from memory, or read from
    /// the file.
    pub fn range(&self, start: u64, end: u64) -> std::borrow::Cow<'data, [u8]> {
        let end = end.min(self.len());
        self.source.range(start.min(end), end)
    }

    /// SHA-256 of the whole source file.
    pub fn sha256(&self) -> Hash256 {
        *self.sha256.get_or_init(|| {
            let mut sha = Sha256::new();
            let _ = self.source.visit(0, self.len(), 1, |_, piece| {
                sha.update(piece);
                Ok::<(), ()>(())
            });
            Hash256(sha.finalize().into())
        })
    }

    /// The owner of an in-file byte (binary search over the proved ledger). Infallible: the
    /// ledger covers every byte of the file; an offset at or past the end, which no caller
    /// passes, gets the last owner.
    pub fn owner_of(&self, offset: u64) -> &Owner {
        let i = self.owners.partition_point(|o| o.end <= offset);
        // invariant: `new` is the only constructor; it parsed the file (at least the 4-byte
        // magic) and `prove` checked that the owners cover [0, len) contiguously, so `owners`
        // is not empty and `len() - 1` does not underflow.
        &self.owners[i.min(self.owners.len() - 1)]
    }

    /// Bytes per owner class, every class listed.
    pub fn totals(&self) -> BTreeMap<&'static str, u64> {
        let mut t: BTreeMap<&'static str, u64> =
            OwnerClass::ALL.iter().map(|c| (c.as_str(), 0)).collect();
        for o in &self.owners {
            *t.entry(o.class.as_str()).or_insert(0) += o.len();
        }
        t
    }

    /// Concatenate the owned ranges in memory and prove the result is the source: length,
    /// SHA-256 and, for an image in memory, every byte.
    pub fn emit(&self) -> Result<Vec<u8>, EmitError> {
        let mut out = Vec::with_capacity(usize::try_from(self.len()).unwrap_or(0));
        self.emit_to(&mut out)?;
        if let Some(source) = self.source.memory() {
            if let Some(i) = first_difference(&out, source) {
                return Err(EmitError::NotIdentical {
                    offset: i,
                    what: "byte",
                });
            }
        }
        Ok(out)
    }

    /// Stream the owned ranges, in ledger order, into `out` (pieces of at most 1 MiB from a
    /// file) and prove the stream is the source: its length and its SHA-256, against the
    /// file's own hash.
    pub fn emit_to(&self, out: &mut impl Write) -> Result<Reconstruction, EmitError> {
        let mut sha = Sha256::new();
        let mut bytes = 0u64;
        for o in &self.owners {
            self.source.visit(o.start, o.end, 1, |_, piece| {
                sha.update(piece);
                bytes += piece.len() as u64;
                out.write_all(piece).map_err(|e| EmitError::Io {
                    message: e.to_string(),
                })
            })?;
        }
        if let Source::File(file) = self.source.source() {
            if let Some(e) = file.error() {
                return Err(EmitError::Io {
                    message: e.to_string(),
                });
            }
        }
        if bytes != self.len() {
            return Err(EmitError::NotIdentical {
                offset: bytes.min(self.len()),
                what: "length",
            });
        }
        let sha256 = Hash256(sha.finalize().into());
        if sha256 != self.sha256() {
            return Err(EmitError::NotIdentical {
                offset: 0,
                what: "sha256",
            });
        }
        Ok(Reconstruction {
            identical: true,
            sha256,
            bytes,
        })
    }

    /// Emit without keeping the bytes, and summarize for reports (once per image).
    pub fn reconstruction(&self) -> Result<Reconstruction, EmitError> {
        self.reconstruction
            .get_or_init(|| self.emit_to(&mut std::io::sink()))
            .clone()
    }

    /// Start a semantic change: the result is a `ChangedImage`, which can never be emitted. An
    /// image over a file reads the file into memory here: changes are made in memory only.
    pub fn change(&self, marker: impl Into<String>) -> ChangedImage {
        ChangedImage {
            bytes: self.source.range(0, self.len()).into_owned(),
            changes: vec![marker.into()],
        }
    }

    /// The ledger as JSON: `owners`, `views`, `totals`, `reconstruction`.
    pub fn to_json(&self) -> serde_json::Value {
        let reconstruction = match self.reconstruction() {
            Ok(r) => serde_json::json!({
                "identical": r.identical,
                "sha256": r.sha256,
                "bytes": r.bytes,
            }),
            Err(e) => serde_json::json!({ "identical": false, "error": e.to_string() }),
        };
        serde_json::json!({
            "format": self.format,
            "file": { "size": self.len(), "sha256": self.sha256() },
            "owners": self.owners,
            "views": self.views,
            "totals": self.totals(),
            "reconstruction": reconstruction,
        })
    }
}

/// First offset where two byte strings differ, or where the shorter one ends.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<u64> {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => Some(i as u64),
        None if a.len() != b.len() => Some(a.len().min(b.len()) as u64),
        None => None,
    }
}

/// A derived value `ChangedImage::reseal` wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sealed {
    /// A v2 section-40 value, over the section of type `section_type`.
    SectionChecksum {
        /// The covered section's type.
        section_type: u32,
        /// File offset of the value.
        at: u64,
        /// The value written.
        value: u32,
    },
    /// The header's file CRC.
    FileCrc {
        /// File offset of the field.
        at: u64,
        /// The value written.
        value: u32,
    },
}

/// An image after a semantic change: comparable and hashable, never emitted.
#[derive(Clone, Debug)]
pub struct ChangedImage {
    bytes: Vec<u8>,
    changes: Vec<String>,
}

impl ChangedImage {
    /// Overwrite bytes in memory, recording why.
    pub fn write(
        &mut self,
        offset: u64,
        new: &[u8],
        marker: impl Into<String>,
    ) -> Result<(), Failure> {
        let end = offset
            .checked_add(new.len() as u64)
            .filter(|&e| e <= self.bytes.len() as u64);
        let Some(end) = end else {
            return fail(Code::Truncated, offset, "change leaves the image");
        };
        self.bytes[offset as usize..end as usize].copy_from_slice(new);
        self.changes.push(marker.into());
        Ok(())
    }

    /// Recompute by `g`'s recovered rules (`g` is the graph these bytes were changed from) the
    /// checksums the changed ranges `touched` invalidate, in the producer's order: with
    /// `sections`, each section-40 value whose payload overlaps a touched range; then, with
    /// `file`, the file CRC, which the whole-file rule computes over those values. Returns each
    /// value written (the parser bounded their places inside the file).
    pub fn reseal(
        &mut self,
        g: &Graph<'_>,
        touched: &[(u64, u64)],
        sections: bool,
        file: bool,
    ) -> Vec<Sealed> {
        let mut sealed = Vec::new();
        if sections {
            for c in g.derived_checksums() {
                let (start, end) = c.target;
                if touched.iter().any(|&(s, e)| start < e && s < end) {
                    let value = self.crc32_range(start, end);
                    if self
                        .write(c.value_at, &value.to_le_bytes(), "section-40 value")
                        .is_ok()
                    {
                        sealed.push(Sealed::SectionChecksum {
                            section_type: c.section_type,
                            at: c.value_at,
                            value,
                        });
                    }
                }
            }
        }
        let rule = g.crc_rule();
        if let Some(value) = file.then(|| g.file_crc(&self.bytes)).flatten()
            && self
                .write(rule.field, &value.to_le_bytes(), rule.field_name)
                .is_ok()
        {
            sealed.push(Sealed::FileCrc {
                at: rule.field,
                value,
            });
        }
        sealed
    }

    /// The recovered v2 header CRC over the changed bytes; `sections` lists
    /// (type, offset, size) in directory order.
    pub fn v2_file_crc(&self, sections: &[(u32, u64, u64)]) -> u32 {
        let listing: Vec<_> = sections
            .iter()
            .map(|&(kind, offset, size)| {
                let payload = &self.bytes[offset as usize..(offset + size) as usize];
                (kind, offset, size, crate::nbg::fingerprint::crc32(payload))
            })
            .collect();
        crate::nbg::crc_rules::v2_file_crc(&self.bytes, &listing)
    }

    /// The changed bytes, for the family's CRC rule (`NbgFamily::file_crc`).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// CRC-32 of a range of the changed bytes (a section-40 value's target).
    pub fn crc32_range(&self, start: u64, end: u64) -> u32 {
        crate::nbg::fingerprint::crc32(&self.bytes[start as usize..end as usize])
    }

    /// The v1 rule: CRC-32 of the whole changed image with the field read as zero.
    pub fn whole_file_field_zeroed(&self, field: u64) -> u32 {
        crate::nbg::crc_rules::whole_file_field_zeroed(&self.bytes, field)
    }

    /// SHA-256 of the changed bytes.
    pub fn sha256(&self) -> Hash256 {
        Hash256::of(&self.bytes)
    }

    /// Size of the changed image in bytes.
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Whether the changed image is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The markers of every change made, in order.
    pub fn changes(&self) -> &[String] {
        &self.changes
    }

    /// First offset where the changed bytes differ from `other`.
    pub fn first_difference(&self, other: &[u8]) -> Option<u64> {
        first_difference(&self.bytes, other)
    }

    /// Always refused: a changed image has no emission path.
    pub fn emit(&self) -> Result<Vec<u8>, EmitError> {
        Err(EmitError::SemanticChange {
            changes: self.changes.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nbg::family::claim;

    fn o(start: u64, end: u64) -> Owner {
        Owner {
            start,
            end,
            class: OwnerClass::Padding,
            label: "x".into(),
            origin: Origin::Gap,
            all_zero: None,
            undecoded: None,
        }
    }

    #[test]
    fn proof_refuses_gaps_overlaps_empties_and_short_ledgers() {
        assert!(prove(&[o(0, 4), o(4, 8)], 8).is_ok());
        for (owners, size) in [
            (vec![o(0, 4), o(5, 8)], 8),
            (vec![o(0, 4), o(3, 8)], 8),
            (vec![o(0, 4), o(4, 4), o(4, 8)], 8),
            (vec![o(0, 4)], 8),
            (vec![o(1, 8)], 8),
        ] {
            let f = prove(&owners, size).unwrap_err();
            assert_eq!(f.code, Code::OwnershipConflict);
        }
    }

    #[test]
    fn overlapping_claims_are_refused() {
        let src = [0u8; 16];
        let claims = vec![
            claim(0, 8, OwnerClass::DecodedRecord, "a".into()),
            claim(4, 12, OwnerClass::PreservedOpaque, "b".into()),
        ];
        assert_eq!(
            fill_gaps(&Data::new(&src), claims).unwrap_err().code,
            Code::OwnershipConflict
        );
    }
}
