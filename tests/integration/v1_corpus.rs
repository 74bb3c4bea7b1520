//! The public v1 files: pinned hashes, strict parse, per-file snapshots, README facts.

use crate::common;
use nbg_lab::NbgFamily;

use nbg_lab::nbg::crc_rules::CrcClass;
use nbg_lab::nbg::parse::{Graph, IoRecord, NbgV1};
use nbg_lab::parse;
use serde_json::{Value, json};

fn v1<'a>(name: &str, bytes: &'a [u8]) -> NbgV1<'a> {
    match parse(bytes) {
        Ok(Graph::V1(g)) => g,
        Ok(Graph::V2(_)) => panic!("{name} parsed as v2"),
        Err(f) => panic!("{name}: {f}"),
    }
}

fn io(records: &[IoRecord]) -> Value {
    records
        .iter()
        .map(|r| {
            json!({
                "name": r.name,
                "dimensions": r.dimensions,
                "data_format_name": r.data_format_name,
                "quantization": r.quantization.format_name,
                "storage_bytes": r.storage_bytes,
            })
        })
        .collect()
}

#[test]
fn every_public_file_parses_and_matches_its_snapshot() {
    let mut all = serde_json::Map::new();
    let Some(files) = common::corpus_files() else {
        return;
    };
    for (name, bytes, pinned) in files {
        let g = v1(&name, &bytes);
        assert_eq!(
            format!("0x{:08x}", g.header.version),
            pinned["version"].as_str().unwrap(),
            "{name}"
        );
        assert_eq!(
            format!("0x{:08x}", g.header.target),
            pinned["target"].as_str().unwrap(),
            "{name}"
        );
        let tables: Value = g
            .tables
            .iter()
            .filter(|t| t.size > 0)
            .map(|t| json!([t.name, t.offset, t.size, t.record_count]))
            .collect();
        let nested: Value = g
            .nested_tables
            .iter()
            .map(|n| json!([n.table, n.target, n.entry_count]))
            .collect();
        all.insert(
            name,
            json!({
                "version": format!("0x{:08x}", g.header.version),
                "network_name": g.header.network_name,
                "counts": {
                    "layers": g.header.layer_count,
                    "operations": g.header.operation_count,
                    "inputs": g.inputs.len(),
                    "outputs": g.outputs.len(),
                },
                "fixed_part_bytes": g.fixed_part.size,
                "extension_entries": g.fixed_part.extension_entries,
                "opaque_fixed_extension_bytes": g.opaque_fixed_extension.size,
                "inputs": io(&g.inputs),
                "outputs": io(&g.outputs),
                "tables": tables,
                "nested_tables": nested,
                "crc": {
                    "stored": g.crc.stored,
                    "classification": g.crc.classification,
                    "rule": g.crc.rule,
                },
                "structural_signature": g.structural_signature,
            }),
        );
    }
    common::snapshot_per_file(
        common::snapshot_file!("v1_corpus.json"),
        "v1_corpus.json",
        all,
    );
}

/// The corpus README's observed facts, verified rather than trusted.
#[test]
fn readme_facts_hold() {
    let Some(files) = common::corpus_files() else {
        return;
    };
    let mut versions = std::collections::BTreeSet::new();
    let mut targets = std::collections::BTreeSet::new();
    for (name, bytes, _) in files {
        let g = v1(&name, &bytes);
        versions.insert(g.header.version);
        targets.insert(g.header.target);
        let stored = u32::from_le_bytes(bytes[0x6c..0x70].try_into().unwrap());
        assert_eq!(g.crc.stored, stored);
        if g.header.version < 0x0001_0018 {
            assert_eq!(stored, 0, "{name}");
            assert_eq!(g.crc.classification, CrcClass::Absent, "{name}");
        }
        if g.header.version == 0x0001_001e {
            let mut zeroed = bytes.clone();
            zeroed[0x6c..0x70].fill(0);
            assert_eq!(crc32fast::hash(&zeroed), stored, "{name}");
            assert_eq!(g.crc.classification, CrcClass::Matches, "{name}");
            assert_eq!(g.crc.rule.as_deref(), Some("whole-file-field-zeroed"));
        }
        // The first referenced table starts exactly where the decoded fixed part ends, in the
        // versions the README describes (0x0001000f keeps 8 further bytes opaque).
        if g.header.version != 0x0001_000f {
            assert_eq!(g.opaque_fixed_extension.size, 0, "{name}");
        }
        let first = g
            .tables
            .iter()
            .filter(|t| t.size > 0)
            .map(|t| t.offset)
            .min()
            .unwrap();
        assert_eq!(
            first,
            g.fixed_part.size + g.opaque_fixed_extension.size,
            "{name}"
        );
        // The README's "0, 16 or 88 bytes" of further entry pairs, where the version has them.
        let public_end = 0x178 + 8 * 16;
        match g.header.version {
            0x0001_000c => assert_eq!(first, 0x1f0),
            0x0001_000e => assert_eq!(first, public_end),
            0x0001_0014 | 0x0001_0016 => assert_eq!(first - public_end, 16),
            0x0001_001e => assert_eq!(first - public_end, 88),
            _ => {}
        }
    }
    // The README lists what appears; the corpus grows, so these are the least it holds.
    for v in [
        0x0001_0009,
        0x0001_000c,
        0x0001_000e,
        0x0001_000f,
        0x0001_0014,
        0x0001_0016,
        0x0001_001e,
    ] {
        assert!(versions.contains(&v), "version 0x{v:08x} is in the README");
    }
    for t in [0x15, 0x88, 0x99, 0xad, 0xba, 0x1000_0016, 0x1000_003b] {
        assert!(targets.contains(&t), "target 0x{t:x} is in the README");
    }
}

/// The extension entries are decoded only where every value is consistent; check the proof
/// obligations on every file of the version.
#[test]
fn proved_extension_entries_hold_on_every_file() {
    let files = common::corpus_files().unwrap_or_else(common::public_controls);
    for (name, bytes, _) in files {
        let g = v1(&name, &bytes);
        if g.header.version != 0x0001_001e {
            continue;
        }
        let t = |n: &str| g.table(n).unwrap();
        // One load-state entry per operation; one PPU-instruction entry per SH record.
        assert_eq!(
            t("load_states_table").record_count,
            Some(u64::from(g.header.operation_count)),
            "{name}"
        );
        assert_eq!(
            t("ppu_instr_table").record_count,
            t("sh").record_count,
            "{name}"
        );
        // Coefficient table entries tile the coefficient data in order.
        let coeff = g
            .nested_tables
            .iter()
            .find(|n| n.table == "coeff_data_table")
            .unwrap();
        let mut cursor = 0;
        for e in &coeff.entries {
            assert!(e[0] >= cursor && e[0] % 64 == 0, "{name}");
            cursor = e[0] + e[1];
        }
        assert!(cursor <= t("coeff_data").size);
        // The entries only the vendor's reader names are empty in every file.
        for n in ["op_sync", "dma_sbi_info", "dma_sbi_addition"] {
            assert_eq!(t(n).size, 0, "{name} {n}");
            assert_eq!(t(n).evidence, "vendor-reader");
        }
    }
}

#[test]
fn json_uses_the_v2_key_names() {
    let name = "timvx-conv2d_relu_maxpool2d_fp32-001e.nb";
    let bytes = common::public_control(name);
    let v = parse(&bytes).unwrap().to_json();
    assert_eq!(v["format"], "nbg-v1", "{name}");
    for key in [
        "file",
        "header",
        "inputs",
        "outputs",
        "connection_region",
        "structural_signature",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    for key in [
        "name",
        "dimensions",
        "data_format",
        "data_format_name",
        "data_type",
        "quantization",
        "storage_bytes",
    ] {
        assert!(v["inputs"][0].get(key).is_some(), "inputs[0].{key}");
    }
    assert_eq!(v["header"]["target"], v["header"]["product"]);
    assert_eq!(v["file"]["size"], 9152);
}

/// Versions without a public sample: the builder writes extra fixed bytes and a CRC over a
/// suffix; the parser bounds the layout, keeps the extension opaque, finds the CRC rule in its
/// registry, and the image, round trip, sweep and inventory treat the file like any other.
#[test]
fn newer_versions_are_bounded_round_trip_and_find_their_crc_rule() {
    use nbg_lab::lab::synth_v1::{self, V1Crc};
    use nbg_lab::nbg::format::v1::Layout;
    for (version, extension, crc, layout, rule) in [
        (
            0x0001_0020,
            0,
            V1Crc::SuffixFromFixedEnd,
            Layout::Known,
            Some("suffix@end-of-fixed-part"),
        ),
        (
            0x0001_0021,
            144,
            V1Crc::SuffixFromFixedEnd,
            Layout::BoundedUnknown,
            Some("suffix@end-of-fixed-part"),
        ),
        (
            0x0001_0030,
            24,
            V1Crc::WholeFileFieldZeroed,
            Layout::BoundedUnknown,
            Some("whole-file-field-zeroed"),
        ),
        (
            0x0001_ffff,
            8,
            V1Crc::SuffixFromFixedEnd,
            Layout::BoundedUnknown,
            Some("suffix@end-of-fixed-part"),
        ),
        (0x0001_0009, 0, V1Crc::Absent, Layout::Known, None),
        (
            0x0001_001e,
            0,
            V1Crc::WholeFileFieldZeroed,
            Layout::Known,
            Some("whole-file-field-zeroed"),
        ),
    ] {
        let name = format!("synthetic 0x{version:08x}");
        let bytes = synth_v1::graph(version, extension, crc).unwrap();
        let g = v1(&name, &bytes);
        assert_eq!(g.layout, layout, "{name}");
        assert_eq!(g.header.input_count, 1, "{name}");
        assert_eq!(g.inputs[0].name.as_deref(), Some("input_0"), "{name}");
        assert_eq!(g.outputs[0].dimensions, vec![10, 1, 1, 1], "{name}");
        let fixed_end = g.fixed_part.size;
        assert_eq!(g.opaque_fixed_extension.offset, fixed_end, "{name}");
        if layout == Layout::BoundedUnknown {
            assert_eq!(g.fixed_part.entry_count, 16, "{name}");
            assert_eq!(g.opaque_fixed_extension.size, extension as u64, "{name}");
            // Unproved record sizes are not assumed.
            assert_eq!(g.table("operation").unwrap().record_size, None, "{name}");
        }
        assert_eq!(g.crc.rule.as_deref(), rule, "{name}");
        let expected = if rule.is_some() {
            CrcClass::Matches
        } else {
            CrcClass::Absent
        };
        assert_eq!(g.crc.classification, expected, "{name}");
        let json = parse(&bytes).unwrap().to_json();
        assert_eq!(
            json["layout"],
            if layout == Layout::Known {
                "known"
            } else {
                "bounded-unknown"
            }
        );
        let graph = parse(&bytes).unwrap();
        let image =
            nbg_lab::nbg::image::NbgImage::new(&graph).unwrap_or_else(|f| panic!("{name}: {f}"));
        let r = image.reconstruction().unwrap();
        assert_eq!(r.bytes, bytes.len() as u64, "{name}");
        assert_eq!(r.sha256, nbg_lab::digest::Hash256::of(&bytes), "{name}");
        let (sweep, _) = nbg_lab::lab::sweep::sweep(&bytes, u64::MAX).unwrap();
        assert_eq!(sweep.offsets, bytes.len() as u64, "{name}");
        if rule.is_some() {
            // A CRC over the suffix detects every flip inside it.
            assert!(
                sweep.detected > (bytes.len() as u64 - fixed_end) as u64,
                "{name}"
            );
        }
    }
    // The registry explains a suffix CRC only with the suffix boundary it came from.
    let bytes = synth_v1::graph(0x0001_0021, 144, V1Crc::SuffixFromFixedEnd).unwrap();
    let e = nbg_lab::nbg::crc_explain::explain(&parse(&bytes).unwrap());
    let rules: Vec<&str> = e.matches.iter().map(|h| h.rule.as_str()).collect();
    assert_eq!(rules, ["suffix@end-of-fixed-part"]);
    assert!(e.hypotheses_evaluated > 20);
}

/// `format::v1::PROVED_VERSIONS` says what the corpus proves: every public file's version is in
/// it (a new version is proved before it is claimed), and every version in it has a public file.
#[test]
fn proved_versions_are_the_versions_of_the_public_files() {
    use nbg_lab::nbg::format::v1::{LayoutEvidence, PROVED_VERSIONS};
    let Some(files) = common::corpus_files() else {
        return;
    };
    let mut seen = std::collections::BTreeSet::new();
    for (name, bytes, _) in files {
        let g = v1(&name, &bytes);
        assert_eq!(g.fixed_part.evidence, LayoutEvidence::Proved, "{name}");
        assert!(
            g.records.layers.is_some() && g.records.operations.is_some(),
            "{name}"
        );
        seen.insert(g.header.version);
    }
    for v in PROVED_VERSIONS {
        assert!(seen.contains(&v), "0x{v:08x} has no public file");
    }
}
