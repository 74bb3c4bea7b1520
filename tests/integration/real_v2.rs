//! Real NBG v2: the vendor serializer's 0x00020005 files committed under `controls/serializer`
//! parse strictly under their version's rules, their header CRC rule is the one the CRC
//! registry finds (whole file, field zeroed) and the parser enforces it, every decoded record
//! re-encodes exactly, and a sweep leaves no byte undetected. With the driver installed, every
//! control regenerates byte-identically.

use crate::common;
use nbg_lab::Code;
use nbg_lab::nbg::image::NbgImage;
use nbg_lab::nbg::parse::{Graph, parse};
use nbg_lab::nbg::reencode::reencode;

/// Every serializer control: (file name, bytes), pinned by its `corpus.json`.
fn controls() -> Vec<(String, Vec<u8>)> {
    let dir = common::root().join("controls/serializer");
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("corpus.json")).unwrap()).unwrap();
    let files: Vec<(String, Vec<u8>)> = config["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let name = f["path"].as_str().unwrap().to_string();
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            assert_eq!(
                nbg_lab::digest::Hash256::of(&bytes).hex(),
                f["sha256"].as_str().unwrap(),
                "{name}"
            );
            (name, bytes)
        })
        .collect();
    assert!(files.len() >= 8 * 12, "{} controls", files.len());
    files
}

#[test]
fn every_serializer_control_parses_with_its_version_rules() {
    let mut targets = std::collections::BTreeSet::new();
    for (name, bytes) in controls() {
        let g = parse(&bytes).unwrap_or_else(|f| panic!("{name}: {f}"));
        let Graph::V2(v) = &g else {
            panic!("{name} is v2")
        };
        assert_eq!(v.header.version(), 0x0002_0005, "{name}");
        targets.insert(v.header.target());
        let c = &v.file_checksum;
        assert_eq!(c.scope, "whole-file-field-zeroed", "{name}");
        assert_eq!(c.computed_crc32, c.recorded_crc32, "{name}");
        // The spec's directory-order rule does not reproduce a single real file.
        assert_ne!(c.directory_order_crc32, c.recorded_crc32, "{name}");
        // Every real file begins with an INIT operation attached to no layer (0xffffffff).
        let ops = v.records.operations.as_ref().unwrap();
        assert_eq!(
            (ops[0].kind(), ops[0].layer_id()),
            (0xffff, 0xffff_ffff),
            "{name}"
        );
        // Section-40 records are present and each matches its section's CRC.
        assert!(!v.section_checksums.is_empty(), "{name}");
        assert!(v.section_checksums.iter().all(|s| s.matches), "{name}");
    }
    assert!(
        targets.contains(&0x1000_000e) && targets.len() >= 8,
        "{targets:x?}"
    );
}

/// `crc-explain` finds the whole-file rule as the one hypothesis that reproduces every file,
/// and the spec's rule (evaluated as one of the hypotheses) does not.
#[test]
fn the_crc_rule_is_discovered_by_the_registry() {
    for (name, bytes) in controls() {
        let g = parse(&bytes).unwrap();
        let e = nbg_lab::nbg::crc_explain::explain(&g);
        let rules: Vec<&str> = e.matches.iter().map(|h| h.rule.as_str()).collect();
        assert_eq!(rules, ["whole-file-field-zeroed"], "{name}");
        assert!(e.hypotheses_evaluated > 10, "{name}");
    }
}

/// A flipped byte anywhere outside the CRC field is refused (most by the whole-file CRC).
#[test]
fn a_flipped_byte_outside_the_field_is_refused() {
    for (name, bytes) in controls().into_iter().step_by(7) {
        let mut by_checksum = 0;
        for at in (0..bytes.len())
            .step_by(13)
            .filter(|a| !(12..16).contains(a))
        {
            let mut b = bytes.clone();
            b[at] ^= 0x20;
            match parse(&b) {
                Ok(_) => panic!("{name}: a flip at 0x{at:x} was accepted"),
                Err(f) if f.code == Code::FileChecksumMismatch => by_checksum += 1,
                Err(_) => {}
            }
        }
        assert!(by_checksum > 0, "{name}");
    }
}

#[test]
fn every_serializer_control_round_trips_every_record() {
    for (name, bytes) in controls() {
        let g = parse(&bytes).unwrap();
        let image = NbgImage::new(&g).unwrap_or_else(|f| panic!("{name}: {f}"));
        assert_eq!(image.emit().unwrap(), bytes, "{name}");
        let r = reencode(&g, &image);
        assert!(
            r.exact(),
            "{name}: {:?} {:?}",
            r.first_mismatch,
            r.not_reencodable
        );
        assert!(
            r.not_reencodable.is_empty(),
            "{name}: {:?}",
            r.not_reencodable
        );
    }
}

/// The sweep's protection map of two real files: every offset detected.
#[test]
fn a_sweep_of_a_real_file_leaves_nothing_undetected() {
    let files = controls();
    for want in ["add-const-fp16-1000000e.nb", "conv-qdq-u8-15.nb"] {
        let (_, bytes) = files.iter().find(|(n, _)| n == want).unwrap();
        let (r, _) = nbg_lab::lab::sweep::sweep(bytes, u64::MAX).unwrap();
        assert_eq!(r.undetected, 0, "{want}: {:?}", r.undetected_ranges);
        assert_eq!(r.detected, bytes.len() as u64, "{want}");
    }
}

/// With the driver installed, `nbg verify-generated` recompiles every vendor-compiled file
/// (controls/serializer: 96 compiles; differentials/serializer: 101 sets in 127 compiles) to the committed bytes,
/// 11 minutes alone on 2 cores (two driver children at a time).
#[cfg(feature = "onnx")]
#[test]
fn vendor_compiled_files_regenerate_byte_identically() {
    if common::vendor_driver().is_none() {
        return;
    }
    let o = common::nbg(&common::root(), &["verify-generated"]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        err.contains("controls/serializer: 96 controls recompiled"),
        "{err}"
    );
    let sets: usize = nbg_lab::simulator::capture_sets::SETS
        .iter()
        .map(|s| s.targets.len())
        .sum();
    assert!(
        err.contains(&format!(
            "differentials/serializer: {sets} capture sets recompiled"
        )),
        "{err}"
    );
}

/// `nbg diff` on a real file and a copy with one DYNAIO byte changed (its whole-file CRC
/// re-sealed, as the serializer would): the change and the header CRC, named by owner and field.
#[test]
fn diff_names_a_change_in_a_real_file() {
    let files = controls();
    let (_, a) = files
        .iter()
        .find(|(n, _)| n == "add-const-fp16-1000000e.nb")
        .unwrap();
    let g = parse(a).unwrap();
    let Graph::V2(v) = &g else { panic!("v2") };
    let dynaio = v.dynamic_io.as_ref().unwrap();
    let region = (dynaio.region_offset + dynaio.entries[0].offset) as usize;
    let mut b = a.clone();
    b[region] ^= 0x01;
    b[12..16].fill(0);
    let crc = crc32fast::hash(&b);
    b[12..16].copy_from_slice(&crc.to_le_bytes());
    assert!(parse(&b).is_ok(), "the re-sealed copy is valid");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.nb"), a).unwrap();
    std::fs::write(dir.path().join("b.nb"), &b).unwrap();
    let o = common::nbg(dir.path(), &["diff", "--json", "a.nb", "b.nb"]);
    assert_eq!(o.status.code(), Some(1));
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let fields: Vec<&str> = d["owners"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| o["ranges"].as_array().unwrap())
        .map(|r| r["field"].as_str().unwrap())
        .collect();
    assert_eq!(d["changed_bytes"], 5, "{d}");
    assert!(fields.contains(&"header.crc_sum"), "{fields:?}");
    assert!(
        fields.iter().any(|f| f.starts_with("NBG_SECTION_DYNAIO")),
        "{fields:?}"
    );
}
