//! Fixed-width name fields are lossless: bytes after a name's NUL (a real Realtek 0x0001000e
//! network name holds some) are kept, reported and re-encoded exactly, in both families; and
//! the builders refuse a name that does not fit instead of leaving the field zero.

use crate::common;
use nbg_lab::NbgFamily;
use nbg_lab::lab::synth::{self, BuildError, GraphSpec, Rng, TensorSpec};
use nbg_lab::lab::synth_v1::{V1Crc, V1Spec};
use nbg_lab::nbg::fieldmap::{self as fm, Overflow, Writer};
use nbg_lab::nbg::format::section;
use nbg_lab::nbg::parse::{Graph, parse};
use nbg_lab::nbg::reencode::reencode;
use serde_json::Value;

/// Fill the bytes after the NUL of the name field `f` of the record at `at` with a pattern
/// that differs per field (never zero).
fn fill_tail(bytes: &mut [u8], at: usize, f: &fm::Field, salt: u8) {
    let field = &mut bytes[at + f.offset..at + f.offset + f.width];
    let nul = field
        .iter()
        .position(|&b| b == 0)
        .expect("a NUL-terminated name");
    for (i, b) in field[nul + 1..].iter_mut().enumerate() {
        *b = 0x80 | (salt.wrapping_add(i as u8) & 0x7f);
    }
}

/// A v2 graph (the `ctc-like` shape) whose network name, every I/O name and every layer name
/// carry non-zero bytes after the NUL; the builder computes its CRCs.
pub fn v2_with_trailing_names() -> Vec<u8> {
    let mut l = synth::profile("ctc-like", 3).unwrap();
    let mut salt = 1u8;
    for s in &mut l.sections {
        let (record, field) = match s.kind {
            section::INPUT | section::OUTPUT => (fm::v2_io_record::SIZE, &fm::v2_io_record::name),
            section::LAYER => (fm::layer::SIZE, &fm::layer::name),
            section::NETWORK_INFO => (fm::v2_network_info::SIZE, &fm::v2_network_info::name),
            _ => continue,
        };
        for at in (0..s.payload.len()).step_by(record) {
            fill_tail(&mut s.payload, at, field, salt);
            salt = salt.wrapping_add(7);
        }
    }
    l.emit().unwrap()
}

/// A v1 0x0001001e graph with two SW operations whose network name, I/O names, layer name and
/// SW names carry non-zero bytes after the NUL, its whole-file CRC recomputed.
pub fn v1_with_trailing_names() -> Vec<u8> {
    let sw = |kind: u32, name: &str| {
        let mut w = Writer::new(fm::v1_sw_operation::SIZE);
        w.put_u32(&fm::v1_sw_operation::sw_operation_type, kind)
            .put_str(&fm::v1_sw_operation::name, name);
        w.finish().unwrap()
    };
    let mut b = V1Spec {
        extra: vec![("sw", [sw(1, "rpn_0"), sw(2, "cpu_1")].concat())],
        ..V1Spec::new(0x0001_001e, 0, V1Crc::WholeFileFieldZeroed)
    }
    .build()
    .unwrap();
    let places: Vec<(usize, fm::Field)> = {
        let g = parse(&b).unwrap();
        let Graph::V1(g) = &g else { panic!("v1") };
        let io = nbg_lab::nbg::parse::v1::io_layout(g.header.version);
        let io_name = io.name.unwrap();
        let mut p = vec![(0usize, fm::v1_fixed::network_name)];
        p.extend(
            g.inputs
                .iter()
                .chain(&g.outputs)
                .map(|r| (r.offset as usize, io_name)),
        );
        p.extend(
            g.records
                .layers
                .as_ref()
                .unwrap()
                .iter()
                .map(|l| (l.offset as usize, fm::layer::name)),
        );
        p.extend(
            g.records
                .sw_operations
                .as_ref()
                .unwrap()
                .iter()
                .map(|s| (s.offset as usize, fm::v1_sw_operation::name)),
        );
        p
    };
    assert!(
        places.len() >= 6,
        "network, input, output, layer, two SW names"
    );
    for (i, (at, f)) in places.into_iter().enumerate() {
        fill_tail(&mut b, at, &f, 3 + 11 * i as u8);
    }
    reseal_v1(&mut b);
    b
}

/// Recompute a 0x0001001e file's whole-file CRC after an edit.
fn reseal_v1(b: &mut [u8]) {
    let at = nbg_lab::nbg::format::v1::OFF_CRC;
    let crc = nbg_lab::nbg::crc_rules::whole_file_field_zeroed(b, at as u64);
    b[at..at + 4].copy_from_slice(&crc.to_le_bytes());
}

/// Every `*trailing_bytes` key of a parse document, by JSON path.
fn trailing_keys(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k.ends_with("trailing_bytes") {
                    assert!(x.as_str().is_some_and(|h| h.len() > 2), "{path}.{k} is hex");
                    out.push(format!("{path}.{k}"));
                }
                trailing_keys(x, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| trailing_keys(x, &format!("{path}[{i}]"), out)),
        _ => {}
    }
}

#[test]
fn names_keep_their_bytes_after_the_nul_and_re_encode_exactly() {
    for (family, bytes, expected) in [
        ("v2", v2_with_trailing_names(), 1 + 1 + 1 + 5),
        ("v1", v1_with_trailing_names(), 1 + 1 + 1 + 1 + 2),
    ] {
        let g = parse(&bytes).unwrap_or_else(|f| panic!("{family}: {f}"));
        let doc = g.to_json();
        let mut keys = Vec::new();
        trailing_keys(&doc, "", &mut keys);
        assert_eq!(keys.len(), expected, "{family}: {keys:?}");
        let image = nbg_lab::nbg::image::NbgImage::new(&g).unwrap();
        let r = reencode(&g, &image);
        assert!(r.exact(), "{family}: {:?}", r.first_mismatch);
        assert!(r.records_total > 0);
    }
}

/// The CLI on real files: `nbg roundtrip` re-encodes every record of both families, and
/// `nbg diff` names a change after a v1 network name's NUL by its field.
#[test]
fn roundtrip_and_diff_name_a_change_after_the_nul() {
    let dir = tempfile::tempdir().unwrap();
    for (family, bytes) in [
        ("v2", v2_with_trailing_names()),
        ("v1", v1_with_trailing_names()),
    ] {
        let a = dir.path().join(format!("{family}.nb"));
        std::fs::write(&a, &bytes).unwrap();
        let o = common::nbg(dir.path(), &["roundtrip", "--json", a.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let entry = v["files"][0].clone();
        assert_eq!(
            entry["records_reencoded"], entry["records_total"],
            "{entry}"
        );
        assert_eq!(entry["mismatches"], 0, "{entry}");
    }
    let a = dir.path().join("v1.nb");
    let mut changed = v1_with_trailing_names();
    changed[fm::v1_fixed::network_name.end() - 1] ^= 0x01;
    reseal_v1(&mut changed);
    let b = dir.path().join("v1-b.nb");
    std::fs::write(&b, &changed).unwrap();
    assert_eq!(
        changed_fields(dir.path(), &a, &b),
        ["header.nbg_crc_sum", "header.network_name"]
    );
}

/// A v2 change after the network name's NUL, with the CRCs the builder computes, is named
/// `name` of the network-info record by `nbg diff`.
#[test]
fn v2_diff_names_the_network_name_field() {
    let mut l = synth::profile("ctc-like", 3).unwrap();
    let a = l.emit().unwrap();
    let s = l
        .sections
        .iter_mut()
        .find(|s| s.kind == section::NETWORK_INFO)
        .unwrap();
    s.payload[fm::v2_network_info::name.end() - 1] = 0x5a;
    let b = l.emit().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.nb"), dir.path().join("b.nb"));
    std::fs::write(&pa, &a).unwrap();
    std::fs::write(&pb, &b).unwrap();
    assert_eq!(
        changed_fields(dir.path(), &pa, &pb),
        ["NBG_SECTION_NETWORK_INFO.name", "header.crc_sum"]
    );
    let g = parse(&b).unwrap();
    let Graph::V2(g) = &g else { panic!("v2") };
    let ni = g.network_info.as_ref().unwrap();
    assert_eq!(ni.name_trailing_bytes().0.last(), Some(&0x5a));
}

/// The fields `nbg diff --json` names as changed, sorted.
fn changed_fields(dir: &std::path::Path, a: &std::path::Path, b: &std::path::Path) -> Vec<String> {
    let o = common::nbg(
        dir,
        &["diff", "--json", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut fields: Vec<String> = v["owners"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| o["ranges"].as_array().unwrap().iter())
        .map(|r| r["field"].as_str().unwrap().to_string())
        .collect();
    fields.sort();
    fields
}

/// One value too large for its field, per builder: refused with the field's name, never
/// truncated or left zero.
#[test]
fn builders_refuse_a_value_that_does_not_fit() {
    let long = "n".repeat(64);
    // v2: the network name, and an I/O name.
    let spec = |network: &str, input: &str| GraphSpec {
        target: 0x1000_000e,
        network_name: network.into(),
        inputs: vec![TensorSpec::new(input, &[4], 2)],
        outputs: vec![TensorSpec::new("out", &[4], 2)],
        layers: 1,
        operations: 2,
        ppu_bytes: 64,
        loadstate_bytes: 64,
        coef_bytes: 64,
        memory_pool_bytes: 4096,
        vip_sram_bytes: 0,
        dynaio: None,
    };
    assert!(spec("ok", "in").layout(&mut Rng::new(1)).is_ok());
    assert_eq!(
        spec(&long, "in").layout(&mut Rng::new(1)).unwrap_err(),
        Overflow { field: "name" }
    );
    assert_eq!(
        spec("ok", &long).layout(&mut Rng::new(1)).unwrap_err(),
        Overflow { field: "name" }
    );
    // v1: the header's network name.
    let v1 = V1Spec {
        network_name: long,
        ..V1Spec::new(0x0001_001e, 0, V1Crc::WholeFileFieldZeroed)
    };
    assert_eq!(
        v1.build().unwrap_err(),
        Overflow {
            field: "network_name"
        }
    );
    // An unknown profile is its own error, not an overflow.
    assert!(matches!(
        synth::profile("nope", 1),
        Err(BuildError::Unknown(_))
    ));
}
