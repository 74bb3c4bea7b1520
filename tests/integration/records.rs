//! Decoded layers, operations, SH operations and patches: the public v1 files (snapshot), the v2
//! controls (consistent with the network info), every reference check on a mutated v1 file, and
//! the text summary.

use crate::common;
use nbg_lab::NbgFamily;
use std::io::Write as _;

use common::{le32, put32};
use nbg_lab::nbg::parse::Graph;
use nbg_lab::{Code, parse};
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn records_of(g: &Graph<'_>) -> Value {
    let v = g.to_json();
    let mut types: BTreeMap<String, u64> = BTreeMap::new();
    for o in v["operations"].as_array().unwrap() {
        *types
            .entry(o["type_name"].as_str().unwrap_or("unknown").to_string())
            .or_insert(0) += 1;
    }
    let layers = v["layers"].as_array().unwrap();
    json!({
        "layers": layers.len(),
        "first_layer": layers.first().map(|l| json!([l["name"], l["id"], l["uid"], l["operation_count"]])),
        "operations": v["operations"].as_array().unwrap().len(),
        "operation_types": types,
        "sh_operations": v["sh_operations"].as_array().map(Vec::len),
        "patches": v["patches"],
    })
}

#[test]
fn public_v1_records_decode_and_match_their_snapshot() {
    let Some(files) = common::corpus_files() else {
        return;
    };
    let mut all = serde_json::Map::new();
    for (name, bytes, _) in files {
        let g = parse(&bytes).unwrap_or_else(|f| panic!("{name}: {f}"));
        let Graph::V1(v1) = &g else {
            panic!("{name} is v1")
        };
        // A version without a proved record layout keeps its tables opaque; say so, and
        // only for such a version.
        let (Some(ops), Some(layers)) = (&v1.records.operations, &v1.records.layers) else {
            assert!(
                !nbg_lab::nbg::parse::records::v1_decodes("layer", v1.header.version),
                "{name}: a proved version left its layers undecoded"
            );
            let _ = writeln!(
                std::io::stderr(),
                "note: {name}: layers and operations not decoded (version 0x{:08x} has no proved layout)",
                v1.header.version
            );
            continue;
        };
        assert_eq!(ops.len() as u32, v1.header.operation_count, "{name}");
        assert_eq!(layers.len() as u32, v1.header.layer_count, "{name}");
        assert_eq!(ops[0].type_name(), Some("INIT"), "{name}");
        all.insert(name, records_of(&g));
    }
    common::snapshot_per_file(
        common::snapshot_file!("v1_records.json"),
        "v1_records.json",
        all,
    );
}

#[test]
fn v2_controls_hold_consistent_records() {
    for name in common::control_names() {
        let bytes = common::control(&name);
        let Graph::V2(g) = parse(&bytes).unwrap() else {
            panic!("{name} is v2")
        };
        let info = g.network_info.as_ref().unwrap();
        let ops = g.records.operations.as_ref().unwrap();
        let layers = g.records.layers.as_ref().unwrap();
        assert_eq!(ops.len() as u32 + 3, info.operation_count(), "{name}");
        assert_eq!(
            ops.len() as u32 - 1,
            info.absolute_operation_count(),
            "{name}"
        );
        assert_eq!(layers.len() as u32, info.layer_count(), "{name}");
        assert_eq!(ops[0].type_name(), Some("INIT"), "{name}");
        for l in layers {
            assert_eq!(u64::from(l.operation_count()), l.named_operations, "{name}");
        }
        let patches = g.records.patches.as_ref().unwrap();
        assert_eq!(patches.count, 1 + 2 * (ops.len() as u64 - 1), "{name}");
        assert!(
            g.records
                .sh_operations
                .as_ref()
                .unwrap()
                .iter()
                .all(|s| s.instr_index() > 0)
        );
    }
}

/// Offsets of the operation and layer tables of the small 0x0001001e public file.
fn timvx() -> (Vec<u8>, usize, usize, usize) {
    let bytes = common::public_control("timvx-conv2d_relu_maxpool2d_fp32-001e.nb");
    let entry = |k: usize| le32(&bytes, 0x178 + 8 * k) as usize;
    let (layer, operation, sh) = (entry(2), entry(3), entry(8));
    (bytes, layer, operation, sh)
}

fn code_after(f: impl FnOnce(&mut Vec<u8>, usize, usize, usize)) -> Code {
    let (mut b, layer, operation, sh) = timvx();
    f(&mut b, layer, operation, sh);
    // The file's CRC no longer matches; that is reported, never fatal, so the record rules decide.
    parse(&b).map(|_| ()).unwrap_err().code
}

#[test]
fn every_reference_check_fires_on_a_public_v1_file() {
    // timvx: 3 layers, 5 operations (INIT, 4 SH), 15 patches, 4 SH records, 5 load states,
    // 4 PPU instruction entries; operation records are 32 bytes.
    let op = |i: usize, field: usize| move |o: usize| o + 32 * i + field;
    let cases = [
        (
            Code::OperationLayerOutOfRange,
            code_after(|b, _, o, _| put32(b, op(1, 8)(o), 3)),
        ),
        (
            Code::OperationPatchOutOfRange,
            code_after(|b, _, o, _| put32(b, op(4, 20)(o), 4)),
        ),
        (
            Code::OperationIndexOutOfRange,
            code_after(|b, _, o, _| put32(b, op(2, 4)(o), 4)),
        ),
        (
            Code::OperationStateOutOfRange,
            code_after(|b, _, o, _| put32(b, op(3, 12)(o), 5)),
        ),
        (
            Code::ShInstructionOutOfRange,
            code_after(|b, _, _, s| put32(b, s + 8, 4)),
        ),
        (
            Code::InvalidName,
            code_after(|b, l, _, _| b[l..l + 64].fill(b'x')),
        ),
    ];
    for (expected, got) in cases {
        assert_eq!(got, expected);
    }
    // The INIT operation names no layer (0xffff, or 0xffffffff as the A733 toolkit writes it);
    // an engine operation may not.
    let (b, _, o, _) = timvx();
    assert_eq!(le32(&b, o + 8), 0xffff);
    let mut init = b.clone();
    put32(&mut init, o + 8, 0xffff_ffff);
    assert!(parse(&init).is_ok(), "INIT with layer 0xffffffff refused");
    assert_eq!(
        code_after(|b, _, o, _| put32(b, op(1, 8)(o), 0xffff_ffff)),
        Code::OperationLayerOutOfRange
    );
    // Layers declaring more operations than name them are reported, never refused.
    let (mut more, layer, _, _) = timvx();
    put32(&mut more, layer + 76 + 0x44, 2);
    let doc = parse(&more).unwrap().to_json();
    let inv = doc["corpus_invariants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "layers-declare-at-most-attached-operations")
        .cloned()
        .unwrap();
    assert_eq!(inv["holds"], false, "{inv}");
    assert_eq!(
        code_after(|b, _, o, _| put32(b, op(1, 8)(o), 0xffff)),
        Code::OperationLayerOutOfRange
    );
}

#[test]
fn the_text_summary_lists_layers_and_operations() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
        .current_dir(common::root())
        .args(["parse", "controls/ctc-like.nb"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\nlayers (5):"), "{text}");
    assert!(text.contains("\noperations (6):"), "{text}");
    assert!(text.contains("INIT"), "{text}");
    assert!(text.contains("patches: 11 records of 28 bytes"), "{text}");
}
