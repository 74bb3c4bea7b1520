//! The mutation sweep: no undetected byte in any v2 control; derived and exhaustive agree.

use crate::common;

use nbg_lab::lab::sweep::{self, Outcome};

#[test]
fn v2_controls_have_no_undetected_offset() {
    for name in common::control_names() {
        let bytes = common::control(&name);
        let (r, outcomes) = sweep::sweep(&bytes, u64::MAX).unwrap();
        assert_eq!(r.offsets, bytes.len() as u64);
        assert_eq!(outcomes.len(), bytes.len());
        assert_eq!(r.undetected, 0, "{name}: {:?}", r.undetected_ranges);
        assert_eq!(r.detected + r.tolerated, r.offsets);
        let per_owner: u64 = r
            .by_owner
            .values()
            .map(|c| c.detected + c.tolerated + c.undetected)
            .sum();
        assert_eq!(per_owner, r.offsets);
        // Every payload byte is caught by a checksum.
        let opaque = &r.by_owner["preserved-opaque"];
        assert_eq!((opaque.tolerated, opaque.undetected), (0, 0), "{name}");
        assert_eq!(r.derived_offsets, 0);
    }
}

#[test]
fn derived_classification_agrees_with_flipping() {
    let mut files: Vec<(String, Vec<u8>)> =
        ["erf-u8.nb", "ctc-like.nb", "tail-gap.nb", "shuffled.nb"]
            .iter()
            .map(|n| (n.to_string(), common::control(n)))
            .collect();
    let timvx = "timvx-conv2d_relu_maxpool2d_fp32-001e.nb";
    files.push((timvx.to_string(), common::public_control(timvx)));
    // The smallest file without a CRC is not redistributable: it is read from ../shared.
    for (name, bytes, _) in common::corpus_files().unwrap_or_default() {
        if name.starts_with("ameba-planar") {
            files.push((name, bytes));
        }
    }
    for (name, bytes) in files {
        let (exhaustive, a) = sweep::sweep(&bytes, u64::MAX).unwrap();
        let (derived, b) = sweep::sweep(&bytes, 0).unwrap();
        assert!(derived.derived_offsets > 0, "{name}");
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(
                x.class(),
                y.class(),
                "{name} offset 0x{i:x}: flipped {x:?}, derived {y:?}"
            );
            if let (Outcome::Detected(cx), Outcome::Detected(cy)) = (x, y) {
                assert_eq!(cx, cy, "{name} offset 0x{i:x}");
            }
        }
        assert_eq!(exhaustive.detected, derived.detected, "{name}");
    }
}

#[test]
fn v1_with_a_crc_detects_every_byte_and_without_one_says_why() {
    let timvx = common::public_control("timvx-conv2d_relu_maxpool2d_fp32-001e.nb");
    let (r, _) = sweep::sweep(&timvx, u64::MAX).unwrap();
    assert_eq!(r.detected, r.offsets);
    assert!(r.by_code["crc-field-unexplained"] > 8000);
    let Some(files) = common::corpus_files() else {
        return;
    };
    let files: std::collections::BTreeMap<String, Vec<u8>> =
        files.into_iter().map(|(n, b, _)| (n, b)).collect();
    let (r, _) = sweep::sweep(&files["ameba-planar_to_nchw_512_lut-0014.nb"], u64::MAX).unwrap();
    assert_eq!(r.undetected, 0);
    assert!(r.tolerated_reasons["v1 file without a CRC: the byte is not checked"] > 10_000);
}

#[test]
fn cli_sweep_json_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("sweep.svg");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
        .args([
            "sweep",
            "--json",
            "controls/erf-u8.nb",
            "--svg",
            svg.to_str().unwrap(),
        ])
        .current_dir(common::root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in ["offsets", "detected", "tolerated", "undetected", "by_owner"] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert_eq!(v["undetected"], 0);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("detected"));
}

#[test]
fn outcome_classes_serialize_as_their_names() {
    use sweep::OutcomeClass::*;
    // The names are a contract: pinned here, not read back from the enum.
    for (c, name) in [
        (Detected, "detected"),
        (Tolerated, "tolerated"),
        (Undetected, "undetected"),
    ] {
        assert_eq!(serde_json::to_value(c).unwrap(), name);
        assert_eq!(c.to_string(), name);
    }
}
