//! Decoding the v1 fixed part's pieces: the feature database, I/O tables, nested index tables
//! and the CRC field.

use super::*;

pub(super) fn feature_database(v: &fm::View<'_>) -> FeatureDatabase {
    let raw = v.u32(&fx::feature_bits);
    let bits: std::collections::BTreeMap<&'static str, u32> = fx::feature_bits
        .parts
        .iter()
        .map(|p| (p.name, p.get_as(u64::from(raw))))
        .collect();
    let core = v.uint(&fx::core_fields);
    use fx::core_fields as cf;
    FeatureDatabase {
        offset: f::FEATURE_DB as u64,
        raw_bits: raw,
        nn_command_bytes: f::command_bytes(fx::feature_bits::nn_command_size.get_as(raw.into())),
        tp_command_bytes: f::command_bytes(fx::feature_bits::tp_command_size.get_as(raw.into())),
        bits,
        num_pixel_pipes: v.u32(&fx::num_pixel_pipes),
        core_count: cf::core_count.get_as(core),
        device_index: cf::device_index.get_as(core),
        axi_bus_width_index: cf::axi_bus_width_index.get_as(core),
        cluster_id_width: cf::cluster_id_width.get_as(core),
        nn_core_count: cf::nn_core_count.get_as(core),
        tp_core_count: cf::tp_core_count.get_as(core),
        core_reserved: cf::reserved.get_as(core),
        nbg_crc_sum: v.u32(&fx::nbg_crc_sum),
        vip_sram_width: v.u32(&fx::vip_sram_width),
        vsi_reserved: Reserved::of(v.bytes(&fx::vsi_reserved)),
        customer_reserved: Reserved::of(v.bytes(&fx::customer_reserved)),
    }
}

/// v1 I/O layouts: the three quantization slots (fixed_pos, scale, zero point) follow the type.
pub fn io_layout(version: u32) -> IoLayout {
    macro_rules! layout {
        ($m:ident, $name:expr) => {
            IoLayout {
                record: fm::$m::RECORD,
                dim_count: fm::$m::dimension_count,
                dims: fm::$m::dimensions,
                data_format: fm::$m::data_format,
                data_type: fm::$m::data_type,
                quant_format: fm::$m::quant_format,
                quant_fields: &[fm::$m::fixed_point, fm::$m::scale, fm::$m::zero_point],
                quant: QuantSlots {
                    words: 3,
                    fixed_point: 0,
                    scale: 1,
                    zero_point: 2,
                },
                name: $name,
            }
        };
    }
    let record = f::io_record(version);
    if record == fm::v1_io_record::RECORD {
        layout!(v1_io_record, Some(fm::v1_io_record::name))
    } else if record == fm::v1_io_record_108::RECORD {
        layout!(v1_io_record_108, Some(fm::v1_io_record_108::name))
    } else {
        layout!(v1_io_record_44, None)
    }
}

pub(super) fn decode_io_table(
    data: &Data<'_>,
    t: &Table,
    layout: &IoLayout,
) -> Result<Vec<IoRecord>, Failure> {
    // Invariant: `holds::v1_record_size` is `Some` for input and output at every version, so
    // the record loop above set `record_count` of both (or returned a failure).
    let count = t.record_count.expect("I/O record size is always known");
    if count > IO_MAX_RECORDS {
        return fail(
            Code::IoCountLimit,
            t.entry_offset + fm::v1_entry::size.offset as u64,
            format!(
                "{} table holds {count} records; at most {IO_MAX_RECORDS} are allowed",
                t.name
            ),
        );
    }
    // At most 256 records: read only now that the count is bounded.
    collect_records(
        data.range(t.offset, t.end())
            .chunks_exact(layout.size())
            .enumerate()
            .map(|(i, r)| decode_io(r, i, t.offset + (i * layout.size()) as u64, layout)),
    )
}

/// Nested (offset, size) entries must land inside their target table's data.
pub(super) fn nested_tables(
    data: &Data<'_>,
    tables: &[Table],
) -> Result<Vec<NestedTable>, Failure> {
    let mut out = Vec::new();
    for t in tables {
        let Some(target_name) = f::ENTRIES[t.index].nests_into else {
            continue;
        };
        let Some(target) = tables.iter().find(|x| x.name == target_name) else {
            continue;
        };
        // Bounded by the table's in-file size (one entry per 8 bytes of it); read in pieces.
        let mut entries = Vec::with_capacity(((t.end() - t.offset) / 8) as usize);
        data.visit(t.offset, t.end(), 8, |at, records| {
            for (j, r) in records.chunks_exact(8).enumerate() {
                let i = (at - t.offset) / 8 + j as u64;
                let (offset, size) = (u64::from(le32(r, 0)), u64::from(le32(r, 4)));
                if offset + size > target.size {
                    return fail(
                        Code::SectionOutOfBounds,
                        t.offset + 8 * i,
                        format!(
                            "{} entry {i} (offset 0x{offset:x}, size {size}) leaves the {}-byte {} table",
                            t.name, target.size, target.name
                        ),
                    );
                }
                entries.push([offset, size]);
            }
            Ok(())
        })?;
        out.push(NestedTable {
            table: t.name,
            target: target.name,
            entry_count: entries.len(),
            entries,
        });
    }
    Ok(out)
}

/// The CRC field's class. `around` is the CRC-32 of the bytes before and after the field, and
/// with the tables' CRCs it spares the hypothesis registry a pass over the file.
pub(super) fn crc_field(
    data: &Data<'_>,
    around: (u32, u32),
    computed: u32,
    db: &FeatureDatabase,
    tables: &[Table],
    fixed_end: u64,
    extension_end: u64,
) -> CrcField {
    let stored = db.nbg_crc_sum;
    let (classification, rule) = if stored == 0 {
        (CrcClass::Absent, None)
    } else if stored == computed {
        (
            CrcClass::Matches,
            Some(crc_rules::WHOLE_FILE_FIELD_ZEROED.to_string()),
        )
    } else {
        let field = f::OFF_CRC as u64;
        let known: Vec<((u64, u64), u32)> = tables
            .iter()
            .filter_map(|t| Some(((t.offset, t.end()), t.fingerprint.as_ref()?.crc32)))
            .chain([((0, field), around.0), ((field + 4, data.len()), around.1)])
            .collect();
        let mut crc_of = |s, e| match known.iter().find(|k| k.0 == (s, e)) {
            Some(&(_, crc)) => crc,
            None => data.crc32(s, e),
        };
        // Whether any hypothesis matches, without building the registry (the common answer
        // in a mutation sweep is no); its first match is named only when there is one.
        let offsets: Vec<u64> = boundary_points(tables, fixed_end, extension_end)
            .map(|(offset, _)| offset)
            .collect();
        let any = crc_rules::registry_matches(data.len(), field, &offsets, stored, &mut crc_of);
        let found = match any {
            Some(false) => Vec::new(),
            _ => {
                let boundaries = boundaries(tables, fixed_end, extension_end);
                crc_rules::explain_v1_with(data.len(), field, stored, &boundaries, crc_of)
            }
        };
        match found.first() {
            Some(h) => (CrcClass::Matches, Some(h.rule.clone())),
            None => (CrcClass::Unexplained, None),
        }
    };
    CrcField {
        offset: f::OFF_CRC as u64,
        stored,
        computed_whole_file_zeroed: computed,
        classification,
        rule,
    }
}

/// The command tables of a v1 file, decoded.
#[derive(Default)]
pub(super) struct Commands {
    pub load_states: Option<CommandStreams>,
    pub nn: Option<Vec<NnCommand>>,
    pub tp: Option<Vec<TpCommand>>,
}

/// The `nn` and `tp` tables through the layout `holds` gives for their record size, and the
/// `load_states` buffers `load_states_table` indexes as command streams; each table is marked
/// decoded when every byte of it is a decoded record or command.
pub(super) fn command_tables(
    data: &Data<'_>,
    tables: &mut [Table],
    nested: &[NestedTable],
) -> Commands {
    let words = |t: &Table| {
        let size = t.record_size?;
        let record = crate::nbg::holds::v1(t.name)?.record(size)?;
        command_tables::word_records(data, t.offset, t.size, record)
    };
    let find = |tables: &[Table], name: &str| tables.iter().position(|t| t.name == name);
    let nn = find(tables, "nn").and_then(|i| words(&tables[i]).map(|w| (i, w)));
    let tp = find(tables, "tp").and_then(|i| words(&tables[i]).map(|w| (i, w)));
    let load_states = find(tables, "load_states").and_then(|i| {
        let n = nested.iter().find(|n| n.table == "load_states_table")?;
        let t = &tables[i];
        Some((
            i,
            command_tables::streams(data, t.offset, t.size, &n.entries),
        ))
    });
    let mut out = Commands {
        load_states: None,
        nn: None,
        tp: None,
    };
    if let Some((i, w)) = nn {
        tables[i].decoded = true;
        out.nn = Some(command_tables::nn_commands(w));
    }
    if let Some((i, w)) = tp {
        tables[i].decoded = true;
        out.tp = Some(command_tables::tp_commands(w));
    }
    if let Some((i, s)) = load_states {
        tables[i].decoded = s.complete();
        out.load_states = Some(s);
    }
    out
}

/// The `lcd` state buffers operations name (only where the file has no `load_states` table:
/// before 0x00010018 their state ids index `lcd_table`) and the `icd` buffers hardware-init
/// records name, as command streams.
pub(super) fn named_streams(
    data: &Data<'_>,
    tables: &[Table],
    nested: &[NestedTable],
    records: &crate::nbg::parse::records::Records,
) -> (Option<CommandStreams>, Option<CommandStreams>) {
    let of = |table: &str, index: &str, named: Vec<u32>| {
        let t = tables.iter().find(|t| t.name == table)?;
        let n = nested.iter().find(|n| n.table == index)?;
        Some(command_tables::named_streams(
            data, t.offset, &n.entries, named,
        ))
    };
    let lcd = if tables.iter().any(|t| t.name == "load_states_table") {
        None
    } else {
        let named = records.operations.as_deref().map(|ops| {
            ops.iter()
                .filter(|o| o.kind() != crate::nbg::format::records::operation_type::SW)
                .map(|o| o.state_id())
                .collect()
        });
        named.and_then(|n| of("lcd", "lcd_table", n))
    };
    let icd = records
        .hw_init_operations
        .as_deref()
        .and_then(|h| of("icd", "icd_table", h.iter().map(|h| h.state_id()).collect()));
    (lcd, icd)
}

/// Every `lcd`, `icd`, `coeff_data`, `load_states` and `ppu_instr` entry and what it holds
/// (`patch_targets::regions`), where the table and its index are present.
pub(super) fn regions(
    g: &NbgV1<'_>,
    data: &Data<'_>,
) -> [Option<Vec<crate::nbg::parse::patch_targets::Region>>; 5] {
    use crate::nbg::parse::patch_targets as pt;
    let Some(cx) = g.patch_context() else {
        return [None, None, None, None, None];
    };
    let of = |table: &'static str, index: &str| {
        let t = g.table(table).filter(|t| t.size > 0)?;
        let n = g.nested_tables.iter().find(|n| n.table == index)?;
        Some(pt::regions(
            &cx,
            table,
            &n.entries,
            t.offset,
            g.regions_of(table).1,
            data,
        ))
    };
    [
        of("lcd", "lcd_table"),
        of("icd", "icd_table"),
        of("coeff_data", "coeff_data_table"),
        of("load_states", "load_states_table"),
        of("ppu_instr", "ppu_instr_table"),
    ]
}
