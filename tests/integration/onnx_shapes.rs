//! The checker's type and shape inference: agreement with the `onnx` package's own inference
//! on Silero and the fixtures, and a contradicting declaration refused for each operator.

use crate::common;

use nbg_lab::onnx::audit::{self, Audit, Limits, Refusal};
use nbg_lab::onnx::checker;
use nbg_lab::onnx::policy;
use nbg_lab::onnx::proto::*;
use prost::Message;
use std::collections::BTreeMap;

const FLOAT: i32 = 1;
const INT64: i32 = 7;
const BOOL: i32 = 9;

fn audit_bytes(bytes: &[u8]) -> Result<Audit, Refusal> {
    let p = policy::load(&common::root().join(policy::DEFAULT_POLICY)).expect("committed policy");
    audit::audit(bytes, &Limits::default(), &p)
}

/// Every node output of the six Silero files and the fixtures: where both `nbg` and
/// `onnx.shape_inference.infer_shapes(model, strict_mode=True)` (committed in
/// `onnx/shape_reference.json` by `bench/onnx_shape_reference.py`) know a value's rank, a
/// dimension or an element type, they agree. The counts are pinned, so a loss of coverage shows.
#[test]
fn inference_agrees_with_the_onnx_package() {
    let check = std::process::Command::new("python3")
        .args(["bench/onnx_shape_reference.py", "--check"])
        .current_dir(common::root())
        .output()
        .expect("python3");
    assert!(
        check.status.success(),
        "onnx/shape_reference.json must regenerate exactly (.ci/setup installs onnx and silero-vad): {}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    let text = std::fs::read_to_string(common::root().join("onnx/shape_reference.json")).unwrap();
    let reference: serde_json::Value = serde_json::from_str(&text).unwrap();
    let models = reference["models"].as_object().unwrap();
    assert_eq!(models.len(), 9);
    let mut summary = BTreeMap::new();
    let mut wrong = Vec::new();
    for (name, want) in models {
        let path = match name.split_once('/') {
            Some(("silero", f)) => crate::onnx::silero(f),
            Some(("fixtures", f)) => common::root().join("onnx/fixtures").join(f),
            _ => panic!("{name}"),
        };
        let bytes = std::fs::read(&path).unwrap();
        let a = audit_bytes(&bytes).unwrap_or_else(|r| panic!("{name} is admitted: {r}"));
        assert_eq!(
            serde_json::to_value(a.source.sha256).unwrap(),
            want["sha256"],
            "{name}: the reference is of another file; rerun bench/onnx_shape_reference.py"
        );
        let model = audit::decode(&bytes, &Limits::default()).unwrap();
        let got = checker::infer(&model).unwrap();
        let values = want["values"].as_object().unwrap();
        assert_eq!(got.len(), values.len(), "{name}: node outputs");
        let (mut both, mut onnx_only, mut nbg_only, mut elems) = (0u64, 0u64, 0u64, 0u64);
        for v in &got {
            let r = &values[&v.value];
            if let (Some(e), Some(re)) = (v.elem, r["elem"].as_i64()) {
                elems += 1;
                if i64::from(e) != re {
                    wrong.push(format!("{name} {}: elem {e}, onnx {re}", v.value));
                }
            }
            let rs: Option<Vec<Option<i64>>> = r["shape"]
                .as_array()
                .map(|a| a.iter().map(serde_json::Value::as_i64).collect());
            match (&v.shape, &rs) {
                (Some(s), Some(t)) if s.len() != t.len() => {
                    wrong.push(format!("{name} {}: {s:?}, onnx {t:?}", v.value));
                }
                (Some(s), Some(t)) => {
                    for (a, b) in s.iter().zip(t) {
                        match (a, b) {
                            (Some(x), Some(y)) if x != y => {
                                wrong.push(format!("{name} {}: {s:?}, onnx {t:?}", v.value));
                            }
                            (Some(_), Some(_)) => both += 1,
                            (None, Some(_)) => onnx_only += 1,
                            (Some(_), None) => nbg_only += 1,
                            (None, None) => {}
                        }
                    }
                }
                (None, Some(t)) => onnx_only += t.iter().flatten().count() as u64,
                (Some(s), None) => nbg_only += s.iter().flatten().count() as u64,
                (None, None) => {}
            }
        }
        summary.insert(
            name.clone(),
            serde_json::json!({
                "node_outputs": got.len(), "element_types_both_know": elems,
                "dimensions_both_know": both, "dimensions_only_onnx_knows": onnx_only,
                "dimensions_only_nbg_knows": nbg_only,
            }),
        );
    }
    assert!(
        wrong.is_empty(),
        "inference disagrees with onnx:\n{}",
        wrong.join("\n")
    );
    common::snapshot(
        common::snapshot_file!("onnx_shape_agreement.json"),
        &serde_json::to_value(summary).unwrap(),
    );
}

fn vi(name: &str, elem: i32, dims: &[i64]) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(TypeValue::TensorType(TensorTypeProto {
                elem_type: Some(elem),
                shape: Some(TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|&d| Dimension {
                            value: Some(DimensionValue::DimValue(d)),
                            denotation: None,
                        })
                        .collect(),
                }),
            })),
            denotation: None,
        }),
        ..Default::default()
    }
}

fn ints(name: &str, v: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        data_type: Some(INT64),
        dims: vec![v.len() as i64],
        int64_data: v.to_vec(),
        ..Default::default()
    }
}

fn zeros(name: &str, dims: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        data_type: Some(FLOAT),
        dims: dims.to_vec(),
        float_data: vec![0.0; dims.iter().product::<i64>() as usize],
        ..Default::default()
    }
}

enum At {
    I(i64),
    Is(Vec<i64>),
    S(&'static str),
    T(TensorProto),
    G(GraphProto),
}

fn node(op: &str, ins: &[&str], outs: &[&str], attrs: Vec<(&str, At)>) -> NodeProto {
    use attribute_type as t;
    NodeProto {
        name: Some(format!("{}_node", op.to_lowercase())),
        op_type: Some(op.into()),
        domain: Some(String::new()),
        input: ins.iter().map(|s| s.to_string()).collect(),
        output: outs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs
            .into_iter()
            .map(|(name, a)| {
                let mut p = AttributeProto {
                    name: Some(name.into()),
                    ..Default::default()
                };
                match a {
                    At::I(i) => (p.i, p.r#type) = (Some(i), Some(t::INT)),
                    At::Is(v) => (p.ints, p.r#type) = (v, Some(t::INTS)),
                    At::S(s) => (p.s, p.r#type) = (Some(s.as_bytes().to_vec()), Some(t::STRING)),
                    At::T(x) => (p.t, p.r#type) = (Some(x), Some(t::TENSOR)),
                    At::G(g) => (p.g, p.r#type) = (Some(g), Some(t::GRAPH)),
                }
                p
            })
            .collect(),
        ..Default::default()
    }
}

fn graph(
    name: &str,
    inputs: Vec<ValueInfoProto>,
    inits: Vec<TensorProto>,
    nodes: Vec<NodeProto>,
    outputs: Vec<ValueInfoProto>,
) -> GraphProto {
    GraphProto {
        name: Some(name.into()),
        input: inputs,
        initializer: inits,
        node: nodes,
        output: outputs,
        ..Default::default()
    }
}

fn model(opset: i64, g: GraphProto) -> ModelProto {
    ModelProto {
        ir_version: Some(8),
        producer_name: Some("nbg-lab tests".into()),
        graph: Some(g),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opset),
        }],
        ..Default::default()
    }
}

/// A model built with the checked output declared as the given dims.
type Build = Box<dyn Fn(&[i64]) -> ModelProto>;

fn one(
    opset: i64,
    inputs: Vec<ValueInfoProto>,
    inits: Vec<TensorProto>,
    n: NodeProto,
    elem: i32,
) -> Build {
    Box::new(move |dims| {
        let out = n.output[0].clone();
        model(
            opset,
            graph(
                "g",
                inputs.clone(),
                inits.clone(),
                vec![n.clone()],
                vec![vi(&out, elem, dims)],
            ),
        )
    })
}

/// (case, checked value, inferred dims, contradicting dims, builder).
type Case = (&'static str, &'static str, Vec<i64>, Vec<i64>, Build);

fn cases() -> Vec<Case> {
    let x = |dims: &[i64]| vi("x", FLOAT, dims);
    let mut out: Vec<Case> = vec![];
    let mut add = |case, value, good: &[i64], bad: &[i64], b: Build| {
        out.push((case, value, good.to_vec(), bad.to_vec(), b));
    };
    add(
        "reshape_zero_and_minus_one",
        "y",
        &[2, 12],
        &[2, 6],
        one(
            14,
            vec![x(&[2, 3, 4])],
            vec![ints("s", &[0, -1])],
            node("Reshape", &["x", "s"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "reshape_to_a_shape_output",
        "y",
        &[2, 6],
        &[6, 2],
        Box::new(|dims: &[i64]| {
            model(
                14,
                graph(
                    "g",
                    vec![vi("x", FLOAT, &[2, 6]), vi("z", FLOAT, &[3, 4])],
                    vec![],
                    vec![
                        node("Shape", &["x"], &["s"], vec![]),
                        node("Reshape", &["z", "s"], &["y"], vec![]),
                    ],
                    vec![vi("y", FLOAT, dims)],
                ),
            )
        }),
    );
    add(
        "slice_inputs",
        "y",
        &[10, 3],
        &[10, 4],
        one(
            13,
            vec![x(&[10, 8])],
            vec![
                ints("b", &[1]),
                ints("e", &[-1]),
                ints("a", &[1]),
                ints("st", &[2]),
            ],
            node("Slice", &["x", "b", "e", "a", "st"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "slice_negative_step",
        "y",
        &[10, 4],
        &[10, 8],
        one(
            13,
            vec![x(&[10, 8])],
            vec![
                ints("b", &[-1]),
                ints("e", &[i64::MIN]),
                ints("a", &[1]),
                ints("st", &[-2]),
            ],
            node("Slice", &["x", "b", "e", "a", "st"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "slice_attributes",
        "y",
        &[5, 8],
        &[6, 8],
        one(
            9,
            vec![x(&[10, 8])],
            vec![],
            node(
                "Slice",
                &["x"],
                &["y"],
                vec![
                    ("starts", At::Is(vec![0])),
                    ("ends", At::Is(vec![5])),
                    ("axes", At::Is(vec![0])),
                ],
            ),
            FLOAT,
        ),
    );
    add(
        "squeeze_axes_input",
        "y",
        &[3, 5],
        &[5, 3],
        one(
            13,
            vec![x(&[1, 3, 1, 5])],
            vec![ints("a", &[0, -2])],
            node("Squeeze", &["x", "a"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "squeeze_axes_attribute",
        "y",
        &[3, 1, 5],
        &[3, 5, 1],
        one(
            11,
            vec![x(&[1, 3, 1, 5])],
            vec![],
            node("Squeeze", &["x"], &["y"], vec![("axes", At::Is(vec![0]))]),
            FLOAT,
        ),
    );
    add(
        "squeeze_all_ones",
        "y",
        &[3, 5],
        &[1, 3, 5],
        one(
            13,
            vec![x(&[1, 3, 1, 5])],
            vec![],
            node("Squeeze", &["x"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "unsqueeze_axes_input",
        "y",
        &[1, 3, 5, 1],
        &[3, 1, 5, 1],
        one(
            13,
            vec![x(&[3, 5])],
            vec![ints("a", &[0, -1])],
            node("Unsqueeze", &["x", "a"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "unsqueeze_axes_attribute",
        "y",
        &[3, 1, 5],
        &[1, 3, 5],
        one(
            11,
            vec![x(&[3, 5])],
            vec![],
            node("Unsqueeze", &["x"], &["y"], vec![("axes", At::Is(vec![1]))]),
            FLOAT,
        ),
    );
    add(
        "gather",
        "y",
        &[5, 2, 3],
        &[5, 4, 3],
        one(
            13,
            vec![x(&[5, 4, 3])],
            vec![ints("i", &[0, 2])],
            node("Gather", &["x", "i"], &["y"], vec![("axis", At::I(1))]),
            FLOAT,
        ),
    );
    add(
        "pad_input",
        "y",
        &[5, 4],
        &[4, 4],
        one(
            13,
            vec![x(&[2, 3])],
            vec![ints("p", &[1, 0, 2, 1])],
            node("Pad", &["x", "p"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "pad_attribute",
        "y",
        &[2, 5],
        &[2, 3],
        one(
            2,
            vec![x(&[2, 3])],
            vec![],
            node(
                "Pad",
                &["x"],
                &["y"],
                vec![("pads", At::Is(vec![0, 1, 0, 1]))],
            ),
            FLOAT,
        ),
    );
    add(
        "pad_axes",
        "y",
        &[2, 7],
        &[2, 3],
        one(
            18,
            vec![x(&[2, 3])],
            vec![ints("p", &[2, 2]), ints("a", &[-1])],
            node("Pad", &["x", "p", "", "a"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "reduce_mean_axes_attribute",
        "y",
        &[2, 1, 4],
        &[2, 4],
        one(
            13,
            vec![x(&[2, 3, 4])],
            vec![],
            node(
                "ReduceMean",
                &["x"],
                &["y"],
                vec![("axes", At::Is(vec![1]))],
            ),
            FLOAT,
        ),
    );
    add(
        "reduce_mean_axes_input",
        "y",
        &[2, 3],
        &[2, 3, 1],
        one(
            18,
            vec![x(&[2, 3, 4])],
            vec![ints("a", &[-1])],
            node(
                "ReduceMean",
                &["x", "a"],
                &["y"],
                vec![("keepdims", At::I(0))],
            ),
            FLOAT,
        ),
    );
    add(
        "reduce_sum_all",
        "y",
        &[1, 1, 1],
        &[2, 3, 4],
        one(
            13,
            vec![x(&[2, 3, 4])],
            vec![],
            node("ReduceSum", &["x"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "constant_of_shape",
        "y",
        &[3, 2],
        &[2, 3],
        one(
            13,
            vec![],
            vec![ints("s", &[3, 2])],
            node("ConstantOfShape", &["s"], &["y"], vec![]),
            FLOAT,
        ),
    );
    add(
        "constant_value_ints",
        "y",
        &[3],
        &[2],
        one(
            13,
            vec![],
            vec![],
            node(
                "Constant",
                &[],
                &["y"],
                vec![("value_ints", At::Is(vec![1, 2, 3]))],
            ),
            INT64,
        ),
    );
    add(
        "shape_start_end",
        "y",
        &[2],
        &[3],
        one(
            15,
            vec![x(&[2, 3, 4, 5])],
            vec![],
            node(
                "Shape",
                &["x"],
                &["y"],
                vec![("start", At::I(1)), ("end", At::I(-1))],
            ),
            INT64,
        ),
    );
    for (case, split, good2, bad2) in [
        ("split_equal", None, [3, 4], [2, 4]),
        ("split_input", Some([2, 4]), [4, 4], [3, 4]),
    ] {
        add(
            case,
            "y2",
            &good2,
            &bad2,
            Box::new(move |dims: &[i64]| {
                let (ins, inits) = match split {
                    Some(s) => (vec!["x", "s"], vec![ints("s", &s)]),
                    None => (vec!["x"], vec![]),
                };
                model(
                    13,
                    graph(
                        "g",
                        vec![vi("x", FLOAT, &[6, 4])],
                        inits,
                        vec![node("Split", &ins, &["y1", "y2"], vec![])],
                        vec![vi("y1", FLOAT, &[6 - good2[0], 4]), vi("y2", FLOAT, dims)],
                    ),
                )
            }),
        );
    }
    add(
        "lstm_final_state",
        "y_h",
        &[1, 2, 3],
        &[2, 1, 3],
        Box::new(|dims: &[i64]| {
            model(
                14,
                graph(
                    "g",
                    vec![vi("x", FLOAT, &[7, 2, 5])],
                    vec![zeros("w", &[1, 12, 5]), zeros("r", &[1, 12, 3])],
                    vec![node(
                        "LSTM",
                        &["x", "w", "r"],
                        &["y", "y_h"],
                        vec![("hidden_size", At::I(3)), ("direction", At::S("forward"))],
                    )],
                    vec![vi("y", FLOAT, &[7, 1, 2, 3]), vi("y_h", FLOAT, dims)],
                ),
            )
        }),
    );
    add(
        "if_branches",
        "y",
        &[2, 3],
        &[3, 2],
        Box::new(|dims: &[i64]| {
            let branch = |name: &str, out: &str| {
                graph(
                    name,
                    vec![],
                    vec![],
                    vec![node(
                        "Constant",
                        &[],
                        &[out],
                        vec![("value", At::T(zeros("", &[2, 3])))],
                    )],
                    vec![vi(out, FLOAT, &[2, 3])],
                )
            };
            model(
                13,
                graph(
                    "g",
                    vec![vi("c", BOOL, &[])],
                    vec![],
                    vec![node(
                        "If",
                        &["c"],
                        &["y"],
                        vec![
                            ("then_branch", At::G(branch("then", "t"))),
                            ("else_branch", At::G(branch("else", "e"))),
                        ],
                    )],
                    vec![vi("y", FLOAT, dims)],
                ),
            )
        }),
    );
    out
}

/// Each operator's inference, checked on a crafted model: with the checked output declared as
/// inferred the model is admitted; declared otherwise it is refused `ONNX_SHAPE_MISMATCH`
/// naming the node and the value. The `onnx` package's strict inference agrees on both.
#[test]
fn contradicting_declarations_are_refused_per_operator() {
    let cases = cases();
    let tmp = tempfile::tempdir().unwrap();
    for (case, value, good, bad, build) in &cases {
        let ok = build(good).encode_to_vec();
        if let Err(r) = audit_bytes(&ok) {
            panic!("{case}: the consistent model is refused: {r}");
        }
        let wrong = build(bad).encode_to_vec();
        let r = audit_bytes(&wrong).expect_err(case);
        assert_eq!(r.code.as_str(), "ONNX_SHAPE_MISMATCH", "{case}: {r}");
        let g = build(bad).graph.unwrap();
        let producer = g.node.iter().find(|n| n.output.iter().any(|o| o == value));
        let op = producer.and_then(|n| n.name.clone()).unwrap();
        assert!(
            r.message.contains(&format!("{op:?}")) && r.message.contains(&format!("{value:?}")),
            "{case}: {r} should name node {op:?} and value {value:?}"
        );
        std::fs::write(tmp.path().join(format!("{case}.good.onnx")), &ok).unwrap();
        std::fs::write(tmp.path().join(format!("{case}.bad.onnx")), &wrong).unwrap();
    }
    let text = common::onnx_verdicts(
        tmp.path(),
        "onnx.checker.check_model(m, full_check=True); shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)",
    );
    for (case, ..) in &cases {
        assert!(
            text.contains(&format!("{case}.good.onnx valid")),
            "onnx refuses {case}:\n{text}"
        );
        assert!(
            text.contains(&format!("{case}.bad.onnx invalid")),
            "onnx admits {case}:\n{text}"
        );
    }
    assert_eq!(cases.len(), 24);
}

/// Arguments the schemas allow but the operators do not (axes out of range, more starts than
/// dimensions, two -1s, pads or splits of the wrong length, overflowing sizes): inference
/// answers unknown or refuses, and never panics.
#[test]
fn malformed_arguments_never_panic() {
    let x = |dims: &[i64]| vi("x", FLOAT, dims);
    let big = i64::MAX / 2;
    let models: Vec<(&str, Build)> = vec![
        (
            "slice_more_starts_than_dims",
            one(
                13,
                vec![x(&[4, 4])],
                vec![ints("b", &[0, 0, 0]), ints("e", &[1, 1, 1])],
                node("Slice", &["x", "b", "e"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "slice_zero_step",
            one(
                13,
                vec![x(&[4, 4])],
                vec![
                    ints("b", &[0]),
                    ints("e", &[1]),
                    ints("a", &[0]),
                    ints("st", &[0]),
                ],
                node("Slice", &["x", "b", "e", "a", "st"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "squeeze_axis_out_of_range",
            one(
                13,
                vec![x(&[1, 4])],
                vec![ints("a", &[5])],
                node("Squeeze", &["x", "a"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "squeeze_non_one",
            one(
                13,
                vec![x(&[2, 4])],
                vec![ints("a", &[0])],
                node("Squeeze", &["x", "a"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "unsqueeze_repeated_axes",
            one(
                13,
                vec![x(&[2, 4])],
                vec![ints("a", &[0, 0, 9])],
                node("Unsqueeze", &["x", "a"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "gather_axis_out_of_range",
            one(
                13,
                vec![x(&[2, 4])],
                vec![ints("i", &[0])],
                node("Gather", &["x", "i"], &["y"], vec![("axis", At::I(7))]),
                FLOAT,
            ),
        ),
        (
            "pad_wrong_length",
            one(
                13,
                vec![x(&[2, 4])],
                vec![ints("p", &[1, 1, 1])],
                node("Pad", &["x", "p"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "pad_overflow",
            one(
                13,
                vec![x(&[2, 4])],
                vec![ints("p", &[big, big, big, big])],
                node("Pad", &["x", "p"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "reshape_two_free_dims",
            one(
                14,
                vec![x(&[2, 4])],
                vec![ints("s", &[-1, -1])],
                node("Reshape", &["x", "s"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "reshape_negative_dim",
            one(
                14,
                vec![x(&[2, 4])],
                vec![ints("s", &[-3, 8])],
                node("Reshape", &["x", "s"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "reshape_huge",
            one(
                14,
                vec![x(&[1_000_000, 1_000_000])],
                vec![ints("s", &[-1, 0, 0, 0, 0, 0, 0])],
                node("Reshape", &["x", "s"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "split_wrong_length",
            one(
                13,
                vec![x(&[6, 4])],
                vec![ints("s", &[1, 2, 3])],
                node("Split", &["x", "s"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "constant_of_shape_negative",
            one(
                13,
                vec![],
                vec![ints("s", &[-1, 2])],
                node("ConstantOfShape", &["s"], &["y"], vec![]),
                FLOAT,
            ),
        ),
        (
            "reduce_axis_out_of_range",
            one(
                13,
                vec![x(&[2, 4])],
                vec![],
                node(
                    "ReduceMean",
                    &["x"],
                    &["y"],
                    vec![("axes", At::Is(vec![-9]))],
                ),
                FLOAT,
            ),
        ),
        (
            "conv_overflowing_dilation",
            one(
                13,
                vec![x(&[1, 1, 8]), vi("w", FLOAT, &[1, 1, 3])],
                vec![],
                node(
                    "Conv",
                    &["x", "w"],
                    &["y"],
                    vec![
                        ("dilations", At::Is(vec![big])),
                        ("pads", At::Is(vec![big, big])),
                    ],
                ),
                FLOAT,
            ),
        ),
    ];
    for (case, build) in &models {
        let bytes = build(&[1]).encode_to_vec();
        let r = std::panic::catch_unwind(|| audit_bytes(&bytes).map(|_| ()));
        assert!(r.is_ok(), "{case}: inference panicked");
    }
}
