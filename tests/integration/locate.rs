//! The coefficient locator (PoC 12A): `nbg locate` on an untuned synthetic pair and on the
//! public TIM-VX sample.

use crate::common;

use std::path::PathBuf;

fn pair_files() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (m, n) = nbg_lab::lab::locate::synthetic_pair().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (mp, np) = (dir.path().join("pair.onnx"), dir.path().join("pair.nb"));
    std::fs::write(&mp, m).unwrap();
    std::fs::write(&np, n).unwrap();
    (dir, mp, np)
}

#[test]
fn locator_finds_the_placed_weight_under_its_one_transform_only() {
    let (m, n) = nbg_lab::lab::locate::synthetic_pair().unwrap();
    let doc = nbg_lab::lab::locate::locate(&m, &n, &nbg_lab::lab::locate::LayerSource::None)
        .unwrap()
        .to_json();
    assert_eq!(doc["schema"], "nbg-locate/1");
    assert_eq!(
        doc["registry_sha256"],
        nbg_lab::lab::locate::registry_sha256().hex()
    );
    let rows = doc["initializers"].as_array().unwrap();
    let w = rows.iter().find(|r| r["name"] == "w").unwrap();
    assert_eq!(w["result"], "found");
    let matches = w["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 1, "{matches:?}");
    assert_eq!(matches[0]["transform"], "ohwi/fp16");
    assert_eq!(matches[0]["count"], 1);
    let o = &matches[0]["occurrences"][0];
    assert_eq!(o["owner"], "NBG_SECTION_COEF_DATA");
    assert_eq!(
        o["offset_in_owner"],
        nbg_lab::lab::locate::PAIR_OFFSET as u64
    );
    // Every transform of the registry was tried on the 4-D weight.
    assert_eq!(w["transforms_tried"], 10);
    let b = rows.iter().find(|r| r["name"] == "b").unwrap();
    assert_eq!(b["result"], "not-found");
    assert_eq!(doc["summary"]["found"], 1);
    assert_eq!(doc["summary"]["not_found"], 1);
}

#[test]
fn locator_finds_a_quantized_weight_computed_independently() {
    use nbg_lab::lab::synth::{GraphSpec, Rng, TensorSpec};
    // The pair's model, and a graph holding its weight as uint8 (min-max affine, stored order).
    let (m, _) = nbg_lab::lab::locate::synthetic_pair().unwrap();
    let model = <nbg_lab::onnx::proto::ModelProto as prost::Message>::decode(&m[..]).unwrap();
    let t = &model.graph.as_ref().unwrap().initializer[0];
    let w: Vec<f32> = t
        .raw_data
        .as_ref()
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let (lo, hi) = w.iter().fold((0f64, 0f64), |(l, h), &x| {
        (l.min(x as f64), h.max(x as f64))
    });
    let scale = ((hi - lo) / 255.0) as f32;
    let zp = (-(lo as f32) / scale).round_ties_even().clamp(0.0, 255.0);
    let q: Vec<u8> = w
        .iter()
        .map(|&x| ((x / scale).round_ties_even() + zp).clamp(0.0, 255.0) as u8)
        .collect();
    let spec = GraphSpec {
        target: 0x1000_000e,
        network_name: "q".into(),
        inputs: vec![TensorSpec::new("x", &[8], 2)],
        outputs: vec![TensorSpec::new("y", &[8], 2)],
        layers: 4,
        operations: 5,
        ppu_bytes: 256,
        loadstate_bytes: 320,
        coef_bytes: 1024,
        memory_pool_bytes: 161_280,
        vip_sram_bytes: 262_144,
        dynaio: None,
    };
    let mut layout = spec.layout(&mut Rng::new(7)).unwrap();
    let nn = layout
        .sections
        .iter_mut()
        .find(|s| s.kind == nbg_lab::nbg::format::section::NN)
        .unwrap();
    nn.payload[100..100 + q.len()].copy_from_slice(&q);
    let doc = nbg_lab::lab::locate::locate(
        &m,
        &layout.emit().unwrap(),
        &nbg_lab::lab::locate::LayerSource::None,
    )
    .unwrap()
    .to_json();
    let w = &doc["initializers"][0];
    assert_eq!(w["result"], "found");
    let hit = w["matches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["transform"] == "as-stored/uint8-min-max")
        .unwrap();
    assert_eq!(hit["occurrences"][0]["owner"], "NBG_SECTION_NN");
    assert_eq!(hit["occurrences"][0]["offset_in_owner"], 100);
}

#[test]
fn locate_cli_exit_codes_and_the_public_sample() {
    let (_dir, mp, np) = pair_files();
    let out = common::nbg(
        &common::root(),
        &[
            "locate",
            mp.to_str().unwrap(),
            np.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let committed =
        std::fs::read_to_string(common::root().join("evidence/locate/synthetic-pair.json"))
            .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), committed);
    let out = common::nbg(
        &common::root(),
        &["locate", mp.to_str().unwrap(), np.to_str().unwrap()],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ohwi/fp16 at 0x"), "{text}");
    // Not an NBG: exit 1; missing: exit 2.
    let out = common::nbg(
        &common::root(),
        &["locate", mp.to_str().unwrap(), mp.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    let out = common::nbg(
        &common::root(),
        &["locate", mp.to_str().unwrap(), "/nonexistent.nb"],
    );
    assert_eq!(out.status.code(), Some(2));
    // The public TIM-VX sample holds none of the pair's (random) coefficients: a negative
    // control; its own weights are not published as source (notebooks/mappings.md).
    let sample = common::root().join("controls/public/v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb");
    let out = common::nbg(
        &common::root(),
        &[
            "locate",
            mp.to_str().unwrap(),
            sample.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["found"], 0);
    let owners: Vec<&str> = v["graph"]["admitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["owner"].as_str().unwrap())
        .collect();
    assert_eq!(owners, ["dyna_io", "coeff_data"]);
}

/// Through the decoder, a QDQ model's integers come back out of its NN coefficient buffer as
/// stored: every kernel element less the weight zero point (10, or 0 for int8), every int32
/// bias as is, on both coefficient targets; a Gemm's [O, I] rows are its kernels.
#[test]
fn qdq_integers_are_found_as_stored_in_the_decoded_nn_buffer() {
    use nbg_lab::lab::kernel_match::Quantization;
    let models: std::collections::BTreeMap<&str, Vec<u8>> = nbg_lab::simulator::models::nn()
        .into_iter()
        .map(|(n, _, b)| (n, b))
        .collect();
    let dir = common::root().join("differentials/serializer");
    for (model, set, less) in [
        ("conv-nn-u8", "nn-conv-u8-weight-0-9f", 10),
        ("conv-nn-u8", "nn-conv-u8-weight-0-1000003b", 10),
        ("conv-nn-i8", "nn-conv-i8-weight-5-1000003b", 0),
        ("depthwise-nn-u8", "nn-depthwise-u8-weight-4-9f", 10),
        ("gemm-nn-u8", "nn-gemm-u8-weight-9-1000003b", 10),
    ] {
        let nbg = std::fs::read(dir.join(set).join("A1.nb")).unwrap();
        let located = nbg_lab::lab::locate::locate(
            &models[model],
            &nbg,
            &nbg_lab::lab::locate::LayerSource::None,
        )
        .unwrap();
        let decoded = &located.decoded;
        for (name, want) in [("w_q", less), ("b_q", 0)] {
            let row = decoded.tensors.iter().find(|r| r.name == name).unwrap();
            let f = row
                .found
                .as_ref()
                .unwrap_or_else(|| panic!("{set}: {name}"));
            assert_eq!(f.quantization, Quantization::Stored { less: want }, "{set}");
            assert_eq!(
                (f.exact, f.command),
                (row.elements, Some(0)),
                "{set}: {name}"
            );
        }
    }
}

/// A float32 Conv compiled to float16 on NN (0x1000000e): every decoded fp16 kernel element
/// is the model's weight as float16, bit for bit (the count's and the elements' sign
/// rotations undone).
#[test]
fn fp16_nn_kernels_are_the_models_weights_as_float16() {
    use nbg_lab::lab::kernel_match::Quantization;
    let model = nbg_lab::simulator::models::nn()
        .into_iter()
        .find(|m| m.0 == "conv-nn-fp16")
        .unwrap()
        .2;
    let set = common::root().join("differentials/serializer/nn-conv-fp16-weight-0-1000000e");
    let nbg = std::fs::read(set.join("A1.nb")).unwrap();
    let located =
        nbg_lab::lab::locate::locate(&model, &nbg, &nbg_lab::lab::locate::LayerSource::None)
            .unwrap();
    let row = located
        .decoded
        .tensors
        .iter()
        .find(|r| r.name == "w")
        .unwrap();
    let f = row.found.as_ref().unwrap();
    assert_eq!(f.quantization, Quantization::Fp16);
    assert_eq!((f.exact, row.elements, f.command), (288, 288, Some(0)));
}

/// `locate --layers` on the project's NN capture sets: every NN command the serializer wrote
/// for a static-constant model (Conv, depthwise Conv, Gemm; uint8, int8, fp16) is paired with
/// its ONNX layer through its kernel, and its input image, kernel, output image and channels
/// agree with the layer's (a Gemm as one kernel over the whole input image).
#[test]
fn locate_layers_pairs_every_nn_capture_command_with_its_onnx_layer() {
    use nbg_lab::lab::locate::{LayerSource, locate};
    let sets = common::root().join("differentials/serializer");
    let mut checked = 0;
    for (name, _, model) in nbg_lab::simulator::models::nn() {
        let prefix = format!("nn-{}-", name.replace("-nn-", "-"));
        for e in std::fs::read_dir(&sets).unwrap() {
            let dir = e.unwrap().path();
            let file = dir.file_name().unwrap().to_string_lossy().to_string();
            if !file.starts_with(&prefix) {
                continue;
            }
            for capture in ["A1.nb", "B.nb"] {
                let nbg = std::fs::read(dir.join(capture)).unwrap();
                let doc = locate(&model, &nbg, &LayerSource::Model).unwrap();
                let l = doc.layers.as_ref().unwrap();
                assert!(!l.commands.is_empty(), "{file}/{capture}");
                assert_eq!(l.agree, l.commands.len(), "{file}/{capture}: {l:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no NN capture set");
}

/// Ground truth for the v7 order and the dense depthwise layout: ST's BlazeFace
/// (`st-blazeface_128x128_quant-001e`, ../shared/corpus/v1) is MediaPipe's short-range face
/// detector quantized, and `../shared/models` holds that detector's float weights. Every kernel
/// of the float model comes back out of the file's decoded NN kernels (depthwise ones on the
/// diagonal of dense kernels, the first 5x5 stride-2 one folded into four stride-1 phases),
/// each at least two thirds exact under its own affine fit (ST quantized with its own
/// rounding; 71-94 % per kernel, 88 % of all).
#[test]
fn st_blazeface_kernels_are_the_mediapipe_detectors_weights() {
    use nbg_lab::lab::kernel_match::Layout;
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let npz = common::root().join("../shared/models/face_detection_short_range.weights.npz");
    let nb = dir.join("v1/st-blazeface_128x128_quant-001e.nb");
    if !npz.is_file() || !nb.is_file() {
        common::skip("the ST BlazeFace file or its MediaPipe source weights are not present");
        return;
    }
    let located = nbg_lab::lab::locate::locate_npz(
        &std::fs::read(&npz).unwrap(),
        &std::fs::read(&nb).unwrap(),
        &nbg_lab::lab::locate::LayerSource::None,
    )
    .unwrap();
    let mut found = (0, 0);
    for row in located
        .decoded
        .tensors
        .iter()
        .filter(|r| r.shape.len() == 4)
    {
        let f = row
            .found
            .as_ref()
            .unwrap_or_else(|| panic!("{} not found", row.name));
        let want = match row.shape[..] {
            [1, ..] => Layout::OneHwcDiagonal,
            [_, 5, 5, _] => Layout::StrideFold,
            _ => Layout::Ohwi,
        };
        assert_eq!(f.layout, want, "{}", row.name);
        assert!(f.exact * 3 >= row.elements * 2, "{}: {f:?}", row.name);
        found = (found.0 + 1, found.1 + f.exact);
    }
    // The first 5x5 stride-2 kernel folded, 16 depthwise and 20 pointwise kernels, and their
    // exact elements (a count to hold).
    assert_eq!(found.0, 37);
    assert!(found.1 >= 89_048, "{found:?}");
}
