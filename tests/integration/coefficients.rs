//! `nbg coefficients` on the A733 board files (`../shared/corpus/v2`, else the copies under
//! `controls/public/v2`) and the public v1 files: every NN coefficient buffer cut into its header, per-core streams and
//! biases, the header re-encoded to its stored bytes, each stream decoded and re-encoded to its
//! bits (or reported with its code and bit), the kernels put together; a buffer that cannot be
//! cut is refused with its code and offset, never a panic. The face detector's source model
//! (`../shared/models`) comes back out of the file through `nbg locate`.

use super::common;
use serde_json::Value;

fn coefficients(path: &str) -> (Option<i32>, Value) {
    let o = common::nbg(&common::root(), &["coefficients", path, "--json"]);
    let doc = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{path}: {e}: {}", String::from_utf8_lossy(&o.stderr));
    });
    (o.status.code(), doc)
}

/// Every buffer of `doc` cut with its header re-encoded, each stream decoded and re-encoded or
/// reported with its code and bit, every refusal with a code; the exit status says whether all
/// was put together. The number of buffers put together.
fn cut_or_refused(name: &str, code: Option<i32>, doc: &Value) -> usize {
    let buffers = doc["buffers"].as_array().unwrap();
    let refused = doc["refused"].as_array().unwrap();
    let whole = refused.is_empty() && buffers.iter().all(|b| b["weights"].is_object());
    assert_eq!(code, Some(if whole { 0 } else { 1 }), "{name}");
    for b in buffers {
        assert_eq!(b["header_reencoded"], true, "{name}: {b}");
        // Every stream decodes and re-encodes, or says where and why not.
        for s in b["streams"].as_array().unwrap() {
            match (&s["decoded"], &s["not_decoded"]) {
                (Value::Object(d), Value::Null) => {
                    assert_eq!(d["reencoded"], true, "{name}: {s}")
                }
                (Value::Null, Value::Object(e)) => {
                    assert!(
                        e["code"].as_str().unwrap().starts_with("coef-"),
                        "{name}: {s}"
                    );
                    assert!(e["bit"].as_u64().unwrap() <= s["bits"].as_u64().unwrap());
                }
                _ => panic!("{name}: a stream neither decoded nor reported: {s}"),
            }
        }
        // A buffer not put together says which core and why.
        if !b["weights"].is_object() {
            let e = &b["weights_error"]["error"];
            assert!(
                e["code"].as_str().unwrap().starts_with("coef-"),
                "{name}: {b}"
            );
        }
        let size = b["size"].as_u64().unwrap();
        let streams: u64 = b["streams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["bytes"].as_u64().unwrap())
            .sum();
        assert!(64 + streams <= size, "{name}: entry {}", b["entry"]);
    }
    for r in refused {
        let code = r["error"]["code"].as_str().unwrap();
        assert!(code.starts_with("coef-"), "{name}: {r}");
    }
    // A shader's image ends inside its entry, its elements its shape's.
    for i in doc["images"].as_array().unwrap() {
        let shape: Vec<u64> = i["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert!(shape.iter().all(|&d| d > 0), "{name}: {i}");
        assert!(i["tail_bytes"].as_u64().unwrap() < i["size"].as_u64().unwrap());
    }
    // A TP buffer's parts tile its entry, each with a bias per output.
    for t in doc["tp"].as_array().unwrap() {
        let parts = t["parts"].as_array().unwrap();
        let sum: u64 = parts.iter().map(|p| p["size"].as_u64().unwrap()).sum();
        assert_eq!(sum, t["size"].as_u64().unwrap(), "{name}: {t}");
        for p in parts {
            let f = p["shape"]["filters"].as_u64().unwrap();
            assert_eq!(p["biases"].as_array().unwrap().len() as u64, f, "{name}");
        }
    }
    buffers.iter().filter(|b| b["weights"].is_object()).count()
}

/// Every coefficient-table entry that holds weights or data (`nbg parse --json`: the v2
/// `coef_regions`, the v1 coefficient table's regions) is in exactly one list of
/// `nbg coefficients`: cut as an NN buffer, a table, a shader's image or a TP buffer, or
/// refused with its code.
fn every_entry_accounted_for(name: &str, path: &str, doc: &Value) {
    let o = common::nbg(&common::root(), &["parse", path, "--json"]);
    let g: Value = serde_json::from_slice(&o.stdout).unwrap();
    let regions = ["coef_regions", "coeff_regions", "lcd_regions"]
        .iter()
        .map(|k| &g[*k])
        .find(|r| {
            r.as_array().is_some_and(|a| {
                a.iter()
                    .any(|r| r["role"] == "coefficients" || r["role"] == "data")
            })
        });
    let Some(regions) = regions else { return };
    let mut listed = std::collections::BTreeMap::new();
    for list in ["buffers", "zero_run", "tables", "images", "tp", "refused"] {
        for x in doc[list].as_array().unwrap() {
            let e = x["entry"].as_u64().unwrap();
            assert!(
                listed.insert(e, list).is_none(),
                "{name}: entry {e} listed twice"
            );
        }
    }
    for r in regions.as_array().unwrap() {
        let role = r["role"].as_str().unwrap();
        let e = r["entry"].as_u64().unwrap();
        let size = r["size"].as_u64().unwrap();
        if matches!(role, "coefficients" | "data" | "TP buffer") && size > 0 {
            assert!(
                listed.contains_key(&e),
                "{name}: {role} entry {e} not listed"
            );
        }
    }
}

#[test]
fn every_board_file_is_cut_or_refused_with_a_code() {
    let (dir, names) = common::public_v2_paths();
    for name in names {
        let path = dir.join(&name).display().to_string();
        let (code, doc) = coefficients(&path);
        // Something is cut in every board file: NN buffers, or (where convolutions run on
        // shaders, as in the fp16 builds) the images the shaders read.
        let cut = ["buffers", "zero_run", "tables", "images", "tp"]
            .iter()
            .any(|k| !doc[*k].as_array().unwrap().is_empty());
        assert!(cut, "{name}: no coefficient entry cut");
        cut_or_refused(&name, code, &doc);
        every_entry_accounted_for(&name, &path, &doc);
    }
}

/// The fp16 build's convolutions run on shaders: their weights and biases are the images the
/// shaders' descriptors give, float16 kernels (outputs by inputs) and float32 biases, every
/// byte of each entry an element.
#[test]
fn shader_weights_are_typed_and_shaped_by_their_descriptors() {
    let (dir, names) = common::public_v2_paths();
    let Some(name) = names.iter().find(|n| n.contains("fp16")) else {
        common::skip("an fp16 A733 board file");
        return;
    };
    let (_, doc) = coefficients(&dir.join(name).display().to_string());
    let images = doc["images"].as_array().unwrap();
    assert!(!images.is_empty());
    let mut kernels = 0;
    for i in images {
        assert_eq!(i["padding_zero"], true, "{i}");
        assert_eq!(i["tail_bytes"], 0, "{i}");
        let readers = i["readers"].as_array().unwrap();
        assert!(!readers.is_empty());
        // Uniform 8 takes a convolution's kernel, uniform 16 its bias.
        for r in readers
            .iter()
            .filter(|r| r["operation"]["layer_name"] == "ConvolutionLayer")
        {
            match r["uniform"].as_u64() {
                Some(8) => {
                    kernels += 1;
                    assert_eq!(i["dtype"], "f16", "{i}");
                }
                Some(16) => {
                    assert_eq!(i["dtype"], "f32", "{i}");
                    assert_eq!(i["shape"][1], 1, "a bias is one row: {i}");
                }
                _ => {}
            }
        }
    }
    assert!(kernels > 0);
}

/// The v1 files' NN coefficient buffers, inside `lcd` (or `coeff_data`), read by the same
/// cutter: each cut and decoded, or reported where and why not.
#[test]
fn every_public_v1_file_is_cut_or_refused_with_a_code() {
    let (dir, names) = common::public_paths();
    let mut put_together = 0;
    for name in names {
        let path = dir.join(&name).display().to_string();
        let (code, doc) = coefficients(&path);
        put_together += cut_or_refused(&name, code, &doc);
        every_entry_accounted_for(&name, &path, &doc);
    }
    // Measured: the ameba files' buffers put together whole (VIP9000-class v8 buffers).
    assert!(put_together > 0, "no v1 buffer put together");
}

#[test]
fn the_face_detector_cuts_whole_with_48_bit_biases() {
    let (dir, names) = common::public_v2_paths();
    let Some(name) = names.iter().find(|n| n.contains("face_detector")) else {
        common::skip("the A733 face detector");
        return;
    };
    let (code, doc) = coefficients(&dir.join(name).display().to_string());
    assert_eq!(code, Some(0));
    let buffers = doc["buffers"].as_array().unwrap();
    assert!(doc["refused"].as_array().unwrap().is_empty());
    for b in buffers {
        assert_eq!(b["header"]["bit16"], true);
        let channels = b["command"]["output_channels"].as_u64().unwrap();
        let biases = &b["biases"];
        assert_eq!(biases["width"], 6, "entry {}", b["entry"]);
        assert_eq!(biases["values"].as_array().unwrap().len() as u64, channels);
        assert_eq!(biases["tail_zero"], true);
        for s in b["streams"].as_array().unwrap() {
            assert_eq!(s["padding_zero"], true);
            assert_eq!(s["decoded"]["reencoded"], true, "entry {}: {s}", b["entry"]);
        }
        let w = &b["weights"];
        assert_eq!(w["dtype"], "i16", "entry {}", b["entry"]);
        assert_eq!(w["shape"][0].as_u64(), Some(channels));
        assert_eq!(w["padding_zero"], true);
    }
    // The first conv2d's first bias (source 0.08844, fp16) as stored: x 2^30, within 4 %.
    let first = buffers[0]["biases"]["values"][0].as_i64().unwrap() as f64 / f64::from(1u32 << 30);
    assert!((first - 0.08844).abs() < 0.004, "{first}");
}

/// `nbg locate SOURCE.npz FILE --json`, exit 0, its `decoded` section.
fn located(model: &std::path::Path, nb: &std::path::Path) -> Value {
    let o = common::nbg(
        &common::root(),
        &[
            "locate",
            &model.display().to_string(),
            &nb.display().to_string(),
            "--json",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["decoded"].clone()
}

/// Every kernel and bias of the face detector's source model found with `quantization` (the
/// kernels') and recovered exactly element by element; the whole model at least 99 %.
fn every_weight_exact(d: &Value, kernel: &str, bias: &str) {
    let (mut kernels, mut elements, mut exact, mut rounded) = (0, 0, 0, 0);
    for t in d["tensors"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        if !(name.ends_with("/Kernel") || name.ends_with("/Bias")) {
            continue;
        }
        let f = &t["found"];
        assert!(f.is_object(), "{name} not found");
        let n = t["elements"].as_u64().unwrap();
        let q = f["quantization"]["type"].as_str().unwrap();
        if name.ends_with("/Kernel") {
            kernels += 1;
            assert_eq!(q, kernel, "{name}");
            // Measured: the toolkit rounded every weight to 5 decimals before quantizing (named
            // where it changes an element: all but a kernel whose values need no rounding).
            assert!(f["decimals"] == 5 || f["decimals"].is_null(), "{name}: {f}");
            rounded += u64::from(f["decimals"] == 5);
        } else {
            assert_eq!(q, bias, "{name}");
        }
        assert_eq!(f["exact"].as_u64(), Some(n), "{name}: {f}");
        elements += n;
        exact += f["exact"].as_u64().unwrap();
    }
    assert_eq!(kernels, 37);
    assert!(rounded >= 30, "{rounded} kernels name 5 decimals");
    assert!(exact * 100 >= elements * 99, "{exact} of {elements}");
}

fn face_detector_model() -> Option<std::path::PathBuf> {
    let model = std::path::Path::new(&common::root())
        .join("../shared/models/face_detection_short_range.weights.npz");
    if model.is_file() {
        Some(model)
    } else {
        common::skip("the face detector's source model (../shared/models)");
        None
    }
}

#[test]
fn the_face_detectors_source_weights_come_back_out_of_the_file() {
    let (dir, names) = common::public_v2_paths();
    let Some(name) = names.iter().find(|n| n.contains("face_detector")) else {
        common::skip("the A733 face detector");
        return;
    };
    let Some(model) = face_detector_model() else {
        return;
    };
    let d = located(&model, &dir.join(name));
    assert_eq!(d["buffers_decoded"], d["buffers"]);
    // int16 dynamic fixed point, biases corrected by 128 x the kernel's sum.
    every_weight_exact(&d, "dfp", "dfp-bias");
}

#[test]
fn the_fp16_twins_weights_are_found_where_its_shaders_read_them() {
    let nb = common::root().join("controls/public/v2-twins/a733-face_detector_fp16-0000.nb");
    let Some(model) = face_detector_model() else {
        return;
    };
    let d = located(&model, &nb);
    // No NN weight buffer: every convolution runs on a shader and reads plain entries.
    assert_eq!(d["buffers"], 0);
    let mut kernel_entries = std::collections::BTreeSet::new();
    for t in d["tensors"].as_array().unwrap() {
        let f = &t["found"];
        if f.is_object() {
            assert_eq!(f["storage"], "plain", "{t}");
            assert!(f["operation"].is_u64(), "{t}");
            // Each kernel its own entry (an all-zero bias may be shared).
            if t["name"].as_str().unwrap().ends_with("/Kernel") {
                assert!(kernel_entries.insert(f["entry"].as_u64()), "{t}");
            }
        }
    }
    // Kernels float16 as stored, biases float32.
    every_weight_exact(&d, "fp16", "f32");
}

#[test]
fn the_weights_archive_is_deterministic_and_holds_every_buffer() {
    let (dir, names) = common::public_v2_paths();
    let Some(name) = names.iter().find(|n| n.contains("face_detector")) else {
        common::skip("the A733 face detector");
        return;
    };
    let nb = dir.join(name).display().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let paths = [tmp.path().join("a.npz"), tmp.path().join("b.npz")];
    for p in &paths {
        let o = common::nbg(
            &common::root(),
            &["coefficients", &nb, "-o", &p.display().to_string()],
        );
        assert_eq!(o.status.code(), Some(0));
    }
    let a = std::fs::read(&paths[0]).unwrap();
    assert_eq!(a, std::fs::read(&paths[1]).unwrap());
    let tensors = nbg_lab::onnx::npz::read(&a, 1 << 24).unwrap();
    // 37 buffers: weights and biases each.
    assert_eq!(tensors.len(), 74);
    let first = &tensors[0];
    assert!(
        first.name.ends_with(".nn0.entry0.weights"),
        "{}",
        first.name
    );
    assert_eq!(first.shape, [24, 3, 5, 5]);
    // conv2d/Kernel[0][0][0][0] = 0.04611 (fp16) at position 15: 1511.
    assert_eq!(i16::from_le_bytes([first.data[0], first.data[1]]), 1511);
}

/// `nbg info --json`'s decoding of one file: its size, opaque bytes and the opaque bytes by
/// reason.
fn decoding(path: &std::path::Path) -> (u64, u64, Vec<(String, u64)>) {
    let o = common::nbg(
        &common::root(),
        &["info", &path.display().to_string(), "--json"],
    );
    let doc = common::stdout_json(&o);
    let f = &doc["files"][0];
    let d = &f["decoding"];
    let groups = d["undecoded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["reason"].as_str().unwrap().to_string(),
                g["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    (
        f["bytes"].as_u64().unwrap(),
        d["opaque_bytes"].as_u64().unwrap(),
        groups,
    )
}

/// Every opaque byte of every public file (the corpus beside the project, else the files the
/// repository carries) is named by a reason, and at most 1 % of a file is opaque for a reason
/// the decoders own (a refusal, bytes that do not re-encode, a payload of no known layout):
/// what stays is a run's data, entries no record points at and pointer-only shader arguments.
#[test]
fn public_files_keep_opaque_only_what_is_named() {
    let (v2, v2_names) = common::public_v2_paths();
    let (v1, v1_names) = common::public_paths();
    let files = v2_names
        .iter()
        .map(|n| v2.join(n))
        .chain(v1_names.iter().map(|n| v1.join(n)));
    for path in files {
        let (size, opaque, groups) = decoding(&path);
        let named: u64 = groups.iter().map(|g| g.1).sum();
        assert_eq!(named, opaque, "{}: {groups:?}", path.display());
        let owned: u64 = groups
            .iter()
            .filter(|(r, _)| {
                matches!(
                    r.as_str(),
                    "decoder-refused" | "not-reencoded" | "format-unknown"
                )
            })
            .map(|g| g.1)
            .sum();
        assert!(owned * 100 <= size, "{}: {groups:?}", path.display());
    }
}

/// The decoded share the repository's public controls reached, held: at most this many opaque
/// bytes each (measured 2026-12-07: v1 coefficient tables, TP fully-connected buffers, the v7
/// order and shader images decoded; what stays is named by `public_files_keep_opaque_only_what_is_named`).
#[test]
fn committed_public_controls_hold_their_decoded_share() {
    let held: &[(&str, u64)] = &[
        ("v1/a733-lenet-v2-0016.nb", 0),
        ("v1/a733-vpm_run-network_binary-001e.nb", 0),
        ("v1/ameba-centerface_576x320_uint8-000e.nb", 0),
        ("v1/ameba-fer2013_cnn-0014.nb", 1152),
        ("v1/ameba-hand_landmark_lite_int16-0014.nb", 420),
        ("v1/ameba-mobilefacenet_int8-000e.nb", 3592),
        ("v1/ameba-nanodet_plus_m_416_uint8-0014.nb", 848),
        ("v1/ameba-retinaface025_uint8-000e.nb", 256),
        ("v1/ameba-scrfd_500m_bnkps_576x320_u8-000e.nb", 320),
        ("v1/ameba-scrfd_500m_bnkps_576x320_u8_nv12-000e.nb", 424),
        ("v1/ameba-yamnet_s_hybrid-000e.nb", 196),
        ("v1/ameba-yolo_fastest_1.1_320x320_u8-000e.nb", 1096),
        ("v1/st-blazeface_128x128_quant-001e.nb", 2816),
        ("v1/st-deeplabv3_257_int8_per_tensor-001e.nb", 9024),
        ("v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb", 1088),
        ("v2/a733-face_blendshapes_int16-0000.nb", 192),
        ("v2/a733-face_detector_int16-0000.nb", 0),
        ("v2/a733-face_landmarks_detector_int16-0000.nb", 0),
        ("v2-twins/a733-face_detector_fp16-0000.nb", 0),
    ];
    let dir = common::root().join("controls/public");
    for (name, most) in held {
        let (_, opaque, groups) = decoding(&dir.join(name));
        assert!(
            opaque <= *most,
            "{name}: {opaque} opaque bytes, held {most}: {groups:?}"
        );
    }
}
