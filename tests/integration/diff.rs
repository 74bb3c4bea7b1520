//! `nbg diff`: owner-attributed differences, pinned on the public same-model pairs.

use crate::common;

use nbg_lab::lab::diff::{DiffReport, Status, diff};
use nbg_lab::nbg::image::NbgImage;
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
    assert!(r.a_bytes_differing <= r.a.size && r.b_bytes_differing <= r.b.size);
    json!({
        "a_bytes_differing": r.a_bytes_differing,
        "b_bytes_differing": r.b_bytes_differing,
        "changed_bytes": r.changed_bytes,
        "owners_changed": r.owners_changed,
        "owners": owners
    })
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
    // Named down to the element of the dimension array, with both values.
    assert_eq!(input.ranges[0].field, "input[0].dimensions[2]");
    let v = input.ranges[0]
        .values
        .clone()
        .expect("a scalar word has values");
    assert_ne!(v.a, v.b);
    let text = nbg_lab::report::text::diff("a", "b", &r);
    assert!(
        text.contains(&format!("input[0].dimensions[2] {} -> {}", v.a, v.b)),
        "{text}"
    );
    // The headline counts bytes that differ, at most each file's size.
    assert!(r.a_bytes_differing <= r.a.size && r.b_bytes_differing <= r.b.size);
    assert!(text.contains(&format!(
        "{} bytes of A and {} of B differ",
        r.a_bytes_differing, r.b_bytes_differing
    )));
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

    let t = nbg_lab::lab::synth::trio("dynaio-constant").unwrap();
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
    assert_eq!((r.a_bytes_differing, r.b_bytes_differing), (5, 5));
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

/// A diff's JSON document and its text (summary and hexdump, plain and coloured).
fn outputs(
    report: &DiffReport,
    ia: &NbgImage<'_>,
    ib: &NbgImage<'_>,
) -> (Value, String, String, String) {
    (
        nbg_lab::report::json::value(report),
        nbg_lab::report::text::diff("A", "B", report),
        nbg_lab::report::text::diff_hexdump(report, ia, ib, false),
        nbg_lab::report::text::diff_hexdump(report, ia, ib, true),
    )
}

type Outputs = Result<(Value, String, String, String), String>;

/// `nbg diff` in memory: both files parsed whole.
fn in_memory(a: &[u8], b: &[u8]) -> Outputs {
    let (ga, gb) = (parse(a).unwrap(), parse(b).unwrap());
    let (ia, ib) = (NbgImage::new(&ga).unwrap(), NbgImage::new(&gb).unwrap());
    let r = diff(&ga, &ia, &gb, &ib).map_err(|e| e.to_string())?;
    assert_eq!(r.identical, a == b);
    Ok(outputs(&r, &ia, &ib))
}

/// `nbg diff` streamed: both files parsed with positioned reads, images over the files.
fn streamed(a: &std::path::Path, b: &std::path::Path) -> Outputs {
    use nbg_lab::NbgFamily;
    use nbg_lab::nbg::stream::FileSource;
    use std::sync::Arc;
    let load = |path: &std::path::Path| {
        let source = Arc::new(FileSource::open(path).unwrap());
        let g = nbg_lab::nbg::open::parse_source(Arc::clone(&source), Default::default())
            .unwrap()
            .unwrap();
        assert!(g.bytes().is_empty(), "a streamed graph holds no payload");
        let i = NbgImage::from_file(&g, Arc::clone(&source)).unwrap();
        (source, g, i)
    };
    let ((sa, ga, ia), (sb, gb, ib)) = (load(a), load(b));
    let r = diff(&ga, &ia, &gb, &ib).map_err(|e| e.to_string())?;
    let out = outputs(&r, &ia, &ib);
    assert!(sa.error().is_none() && sb.error().is_none());
    Ok(out)
}

/// The streamed diff of every pair of `paths` equals the in-memory diff of their bytes.
fn assert_pairs_stream_like_memory(paths: &[std::path::PathBuf]) {
    let bytes: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    for (i, a) in paths.iter().enumerate() {
        for (j, b) in paths.iter().enumerate() {
            assert_eq!(
                in_memory(&bytes[i], &bytes[j]),
                streamed(a, b),
                "{} vs {}",
                a.display(),
                b.display()
            );
        }
    }
}

#[test]
fn every_control_pair_streams_like_memory() {
    let dir = common::root().join("controls");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "nb"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 5);
    assert_pairs_stream_like_memory(&paths);
    // The differential captures: same-model pairs with a few changed bytes.
    for t in ["dynaio-constant", "coef-word-a", "v1-input-scale-eighth"] {
        let t = common::root().join("differentials").join(t);
        assert_pairs_stream_like_memory(&["A1.nb", "A2.nb", "B.nb"].map(|n| t.join(n)));
    }
}

#[test]
fn public_pairs_stream_like_memory() {
    let v1 = common::root().join("controls/public/v1");
    assert_pairs_stream_like_memory(&[
        v1.join("ameba-scrfd_500m_bnkps_576x320_u8-000e.nb"),
        v1.join("ameba-scrfd_500m_bnkps_576x320_u8_nv12-000e.nb"),
        v1.join("timvx-conv2d_relu_maxpool2d_fp32-001e.nb"),
        v1.join("st-blazeface_128x128_quant-001e.nb"),
    ]);
}

/// A pair of several MiB: changed bytes far apart, and a run crossing a boundary of the pieces
/// the diff reads, reported as one range as when both files are compared whole.
#[test]
fn large_pair_streams_like_memory() {
    use nbg_lab::lab::diff::PIECE;
    let mut layout =
        nbg_lab::lab::synth::bulk(11, 3 * nbg_lab::nbg::stream::CHUNK as u64 + 12_345).unwrap();
    let a = layout.emit().unwrap();
    let g = parse(&a).unwrap();
    let image = NbgImage::new(&g).unwrap();
    let coef = image
        .owners()
        .iter()
        .filter(|o| o.label.starts_with("section ") && o.label.contains(" NBG_SECTION_COEF_DATA"))
        .max_by_key(|o| o.len())
        .unwrap()
        .clone();
    assert!(coef.len() > 3 * PIECE);
    // Runs in the coefficients, far apart: one across the first piece boundary, one at the end.
    // B is emitted again from the layout, so its checksums and header CRC agree with it.
    let runs = [
        (coef.start + 100, coef.start + 101),
        (coef.start + PIECE - 3, coef.start + PIECE + 5),
        (coef.start + 2 * PIECE + 7, coef.start + 2 * PIECE + 9),
        (coef.end - 2, coef.end - 1),
    ];
    let section = layout
        .sections
        .iter()
        .position(|s| s.kind == nbg_lab::nbg::format::section::COEF_DATA)
        .unwrap();
    for &(s, e) in &runs {
        for x in &mut layout.sections[section].payload
            [(s - coef.start) as usize..(e - coef.start) as usize]
        {
            *x ^= 0x5a;
        }
    }
    let b = layout.emit().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (pa, pb) = (tmp.path().join("a.nb"), tmp.path().join("b.nb"));
    std::fs::write(&pa, &a).unwrap();
    std::fs::write(&pb, &b).unwrap();
    let memory = in_memory(&a, &b);
    assert_eq!(memory, streamed(&pa, &pb));
    let (json, ..) = memory.unwrap();
    let owner = json["owners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["owner"] == "NBG_SECTION_COEF_DATA[0]")
        .unwrap();
    let ranges: Vec<(u64, u64)> = owner["ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["a_start"].as_u64().unwrap(), c["a_end"].as_u64().unwrap()))
        .collect();
    assert_eq!(ranges, runs);
    assert_eq!(owner["changed_bytes"], 12);
    // The same file twice is identical, streamed and in memory.
    assert_eq!(in_memory(&a, &a), streamed(&pa, &pa));
    assert_eq!(in_memory(&a, &a).unwrap().0["identical"], true);
}

#[test]
fn cli_diff_reports_unreadable_inputs_as_usage_errors() {
    let a = common::root().join("controls/erf-u8.nb");
    let missing = common::root().join("controls/no-such-file.nb");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
        .args(["diff", a.to_str().unwrap(), missing.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!("nbg: {}: ", missing.display())),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

/// A changed kernel element moves a coefficient stream's bytes (here the symbol map too, on
/// 0x9f); the diff names the element by the NN command whose decoded buffer holds it, as
/// stored (uint8 less the zero point 10), and every other decoded element is unchanged.
#[test]
fn a_changed_weight_is_named_by_its_decoded_element() {
    use nbg_lab::nbg::coefficients::Tensor;
    let dir = common::root().join("differentials/serializer");
    for (set, tensors) in [
        (
            "nn-conv-u8-weight-37-9f",
            vec![(Tensor::Weights, 37, 111, 0)],
        ),
        (
            "nn-conv-u8-weight-37-and-bias-1000003b",
            vec![
                (Tensor::Weights, 37, 111, 190),
                (Tensor::Biases, 0, -87, 99),
            ],
        ),
    ] {
        let read = |f: &str| std::fs::read(dir.join(set).join(f)).unwrap();
        let r = run(&read("A1.nb"), &read("B.nb"));
        let got: Vec<_> = r
            .coefficients
            .iter()
            .map(|t| {
                assert_eq!((t.nn, t.changed, t.first.len()), (0, 1, 1), "{set}");
                (t.tensor, t.first[0].index, t.first[0].a, t.first[0].b)
            })
            .collect();
        assert_eq!(got, tensors, "{set}");
        assert_eq!(r.coefficients[0].name(), "NN[0].weights");
        // An unchanged buffer lists nothing.
        assert!(run(&read("A1.nb"), &read("A2.nb")).coefficients.is_empty());
    }
}

/// A B that does not parse is diffed through A's ledger (issue 68): the command says why B
/// fails and names each changed byte's owner and field with both values, and exits 1.
#[test]
fn a_damaged_b_is_attributed_through_a() {
    let a = common::control("erf-u8.nb");
    let mut b = a.clone();
    b[0x20] ^= 0xff; // a header word the parser checks (the sub-header count)
    let tmp = tempfile::tempdir().unwrap();
    let (pa, pb) = (tmp.path().join("a.nb"), tmp.path().join("b.nb"));
    std::fs::write(&pa, &a).unwrap();
    std::fs::write(&pb, &b).unwrap();
    let failure = parse(&b).expect_err("B is damaged");
    let (sa, sb) = (pa.to_str().unwrap(), pb.to_str().unwrap());
    let o = common::nbg(tmp.path(), &["diff", sa, sb, "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(d["b_failure"]["code"], failure.code.as_str());
    assert_eq!(d["changed_bytes"], 1);
    let change = &d["owners"][0]["ranges"][0];
    assert_eq!(change["start"], 0x20);
    assert_eq!(change["a"], format!("{:02x}", a[0x20]));
    assert_eq!(change["b"], format!("{:02x}", b[0x20]));
    assert!(change["field"].as_str().is_some_and(|f| !f.is_empty()));
    let o = common::nbg(tmp.path(), &["diff", sa, sb]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("does not parse"), "{text}");
}
