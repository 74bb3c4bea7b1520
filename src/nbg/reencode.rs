//! The round trip that can fail: every `decoded-record` owner of the ledger is encoded again
//! from the parser's decoded values through the field map and compared with the original bytes,
//! reserved words and bitfields included (encode(decode(bytes)) == bytes).
//!
//! The ledger's own emission concatenates source ranges, so it proves only that the owners are
//! contiguous. Here nothing is copied from the source: a value the parser dropped (a nonzero
//! unused dimension slot, bytes after a name's NUL, a reserved word it did not keep) makes the
//! re-encoding differ, and the first differing field is named. An owner without an encoder is
//! reported as not re-encodable and never counted exact.

use crate::nbg::family::{CoefficientPieces, NbgFamily, Piece};
use crate::nbg::family::{Origin, Owner, OwnerClass};
use crate::nbg::image::NbgImage;
use crate::nbg::parse::Graph;
use serde::Serialize;

/// The first field whose re-encoding differs from the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// The owner's ledger label.
    pub owner: String,
    /// Record and field (`NBG_SECTION_INPUT[0].dimensions`, `header.crc_sum`).
    pub field: String,
    /// File offset of the first differing byte (or of the field whose value did not fit).
    pub offset: u64,
}

/// The re-encoding of one graph's decoded-record owners.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reencoding {
    /// Decoded-record owners in the ledger.
    pub records_total: u64,
    /// Owners whose re-encoding equals their bytes.
    pub records_reencoded: u64,
    /// Owners the field map has no encoder for (labels, in file order).
    pub not_reencodable: Vec<String>,
    /// Owners whose re-encoding differs (or whose value did not fit its field).
    pub mismatches: u64,
    /// The first of those in file order.
    pub first_mismatch: Option<Mismatch>,
}

impl Reencoding {
    /// Whether every decoded-record owner round-trips.
    pub fn exact(&self) -> bool {
        self.records_reencoded == self.records_total
    }
}

/// The decoded-record `o` (a ledger owner of this graph's image) encoded again by its family;
/// `None` when the field map has no encoder for it. A coefficient part comes from `coefficients`,
/// every coefficient entry decoded once (read through the image) the first time one is asked
/// for.
fn pieces(
    graph: &Graph<'_>,
    image: &NbgImage<'_>,
    o: &Owner,
    coefficients: &mut Option<CoefficientPieces>,
) -> Option<Vec<Piece>> {
    let read = |at, len| Some(image.range(at, at + len));
    if let Origin::Coefficient(i, e, part) = o.origin {
        let all = coefficients.get_or_insert_with(|| graph.coefficient_pieces(&read));
        return all.remove(&(i, e, part)).map(|p| vec![p]);
    }
    graph.pieces(o, &read)
}

/// Re-encode every decoded-record owner of `image` (built from `graph`) and compare with the
/// original bytes, read through the image (borrowed from memory, or read back from the file
/// record by record for an image over a file).
pub fn reencode(graph: &Graph<'_>, image: &NbgImage<'_>) -> Reencoding {
    let mut out = Reencoding {
        records_total: 0,
        records_reencoded: 0,
        not_reencodable: Vec::new(),
        mismatches: 0,
        first_mismatch: None,
    };
    let mut coefficients = None;
    for o in image
        .owners()
        .iter()
        .filter(|o| o.class == OwnerClass::DecodedRecord)
    {
        out.records_total += 1;
        let Some(pieces) = pieces(graph, image, o, &mut coefficients) else {
            out.not_reencodable.push(o.label.clone());
            continue;
        };
        match compare(image, o, &pieces) {
            None => out.records_reencoded += 1,
            Some(m) => {
                out.mismatches += 1;
                out.first_mismatch.get_or_insert(m);
            }
        }
    }
    out
}

/// The whole file rebuilt in memory: every decoded-record owner from its encoded pieces, every
/// other owner (opaque payloads, gaps, the tail) from the source. `None` when an owner has no
/// encoder or a decoded value does not fit its field. For tests that decode the result again;
/// never written to disk.
pub fn rebuild(graph: &Graph<'_>, image: &NbgImage<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(usize::try_from(image.len()).ok()?);
    let mut coefficients = None;
    for o in image.owners() {
        if o.class != OwnerClass::DecodedRecord {
            out.extend_from_slice(&image.range(o.start, o.end));
            continue;
        }
        let pieces = pieces(graph, image, o, &mut coefficients)?;
        for p in pieces {
            if p.at != out.len() as u64 {
                return None;
            }
            out.extend_from_slice(p.bytes.as_ref().ok()?);
        }
        if out.len() as u64 != o.end {
            return None;
        }
    }
    Some(out)
}

/// The first difference between the owner's bytes and its encoded pieces.
fn compare(image: &NbgImage<'_>, o: &Owner, pieces: &[Piece]) -> Option<Mismatch> {
    let mismatch = |field: String, offset: u64| Mismatch {
        owner: o.label.clone(),
        field,
        offset,
    };
    let mut cursor = o.start;
    for p in pieces {
        if p.at != cursor {
            return Some(mismatch(format!("{}+0x0", p.prefix), cursor.min(p.at)));
        }
        let bytes = match &p.bytes {
            Ok(b) => b,
            Err(field) => {
                let at = p.record.field(field).map_or(p.skip, |f| f.offset as u64);
                let at = p.at + at.saturating_sub(p.skip);
                return Some(mismatch(format!("{}.{field}", p.prefix), at));
            }
        };
        let end = p.at + bytes.len() as u64;
        // A piece past the end of the file compares against nothing.
        let original = if end <= image.len() {
            image.range(p.at, end)
        } else {
            std::borrow::Cow::Borrowed(&[][..])
        };
        if let Some(i) = crate::nbg::image::first_difference(bytes, &original) {
            let name = p
                .record
                .field_at(p.skip + i)
                .map_or_else(|| format!("+0x{i:x}"), |f| format!(".{}", f.name));
            return Some(mismatch(format!("{}{name}", p.prefix), p.at + i));
        }
        cursor = end;
    }
    (cursor != o.end).then(|| mismatch(format!("{}+end", o.label), cursor))
}
