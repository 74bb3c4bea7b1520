//! The structural signature, the corpus invariants and the records glue.

use super::*;

pub(super) fn structural_signature(g: &NbgV2<'_>) -> Hash256 {
    let io = crate::nbg::parse::io_signature;
    let doc = json!({
        "format": g.format,
        "version": g.header.version(),
        "target": g.header.target(),
        "declared_file_size": g.header.declared_file_size(),
        "class_word": [g.header.class(), g.header.reserved().class_word_reserved_bits],
        "reserved": [g.header.reserved().reserved2, g.header.reserved().reserved3],
        "sub_header": [g.sub_header.offset, g.sub_header.section_headers_offset(),
                       g.sub_header.section_header_size(), g.sub_header.section_header_count()],
        "sections": g.sections.iter().map(|s| json!([
            s.kind, s.offset, s.size, s.load_address, s.alignment, s.entry_size, s.reserved_words
        ])).collect::<Vec<_>>(),
        "inputs": io(&g.inputs),
        "outputs": io(&g.outputs),
        "network_info": g.network_info.as_ref().map(|n| json!([
            n.name(), n.input_count(), n.output_count(), n.layer_count(), n.absolute_operation_count(),
            n.operation_count(), n.core_count(), n.address_width(), n.attribute().raw
        ])),
        "memory": [g.memory_pool_bytes, g.vip_sram_bytes.map(u64::from), g.axi_sram_bytes.map(u64::from)],
        "dynamic_io": g.dynamic_io.as_ref().map(|d| d.entries.iter().map(|e| [e.offset, e.size]).collect::<Vec<_>>()),
    });
    Hash256::of(doc.to_string().as_bytes())
}

/// Relations that held across the spec's stock corpus (and the record relations of
/// `invariants`). Not format rules.
pub(super) fn corpus_invariants(g: &NbgV2<'_>) -> Vec<crate::nbg::parse::invariants::Invariant> {
    let mut inv = crate::nbg::parse::invariants::Invariants::default();
    let mut check = |name, expected: &str, observed: String, holds: bool| {
        inv.check(name, expected, observed, holds)
    };
    let target = g.header.target();
    check(
        "target",
        "0x1000000e",
        crate::nbg::format::target_hex(target),
        target == 0x1000_000e,
    );
    let n = g.sections.len();
    check(
        "section-count",
        "18 or 20",
        n.to_string(),
        n == 18 || n == 20,
    );
    let vip = opt(g.vip_sram_bytes);
    check("vip-sram-bytes", "262144", vip.clone(), vip == "262144");
    if let Some(info) = &g.network_info {
        let raw = info.attribute().raw;
        check(
            "network-attribute",
            "0x0000000a",
            format!("0x{raw:08x}"),
            raw == 0x0a,
        );
        check(
            "core-count",
            "1",
            info.core_count().to_string(),
            info.core_count() == 1,
        );
        check(
            "address-width",
            "32",
            info.address_width().to_string(),
            info.address_width() == 32,
        );
        if let Some(ops) = g.section(section::OPERATIONS).filter(|s| s.entry_size > 0) {
            let saved = (ops.size / u64::from(ops.entry_size)) as i64;
            let delta = i64::from(info.operation_count()) - saved;
            check(
                "run-operations-minus-saved",
                "3",
                delta.to_string(),
                delta == 3,
            );
        }
    }
    let mut covered: Vec<u32> = g.section_checksums.iter().map(|c| c.section_type).collect();
    covered.sort_unstable();
    check(
        "checksummed-sections",
        "[7, 8, 19, 21, 24]",
        format!("{covered:?}"),
        covered == [7, 8, 19, 21, 24],
    );
    let r = g.header.reserved();
    let zero = g.header.class() == 0
        && r.class_word_reserved_bits == 0
        && r.reserved2 == 0
        && r.reserved3 == 0;
    check(
        "header-class-and-reserved-zero",
        "true",
        zero.to_string(),
        zero,
    );
    if let Some(d) = &g.dynamic_io {
        let l = &d.layout;
        let holds =
            l.region_whole_units && l.zero_size == 0 && l.unaligned == 0 && l.out_of_order == 0;
        inv.check(
            "dynaio-layout",
            "region of whole 64-byte units; entries positive, 64-byte aligned, in order",
            format!(
                "region {} bytes; {} zero-size, {} unaligned, {} out of order",
                d.region_bytes, l.zero_size, l.unaligned, l.out_of_order
            ),
            holds,
        );
        inv.check(
            "dynaio-padding-zero",
            "0 nonzero unmapped bytes",
            format!("{} nonzero unmapped bytes", l.nonzero_padding),
            l.nonzero_padding == 0,
        );
    }
    inv.records(&g.records);
    inv.0
}

pub(super) fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "absent".into(), |v| v.to_string())
}

/// The v2 glue: sections 3, 4, 9, 10 and 13 with their directory entry sizes, the NN/TP command
/// sizes of the network attribute, the load-state (27), PPU instruction (25), coefficient (23)
/// and ICD (14) index tables.
/// A graph with neither LAYER nor OPERATIONS has no decoded records.
pub(super) fn records(
    data: &crate::nbg::read::Data<'_>,
    sections: &[Section],
    info: Option<&NetworkInfo>,
    opts: crate::nbg::parse::Options,
) -> Result<crate::nbg::parse::records::Records, Failure> {
    use crate::nbg::format::section;
    use crate::nbg::parse::records::{Index, Tables, as_slice, decode_with};
    use fm::{layer as fl, operation as fo, patch_40bit as fp, sh_operation as fs};
    // What this stage reads is noted as its own (a sweep judges a flip only it reads by it).
    let data = &data.staged(crate::nbg::read::Stage::Records);
    let find = |kind| sections.iter().find(|s| s.kind == kind);
    // Record sizes are checked before a byte of the section is read.
    let check = |kind, sizes: &[u64]| -> Result<Option<(u64, u64, u64)>, Failure> {
        let Some(s) = find(kind) else {
            return Ok(None);
        };
        let record_size = u64::from(s.entry_size);
        if !sizes.contains(&record_size) || s.size % record_size != 0 {
            return fail(
                Code::TableRecordSize,
                s.header_offset + ENTRY_RECORD_SIZE,
                format!(
                    "{} is {} bytes with entry size {}; its records are {sizes:?} bytes",
                    s.type_name, s.size, s.entry_size
                ),
            );
        }
        Ok(Some((s.offset, s.end(), record_size)))
    };
    let size = |r: &fm::Record| r.size as u64;
    let layer = check(section::LAYER, &[size(&fl::RECORD)])?;
    let operation = check(section::OPERATIONS, &[size(&fo::RECORD)])?;
    let sh = check(section::SH, &[size(&fs::RECORD)])?;
    let patch = check(
        section::PATCH,
        &[size(&fm::patch::RECORD), size(&fp::RECORD)],
    )?;
    let hw_init = check(
        section::HWINITOPERATIONS,
        &[size(&fm::hw_init_operation::RECORD)],
    )?;
    if layer.is_none() && operation.is_none() {
        return Ok(crate::nbg::parse::records::Records::default());
    }
    // Borrowed from a graph in memory; read once, bounded by the section, from a file.
    let read =
        |x: Option<(u64, u64, u64)>| x.map(|(start, end, r)| (start, r, data.range(start, end)));
    // No rule reads a patch record: check-only mode takes the section's geometry alone.
    let (patch, patch_unread) = match patch {
        Some((start, end, r)) if !opts.fingerprints => (None, Some((start, r, (end - start) / r))),
        _ => (read(patch), None),
    };
    let (layer, operation, sh) = (read(layer), read(operation), read(sh));
    let hw_init = read(hw_init);
    let index = |kind| find(kind).map(|s: &Section| data.range(s.offset, s.end()));
    let (states, ppu_instr) = (
        index(section::LOADSTATE_TABLE),
        index(section::PPU_INSTR_TABLE),
    );
    let coef = index(section::COEF_DATA_TABLE);
    let commands = |kind, bytes: Option<u32>| {
        Option::zip(find(kind), bytes).map(|(s, b)| s.size / u64::from(b))
    };
    decode_with(
        &Tables {
            layer: as_slice(&layer),
            operation: as_slice(&operation),
            sh: as_slice(&sh),
            patch: as_slice(&patch),
            patch_unread,
            nn_records: commands(
                section::NN,
                info.and_then(|i| i.attribute().nn_command_bytes),
            ),
            tp_records: commands(
                section::TP,
                info.and_then(|i| i.attribute().tp_command_bytes),
            ),
            state_table: states.as_deref().map(|bytes| Index {
                label: "load-state table",
                bytes,
            }),
            ppu_instr_table: ppu_instr.as_deref().map(|bytes| Index {
                label: "PPU instruction table",
                bytes,
            }),
            coef_table: coef.as_deref().map(|bytes| Index {
                label: "coefficient table",
                bytes,
            }),
            hw_init: as_slice(&hw_init),
            icd_entries: find(section::ICDT).map(|s| s.size / f::INDEX_RECORD_SIZE),
            nn_command_bytes: info.and_then(|i| i.attribute().nn_command_bytes),
            tp_command_bytes: info.and_then(|i| i.attribute().tp_command_bytes),
            ..Tables::default()
        },
        opts,
    )
}
