//! Each family's names for its bytes: the field (or opaque unit) holding any byte of any ledger
//! owner, down to the record index, the field, the bit parts it holds and the word-array
//! element (`NBG_SECTION_INPUT[0].dimensions[1]`, `NBG_SECTION_NN[2].word5.kernel_address`), or its
//! offset in an opaque payload (`NBG_SECTION_NN+0x1a4`). `lab::diff` and the mapping check name
//! changes with it.

use super::ledger::{Origin, Owner};
use crate::nbg::fieldmap::{self as fm, Record};
use crate::nbg::format::v2 as f2;
use crate::nbg::holds::Holds;
use crate::nbg::parse::{NbgV1, NbgV2};

/// What `locate` finds for one byte, with the element kept apart from its field.
pub struct Located {
    /// The field (or opaque unit) name, without the element.
    pub field: String,
    /// `[i]` or `.name` of the word-array element holding the byte.
    pub element: Option<String>,
    /// Start of the field.
    pub field_start: u64,
    /// Start of the unit (the element, or the field).
    pub unit: u64,
    /// How the field map reads the unit (an element of a word array: `U32`); `None` for bytes
    /// the map does not lay out.
    pub ty: Option<fm::Type>,
    /// The record field holding the byte (none for an element of a word array).
    pub word: Option<Word>,
}

/// A field of a record, as `locate` found it.
#[derive(Clone, Copy)]
pub struct Word {
    /// The record's id.
    pub record: &'static str,
    /// The field-map word.
    pub field: &'static fm::Field,
    /// Length of the field's name (the located name before the parts a byte holds).
    pub name_len: usize,
}

impl Located {
    fn whole((field, unit): (String, u64)) -> Self {
        Located {
            field,
            element: None,
            field_start: unit,
            unit,
            ty: None,
            word: None,
        }
    }
}

/// One byte of one owner being named, with the naming steps both families share.
pub(super) struct At<'o> {
    /// The owner.
    o: &'o Owner,
    /// The byte's file offset.
    offset: u64,
    /// The byte's offset in the owner.
    rel: u64,
}

impl<'o> At<'o> {
    /// The byte at file offset `offset` of `o`.
    pub(super) fn new(o: &'o Owner, offset: u64) -> Self {
        At {
            o,
            offset,
            rel: offset - o.start,
        }
    }

    /// The byte named by the field of `record` (laid out from `base`) that holds it.
    fn named(&self, prefix: String, record: Record, base: u64) -> Located {
        let r = self.offset - base;
        match record.field_at(r) {
            Some(f) => {
                let start = base + f.offset as u64;
                let mut field = format!("{prefix}.{}", f.name);
                let word = Some(Word {
                    record: record.id,
                    field: f,
                    name_len: field.len(),
                });
                // A bit-field word names the parts the byte holds bits of.
                if !f.parts.is_empty() {
                    let lo = 8 * (r - f.offset as u64) as u32;
                    let names: Vec<&str> = f
                        .parts
                        .iter()
                        .filter(|p| p.shift < lo + 8 && lo < p.shift + p.bits)
                        .map(|p| p.name)
                        .collect();
                    field = format!("{field}.{}", names.join("+"));
                }
                if f.ty != fm::Type::U32s || f.width <= 4 {
                    return Located {
                        ty: Some(f.ty),
                        word,
                        ..Located::whole((field, start))
                    };
                }
                let i = (r - f.offset as u64) / 4;
                let element = match f.elements.get(i as usize) {
                    Some(e) => format!(".{e}"),
                    None => format!("[{i}]"),
                };
                Located {
                    field,
                    element: Some(element),
                    field_start: start,
                    unit: start + 4 * i,
                    ty: Some(fm::Type::U32),
                    word: None,
                }
            }
            None => Located::whole((format!("{prefix}+0x{r:x}"), base)),
        }
    }

    /// The byte in an array of `record`s of `size` bytes each (the instance size: a
    /// version-gated record may be shorter than its layout).
    fn sized(&self, prefix: &str, record: Record, size: u64) -> Located {
        let r = self.rel / size.max(1);
        self.named(format!("{prefix}[{r}]"), record, self.o.start + r * size)
    }

    /// The byte in an array of whole `record`s.
    fn records(&self, prefix: &str, record: Record) -> Located {
        self.sized(prefix, record, record.size as u64)
    }

    /// The byte named by its offset in an opaque owner (the owner is one unit).
    fn opaque(&self, prefix: &str) -> Located {
        Located::whole((format!("{prefix}+0x{:x}", self.rel), self.o.start))
    }
}

/// A LOADSTATE byte named by its buffer, command and word
/// (`NBG_SECTION_LOADSTATE[3].command[1].LOAD_STATE.state[0x0e4c].VIVS_GL_NN_CONFIG`).
fn command_named(
    l: &crate::nbg::parse::command_tables::CommandStreams,
    name: &str,
    offset: u64,
) -> Option<Located> {
    let b = l
        .decoded
        .partition_point(|(_, at, _)| *at <= offset)
        .checked_sub(1)?;
    let (entry, at, commands) = &l.decoded[b];
    let rel = offset - at;
    let k = commands.partition_point(|c| c.at <= rel).checked_sub(1)?;
    let c = &commands[k];
    let inner = rel.checked_sub(c.at).filter(|&r| r < c.len())?;
    let word = at + c.at + inner / 4 * 4;
    Some(Located {
        field: format!("{name}[{entry}].command[{k}].{}", c.field_name(inner)),
        element: None,
        field_start: word,
        unit: word,
        ty: Some(fm::Type::U32),
        word: None,
    })
}

/// A byte of one entry of a table of buffers: by its command (a state stream), its command
/// record's field (NN or TP commands), or its offset in the entry.
fn region_located(
    at: &At<'_>,
    regions: Option<&[crate::nbg::parse::patch_targets::Region]>,
    streams: Option<&crate::nbg::parse::command_tables::CommandStreams>,
    name: &str,
    entry: usize,
) -> Located {
    let prefix = format!("{name}[{entry}]");
    let Some(r) = regions.and_then(|r| r.iter().find(|r| r.entry == entry)) else {
        return at.opaque(&prefix);
    };
    if let (Some(record), true) = (r.record, r.decoded) {
        return at.records(&format!("{prefix}.{}", r.prefix()), record);
    }
    if r.decoded {
        if let Some(l) = streams.and_then(|l| command_named(l, name, at.offset)) {
            return l;
        }
    }
    at.opaque(&prefix)
}

/// The v2 name of the byte `at`.
pub(super) fn v2(g: &NbgV2<'_>, at: &At<'_>) -> Located {
    let (o, offset) = (at.o, at.offset);
    match o.origin {
        Origin::Structure => {
            let dir = u64::from(g.sub_header.section_headers_offset());
            if o.label == "header" {
                at.named("header".into(), fm::v2_header::RECORD, 0)
            } else if o.label == "sub-header" {
                at.named(
                    "sub_header".into(),
                    fm::v2_sub_header::RECORD,
                    g.sub_header.offset,
                )
            } else {
                let i = (offset - dir) / u64::from(f2::SECTION_HEADER_SIZE);
                let base = dir + i * u64::from(f2::SECTION_HEADER_SIZE);
                let name = g.sections.get(i as usize).map_or("?", |s| s.type_name);
                at.named(
                    format!("directory[{i}]({name})"),
                    fm::v2_section_header::RECORD,
                    base,
                )
            }
        }
        Origin::Section(i) => {
            let Some(s) = g.sections.get(i) else {
                return at.opaque(&o.label);
            };
            let name = s.type_name;
            if let Some(l) = g.load_states.as_ref().filter(|l| l.complete()) {
                if s.kind == crate::nbg::format::section::LOADSTATE {
                    return command_named(l, name, offset).unwrap_or_else(|| at.opaque(name));
                }
            }
            let Some(kind) = crate::nbg::holds::v2(s.kind) else {
                return at.opaque(name);
            };
            let first = kind.records.first().copied();
            match (kind.holds, first) {
                (Holds::NetworkInfo, Some(r)) => at.named(name.into(), r, o.start),
                (Holds::MemoryPool | Holds::VipSram | Holds::AxiSram, _) => {
                    Located::whole((name.into(), o.start))
                }
                (
                    Holds::Io | Holds::Checksums | Holds::DynaioEntries | Holds::IndexEntries,
                    Some(r),
                ) => at.records(name, r),
                _ => {
                    let size = u64::from(s.entry_size);
                    match kind.record(size) {
                        Some(record) => at.sized(name, record, size),
                        None => at.opaque(name),
                    }
                }
            }
        }
        Origin::SectionEntry(i, e) => match g.sections.get(i) {
            Some(s) => {
                let (regions, streams) = g.regions_of(s.kind);
                region_located(at, regions, streams, s.type_name, e)
            }
            None => at.opaque(&o.label),
        },
        _ => at.opaque(&o.label),
    }
}

/// The v1 name of the byte `at`.
pub(super) fn v1(g: &NbgV1<'_>, at: &At<'_>) -> Located {
    let (o, offset, rel) = (at.o, at.offset, at.rel);
    match o.origin {
        Origin::Structure => {
            let entries = g.fixed_part.entries_offset;
            if offset >= entries {
                let k = ((offset - entries) / 8) as usize;
                let half = if (offset - entries) % 8 < 4 {
                    "offset"
                } else {
                    "size"
                };
                let name = g.tables.get(k).map_or("?", |t| t.name);
                // Each entry is two little-endian words.
                Located {
                    ty: Some(fm::Type::U32),
                    ..Located::whole((
                        format!("entries.{name}.{half}"),
                        entries + 8 * k as u64 + if half == "size" { 4 } else { 0 },
                    ))
                }
            } else {
                at.named("header".into(), fm::v1_fixed::RECORD, 0)
            }
        }
        Origin::Table(k) => {
            let Some(t) = g.tables.get(k) else {
                return at.opaque(&o.label);
            };
            let layout = t.record_size.filter(|_| t.decoded).and_then(|size| {
                let record = crate::nbg::holds::v1(t.name)?.record(size)?;
                Some((record, size))
            });
            if let Some((record, size)) = layout {
                return at.sized(t.name, record, size);
            }
            if let Some(l) = g.load_states.as_ref().filter(|l| l.complete()) {
                if t.name == "load_states" {
                    return command_named(l, t.name, offset).unwrap_or_else(|| at.opaque(t.name));
                }
            }
            let nests = crate::nbg::format::v1::ENTRIES
                .get(k)
                .is_some_and(|e| e.nests_into.is_some());
            match (t.name, t.record_size) {
                ("input" | "output", Some(116)) => at.records(t.name, fm::v1_io_record::RECORD),
                (_, Some(8)) if nests => at.records(t.name, fm::v1_entry::RECORD),
                (_, Some(size)) if size > 0 => {
                    let r = rel / size;
                    Located::whole((
                        format!("{}[{r}]+0x{:x}", t.name, rel % size),
                        o.start + r * size,
                    ))
                }
                _ => at.opaque(t.name),
            }
        }
        Origin::TableEntry(k, e) => {
            let name = g.tables.get(k).map_or("?", |t| t.name);
            let (regions, streams) = g.regions_of(name);
            region_located(at, regions, streams, name, e)
        }
        _ => at.opaque(&o.label),
    }
}
