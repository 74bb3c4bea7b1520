//! Owner-attributed differences between two NBGs of the same family.
//!
//! Owners are paired by what they stand for (section type, table name, header group, gap
//! label), not by raw offset, so two builds with different sizes or layouts still compare
//! section to section. Inside decoded records a changed byte is named down to the record index
//! and field (`NBG_SECTION_INPUT[0].dimensions`, `header.crc_sum`); inside opaque payloads it is
//! named by its offset in the payload (`NBG_SECTION_NN+0x1a4`).

use crate::nbg::family::{NbgFamily, Origin};
use crate::nbg::family::{Owner, OwnerClass};
use crate::nbg::fieldmap as fm;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::Graph;
use serde::Serialize;

/// Stable pairing key of an owner.
pub fn owner_key(graph: &Graph<'_>, o: &Owner) -> String {
    match o.origin {
        Origin::Tail => "connection region".into(),
        Origin::SectionEntry(i, e) => entry_key(graph, Origin::Section(i), e, o),
        Origin::Coefficient(i, e, part) => {
            let payload = match graph.family() {
                crate::nbg::family::Family::V1 => Origin::Table(i),
                crate::nbg::family::Family::V2 => Origin::Section(i),
            };
            format!("{} {}", entry_key(graph, payload, e, o), part.label())
        }
        Origin::TableEntry(k, e) => entry_key(graph, Origin::Table(k), e, o),
        origin => graph
            .payload_name(origin)
            .map_or_else(|| o.label.clone(), str::to_string),
    }
}

/// An entry of a table of buffers pairs by its payload's name and entry number.
fn entry_key(graph: &Graph<'_>, payload: Origin, entry: usize, o: &Owner) -> String {
    graph
        .payload_name(payload)
        .map_or_else(|| o.label.clone(), |name| format!("{name}[{entry}]"))
}

/// How the field map reads the unit holding `offset` (see `locate`); `None` where it does not
/// lay the bytes out.
pub fn unit_type(graph: &Graph<'_>, o: &Owner, offset: u64) -> Option<fm::Type> {
    graph.located(o, offset).ty
}

/// A field name for `offset`, and the start of the unit it belongs to (an element of a word
/// array, a field, or the whole owner for opaque payloads) so that consecutive bytes of one unit
/// merge into one range. A byte of a word-array field is named with its element, from the field
/// map: by the element's name where the map names them (`header.memory_pool.size`), else by its
/// index (`input[0].dimensions[1]`, `NBG_SECTION_OUTPUT[0].quantization.raw_words[1]`).
pub fn locate(graph: &Graph<'_>, o: &Owner, offset: u64) -> (String, u64) {
    let l = graph.located(o, offset);
    let name = match &l.element {
        Some(e) => format!("{}{e}", l.field),
        None => l.field,
    };
    (name, l.unit)
}

/// A run of bits of the file that lies inside one field of a record.
#[derive(Clone, Debug)]
pub struct BitPlace {
    /// The record's id (`v2.nn_command`).
    pub record: &'static str,
    /// The word's name where it lies (`NBG_SECTION_NN[0].word15`).
    pub at: String,
    /// The word's file offset.
    pub start: u64,
    /// The field-map word.
    pub field: &'static fm::Field,
    /// The run's first bit in the word.
    pub shift: u32,
    /// The run's width in bits.
    pub bits: u32,
}

impl BitPlace {
    /// The part whose bits the run covers exactly, if one does.
    pub fn part(&self) -> Option<&'static fm::Part> {
        self.field
            .parts
            .iter()
            .find(|p| p.shift == self.shift && p.bits == self.bits)
    }

    /// The parts the run holds bits of.
    pub fn touched(&self) -> Vec<&'static fm::Part> {
        let end = self.shift + self.bits;
        self.field
            .parts
            .iter()
            .filter(|p| p.shift < end && self.shift < p.shift + p.bits)
            .collect()
    }

    /// The word's value in `bytes` (a file of the same layout), little-endian.
    pub fn word_value(&self, bytes: &[u8]) -> Option<u64> {
        let s = usize::try_from(self.start).ok()?;
        Some(le_value(bytes.get(s..s.checked_add(self.field.width)?)?))
    }
}

/// Where the `bits` bits from file bit `bit` lie, when they lie inside one field of a record
/// (a word of an array of words excepted).
pub fn bit_place(graph: &Graph<'_>, image: &NbgImage<'_>, bit: u64, bits: u32) -> Option<BitPlace> {
    let offset = bit / 8;
    if offset >= image.len() || bits == 0 {
        return None;
    }
    let o = image.owner_of(offset);
    let l = graph.located(o, offset);
    let w = l.word?;
    let shift = u32::try_from(bit.checked_sub(8 * l.field_start)?).ok()?;
    if u64::from(shift) + u64::from(bits) > 8 * w.field.width as u64 {
        return None;
    }
    Some(BitPlace {
        record: w.record,
        at: l.field[..w.name_len].to_string(),
        start: l.field_start,
        field: w.field,
        shift,
        bits,
    })
}

/// Most bytes `field_range` names one by one to find a field: bounds the cost of a lookup in an
/// opaque payload (record fields are found within their table's first bytes).
pub const MAX_FIELD_SCAN: u64 = 16 << 20;

/// The inverse of `locate`: the file range `[start, end)` of the field `locate` calls `name`
/// (`NBG_SECTION_INPUT[0].quantization.raw_words[1]`, `input[0].quantization.scale`,
/// `header.crc_sum`), or of a whole word array named without its element
/// (`NBG_SECTION_INPUT[0].quantization.raw_words`), or `None` when no byte of the graph has that
/// name. Only owners whose
/// prefix (the text before the first `[`, `.` or `+`) matches are scanned, at most
/// `MAX_FIELD_SCAN` bytes, so the answer always agrees with the offset-to-name naming.
pub fn field_range(graph: &Graph<'_>, image: &NbgImage<'_>, name: &str) -> Option<(u64, u64)> {
    let prefix = |s: &str| s.split(['[', '.', '+']).next().unwrap_or("").to_string();
    let want = prefix(name);
    let mut scanned = 0u64;
    for o in image.owners().iter().filter(|o| o.end > o.start) {
        // An owner names its bytes with one prefix, or (the v1 fixed part) two: its first
        // and last bytes show which.
        let ends = [o.start, o.end - 1].map(|at| prefix(&locate(graph, o, at).0));
        if !ends.contains(&want) {
            continue;
        }
        let mut offset = o.start;
        while offset < o.end {
            if scanned >= MAX_FIELD_SCAN {
                return None;
            }
            let (field, unit) = locate(graph, o, offset);
            scanned += 1;
            if field == name {
                let mut end = offset + 1;
                while end < o.end && locate(graph, o, end) == (field.clone(), unit) {
                    end += 1;
                }
                return Some((offset, end));
            }
            // A name without its element (`input[0].dimensions`): the whole word array.
            let l = graph.located(o, offset);
            if l.element.is_some() && l.field == name {
                let mut end = offset + 1;
                while end < o.end && {
                    let next = graph.located(o, end);
                    next.field == name && next.field_start == l.field_start
                } {
                    end += 1;
                }
                return Some((offset, end));
            }
            offset += 1;
        }
    }
    None
}

/// One run of changed bytes inside one unit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// File offset in A of the first changed byte.
    pub a_start: u64,
    /// File offset in A one past the last changed byte.
    pub a_end: u64,
    /// File offset in B of the first changed byte.
    pub b_start: u64,
    /// File offset in B one past the last changed byte.
    pub b_end: u64,
    /// The field (or opaque unit) the run lies in, as `locate` names it.
    pub field: String,
    /// The parts of a bit-field word whose value the run changes, with both values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartChange>,
    /// The field's value in A and in B, where the run lies in one scalar field (a byte, a
    /// word, a double word, or one word of an array) that both owners hold whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Values>,
}

/// A scalar field's value in A and in B.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Values {
    /// Its value in A.
    pub a: crate::lab::fields::Value,
    /// Its value in B.
    pub b: crate::lab::fields::Value,
}

/// One part of a bit-field word whose value differs between A and B.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartChange {
    /// The part's name (`in_image_border_const`).
    pub part: &'static str,
    /// Its value in A.
    pub a: u64,
    /// Its value in B.
    pub b: u64,
}

/// The little-endian value of up to 8 bytes.
fn le_value(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |v, &x| (v << 8) | u64::from(x))
}

/// The parts of `field` whose values differ between the words `a` and `b` (the field's
/// bytes in A and B), with their bit ranges: (first bit, width, change).
fn changed_parts(field: &fm::Field, a: &[u8], b: &[u8]) -> Vec<(u32, u32, PartChange)> {
    if a.len() != field.width || b.len() != field.width || field.width > 8 {
        return Vec::new();
    }
    let (wa, wb) = (le_value(a), le_value(b));
    field
        .parts
        .iter()
        .filter(|p| p.get(wa) != p.get(wb))
        .map(|p| {
            (
                p.shift,
                p.bits,
                PartChange {
                    part: p.name,
                    a: p.get(wa),
                    b: p.get(wb),
                },
            )
        })
        .collect()
}

/// How a paired owner differs between A and B.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Same length, same bytes (left out of reports).
    Same,
    /// Same length, some bytes differ.
    Changed,
    /// The lengths differ.
    Resized,
    /// The owner is in A only.
    OnlyA,
    /// The owner is in B only.
    OnlyB,
}

/// One paired owner and what changed in it.
#[derive(Clone, Debug, Serialize)]
pub struct OwnerDiff {
    /// The owner's pairing key (`owner_key`).
    pub owner: String,
    /// The owner's ledger class.
    pub class: OwnerClass,
    /// How it differs.
    pub status: Status,
    /// Its file range `[start, end)` in A, when A has it.
    pub a_range: Option<[u64; 2]>,
    /// Its file range `[start, end)` in B, when B has it.
    pub b_range: Option<[u64; 2]>,
    /// Differing bytes over the common length, plus the size difference.
    pub changed_bytes: u64,
    /// How many changed ranges there are, listed or not.
    pub ranges_total: usize,
    /// The first `MAX_RANGES` ranges.
    pub ranges: Vec<Change>,
}

/// Most changed ranges an owner lists; the rest are only counted in `ranges_total`.
pub const MAX_RANGES: usize = 64;

/// The owner-by-owner diff of two graphs of one family.
#[derive(Clone, Debug, Serialize)]
pub struct DiffReport {
    /// The family's format tag (`NbgImage::format`), shared by A and B.
    pub format: &'static str,
    /// A's size and SHA-256.
    pub a: crate::nbg::parse::FileFacts,
    /// B's size and SHA-256.
    pub b: crate::nbg::parse::FileFacts,
    /// Whether A and B are byte for byte the same.
    pub identical: bool,
    /// Bytes of A that differ in B or have no counterpart there (at most A's size): the
    /// headline.
    pub a_bytes_differing: u64,
    /// Bytes of B that differ from A or have no counterpart there (at most B's size).
    pub b_bytes_differing: u64,
    /// Changed bytes summed over the owners, an owner in one file only counted whole: the old
    /// headline (over A and B at once), kept for one release.
    pub changed_bytes: u64,
    /// How many owners differ.
    pub owners_changed: usize,
    /// The owners that differ, A's order first, then those in B only.
    pub owners: Vec<OwnerDiff>,
    /// The decoded coefficient tensors that differ, where a coefficient part changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coefficients: Vec<crate::lab::coefficient_changes::TensorChange>,
}

/// Why a diff stops before it starts.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A and B are of different families (their `NbgImage::format` tags).
    #[error("A is {a} and B is {b}; diff compares two files of the same family")]
    FamilyMismatch {
        /// A's family tag.
        a: &'static str,
        /// B's family tag.
        b: &'static str,
    },
}

impl DiffError {
    /// Two files that cannot be compared are a usage problem.
    pub fn exit_status(&self) -> crate::exit::Exit {
        match self {
            DiffError::FamilyMismatch { .. } => crate::exit::Exit::Usage,
        }
    }
}

/// Bytes of each side `compare` holds at once: owners are compared piece by piece, so a diff
/// of two files read through `NbgImage::from_file` never holds either file.
pub const PIECE: u64 = 1 << 20;

/// Diff two parsed graphs of the same family. The bytes are read through the images (in
/// memory, or from their files in pieces of at most `PIECE` bytes per side).
pub fn diff(
    a: &Graph<'_>,
    ia: &NbgImage<'_>,
    b: &Graph<'_>,
    ib: &NbgImage<'_>,
) -> Result<DiffReport, DiffError> {
    if ia.format() != ib.format() {
        return Err(DiffError::FamilyMismatch {
            a: ia.format(),
            b: ib.format(),
        });
    }
    let keyed = |g: &Graph<'_>, i: &NbgImage<'_>| -> Vec<(String, Owner)> {
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        i.owners()
            .iter()
            .map(|o| {
                let mut key = owner_key(g, o);
                // Repeated labels (several gaps before EOF, say) pair in order.
                let n = seen.entry(key.clone()).or_insert(0);
                if *n > 0 {
                    key = format!("{key} #{n}");
                }
                *n += 1;
                (key, o.clone())
            })
            .collect()
    };
    let (oa, ob) = (keyed(a, ia), keyed(b, ib));
    let mut owners = Vec::new();
    // Whether every owner of A is paired with an owner of B at the same range: with equal
    // sizes and no owner differing, the files are then byte for byte the same.
    let mut same_layout = ia.len() == ib.len();
    let mut coefficient_changed = false;
    for (key, x) in &oa {
        match ob.iter().find(|(k, _)| k == key) {
            None => owners.push(one_sided(key, x, Status::OnlyA)),
            Some((_, y)) => {
                same_layout &= (x.start, x.end) == (y.start, y.end);
                let d = compare(key, a, x, ia, y, ib);
                coefficient_changed |=
                    d.status != Status::Same && matches!(x.origin, Origin::Coefficient(..));
                owners.push(d);
            }
        }
    }
    for (key, y) in ob.iter().filter(|(k, _)| !oa.iter().any(|(ka, _)| ka == k)) {
        owners.push(one_sided(key, y, Status::OnlyB));
    }
    owners.retain(|o| o.status != Status::Same);
    let changed_bytes = owners.iter().map(|o| o.changed_bytes).sum();
    let (a_bytes_differing, b_bytes_differing) = owners
        .iter()
        .map(sides)
        .fold((0, 0), |t, d| (t.0 + d.0, t.1 + d.1));
    Ok(DiffReport {
        format: ia.format(),
        a: a.file().clone(),
        b: b.file().clone(),
        // A's owners cover A from 0 to EOF (the ledger's proof): when each sits at the same
        // range in B with the same bytes, no owner is one-sided and the sizes agree, A and B are
        // equal; and equal files parse to equal ledgers, so this is exactly `A == B`.
        identical: same_layout && owners.is_empty(),
        a_bytes_differing,
        b_bytes_differing,
        changed_bytes,
        owners_changed: owners.len(),
        owners,
        coefficients: if coefficient_changed {
            crate::lab::coefficient_changes::changes(a, ia, b, ib)
        } else {
            Vec::new()
        },
    })
}

/// An owner's differing bytes on A's side and on B's: those that differ over the common
/// length, plus each side's bytes past it (a one-sided owner is all on its side).
fn sides(o: &OwnerDiff) -> (u64, u64) {
    let len = |r: Option<[u64; 2]>| r.map_or(0, |[s, e]| e - s);
    let (la, lb) = (len(o.a_range), len(o.b_range));
    let common = la.min(lb);
    let within = o.changed_bytes - (la.max(lb) - common);
    match o.status {
        Status::OnlyA => (la, 0),
        Status::OnlyB => (0, lb),
        _ => (within + la - common, within + lb - common),
    }
}

fn one_sided(key: &str, o: &Owner, status: Status) -> OwnerDiff {
    let range = Some([o.start, o.end]);
    let (a_range, b_range) = if status == Status::OnlyA {
        (range, None)
    } else {
        (None, range)
    };
    OwnerDiff {
        owner: key.to_string(),
        class: o.class,
        status,
        a_range,
        b_range,
        changed_bytes: o.len(),
        ranges_total: 0,
        ranges: Vec::new(),
    }
}

/// The changed run being extended while `compare` walks an owner: its first byte (offset in the
/// owner), the field it is named by, and the unit it lies in.
struct Run {
    start: u64,
    field: String,
    unit: u64,
    /// A bit-field word's changed parts (first bit, width, change) and the word's start in
    /// the owner.
    parts: Vec<(u32, u32, PartChange)>,
    word_start: u64,
    values: Option<Values>,
}

/// The changed ranges of paired owners `x` (of A) and `y` (of B), found over their common
/// length. A run extends while bytes differ and stay in one unit, across piece boundaries.
struct Ranges {
    /// The first `MAX_RANGES` runs.
    ranges: Vec<Change>,
    /// Runs closed so far, listed or not.
    total: usize,
    /// Changed bytes so far, plus the size difference.
    changed: u64,
    /// The run still being extended, if any.
    open: Option<Run>,
}

impl Ranges {
    /// End the open run (if any) at `end`, an offset in the owner, and record it.
    fn close(&mut self, end: u64, x: &Owner, y: &Owner) {
        let Some(run) = self.open.take() else {
            return;
        };
        self.changed += end - run.start;
        self.total += 1;
        if self.ranges.len() < MAX_RANGES {
            // The parts with bits in the run's bytes.
            let (lo, hi) = (8 * (run.start - run.word_start), 8 * (end - run.word_start));
            let parts = run
                .parts
                .into_iter()
                .filter(|(shift, bits, _)| {
                    u64::from(*shift) < hi && lo < u64::from(*shift) + u64::from(*bits)
                })
                .map(|(_, _, c)| c)
                .collect();
            self.ranges.push(Change {
                a_start: x.start + run.start,
                a_end: x.start + end,
                b_start: y.start + run.start,
                b_end: y.start + end,
                field: run.field,
                parts,
                values: run.values,
            });
        }
    }
}

/// What changed in the unit of A holding byte `offset` (of owner `x`), against the same bytes
/// of `y` in B, where both owners hold it whole: a bit-field word's changed parts (first bit,
/// width, change) and the word's start in the owner, and a scalar unit's two values.
fn unit_change(
    ga: &Graph<'_>,
    x: &Owner,
    ia: &NbgImage<'_>,
    y: &Owner,
    ib: &NbgImage<'_>,
    offset: u64,
) -> (Vec<(u32, u32, PartChange)>, u64, Option<Values>) {
    let l = ga.located(x, offset);
    let word = l.word.filter(|w| !w.field.parts.is_empty());
    let (start, width) = match (word, l.ty.and_then(crate::lab::fields::scalar_width)) {
        (Some(w), _) => (l.field_start, w.field.width as u64),
        (None, Some(width)) => (l.unit, width),
        (None, None) => return (Vec::new(), 0, None),
    };
    let rel = start - x.start;
    if rel + width > x.len() || rel + width > y.len() {
        return (Vec::new(), rel, None);
    }
    let a = ia.range(start, start + width);
    let b = ib.range(y.start + rel, y.start + rel + width);
    let parts = word.map_or_else(Vec::new, |w| changed_parts(w.field, &a, &b));
    let values = l.ty.and_then(|ty| {
        Some(Values {
            a: crate::lab::fields::scalar(ty, &a)?,
            b: crate::lab::fields::scalar(ty, &b)?,
        })
    });
    (parts, rel, values)
}

fn compare(
    key: &str,
    ga: &Graph<'_>,
    x: &Owner,
    ia: &NbgImage<'_>,
    y: &Owner,
    ib: &NbgImage<'_>,
) -> OwnerDiff {
    let common = x.len().min(y.len());
    let mut r = Ranges {
        ranges: Vec::new(),
        total: 0,
        changed: x.len().max(y.len()) - common,
        open: None,
    };
    // Opaque payloads are one unit: extend runs without naming every byte.
    let whole_unit = x.end > x.start && locate(ga, x, x.end - 1).1 == x.start;
    let mut at = 0u64;
    while at < common {
        let next = common.min(at + PIECE);
        let pa = ia.range(x.start + at, x.start + next);
        let pb = ib.range(y.start + at, y.start + next);
        let mut k = 0usize;
        while k < pa.len() {
            if r.open.is_none() {
                // Skip equal bytes without naming them.
                match pa[k..].iter().zip(&pb[k..]).position(|(p, q)| p != q) {
                    Some(d) => k += d,
                    None => break,
                }
            }
            let i = at + k as u64;
            if pa[k] == pb[k] {
                r.close(i, x, y);
            } else {
                let extends = r
                    .open
                    .as_ref()
                    .is_some_and(|run| whole_unit || locate(ga, x, x.start + i).1 == run.unit);
                if !extends {
                    r.close(i, x, y);
                    let (field, unit) = locate(ga, x, x.start + i);
                    let (parts, word_start, values) = if whole_unit {
                        (Vec::new(), 0, None)
                    } else {
                        unit_change(ga, x, ia, y, ib, x.start + i)
                    };
                    r.open = Some(Run {
                        start: i,
                        field,
                        unit,
                        parts,
                        word_start,
                        values,
                    });
                }
            }
            k += 1;
        }
        at = next;
    }
    r.close(common, x, y);
    let status = if x.len() != y.len() {
        Status::Resized
    } else if r.changed > 0 {
        Status::Changed
    } else {
        Status::Same
    };
    OwnerDiff {
        owner: key.to_string(),
        class: x.class,
        status,
        a_range: Some([x.start, x.end]),
        b_range: Some([y.start, y.end]),
        changed_bytes: r.changed,
        ranges_total: r.total,
        ranges: r.ranges,
    }
}

/// Most bytes of each side a changed run shows; a longer run shows its first ones.
pub const SHOWN_BYTES: usize = 16;

/// `nbg diff A B` where B does not parse: B's bytes attributed through A's ledger, offset for
/// offset (what a flip or an edit broke, and where B fails).
#[derive(Clone, Debug, Serialize)]
pub struct DamagedDiff {
    /// A's size and SHA-256.
    pub a: crate::nbg::parse::FileFacts,
    /// B's size.
    pub b_size: u64,
    /// Why B does not parse.
    pub b_failure: crate::nbg::failure::Failure,
    /// Bytes that differ over the common length, plus the size difference.
    pub changed_bytes: u64,
    /// A's owners holding a changed byte, in file order.
    pub owners: Vec<DamagedOwner>,
}

/// One owner of A and the bytes of B that differ in its range.
#[derive(Clone, Debug, Serialize)]
pub struct DamagedOwner {
    /// The owner's pairing key (`owner_key`).
    pub owner: String,
    /// Its ledger class.
    pub class: OwnerClass,
    /// Its range `[start, end)` in A.
    pub range: [u64; 2],
    /// Differing bytes in the range (bytes past B's end count too).
    pub changed_bytes: u64,
    /// How many changed runs there are, listed or not.
    pub ranges_total: usize,
    /// The first `MAX_RANGES` runs.
    pub ranges: Vec<ByteChange>,
}

/// A run of changed bytes in one field: its range, the field, and both sides' bytes as hex
/// (the first `SHOWN_BYTES`).
#[derive(Clone, Debug, Serialize)]
pub struct ByteChange {
    /// First changed byte.
    pub start: u64,
    /// One past the last.
    pub end: u64,
    /// The field (or opaque unit) as `locate` names it in A.
    pub field: String,
    /// A's bytes.
    pub a: String,
    /// B's bytes (shorter where B ends first).
    pub b: String,
}

/// Attribute `b` (a file that does not parse, `failure` why) through A's ledger.
pub fn damaged(
    a: &Graph<'_>,
    ia: &NbgImage<'_>,
    b: &[u8],
    failure: &crate::nbg::failure::Failure,
) -> DamagedDiff {
    let blen = b.len() as u64;
    let mut owners = Vec::new();
    let mut changed_bytes = ia.len().abs_diff(blen);
    for o in ia.owners() {
        let bytes_a = ia.range(o.start, o.end);
        let common = o.end.min(blen).saturating_sub(o.start);
        let differs = |k: u64| k >= common || bytes_a[k as usize] != b[(o.start + k) as usize];
        let mut d = DamagedOwner {
            owner: owner_key(a, o),
            class: o.class,
            range: [o.start, o.end],
            changed_bytes: 0,
            ranges_total: 0,
            ranges: Vec::new(),
        };
        let mut k = 0;
        while k < o.len() {
            if !differs(k) {
                k += 1;
                continue;
            }
            let (field, unit) = locate(a, o, o.start + k);
            let start = k;
            while k < o.len() && differs(k) && locate(a, o, o.start + k).1 == unit {
                k += 1;
            }
            d.changed_bytes += (k - start).min(common.saturating_sub(start));
            d.ranges_total += 1;
            if d.ranges.len() < MAX_RANGES {
                let shown = |bytes: &[u8], from: u64, to: u64| {
                    let to = to.min(from + SHOWN_BYTES as u64).min(bytes.len() as u64);
                    let from = from.min(to);
                    crate::digest::hex(&bytes[from as usize..to as usize])
                };
                d.ranges.push(ByteChange {
                    start: o.start + start,
                    end: o.start + k,
                    field,
                    a: shown(&bytes_a, start, k),
                    b: shown(b, o.start + start, o.start + k),
                });
            }
        }
        if d.ranges_total > 0 {
            changed_bytes += d.changed_bytes;
            owners.push(d);
        }
    }
    DamagedDiff {
        a: a.file().clone(),
        b_size: blen,
        b_failure: failure.clone(),
        changed_bytes,
        owners,
    }
}
