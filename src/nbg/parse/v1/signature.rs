//! Structural boundaries, the structural signature and the records glue.

use super::*;

/// Every structural boundary the parser knows, for the CRC hypothesis registry.
pub fn boundaries(tables: &[Table], fixed_end: u64, extension_end: u64) -> Vec<(u64, String)> {
    boundary_points(tables, fixed_end, extension_end)
        .map(|(offset, label)| {
            let label = match label {
                Label::Named(name) => name.to_string(),
                Label::Start(table) => format!("start of {table} table"),
                Label::End(table) => format!("end of {table} table"),
            };
            (offset, label)
        })
        .collect()
}

/// How a boundary is named, built only when a hypothesis is reported.
pub(super) enum Label {
    Named(&'static str),
    Start(&'static str),
    End(&'static str),
}

/// The offsets of `boundaries`, with the labels still unbuilt.
pub(super) fn boundary_points(
    tables: &[Table],
    fixed_end: u64,
    extension_end: u64,
) -> impl Iterator<Item = (u64, Label)> + '_ {
    [
        (FIXED_HEADER_END, Label::Named("end of header counts")),
        (
            f::OFF_MEMORY_POOL as u64,
            Label::Named("end of feature database"),
        ),
        (fixed_end, Label::Named("end of fixed part")),
        (extension_end, Label::Named("end of opaque fixed extension")),
    ]
    .into_iter()
    .chain(tables.iter().filter(|t| t.size > 0).flat_map(|t| {
        [
            (t.offset, Label::Start(t.name)),
            (t.end(), Label::End(t.name)),
        ]
    }))
}

pub(super) fn structural_signature(g: &NbgV1<'_>) -> Hash256 {
    let io = crate::nbg::parse::io_signature;
    let h = &g.header;
    let doc = json!({
        "format": g.format,
        "version": h.version,
        "target": h.target,
        "file_size": g.file.size,
        "network_name": h.network_name,
        "counts": [h.layer_count, h.operation_count, h.input_count, h.output_count],
        "feature_bits": g.feature_database.raw_bits,
        "memory_pool": [g.memory_pool.size, g.memory_pool.alignment, g.memory_pool.base],
        "axi_sram": [g.axi_sram.base, g.axi_sram.size],
        "vip_sram": g.vip_sram.as_ref().map(|s| [s.base, s.size]),
        "entries": g.tables.iter().map(|t| [t.offset, t.size]).collect::<Vec<_>>(),
        "extension_size": g.opaque_fixed_extension.size,
        "inputs": io(&g.inputs),
        "outputs": io(&g.outputs),
        "nested": g.nested_tables.iter().map(|n| json!([n.table, n.entries])).collect::<Vec<_>>(),
    });
    Hash256::of(doc.to_string().as_bytes())
}

/// The v1 glue: tables by name, record sizes and counts already checked by the v1 parser.
/// Operation state ids index `load_states_table` where the version has it, else `lcd_table`;
/// hardware-init state ids index `icd_table`.
pub(super) fn records(
    data: &crate::nbg::read::Data<'_>,
    version: u32,
    tables: &[Table],
    ppu_params_referenced: bool,
    command_bytes: (Option<u64>, Option<u64>),
    opts: crate::nbg::parse::Options,
) -> Result<crate::nbg::parse::records::Records, Failure> {
    use crate::nbg::parse::records::{Index, Tables, as_slice, decode_with, v1_decodes};
    // What this stage reads is noted as its own (a sweep judges a flip only it reads by it).
    let data = &data.staged(crate::nbg::read::Stage::Records);
    if !v1_decodes("layer", version) {
        return Ok(crate::nbg::parse::records::Records::default());
    }
    let find = |name: &str| tables.iter().find(|t| t.name == name);
    // Record sizes and counts were checked by the v1 parser; each table is read once.
    let read = |name: &str| {
        find(name)
            .filter(|t| v1_decodes(t.name, version))
            .and_then(|t| {
                t.record_size
                    .map(|record_size| (t.offset, record_size, data.range(t.offset, t.end())))
            })
    };
    // No rule reads a patch record: check-only mode takes the table's geometry alone.
    let (patch, patch_unread) = match find("patch").filter(|t| v1_decodes(t.name, version)) {
        Some(t) if !opts.fingerprints => (
            None,
            Option::zip(t.record_size, t.record_count).map(|(r, n)| (t.offset, r, n)),
        ),
        _ => (read("patch"), None),
    };
    let (layer, operation, sh) = (read("layer"), read("operation"), read("sh"));
    let (sw, hw_init, ppu_param) = (read("sw"), read("hw_init"), read("ppu_param"));
    let count = |name: &str| find(name).and_then(|t| t.record_count);
    let index = |name: &str| find(name).map(|t| data.range(t.offset, t.end()));
    let (states, label) = match index("load_states_table") {
        Some(b) => (Some(b), "load_states table"),
        None => (index("lcd_table"), "lcd table"),
    };
    let state_table = states.as_deref().map(|bytes| Index { label, bytes });
    // Before 0x00010018 there is no ppu_instr table and SH records index the lcd table, as
    // nbinfo's `Instr Size` shows on every public file of those versions.
    let (ppu_instr, ppu_label) = match index("ppu_instr_table") {
        Some(b) => (Some(b), "ppu_instr table"),
        None => (index("lcd_table"), "lcd table"),
    };
    let bytes32 = |b: Option<u64>| b.and_then(|b| u32::try_from(b).ok());
    decode_with(
        &Tables {
            layer: as_slice(&layer),
            operation: as_slice(&operation),
            sh: as_slice(&sh),
            patch: as_slice(&patch),
            patch_unread,
            nn_records: count("nn"),
            tp_records: count("tp"),
            state_table,
            ppu_instr_table: ppu_instr.as_deref().map(|bytes| Index {
                label: ppu_label,
                bytes,
            }),
            nn_command_bytes: bytes32(command_bytes.0),
            tp_command_bytes: bytes32(command_bytes.1),
            coef_table: None,
            sw: as_slice(&sw),
            hw_init: as_slice(&hw_init),
            ppu_param: as_slice(&ppu_param),
            icd_entries: find("icd_table").map(|t| t.size / 8),
            ppu_params_referenced,
        },
        opts,
    )
}
