//! `nbg vendor run`: a real board file run on the simulator. Two compilations of one network
//! (the A733 face detector, int16 dynamic fixed point and its fp16 twin, both committed as
//! public controls) run on the same float input agree with each other, which holds the
//! conversions (quantize, dequantize, the relabelled version word) to the outputs of the real
//! driver; runs are deterministic; inputs that do not match the file are refused with their
//! name before any driver call. Without the driver the run tests say `skipped:` on stderr.

use crate::common;
use nbg_lab::onnx::npz::{self, Dtype, Tensor};
use serde_json::Value;
use std::path::{Path, PathBuf};

const INT16: &str = "controls/public/v2/a733-face_detector_int16-0000.nb";
const FP16: &str = "controls/public/v2-twins/a733-face_detector_fp16-0000.nb";
const INPUT: &str = "input/output[0]";

/// A smooth float input in the model's [-1, 1] range, NHWC 1x128x128x3.
fn image() -> Tensor {
    let mut v = Vec::with_capacity(128 * 128 * 3);
    for h in 0..128 {
        for w in 0..128 {
            for c in 0..3 {
                let x = (0.05 * h as f32 + 0.07 * w as f32 + c as f32).sin() * 0.9;
                v.push(x);
            }
        }
    }
    Tensor::from_f32(INPUT, &[1, 128, 128, 3], &v)
}

fn write_input(dir: &Path, t: &Tensor) -> PathBuf {
    let p = dir.join("in.npz");
    std::fs::write(&p, npz::write(std::slice::from_ref(t))).unwrap();
    p
}

/// Run `file` on `input`; the JSON report and the output archive's bytes.
fn run(dir: &Path, file: &str, input: &Path, out: &str) -> (Value, Vec<u8>) {
    let file = common::root().join(file);
    let o = common::nbg(
        dir,
        &[
            "vendor",
            "run",
            file.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "-o",
            out,
            "--json",
        ],
    );
    let v = common::stdout_json(&o);
    assert_eq!(o.status.code(), Some(0), "{v}");
    (v, std::fs::read(dir.join(out)).unwrap())
}

fn floats(archive: &[u8]) -> Vec<Tensor> {
    npz::read(archive, 1 << 24).unwrap()
}

fn correlation(a: &[f32], b: &[f32]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (
        a.iter().map(|&x| f64::from(x)).sum::<f64>() / n,
        b.iter().map(|&x| f64::from(x)).sum::<f64>() / n,
    );
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x) - ma, f64::from(y) - mb);
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    sab / (saa * sbb).sqrt()
}

/// The int16 and the fp16 file of the face detector, run on one input, give the same outputs
/// within the int16 file's quantization (correlation above 0.9999 on each output): the
/// dynamic-fixed-point input and output conversions and the fp16 ones are right, and the
/// version word 0x00020000 was relabelled (in memory) for the run. A second run of the int16
/// file gives a byte-identical archive.
#[test]
fn two_compilations_of_the_face_detector_agree_on_the_simulator() {
    if common::vendor_driver().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &image());
    let (a, a_bytes) = run(dir.path(), INT16, &input, "int16.npz");
    let (b, b_bytes) = run(dir.path(), FP16, &input, "fp16.npz");
    for v in [&a, &b] {
        assert_eq!(v["verdict"]["verdict"], "ran", "{v}");
        assert_eq!(v["relabelled"]["from"], "0x00020000", "{v}");
        assert_eq!(v["relabelled"]["to"], "0x00020005", "{v}");
        assert_eq!(v["io_differences"], serde_json::json!([]), "{v}");
    }
    assert_eq!(a["inputs"][0]["conversion"], "dynamic-fixed-point-quantize");
    assert_eq!(a["inputs"][0]["storage"]["position"], 15);
    assert_eq!(
        a["outputs"][0]["conversion"],
        "dynamic-fixed-point-dequantize"
    );
    assert_eq!(b["inputs"][0]["conversion"], "float16-round");
    assert_eq!(b["outputs"][0]["conversion"], "float16-widen");
    let (x, y) = (floats(&a_bytes), floats(&b_bytes));
    assert_eq!(x.len(), 2);
    for (p, q) in x.iter().zip(&y) {
        assert_eq!((&p.name, &p.shape), (&q.name, &q.shape));
        let (p, q) = (p.f32_values().unwrap(), q.f32_values().unwrap());
        let r = correlation(&p, &q);
        assert!(r > 0.9999, "correlation {r}");
    }
    let (_, again) = run(dir.path(), INT16, &input, "again.npz");
    assert_eq!(again, a_bytes, "runs are deterministic");
}

/// Inputs that do not match the file are refused before any driver call, with exit 2 and the
/// tensor's name: a wrong name, a wrong shape and a type that is neither stored nor float32.
/// Nothing is written.
#[test]
fn inputs_that_do_not_match_the_file_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let good = image();
    let cases = [
        (
            Tensor {
                name: "image".into(),
                ..good.clone()
            },
            "\"image\"",
        ),
        (
            Tensor {
                shape: vec![1, 3, 128, 128],
                ..good.clone()
            },
            "shape [1, 3, 128, 128]",
        ),
        (
            Tensor {
                dtype: Dtype::I32,
                ..good.clone()
            },
            "element type <i4",
        ),
    ];
    for (t, said) in cases {
        let input = write_input(dir.path(), &t);
        let o = common::nbg(
            dir.path(),
            &[
                "vendor",
                "run",
                common::root().join(INT16).to_str().unwrap(),
                "--input",
                input.to_str().unwrap(),
                "-o",
                "out.npz",
                "--json",
            ],
        );
        let v = common::stdout_json(&o);
        assert_eq!(o.status.code(), Some(2), "{v}");
        assert_eq!(v["error"]["code"], "input-mismatch", "{v}");
        let m = v["error"]["message"].as_str().unwrap();
        assert!(m.contains(said), "{m}");
        if said == "\"image\"" {
            // A wrong name lists the names that would do: the input's own and its alias.
            assert!(m.contains("\"input/output[0]\", \"input_0\""), "{m}");
        }
        assert!(!dir.path().join("out.npz").exists());
    }
}

/// Run `file` with `subs` substituted in memory; the JSON report and the outputs, if it ran.
fn run_substituted(
    dir: &Path,
    file: &str,
    input: &Path,
    subs: &[String],
) -> (Value, Option<Vec<u8>>) {
    let file = common::root().join(file);
    let out = dir.join("out.npz");
    let _ = std::fs::remove_file(&out);
    let mut args = vec![
        "vendor".to_string(),
        "run".into(),
        file.display().to_string(),
        "--input".into(),
        input.display().to_string(),
        "-o".into(),
        out.display().to_string(),
        "--json".into(),
    ];
    for s in subs {
        args.extend(["--substitute".to_string(), s.clone()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = common::nbg(dir, &args);
    let v = common::stdout_json(&o);
    let ran = v["verdict"]["verdict"] == "ran";
    assert_eq!(o.status.code(), Some(if ran { 0 } else { 1 }), "{v}");
    (v, std::fs::read(&out).ok())
}

/// The KERNEL_BITSTREAM patch of the Gemm + Relu control on 0x1000001e writes the address of
/// the coefficient header table's entry 0 into the NN's coefficient buffer (+0x20), as the
/// simulator runs it (bytes substituted in memory, checksums recomputed, nothing written):
/// - the file as it is runs;
/// - its COEF_HEADER_TABLE entry pointed 64 bytes on, at zeros, aborts the driver, and pointed
///   there with the header copied there runs with the same outputs: the hardware reads the
///   header through that table entry;
/// - the header zeroed aborts it;
/// - the patch's source made MISC_DYNA_GENERIC (the coefficient data entry 0) aborts it.
#[test]
fn the_kernel_bitstream_source_is_the_coefficient_header_entry_on_the_simulator() {
    const FILE: &str = "controls/serializer/gemm-relu-qdq-u8-1000001e.nb";
    let bytes = std::fs::read(common::root().join(FILE)).unwrap();
    let g = nbg_lab::parse(&bytes).unwrap();
    let t = nbg_lab::NbgFamily::patch_targets(&g).unwrap();
    let p = t
        .targets
        .iter()
        .find(|p| p.source.as_deref().ok() == Some("NBG_SECTION_COEF_HEADER[0]"))
        .expect("the KERNEL_BITSTREAM patch");
    assert_eq!(
        p.field.as_deref().ok(),
        Some("NBG_SECTION_COEF_DATA[0]+0x20")
    );
    if common::vendor_driver().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let x: Vec<f32> = (0..16).map(|i| i as f32 - 8.0).collect();
    let input = write_input(dir.path(), &Tensor::from_f32(INPUT, &[1, 16], &x));
    // Offsets from the file's own tables: COEF_HEADER_TABLE's entry 0, the COEF_HEADER
    // section, and the patch record's source type word.
    let v2 = match &g {
        nbg_lab::nbg::parse::Graph::V2(v2) => v2,
        _ => unreachable!("a v2 control"),
    };
    let section = |kind: u32| v2.sections.iter().find(|s| s.kind == kind).unwrap();
    let table = section(5).offset;
    let header = section(6).offset;
    let record = section(10).offset + 28 * p.patch as u64;
    assert_eq!(
        u32::from_le_bytes(bytes[record as usize + 8..][..4].try_into().unwrap()),
        9
    );
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let saved = hex(&bytes[header as usize..header as usize + 64]);
    let (v, original) = run_substituted(dir.path(), FILE, &input, &[]);
    let original = original.unwrap_or_else(|| panic!("{v}"));
    let aborts = |subs: &[String]| {
        let (v, out) = run_substituted(dir.path(), FILE, &input, subs);
        assert_eq!(v["verdict"]["verdict"], "crashed", "{subs:?}: {v}");
        assert!(out.is_none());
        assert_eq!(v["substituted"].as_array().unwrap().len(), subs.len());
    };
    aborts(&[format!("0x{table:x}=40000000")]);
    aborts(&[format!("0x{header:x}={}", "00".repeat(64))]);
    aborts(&[format!("0x{:x}=05000000", record + 8)]);
    let (v, moved) = run_substituted(
        dir.path(),
        FILE,
        &input,
        &[
            format!("0x{:x}={saved}", header + 64),
            format!("0x{table:x}=40000000"),
        ],
    );
    assert_eq!(moved.as_deref(), Some(&original[..]), "{v}");
}

/// One vocabulary (issue 68): `info`, `parse`, `check` and `vendor run` name the target, the
/// shapes and the element type of the same file the same way, with the same values.
#[test]
fn info_parse_check_and_vendor_run_name_each_concept_the_same_way() {
    let root = common::root();
    let json = |args: &[&str]| common::stdout_json(&common::nbg(&root, args));
    let info = json(&["info", "--json", INT16]);
    let info = &info["files"][0];
    let parse = json(&["parse", "--json", INT16]);
    let check = json(&["check", "--json", "--target", "0x1000003b", INT16]);
    // The target, in hex, under `target` (check: the target check's `file` value).
    assert_eq!(info["target"], "0x1000003b");
    assert_eq!(parse["target"], info["target"]);
    let target_check = &check["files"][0]["checks"][0];
    assert_eq!(target_check["check"], "target");
    assert_eq!(target_check["file"], info["target"]);
    // Shapes in both named orders, and the element type.
    for side in ["inputs", "outputs"] {
        for (i, p) in info[side]
            .as_array()
            .unwrap()
            .iter()
            .zip(parse[side].as_array().unwrap())
        {
            for key in [
                "name",
                "shape",
                "npz_shape",
                "element_type",
                "quantization_format",
                "scale",
                "zero_point",
                "fixed_point_position",
                "storage_bytes",
            ] {
                assert_eq!(i[key], p[key], "{side} {key}");
            }
            // The field map's names stay beside them for one release, and info's former key.
            assert_eq!(p["dimensions"], p["shape"]);
            assert_eq!(p["data_format_name"], p["element_type"]);
            assert_eq!(p["quantization"]["format_name"], p["quantization_format"]);
            assert_eq!(i["quantization"], i["quantization_format"]);
        }
    }
    if common::vendor_driver().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = write_input(dir.path(), &image());
    let (run, _) = run(dir.path(), INT16, &input, "out.npz");
    for side in ["inputs", "outputs"] {
        for (r, i) in run[side]
            .as_array()
            .unwrap()
            .iter()
            .zip(info[side].as_array().unwrap())
        {
            assert_eq!(r["npz_shape"], i["npz_shape"], "{side}");
            assert_eq!(r["shape"], r["npz_shape"], "the former key, one release");
        }
    }
    // The texts name the type the same way too.
    let said = "INT16 DYNAMIC_FIXED_POINT fixed point 15";
    let info_text = String::from_utf8(common::nbg(&root, &["info", INT16]).stdout).unwrap();
    assert!(info_text.contains(said), "{info_text}");
    let file = common::root().join(INT16);
    let o = common::nbg(
        dir.path(),
        &[
            "vendor",
            "run",
            file.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
            "-o",
            "text.npz",
        ],
    );
    let run_text = String::from_utf8(o.stdout).unwrap();
    assert!(run_text.contains(said), "{run_text}");
}

/// An awkward stored name has a positional alias (issue 68): `input_0` is the face detector's
/// `input/output[0]`, and gives the same run; the same input given under both is refused. No
/// driver call is needed for either check: `Prepared` decides.
#[test]
fn an_input_may_go_by_its_position() {
    let bytes = std::fs::read(common::root().join(INT16)).unwrap();
    let by_name = nbg_lab::simulator::run::Prepared::new(&bytes, &[image()]).unwrap();
    let alias = Tensor {
        name: "input_0".into(),
        ..image()
    };
    let by_alias =
        nbg_lab::simulator::run::Prepared::new(&bytes, std::slice::from_ref(&alias)).unwrap();
    assert_eq!(
        by_name.inputs(),
        by_alias.inputs(),
        "the same input, stored the same"
    );
    let e = nbg_lab::simulator::run::Prepared::new(&bytes, &[image(), alias])
        .err()
        .expect("one input given twice is refused");
    assert!(e.to_string().contains("given twice"), "{e}");
}
