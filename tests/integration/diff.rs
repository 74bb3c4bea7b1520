//! `nbg diff`: owner-attributed differences, pinned on the public same-model pairs.

use crate::common;

use nbg_lab::diff::{DiffReport, Status, diff};
use nbg_lab::image::NbgImage;
use nbg_lab::parse;
use serde_json::{Value, json};

fn run(a: &[u8], b: &[u8]) -> DiffReport {
    let (ga, gb) = (parse(a).unwrap(), parse(b).unwrap());
    let (ia, ib) = (NbgImage::new(&ga).unwrap(), NbgImage::new(&gb).unwrap());
    diff(&ga, &ia, &gb, &ib).unwrap()
}

fn summary(r: &DiffReport) -> Value {
    let owners: Value = r
        .owners
        .iter()
        .map(|o| {
            let fields: Vec<&str> = o.ranges.iter().take(8).map(|c| c.field.as_str()).collect();
            json!({
                "owner": o.owner,
                "status": o.status,
                "changed_bytes": o.changed_bytes,
                "ranges": o.ranges_total,
                "first_fields": fields,
            })
        })
        .collect();
    json!({ "changed_bytes": r.changed_bytes, "owners_changed": r.owners_changed, "owners": owners })
}

#[test]
fn public_pairs_match_their_snapshot() {
    let Some(files) = common::corpus_files() else {
        return;
    };
    let files: std::collections::BTreeMap<String, Vec<u8>> =
        files.into_iter().map(|(n, b, _)| (n, b)).collect();
    let mut all = serde_json::Map::new();
    for (a, b) in [
        (
            "ksnn-mobilenet_caffe-000c.nb",
            "ksnn-mobilenet_caffe-000e.nb",
        ),
        ("ksnn-hand-tiny-000c.nb", "ksnn-hand-tiny-000e.nb"),
        (
            "ameba-scrfd_500m_bnkps_576x320_u8-000e.nb",
            "ameba-scrfd_500m_bnkps_576x320_u8_nv12-000e.nb",
        ),
    ] {
        let r = run(&files[a], &files[b]);
        assert!(!r.identical);
        all.insert(format!("{a} vs {b}"), summary(&r));
    }
    common::snapshot(
        common::snapshot_file!("public_diffs.json"),
        &Value::Object(all),
    );
}

#[test]
fn scrfd_input_change_is_named_by_record_and_field() {
    let files: std::collections::BTreeMap<String, Vec<u8>> = common::public_controls()
        .into_iter()
        .map(|(n, b, _)| (n, b))
        .collect();
    let r = run(
        &files["ameba-scrfd_500m_bnkps_576x320_u8-000e.nb"],
        &files["ameba-scrfd_500m_bnkps_576x320_u8_nv12-000e.nb"],
    );
    let input = r.owners.iter().find(|o| o.owner == "input").unwrap();
    assert_eq!(input.status, Status::Resized);
    // Named down to the element of the dimension array.
    assert_eq!(input.ranges[0].field, "input[0].dimensions[2]");
    let header = r
        .owners
        .iter()
        .find(|o| o.owner == "fixed part: header")
        .unwrap();
    assert!(
        header
            .ranges
            .iter()
            .any(|c| c.field == "header.input_count")
    );
}

#[test]
fn identical_files_and_a_v2_change() {
    let a = common::control("ctc-like.nb");
    let r = run(&a, &a);
    assert!(r.identical);
    assert!(r.owners.is_empty());

    let t = nbg_lab::synth::trio("dynaio-constant").unwrap();
    let r = run(&t.a, &t.b);
    let fields: Vec<(&str, &str)> = r
        .owners
        .iter()
        .flat_map(|o| {
            o.ranges
                .iter()
                .map(move |c| (o.owner.as_str(), c.field.as_str()))
        })
        .collect();
    assert_eq!(
        fields,
        vec![
            ("header", "header.crc_sum"),
            ("NBG_SECTION_DYNAIO", "NBG_SECTION_DYNAIO+0x3")
        ]
    );
    assert_eq!(r.changed_bytes, 5);
}

#[test]
fn families_do_not_mix() {
    let v2 = common::control("erf-u8.nb");
    let v1 = common::public_control("timvx-conv2d_relu_maxpool2d_fp32-001e.nb");
    let (ga, gb) = (parse(&v2).unwrap(), parse(&v1).unwrap());
    let (ia, ib) = (NbgImage::new(&ga).unwrap(), NbgImage::new(&gb).unwrap());
    assert!(diff(&ga, &ia, &gb, &ib).is_err());
}

#[test]
fn cli_diff_exit_codes_and_hexdump() {
    let t = common::root().join("differentials/dynaio-constant");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
            .args(args)
            .output()
            .unwrap()
    };
    let a = t.join("A1.nb");
    let b = t.join("B.nb");
    let o = run(&[
        "diff",
        a.to_str().unwrap(),
        t.join("A2.nb").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&[
        "diff",
        "--hexdump",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("header.crc_sum"), "{text}");
    assert!(text.contains("[03]") && text.contains("[04]"), "{text}");
    assert!(!text.contains('\x1b'), "colour only on a terminal");
    let o = run(&["diff", "--json", a.to_str().unwrap(), b.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["changed_bytes"], 5);
}
