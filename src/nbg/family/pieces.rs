//! Each family's decoded records encoded again from the parsed values through the field map,
//! one `Piece` per record, for `nbg::reencode` to compare with the file's bytes.

use super::ledger::{Origin, Owner};
use super::{NbgFamily, Read};
use crate::nbg::decoded::Decoded;
use crate::nbg::fieldmap::{self as fm, Record, Writer};
use crate::nbg::format::{section, v1 as f1};
use crate::nbg::holds::{Holds, Kind};
use crate::nbg::parse::records::Records;
use crate::nbg::parse::{IoLayout, IoRecord, NbgV1, NbgV2};
use std::collections::BTreeMap;

/// One encoded record: its file offset, the record layout, the name prefix and the bytes (or
/// the first field whose decoded value did not fit). `pieces` yields them.
pub struct Piece {
    /// File offset of the record (or of the part of it).
    pub(crate) at: u64,
    /// The record layout, for naming a mismatch.
    pub(crate) record: Record,
    /// Offset of the piece inside its record (non-zero for a part of the v1 fixed record).
    pub(crate) skip: u64,
    /// The name of the record (`NBG_SECTION_INPUT[0]`).
    pub(crate) prefix: String,
    /// The encoded bytes, or the first field whose value did not fit.
    pub(crate) bytes: Result<Vec<u8>, &'static str>,
}

fn piece(at: u64, record: Record, prefix: String, w: Writer) -> Piece {
    Piece {
        at,
        record,
        skip: 0,
        prefix,
        bytes: w.finish().map_err(|o| o.field),
    }
}

/// An I/O record from its decoded value through the layout's fields.
fn io_piece(r: &IoRecord, layout: &IoLayout, prefix: String) -> Piece {
    let mut w = Writer::new(layout.size());
    w.put_u32(&layout.dim_count, r.dimension_count)
        .put_words(
            &layout.dims,
            &[&r.dimensions[..], &r.unused_dimension_slots[..]].concat(),
        )
        .put_u32(&layout.data_format, r.data_format)
        .put_u32(&layout.data_type, r.data_type)
        .put_u32(&layout.quant_format, r.quantization.format);
    let mut words = r.quantization.raw_words.iter().copied();
    for f in layout.quant_fields {
        let chunk: Vec<u32> = words.by_ref().take(f.width / 4).collect();
        w.put_words(f, &chunk);
    }
    if words.next().is_some() {
        w.refuse(&layout.quant_format);
    }
    match (&layout.name, &r.name) {
        (Some(f), Some(name)) => {
            w.put_name(f, name, &r.name_trailing_bytes);
        }
        (Some(f), None) => {
            w.refuse(f);
        }
        (None, Some(_)) => {
            w.refuse(&layout.dim_count);
        }
        (None, None) => {}
    }
    piece(r.offset, layout.record, prefix, w)
}

fn io_pieces(records: &[IoRecord], layout: &IoLayout, name: &str) -> Vec<Piece> {
    records
        .iter()
        .map(|r| io_piece(r, layout, format!("{name}[{}]", r.index)))
        .collect()
}

/// (offset, size) pairs of an index table or DYNAIO table.
fn pair_pieces(record: Record, at: u64, pairs: &[[u64; 2]], name: &str) -> Vec<Piece> {
    pairs
        .iter()
        .enumerate()
        .map(|(i, &[offset, size])| {
            let mut w = Writer::new(record.size);
            w.put_uint(&record.fields[0], offset)
                .put_uint(&record.fields[1], size);
            piece(
                at + (i * record.size) as u64,
                record,
                format!("{name}[{i}]"),
                w,
            )
        })
        .collect()
}

/// A record of 32-bit words encoded through its fields: each bit part taken from the word and
/// packed again, so every word's parts must cover it (the field map proves they tile it).
fn word_record_piece(record: Record, at: u64, words: &[u32], prefix: String) -> Piece {
    let mut w = Writer::new(record.size);
    let mut rest = words;
    for f in record.fields {
        // A field narrower than a word (`buffer_byte`) is its record's one word.
        let (mine, next) = rest.split_at((f.width / 4).max(1).min(rest.len()));
        rest = next;
        match (f.ty, mine) {
            (fm::Type::U32s, _) => {
                w.put_words(f, mine);
            }
            (_, &[word]) if !f.parts.is_empty() => {
                let values: Vec<u64> = f.parts.iter().map(|p| p.get(u64::from(word))).collect();
                w.put_parts(f, &values);
            }
            (_, &[word]) => {
                w.put_u32(f, word);
            }
            _ => {
                w.refuse(f);
            }
        }
    }
    piece(at, record, prefix, w)
}

/// Records of 32-bit words `(index, file offset, words)`, one piece each, named `name[index]`.
fn word_record_pieces<'a>(
    record: Record,
    name: &str,
    records: impl Iterator<Item = (usize, u64, &'a [u32])>,
) -> Vec<Piece> {
    records
        .map(|(i, at, words)| word_record_piece(record, at, words, format!("{name}[{i}]")))
        .collect()
}

/// Every command of every state buffer (v2 LOADSTATE, v1 `load_states`) encoded again from its decoded fields, one piece per
/// command, in file order (`None` unless the buffers decode and tile the section).
fn command_pieces(
    streams: &crate::nbg::parse::command_tables::CommandStreams,
    name: &str,
) -> Option<Vec<Piece>> {
    if !streams.complete() {
        return None;
    }
    Some(
        streams
            .decoded
            .iter()
            .flat_map(|(entry, at, commands)| buffer_pieces(name, *entry, *at, commands))
            .collect(),
    )
}

/// The commands of one state buffer (entry `entry` of `name`, at file offset `at`), each encoded
/// again from its decoded fields and named `name[entry].command[k]`.
fn buffer_pieces<'a>(
    name: &'a str,
    entry: u64,
    at: u64,
    commands: &'a [crate::nbg::commands::Command],
) -> impl Iterator<Item = Piece> + 'a {
    commands.iter().enumerate().map(move |(k, c)| {
        let mut bytes = Vec::with_capacity(c.len() as usize);
        c.encode(&mut bytes);
        Piece {
            at: at + c.at,
            record: fm::fe_load_state::RECORD,
            skip: 0,
            prefix: format!("{name}[{entry}].command[{k}]"),
            bytes: Ok(bytes),
        }
    })
}

/// One entry of a table of buffers (`patch_targets::Region`): a state stream's commands or a
/// command entry's records, named `name[entry]`; `None` when the entry is not decoded.
fn region_pieces(
    regions: Option<&[crate::nbg::parse::patch_targets::Region]>,
    streams: Option<&crate::nbg::parse::command_tables::CommandStreams>,
    entry: usize,
    name: &str,
) -> Option<Vec<Piece>> {
    let r = regions?.iter().find(|r| r.entry == entry)?;
    if let (Some(record), Some(words)) = (r.record, r.words.as_ref()) {
        let size = record.size as u64;
        return Some(word_record_pieces(
            record,
            &format!("{name}[{entry}].{}", r.prefix()),
            words
                .iter()
                .enumerate()
                .map(|(i, w)| (i, r.offset + i as u64 * size, &w[..])),
        ));
    }
    let (_, at, commands) = streams?
        .decoded
        .iter()
        .find(|(e, _, _)| *e == entry as u64)?;
    Some(buffer_pieces(name, entry as u64, *at, commands).collect())
}

/// The NN or TP commands (as `holds` says the section or table holds them) as (index, file
/// offset, words).
fn command_words<'a>(
    holds: Holds,
    nn: Option<&'a [crate::nbg::parse::command_tables::NnCommand]>,
    tp: Option<&'a [crate::nbg::parse::command_tables::TpCommand]>,
) -> Option<Vec<(usize, u64, &'a [u32])>> {
    Some(match holds {
        Holds::NnCommands => nn?
            .iter()
            .map(|c| (c.index, c.offset, &c.words[..]))
            .collect(),
        Holds::TpCommands => tp?
            .iter()
            .map(|c| (c.index, c.offset, &c.words[..]))
            .collect(),
        _ => return None,
    })
}

/// The decoded values of the layer, operation, SH, patch (both families), SW, hardware-init or
/// PPU parameter (v1) table `holds` names, in table order.
fn decoded_of(r: &Records, holds: Holds) -> Option<Vec<&Decoded>> {
    fn all<T>(records: &[T], fields: impl Fn(&T) -> &Decoded) -> Vec<&Decoded> {
        records.iter().map(fields).collect()
    }
    Some(match holds {
        Holds::Layers => all(r.layers.as_deref()?, |x| &x.fields),
        Holds::Operations => all(r.operations.as_deref()?, |x| &x.fields),
        Holds::ShOperations => all(r.sh_operations.as_deref()?, |x| &x.fields),
        Holds::Patches => all(&r.patches.as_ref()?.records, |x| &x.fields),
        Holds::SwOperations => all(r.sw_operations.as_deref()?, |x| &x.fields),
        Holds::HwInitOperations => all(r.hw_init_operations.as_deref()?, |x| &x.fields),
        Holds::PpuParams => all(r.ppu_params.as_deref()?, |x| &x.fields),
        _ => return None,
    })
}

/// The graph records of a table at `at` with `size`-byte records, as `holds` says the table
/// holds them, each encoded again from the values it was decoded to (`nbg::decoded`): every
/// graph record goes through this one writer.
fn record_pieces(r: &Records, kind: &Kind, at: u64, size: usize, name: &str) -> Option<Vec<Piece>> {
    let pieces = decoded_of(r, kind.holds)?
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            let offset = at + (i * size) as u64;
            piece(offset, d.record(), format!("{name}[{i}]"), d.write())
        });
    Some(pieces.collect())
}

/// The v2 decoded-record owner `o` encoded again, one piece per record (a coefficient part
/// decoded anew from the bytes `read` gives).
pub(super) fn v2<'a>(g: &NbgV2<'_>, o: &Owner, read: &Read<'a>) -> Option<Vec<Piece>> {
    match o.origin {
        Origin::Structure => match o.label.as_str() {
            "header" => Some(vec![v2_header(g)]),
            "sub-header" => Some(vec![piece(
                g.sub_header.offset,
                fm::v2_sub_header::RECORD,
                "sub_header".into(),
                g.sub_header.fields.write(),
            )]),
            "section directory" => Some(v2_directory(g)),
            _ => None,
        },
        Origin::Section(i) => {
            let s = g.sections.get(i)?;
            let name = s.type_name;
            // State buffers are command streams, which no record layout holds.
            if s.kind == section::LOADSTATE {
                return command_pieces(g.load_states.as_ref()?, name);
            }
            let kind = crate::nbg::holds::v2(s.kind)?;
            let one =
                |record: Record, w: Writer| Some(vec![piece(s.offset, record, name.into(), w)]);
            match kind.holds {
                Holds::Io => {
                    let records = if s.kind == section::OUTPUT {
                        &g.outputs
                    } else {
                        &g.inputs
                    };
                    Some(io_pieces(records, crate::nbg::parse::v2::io_layout(), name))
                }
                Holds::NetworkInfo => one(fm::v2_network_info::RECORD, network_info(g)?),
                Holds::MemoryPool => {
                    let mut w = Writer::new(fm::v2_memory_pool::SIZE);
                    w.put_uint(&fm::v2_memory_pool::used_size, g.memory_pool_bytes?);
                    one(fm::v2_memory_pool::RECORD, w)
                }
                Holds::VipSram => {
                    let mut w = Writer::new(fm::v2_vip_sram::SIZE);
                    w.put_u32(&fm::v2_vip_sram::used_size, g.vip_sram_bytes?);
                    one(fm::v2_vip_sram::RECORD, w)
                }
                Holds::AxiSram => {
                    let mut w = Writer::new(fm::v2_axi_sram::SIZE);
                    w.put_u32(&fm::v2_axi_sram::used_size, g.axi_sram_bytes?);
                    one(fm::v2_axi_sram::RECORD, w)
                }
                Holds::Checksums => {
                    let pairs: Vec<[u64; 2]> = g
                        .section_checksums
                        .iter()
                        .map(|c| [u64::from(c.section_type), u64::from(c.stored)])
                        .collect();
                    Some(pair_pieces(
                        fm::v2_checksum_record::RECORD,
                        s.offset,
                        &pairs,
                        name,
                    ))
                }
                Holds::IndexEntries => {
                    let t = g.index_tables.iter().find(|t| t.section_type == s.kind)?;
                    Some(pair_pieces(
                        fm::v2_index_entry::RECORD,
                        s.offset,
                        &t.entries,
                        name,
                    ))
                }
                Holds::DynaioEntries => {
                    let d = g.dynamic_io.as_ref()?;
                    let pairs: Vec<[u64; 2]> =
                        d.entries.iter().map(|e| [e.offset, e.size]).collect();
                    Some(pair_pieces(
                        fm::v2_dynaio_entry::RECORD,
                        s.offset,
                        &pairs,
                        name,
                    ))
                }
                Holds::NnCommands | Holds::TpCommands => Some(word_record_pieces(
                    kind.record(u64::from(s.entry_size))?,
                    name,
                    command_words(
                        kind.holds,
                        g.nn_commands.as_deref(),
                        g.tp_commands.as_deref(),
                    )?
                    .into_iter(),
                )),
                _ => record_pieces(&g.records, kind, s.offset, s.entry_size as usize, name),
            }
        }
        Origin::SectionEntry(i, e) => {
            let s = g.sections.get(i)?;
            let (regions, streams) = g.regions_of(s.kind);
            region_pieces(regions, streams, e, s.type_name)
        }
        Origin::Coefficient(i, e, part) => {
            let name = g.sections.get(i)?.type_name;
            coefficient_piece(&g.coefficient_view(), read, name, e, part)
        }
        _ => None,
    }
}

/// A part of a decoded coefficient entry of the table `name`, written again from the entry
/// decoded anew (read through `read`) and cut as the ledger cut it.
fn coefficient_piece<'a>(
    view: &crate::nbg::parse::patch_targets::CoefficientView<'_>,
    read: &Read<'a>,
    name: &str,
    entry: usize,
    part: crate::nbg::coefficients::Part,
) -> Option<Vec<Piece>> {
    coefficient_parts(view, read, name, Some(entry))
        .remove(&(entry, part))
        .map(|p| vec![p])
}

/// Every part the ledger owns of every decoded entry of the coefficient table `name` (or `only`
/// one entry), written again from the entries decoded anew (read through `read`), by entry and
/// part.
pub(super) fn coefficient_parts<'a>(
    view: &crate::nbg::parse::patch_targets::CoefficientView<'_>,
    read: &Read<'a>,
    name: &str,
    only: Option<usize>,
) -> BTreeMap<(usize, crate::nbg::coefficients::Part), Piece> {
    use crate::nbg::coefficients::{self, Part};
    let c = coefficients::of_with(view, only, read, coefficients::Depth::Streams);
    let mut out = BTreeMap::new();
    let mut put = |entry: usize, part: Part, at: u64, bytes: Vec<u8>, record: Record| {
        let piece = Piece {
            at,
            record,
            skip: 0,
            prefix: format!("{name}[{entry}].{}", part.label()),
            bytes: Ok(bytes),
        };
        out.insert((entry, part), piece);
    };
    for t in &c.tables {
        if let Some(b) = t.rewritten() {
            put(t.entry, Part::Table, t.offset, b, COEF_VALUES);
        }
    }
    for i in c.images.iter().filter(|i| i.padding_zero) {
        put(i.entry, Part::Image, i.offset, i.rewritten(), COEF_VALUES);
    }
    for z in c.zero_run.iter().filter(|z| z.reencoded) {
        put(
            z.entry,
            Part::ZeroRun,
            z.offset,
            z.rewritten.clone(),
            COEF_VALUES,
        );
    }
    for b in &c.tp {
        for p in &b.parts {
            let part = Part::TpPart(p.offset - b.offset);
            put(b.entry, part, p.offset, p.rewritten.clone(), COEF_VALUES);
        }
    }
    for b in &c.buffers {
        for p in b.ledger_parts().unwrap_or_default() {
            let record = if p.part == Part::Header {
                fm::coef_header_v8::RECORD
            } else {
                COEF_VALUES
            };
            put(b.entry, p.part, p.start, p.bytes, record);
        }
    }
    out
}

/// Coded streams, biases and tables: bytes with no fixed fields (a mismatch is named by its
/// offset in the part).
const COEF_VALUES: fm::Record = fm::Record {
    id: "coef_values",
    family: Some(fm::Family::V2),
    public_name: "coefficient stream, biases, table or image",
    size: 0,
    fields: &[],
    base: None,
};

fn v2_header(g: &NbgV2<'_>) -> Piece {
    piece(
        0,
        fm::v2_header::RECORD,
        "header".into(),
        g.header.fields.write(),
    )
}

fn v2_directory(g: &NbgV2<'_>) -> Vec<Piece> {
    use fm::v2_section_header as d;
    g.sections
        .iter()
        .map(|s| {
            let mut w = Writer::new(d::SIZE);
            w.put_u32(&d::kind, s.kind)
                .put_uint(&d::offset, s.offset)
                .put_uint(&d::size, s.size)
                .put_uint(&d::load_address, s.load_address)
                .put_u32(&d::alignment, s.alignment)
                .put_u32(&d::entry_size, s.entry_size)
                .put_words(&d::reserved_words, &s.reserved_words);
            let prefix = format!("directory[{}]({})", s.index, s.type_name);
            piece(s.header_offset, d::RECORD, prefix, w)
        })
        .collect()
}

fn network_info(g: &NbgV2<'_>) -> Option<Writer> {
    g.network_info.as_ref().map(|n| n.fields.write())
}

/// The v1 fixed part up to the entries, from the decoded header, feature database and memory
/// fields.
fn v1_fixed(g: &NbgV1<'_>) -> Writer {
    use fm::v1_fixed as fx;
    let h = &g.header;
    let db = &g.feature_database;
    let mut w = Writer::new(g.fixed_part.entries_offset as usize);
    w.put_bytes(&fx::magic, h.magic.as_bytes())
        .put_u32(&fx::version, h.version)
        .put_u32(&fx::target, h.target)
        .put_name(
            &fx::network_name,
            &h.network_name,
            &h.network_name_trailing_bytes,
        )
        .put_u32(&fx::layer_count, h.layer_count)
        .put_u32(&fx::operation_count, h.operation_count)
        .put_u32(&fx::input_count, h.input_count)
        .put_u32(&fx::output_count, h.output_count);
    let bits: Vec<u64> = fx::feature_bits
        .parts
        .iter()
        .map(|p| db.bits.get(p.name).map_or(u64::MAX, |&v| u64::from(v)))
        .collect();
    w.put_parts(&fx::feature_bits, &bits)
        .put_u32(&fx::num_pixel_pipes, db.num_pixel_pipes)
        .put_parts(
            &fx::core_fields,
            &[
                u64::from(db.core_count),
                u64::from(db.device_index),
                u64::from(db.axi_bus_width_index),
                u64::from(db.cluster_id_width),
                u64::from(db.nn_core_count),
                u64::from(db.tp_core_count),
                u64::from(db.core_reserved),
            ],
        )
        .put_u32(&fx::nbg_crc_sum, db.nbg_crc_sum)
        .put_u32(&fx::vip_sram_width, db.vip_sram_width)
        .put_bytes(&fx::vsi_reserved, &db.vsi_reserved.raw)
        .put_bytes(&fx::customer_reserved, &db.customer_reserved.raw)
        .put_words(
            &fx::memory_pool,
            &[
                g.memory_pool.size,
                g.memory_pool.alignment,
                g.memory_pool.base,
            ],
        )
        .put_words(&fx::axi_sram, &[g.axi_sram.base, g.axi_sram.size]);
    if let Some(v) = &g.vip_sram {
        w.put_words(&fx::vip_sram, &[v.base, v.size]);
    }
    w
}

/// The v1 decoded-record owner `o` encoded again, one piece per record.
pub(super) fn v1<'a>(g: &NbgV1<'_>, o: &Owner, read: &Read<'a>) -> Option<Vec<Piece>> {
    let entries = g.fixed_part.entries_offset;
    match o.origin {
        Origin::Structure if o.end <= entries => {
            // One fixed record; each structure owner is compared over its own range.
            let bytes = v1_fixed(g)
                .finish()
                .map(|b| {
                    b.get(o.start as usize..o.end as usize)
                        .map_or_else(Vec::new, <[u8]>::to_vec)
                })
                .map_err(|o| o.field);
            Some(vec![Piece {
                at: o.start,
                record: fm::v1_fixed::RECORD,
                skip: o.start,
                prefix: "header".into(),
                bytes,
            }])
        }
        Origin::Structure if o.start == entries => {
            let pairs: Vec<[u64; 2]> = g.tables.iter().map(|t| [t.offset, t.size]).collect();
            Some(pair_pieces(
                fm::v1_entry::RECORD,
                entries,
                &pairs,
                "entries",
            ))
        }
        Origin::Table(k) => {
            let t = g.tables.get(k)?;
            // State buffers are command streams, which no record layout holds.
            if t.name == "load_states" {
                return command_pieces(g.load_states.as_ref()?, t.name);
            }
            let size = t.record_size? as usize;
            // An index table of another table: (offset, size) entries.
            if f1::ENTRIES.get(k)?.nests_into.is_some() {
                let n = g.nested_tables.iter().find(|n| n.table == t.name)?;
                return Some(pair_pieces(
                    fm::v1_entry::RECORD,
                    t.offset,
                    &n.entries,
                    t.name,
                ));
            }
            let kind = crate::nbg::holds::v1(t.name)?;
            match kind.holds {
                Holds::Io => Some(io_pieces(
                    if t.name == "output" {
                        &g.outputs
                    } else {
                        &g.inputs
                    },
                    &crate::nbg::parse::v1::io_layout(g.header.version),
                    t.name,
                )),
                Holds::NnCommands | Holds::TpCommands => Some(word_record_pieces(
                    kind.record(size as u64)?,
                    t.name,
                    command_words(
                        kind.holds,
                        g.nn_commands.as_deref(),
                        g.tp_commands.as_deref(),
                    )?
                    .into_iter(),
                )),
                _ => record_pieces(&g.records, kind, t.offset, size, t.name),
            }
        }
        Origin::TableEntry(k, e) => {
            let t = g.tables.get(k)?;
            let (regions, streams) = g.regions_of(t.name);
            region_pieces(regions, streams, e, t.name)
        }
        Origin::Coefficient(k, e, part) => {
            let name = g.tables.get(k)?.name;
            coefficient_piece(&g.coefficient_view(), read, name, e, part)
        }
        _ => None,
    }
}
