//! ONNX admission, signature, policy, fail-closed runs, fixtures and the real Silero model.

use crate::common;

use nbg_lab::onnx::audit::{self, Audit, Limits, Refusal};
use nbg_lab::onnx::error::OnnxError;
use nbg_lab::onnx::npz::{self, Tensor};
use nbg_lab::onnx::proto::*;
use nbg_lab::onnx::run::{self, Execution, Factory, Mode, Session};
use nbg_lab::onnx::{checker, crosscheck, fixtures, ort_engine, policy, signature};
use prost::Message;
use std::path::{Path, PathBuf};

fn policy() -> policy::Policy {
    policy::load(&common::root().join(policy::DEFAULT_POLICY)).expect("committed policy loads")
}

fn audit_bytes(bytes: &[u8]) -> Result<Audit, Refusal> {
    audit::audit(bytes, &Limits::default(), &policy())
}

fn code(r: Result<Audit, Refusal>) -> &'static str {
    r.expect_err("model must be refused").code.as_str()
}

#[test]
fn fixtures_regenerate_byte_for_byte() {
    let lines = fixtures::verify(&common::root()).unwrap_or_else(|bad| panic!("{bad:?}"));
    assert_eq!(lines.len(), 6);
    assert_eq!(
        fixtures::all(),
        fixtures::all(),
        "fixture generation is deterministic"
    );
}

#[test]
fn spectral_mask_audit() {
    let a = audit_bytes(&fixtures::spectral_mask().encode_to_vec()).unwrap();
    let i = &a.inventory;
    assert_eq!(
        (
            i.graphs,
            i.max_depth,
            i.top_level_nodes,
            i.nested_nodes,
            i.total_nodes
        ),
        (1, 0, 2, 0, 2)
    );
    assert_eq!((i.initializers, i.attribute_tensors), (2, 0));
    for p in &a.placement {
        assert_eq!(p.placement, audit::Device::Cpu);
        assert_eq!(
            p.reasons.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
            ["PARTITION_NOT_PREFLIGHTED"],
            "{}",
            p.op_type
        );
    }
    assert_eq!(a.partitions.len(), 1);
    assert_eq!(a.partitions[0].inputs, ["bias", "features", "weight"]);
    assert_eq!(a.partitions[0].outputs, ["mask"]);
    assert_eq!(
        a.inputs[0].shape.as_ref().unwrap(),
        &[
            serde_json::json!(1),
            serde_json::json!(1),
            serde_json::json!(8)
        ]
    );
}

/// The Identity fixture as Paddle2ONNX writes a dynamic batch: `dim_value: -1`.
fn negative_batch_identity() -> Vec<u8> {
    let mut m = fixtures::dynamic_identity();
    let g = m.graph.as_mut().unwrap();
    for v in g.input.iter_mut().chain(g.output.iter_mut()) {
        let Some(TypeProto {
            value: Some(TypeValue::TensorType(t)),
            ..
        }) = v.r#type.as_mut()
        else {
            unreachable!("the fixture's values are tensors")
        };
        t.shape.as_mut().unwrap().dim[0].value = Some(DimensionValue::DimValue(-1));
    }
    m.encode_to_vec()
}

#[test]
fn a_negative_dim_value_is_dynamic_as_onnx_runtime_reads_it() {
    let model = negative_batch_identity();
    let a = audit_bytes(&model).expect("ONNX Runtime runs it, so the audit admits it");
    assert_eq!(
        a.inputs[0].shape.as_ref().unwrap(),
        &[serde_json::Value::Null, serde_json::json!(4)],
        "reported as a dynamic dimension, not as -1"
    );
    // The input a run gives fixes it, bounded as a symbolic dimension's input is.
    let x = Tensor::from_f32("x", &[3, 4], &[0.5; 12]);
    let (report, _) = run::run(
        &a,
        &model,
        Mode::Cpu,
        std::slice::from_ref(&x),
        &Limits::default(),
        &mut engines(&a),
    )
    .expect("a batch of 3 runs");
    assert_eq!(report.outputs[0].shape, [3, 4]);
    let small = Limits {
        tensor_bytes: 16,
        ..Limits::default()
    };
    assert!(
        run::run(&a, &model, Mode::Cpu, &[x], &small, &mut engines(&a)).is_err(),
        "the given input is still bounded"
    );
}

#[test]
fn dynamic_and_unsupported_operators_carry_their_reasons() {
    let a = audit_bytes(&fixtures::dynamic_identity().encode_to_vec()).unwrap();
    assert!(
        a.placement[0]
            .reasons
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .contains(&"ONNX_SHAPE_UNSUPPORTED")
    );
    assert!(
        !a.placement[0]
            .reasons
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .contains(&"ONNX_OPERATOR_UNSUPPORTED")
    );
    assert_eq!(
        a.inputs[0].shape.as_ref().unwrap()[0],
        "batch",
        "symbolic dims are kept"
    );
    let a = audit_bytes(&fixtures::mixed_sin().encode_to_vec()).unwrap();
    assert!(
        a.placement[0]
            .reasons
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .contains(&"ONNX_OPERATOR_UNSUPPORTED")
    );
    assert!(
        !a.placement[1]
            .reasons
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .contains(&"ONNX_OPERATOR_UNSUPPORTED")
    );
    assert!(
        a.placement
            .iter()
            .all(|p| p.placement == audit::Device::Cpu)
    );
}

/// A model whose real work sits in the branches of an If, with doc strings at every depth.
fn nested(doc: &str, weight: f32) -> ModelProto {
    let mut then = fixtures::spectral_mask().graph.unwrap();
    then.doc_string = Some(format!("{doc} then"));
    then.node[0].doc_string = Some(format!("{doc} conv"));
    then.initializer[0].raw_data = Some(
        [0.25f32, weight, 0.25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
    );
    then.input.clear();
    let mut other = then.clone();
    other.node.truncate(1);
    other.node[0].output = vec!["mask".into()];
    let mut m = fixtures::spectral_mask();
    let g = m.graph.as_mut().unwrap();
    g.doc_string = Some(doc.into());
    g.node = vec![NodeProto {
        input: vec!["cond".into()],
        output: vec!["mask".into()],
        name: Some("if".into()),
        op_type: Some("If".into()),
        attribute: vec![
            AttributeProto {
                name: Some("then_branch".into()),
                g: Some(then),
                r#type: Some(attribute_type::GRAPH),
                ..Default::default()
            },
            AttributeProto {
                name: Some("else_branch".into()),
                g: Some(other),
                r#type: Some(attribute_type::GRAPH),
                ..Default::default()
            },
        ],
        domain: Some(String::new()),
        ..Default::default()
    }];
    g.initializer.clear();
    g.value_info.clear();
    g.input.push(bool_scalar("cond"));
    m.doc_string = Some(doc.into());
    m
}

fn bool_scalar(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(TypeValue::TensorType(TensorTypeProto {
                elem_type: Some(9),
                shape: Some(TensorShapeProto { dim: vec![] }),
            })),
            denotation: None,
        }),
        doc_string: None,
        metadata_props: vec![],
    }
}

/// The classes `onnx.checker.check_model(full_check=True)` refuses, each built from the valid
/// spectral-mask (or nested If) model by one change, with the code the audit must give and a
/// word its message must name.
fn invalid_models() -> Vec<(&'static str, ModelProto, &'static str, &'static str)> {
    let ok = fixtures::spectral_mask;
    fn g(m: &mut ModelProto) -> &mut GraphProto {
        m.graph.as_mut().unwrap()
    }
    let mut out = Vec::new();
    let mut m = ok();
    g(&mut m).node[1].input = vec!["nowhere".into()];
    out.push(("undefined_input", m, "ONNX_GRAPH_INVALID", "nowhere"));
    let mut m = ok();
    g(&mut m).node.swap(0, 1);
    out.push(("topological_order", m, "ONNX_GRAPH_INVALID", "topological"));
    let mut m = ok();
    g(&mut m).node[1].op_type = Some("Sigmoidal".into());
    out.push(("unknown_operator", m, "ONNX_SCHEMA_MISMATCH", "Sigmoidal"));
    let mut m = ok();
    m.opset_import.clear();
    out.push(("no_opset_import", m, "ONNX_OPSET_INVALID", "opset_import"));
    let mut m = ok();
    // Gelu first appears in opset 20; the model imports 13.
    g(&mut m).node[1].op_type = Some("Gelu".into());
    out.push(("operator_newer_than_opset", m, "ONNX_OPSET_INVALID", "Gelu"));
    let mut m = ok();
    {
        let gr = g(&mut m);
        gr.initializer.push(TensorProto {
            dims: vec![1],
            data_type: Some(7),
            name: Some("one".into()),
            raw_data: Some(1i64.to_le_bytes().to_vec()),
            ..Default::default()
        });
        gr.node[1].op_type = Some("Add".into());
        gr.node[1].input = vec!["conv_out".into(), "one".into()];
    }
    out.push(("add_float_int64", m, "ONNX_TYPE_MISMATCH", "tensor(int64)"));
    let mut m = ok();
    g(&mut m).output[0].name = Some("ghost".into());
    out.push(("output_without_producer", m, "ONNX_GRAPH_INVALID", "ghost"));
    let mut m = ok();
    g(&mut m).node[0].attribute[0].r#type = Some(attribute_type::FLOATS);
    g(&mut m).node[0].attribute[0].floats = vec![3.0];
    g(&mut m).node[0].attribute[0].ints.clear();
    out.push((
        "attribute_wrong_type",
        m,
        "ONNX_SCHEMA_MISMATCH",
        "kernel_shape",
    ));
    let mut m = ok();
    g(&mut m).node[1].op_type = Some("Cast".into());
    out.push(("cast_without_to", m, "ONNX_SCHEMA_MISMATCH", "\"to\""));
    let mut m = ok();
    m.ir_version = Some(0);
    out.push((
        "ir_version_zero",
        m,
        "ONNX_IR_VERSION_INVALID",
        "ir_version",
    ));
    let mut m = ok();
    g(&mut m).node[1].op_type = Some("Relu".into());
    g(&mut m).node[1].input.push("conv_out".into());
    out.push(("relu_two_inputs", m, "ONNX_SCHEMA_MISMATCH", "2 inputs"));
    let mut m = ok();
    if let Some(TypeValue::TensorType(t)) = g(&mut m).value_info[0]
        .r#type
        .as_mut()
        .and_then(|t| t.value.as_mut())
    {
        t.shape.as_mut().unwrap().dim[2].value = Some(DimensionValue::DimValue(7));
    }
    out.push((
        "declared_shape_contradicts_inference",
        m,
        "ONNX_SHAPE_MISMATCH",
        "conv_out",
    ));
    let mut m = nested("x", 0.5);
    {
        let other = g(&mut m).node[0].attribute[1].g.as_mut().unwrap();
        let mut extra = other.output[0].clone();
        extra.name = Some("mask2".into());
        other.output.push(extra);
        other.node.push(NodeProto {
            input: vec!["mask".into()],
            output: vec!["mask2".into()],
            op_type: Some("Identity".into()),
            domain: Some(String::new()),
            ..Default::default()
        });
    }
    out.push((
        "if_branch_output_counts",
        m,
        "ONNX_GRAPH_INVALID",
        "else_branch",
    ));
    let mut m = nested("x", 0.5);
    g(&mut m).node[0].attribute[0].g.as_mut().unwrap().node[1].input = vec!["outer_ghost".into()];
    out.push((
        "subgraph_captures_undefined",
        m,
        "ONNX_GRAPH_INVALID",
        "outer_ghost",
    ));
    let mut m = ok();
    g(&mut m).initializer[0]
        .raw_data
        .as_mut()
        .unwrap()
        .truncate(8);
    out.push(("raw_data_short", m, "ONNX_TENSOR_DATA_INVALID", "weight"));
    let mut m = ok();
    g(&mut m).name = Some(String::new());
    out.push(("empty_graph_name", m, "ONNX_GRAPH_INVALID", "empty name"));
    out
}

#[test]
fn checker_refuses_the_invalid_classes() {
    let models = invalid_models();
    assert_eq!(models.len(), 16);
    for (what, m, want, word) in &models {
        let r = audit_bytes(&m.encode_to_vec()).expect_err(what);
        assert_eq!(r.code.as_str(), *want, "{what}: {r}");
        assert!(r.message.contains(word), "{what}: {r} should name {word:?}");
    }
    // The valid models they derive from are admitted.
    audit_bytes(&fixtures::spectral_mask().encode_to_vec()).unwrap();
    audit_bytes(&nested("x", 0.5).encode_to_vec()).unwrap();
    // The ONNX project's own checker agrees each is invalid (and the base models valid).
    let tmp = tempfile::tempdir().unwrap();
    for (what, m, _, _) in &models {
        std::fs::write(tmp.path().join(format!("{what}.onnx")), m.encode_to_vec()).unwrap();
    }
    std::fs::write(
        tmp.path().join("valid_spectral.onnx"),
        fixtures::spectral_mask().encode_to_vec(),
    )
    .unwrap();
    let text = common::onnx_verdicts(tmp.path(), "onnx.checker.check_model(m, full_check=True)");
    for (what, ..) in &models {
        assert!(
            text.contains(&format!("{what}.onnx invalid")),
            "onnx.checker admits {what}:\n{text}"
        );
    }
    assert!(text.contains("valid_spectral.onnx valid"), "{text}");
}

#[test]
fn schema_table_is_generated_and_verified() {
    let t = checker::table().unwrap();
    assert_eq!(t.onnx, "1.23.2");
    assert!(t.operators.len() > 600);
    let relu = t
        .operators
        .iter()
        .filter(|s| s.name == "Relu" && s.domain.is_empty())
        .max_by_key(|s| s.since)
        .unwrap();
    assert_eq!(relu.inputs, [1, 1]);
    // The committed table is exactly its regeneration from the pinned onnx package.
    let line = fixtures::verify_schemas(&common::root()).unwrap();
    assert!(line.contains("identical to its regeneration"), "{line}");
}

#[test]
fn signature_covers_what_runs_and_nothing_else() {
    let base = fixtures::spectral_mask();
    let sig = |m: &ModelProto| signature::model_signature(m);
    assert_eq!(sig(&base), sig(&base.clone()), "stable");
    let mut producer = base.clone();
    producer.producer_name = Some("other".into());
    producer.producer_version = Some("9".into());
    producer.doc_string = Some("docs".into());
    producer.graph.as_mut().unwrap().node[0].doc_string = Some("node docs".into());
    producer.graph.as_mut().unwrap().name = Some("renamed".into());
    assert_eq!(sig(&base), sig(&producer));
    let mut weight = base.clone();
    weight.graph.as_mut().unwrap().initializer[0].raw_data = Some(
        [0.25f32, 0.5, 0.3]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
    );
    assert_ne!(sig(&base), sig(&weight));
    let mut topology = base.clone();
    topology.graph.as_mut().unwrap().node[1].op_type = Some("Relu".into());
    assert_ne!(sig(&base), sig(&topology));
    // Nested: doc strings at depth 1 do not matter, a nested weight does.
    assert_eq!(sig(&nested("a", 0.5)), sig(&nested("b", 0.5)));
    assert_ne!(sig(&nested("a", 0.5)), sig(&nested("a", 0.6)));
}

#[test]
fn nested_graphs_are_walked_and_bounded() {
    let m = nested("x", 0.5);
    let bytes = m.encode_to_vec();
    let a = audit_bytes(&bytes).unwrap();
    let i = &a.inventory;
    assert_eq!(
        (
            i.graphs,
            i.max_depth,
            i.top_level_nodes,
            i.nested_nodes,
            i.total_nodes
        ),
        (3, 1, 1, 3, 4)
    );
    assert_eq!(i.initializers, 4);
    let tight = Limits {
        nodes: 3,
        ..Limits::default()
    };
    let r = audit::audit(&bytes, &tight, &policy()).unwrap_err();
    assert_eq!(r.code.as_str(), "ONNX_LIMIT_EXCEEDED");
    assert!(
        a.placement[0]
            .reasons
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .contains(&"ONNX_OPERATOR_UNSUPPORTED"),
        "If stays on the CPU"
    );
}

#[test]
fn admission_refusals() {
    let ok = fixtures::spectral_mask();
    assert_eq!(code(audit_bytes(&[])), "ONNX_MODEL_EMPTY");
    let small = Limits {
        model_bytes: 64,
        ..Limits::default()
    };
    assert_eq!(
        audit::audit(&ok.encode_to_vec(), &small, &policy())
            .unwrap_err()
            .code
            .as_str(),
        "ONNX_MODEL_TOO_LARGE"
    );
    assert_eq!(
        code(audit_bytes(b"\xff\xff\xff\xff")),
        "ONNX_PROTOBUF_INVALID"
    );
    // A field the schema does not know (tag 99, varint) is refused, not dropped.
    let mut unknown = ok.encode_to_vec();
    unknown.extend_from_slice(&[0x98, 0x06, 0x01]);
    assert_eq!(code(audit_bytes(&unknown)), "ONNX_UNKNOWN_FIELDS");
    let mut no_graph = ok.clone();
    no_graph.graph = None;
    assert_eq!(
        code(audit_bytes(&no_graph.encode_to_vec())),
        "ONNX_GRAPH_MISSING"
    );
    let mut external = ok.clone();
    external.graph.as_mut().unwrap().initializer[0].data_location = Some(1);
    assert_eq!(
        code(audit_bytes(&external.encode_to_vec())),
        "ONNX_EXTERNAL_DATA"
    );
    let mut nested_external = nested("x", 0.5);
    let then = nested_external.graph.as_mut().unwrap().node[0].attribute[0]
        .g
        .as_mut()
        .unwrap();
    then.initializer[0].external_data = vec![StringStringEntryProto {
        key: Some("location".into()),
        value: Some("w.bin".into()),
    }];
    assert_eq!(
        code(audit_bytes(&nested_external.encode_to_vec())),
        "ONNX_EXTERNAL_DATA"
    );
    let mut functions = ok.clone();
    functions.functions = vec![FunctionProto {
        name: Some("f".into()),
        ..Default::default()
    }];
    assert_eq!(
        code(audit_bytes(&functions.encode_to_vec())),
        "ONNX_FUNCTIONS_UNSUPPORTED"
    );
    let mut training = ok.clone();
    training.training_info = vec![TrainingInfoProto::default()];
    assert_eq!(
        code(audit_bytes(&training.encode_to_vec())),
        "ONNX_TRAINING_INFO"
    );
    let mut dup = ok.clone();
    dup.graph.as_mut().unwrap().node[1].output = vec!["conv_out".into()];
    assert_eq!(
        code(audit_bytes(&dup.encode_to_vec())),
        "ONNX_DUPLICATE_NAME"
    );
    let mut big_dim = ok.clone();
    big_dim.graph.as_mut().unwrap().initializer[1].dims = vec![2_000_000];
    assert_eq!(
        code(audit_bytes(&big_dim.encode_to_vec())),
        "ONNX_SHAPE_LIMIT"
    );
    let few = Limits {
        graph_inputs: 0,
        ..Limits::default()
    };
    assert_eq!(
        audit::audit(&ok.encode_to_vec(), &few, &policy())
            .unwrap_err()
            .code
            .as_str(),
        "ONNX_LIMIT_EXCEEDED"
    );
}

/// A policy in a temporary folder: `policy_json` with `MSHA` replaced by the manifest's digest
/// and `RSHA` by the record's; the manifest at `manifest.json`, the record at `q/r.json`.
fn policy_case(
    policy_json: &str,
    manifest_json: &str,
    record_json: &str,
) -> Result<policy::Policy, Refusal> {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("manifest.json"), manifest_json).unwrap();
    std::fs::create_dir(tmp.path().join("q")).unwrap();
    std::fs::write(tmp.path().join("q/r.json"), record_json).unwrap();
    let sha = |t: &str| nbg_lab::digest::Hash256::of(t.as_bytes()).hex();
    let text = policy_json
        .replace("MSHA", &sha(manifest_json))
        .replace("RSHA", &sha(record_json));
    policy::from_bytes(text.as_bytes(), tmp.path())
}

/// The v2 policy: `compiler_qualified` derives from a manifest that authorizes the compiler and
/// pins this build's driver; each approval stands only beside a `qualified` record of the same
/// signature, driver pin and target. Every other shape is refused with its code.
#[test]
fn policy_loader_fails_closed() {
    let pin = nbg_lab::onnx::pins::driver_pin_sha256().hex();
    let manifest = |exec: bool, pin: &str| {
        format!(
            r#"{{"schema": "nbg-compiler-profile/2", "decision": "x", "driver_pin_sha256": "{pin}", "authorization": {{"compiler_execution": {exec}}}}}"#
        )
    };
    let (allowed, denied) = (manifest(true, &pin), manifest(false, &pin));
    let a = "a".repeat(64);
    let b = "b".repeat(64);
    let record = |sig: &str, pin: &str, target: &str, verdict: &str| {
        format!(
            r#"{{"schema": "nbg-qualification/1", "signature": "{sig}", "driver": {{"pin_sha256": "{pin}", "wheel": "w"}}, "target": {{"name": "{target}", "pid": "0x1"}}, "verdict": "{verdict}"}}"#
        )
    };
    let good = record(&a, &pin, "T", "qualified");
    let approval = |sig: &str, target: &str, path: &str| {
        format!(
            r#"{{"signature": "{sig}", "target": "{target}", "qualification": {{"path": "{path}", "sha256": "RSHA"}}}}"#
        )
    };
    let p = |approvals: &[String], manifest_path: &str| {
        format!(
            r#"{{"schema": "nbg-onnx-hybrid-policy/2", "compiler_profile": {{"path": "{manifest_path}", "sha256": "MSHA"}}, "approved": [{}]}}"#,
            approvals.join(", ")
        )
    };
    let one = [approval(&a, "T", "q/r.json")];
    // Accepted: nothing approved under a denying manifest; one approval beside its record.
    let none = policy_case(&p(&[], "manifest.json"), &denied, &good).unwrap();
    assert!(!none.compiler_qualified && none.approved.is_empty());
    let ok = policy_case(&p(&one, "manifest.json"), &allowed, &good).unwrap();
    assert!(ok.compiler_qualified);
    let sig = nbg_lab::digest::Hash256(<[u8; 32]>::try_from(vec![0xaa; 32]).unwrap());
    assert!(ok.approves(&sig, Some("T")) && ok.approves(&sig, None));
    assert!(!ok.approves(&sig, Some("U")));
    let policy_invalid = [
        (
            p(&[], "manifest.json").replacen('}', "}, \"extra\": 1", 1),
            denied.clone(),
            good.clone(),
        ),
        (
            p(&[], "manifest.json")
                .replace("\"approved\": []", "\"approved\": [], \"approved\": []"),
            denied.clone(),
            good.clone(),
        ),
        (p(&[], "/etc/manifest.json"), denied.clone(), good.clone()),
        (p(&[], "../manifest.json"), denied.clone(), good.clone()),
        (
            p(&[], "manifest.json").replace("MSHA", &"0".repeat(64)),
            denied.clone(),
            good.clone(),
        ),
        // A manifest pinning another driver, or an old schema.
        (p(&[], "manifest.json"), manifest(true, &b), good.clone()),
        (
            p(&[], "manifest.json"),
            allowed.replace("/2", "/1"),
            good.clone(),
        ),
        // Approvals while the compiler is denied; unsorted or repeated approvals; a bad digest.
        (p(&one, "manifest.json"), denied.clone(), good.clone()),
        (
            p(
                &[approval(&b, "T", "q/r.json"), approval(&a, "T", "q/r.json")],
                "manifest.json",
            ),
            allowed.clone(),
            record(&b, &pin, "T", "qualified"),
        ),
        (
            p(&[one[0].clone(), one[0].clone()], "manifest.json"),
            allowed.clone(),
            good.clone(),
        ),
        (
            p(
                &[approval(&"A".repeat(64), "T", "q/r.json")],
                "manifest.json",
            ),
            allowed.clone(),
            good.clone(),
        ),
        (
            p(&[approval(&a, "T", "q/missing.json")], "manifest.json"),
            allowed.clone(),
            good.clone(),
        ),
        (
            p(&one, "manifest.json").replace("RSHA", &"0".repeat(64)),
            allowed.clone(),
            good.clone(),
        ),
    ];
    for (policy_json, manifest, record) in policy_invalid {
        let r = policy_case(&policy_json, &manifest, &record).expect_err(&policy_json);
        assert_eq!(
            r.code.as_str(),
            "POLICY_INVALID",
            "{policy_json} {manifest}"
        );
    }
    // A record that does not bind its approval.
    for bad in [
        "not json".to_string(),
        record(&a, &pin, "T", "not-qualified"),
        record(&b, &pin, "T", "qualified"),
        record(&a, &b, "T", "qualified"),
        record(&a, &pin, "U", "qualified"),
        good.replace("nbg-qualification/1", "nbg-qualification/0"),
    ] {
        let r = policy_case(&p(&one, "manifest.json"), &allowed, &bad).expect_err(&bad);
        assert_eq!(r.code.as_str(), "QUALIFICATION_INVALID", "{bad}");
    }
    // The committed policy: the compiler qualified by the pin, every approval beside its record,
    // every file it names compiled in (and nothing else).
    let committed = policy();
    assert!(committed.compiler_qualified && !committed.approved.is_empty());
    let text: serde_json::Value = serde_json::from_slice(
        &std::fs::read(common::root().join(policy::DEFAULT_POLICY)).unwrap(),
    )
    .unwrap();
    let mut named: Vec<String> = text["approved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["qualification"]["path"].as_str().unwrap().to_string())
        .collect();
    named.push(
        text["compiler_profile"]["path"]
            .as_str()
            .unwrap()
            .to_string(),
    );
    named.sort();
    let mut embedded: Vec<String> = policy::EMBEDDED_FILES
        .iter()
        .map(|(p, _)| p.to_string())
        .collect();
    embedded.sort();
    assert_eq!(named, embedded);
    for (path, bytes) in policy::EMBEDDED_FILES {
        assert_eq!(
            &std::fs::read(common::root().join("policy").join(path)).unwrap(),
            bytes,
            "{path}"
        );
    }
    assert_eq!(policy::embedded().unwrap().sha256, committed.sha256);
}

/// Counts constructions; the NPU constructor fails like a missing compiler would.
#[derive(Default)]
struct Counting {
    npu: u32,
    cpu: u32,
}

struct Echo;

impl Session for Echo {
    fn run(&mut self, inputs: &[Tensor]) -> Result<Vec<Tensor>, OnnxError> {
        Ok(inputs.to_vec())
    }
}

impl Factory for Counting {
    fn npu(&mut self, _: &[u8], _: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        self.npu += 1;
        Err(OnnxError::NpuUnqualified)
    }
    fn cpu(&mut self, _: &[u8], _: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        self.cpu += 1;
        Ok(Box::new(Echo))
    }
}

#[test]
fn the_four_session_cases() {
    let cases = [
        (Mode::Hybrid, 0, 0, 1, Ok("cpu-preflight-fallback")),
        (Mode::Strict, 0, 0, 0, Err("PARTITION_NOT_NPU_RESIDENT")),
        (
            Mode::Hybrid,
            1,
            1,
            1,
            Ok("cpu-session-construction-fallback"),
        ),
        (Mode::Strict, 1, 1, 0, Err("PARTITION_COMPILE_FAILURE")),
        (Mode::Cpu, 0, 0, 1, Ok("cpu-explicit")),
    ];
    for (mode, eligible, npu, cpu, want) in cases {
        let mut f = Counting::default();
        let got = run::construct(mode, eligible, b"", &[], &mut f);
        assert_eq!(
            (f.npu, f.cpu),
            (npu, cpu),
            "{mode:?} eligible {eligible}: NPU attempts and CPU sessions"
        );
        match (got, want) {
            (Ok((ex, _)), Ok(class)) => assert_eq!(
                (ex.classification.as_str(), ex.npu_attempts, ex.cpu_sessions),
                (class, npu, cpu)
            ),
            (Err((ex, r)), Err(c)) => {
                assert_eq!(r.code.as_str(), c);
                assert_eq!((ex.npu_attempts, ex.cpu_sessions), (npu, cpu));
            }
            (Ok(_), Err(c)) => panic!("{mode:?}: expected {c}"),
            (Err((_, r)), Ok(c)) => panic!("{mode:?}: expected {c}, got {r}"),
        }
    }
}

/// An NPU session that is built but fails to run; CPU sessions echo.
#[derive(Default)]
struct FailingRun {
    npu: u32,
    cpu: u32,
}

struct Broken;

/// The spectral-mask model's output, whatever the input.
struct Mask;

impl Session for Mask {
    fn run(&mut self, _: &[Tensor]) -> Result<Vec<Tensor>, OnnxError> {
        Ok(vec![Tensor::from_f32("mask", &[1, 1, 8], &[0.5; 8])])
    }
}

impl Session for Broken {
    fn run(&mut self, _: &[Tensor]) -> Result<Vec<Tensor>, OnnxError> {
        Err(OnnxError::Npu("the run failed".into()))
    }
}

impl Factory for FailingRun {
    fn npu(&mut self, _: &[u8], _: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        self.npu += 1;
        Ok(Box::new(Broken))
    }
    fn cpu(&mut self, _: &[u8], _: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        self.cpu += 1;
        Ok(Box::new(Mask))
    }
}

/// An NPU run that fails after its session was built: hybrid falls back once to the CPU
/// (`cpu-run-fallback`, one attempt, one CPU session), strict refuses with
/// `PARTITION_RUN_FAILURE` and builds no CPU session. Never a retry.
#[test]
fn an_npu_run_failure_falls_back_once_in_hybrid_mode() {
    let model = fixtures::spectral_mask().encode_to_vec();
    let mut a = audit_bytes(&model).unwrap();
    for p in a.partitions.iter_mut() {
        p.placement = audit::Device::Npu;
    }
    let input = vec![Tensor::from_f32(
        "features",
        &[1, 1, 8],
        &fixtures::FEATURES,
    )];
    let limits = Limits::default();
    let mut f = FailingRun::default();
    let (r, out) = run::run(&a, &model, Mode::Hybrid, &input, &limits, &mut f).unwrap();
    assert_eq!(
        (r.classification.as_str(), r.npu_attempts, r.cpu_sessions),
        ("cpu-run-fallback", 1, 1)
    );
    assert_eq!((f.npu, f.cpu), (1, 1));
    assert!(!out.is_empty());
    let mut f = FailingRun::default();
    let (ex, refusal) = run::run(&a, &model, Mode::Strict, &input, &limits, &mut f).unwrap_err();
    assert_eq!(refusal.code.as_str(), "PARTITION_RUN_FAILURE");
    assert_eq!(
        (ex.npu_attempts, ex.cpu_sessions, f.npu, f.cpu),
        (1, 0, 1, 0)
    );
}

fn engines(a: &Audit) -> run::Engines {
    run::Engines::for_audit(a)
}

#[test]
fn spectral_mask_runs_on_the_cpu_and_matches_the_f64_reference() {
    let model = fixtures::spectral_mask().encode_to_vec();
    let a = audit_bytes(&model).unwrap();
    let input = npz::read(
        &std::fs::read(common::root().join("onnx/fixtures/spectral_mask_input.npz")).unwrap(),
        1 << 20,
    )
    .unwrap();
    let limits = Limits::default();
    let (cpu, cpu_npz) =
        run::run(&a, &model, Mode::Cpu, &input, &limits, &mut engines(&a)).unwrap();
    let (hybrid, hybrid_npz) =
        run::run(&a, &model, Mode::Hybrid, &input, &limits, &mut engines(&a)).unwrap();
    assert_eq!(
        cpu_npz, hybrid_npz,
        "cpu and hybrid outputs are byte-identical"
    );
    assert_eq!(
        (
            cpu.classification.as_str(),
            cpu.npu_attempts,
            cpu.cpu_sessions
        ),
        ("cpu-explicit", 0, 1)
    );
    assert_eq!(
        (
            hybrid.classification.as_str(),
            hybrid.npu_attempts,
            hybrid.cpu_sessions
        ),
        ("cpu-preflight-fallback", 0, 1)
    );
    let out = npz::read(&cpu_npz, 1 << 20).unwrap();
    let got = out[0].f32_values().unwrap();
    let want = fixtures::reference_mask(&fixtures::FEATURES);
    for (g, w) in got.iter().zip(&want) {
        assert!((f64::from(*g) - w).abs() <= 1e-6, "{g} vs {w}");
    }
    let expected = npz::read(
        &std::fs::read(common::root().join("onnx/fixtures/spectral_mask_expected.npz")).unwrap(),
        1 << 20,
    )
    .unwrap();
    assert_eq!(expected[0].shape, out[0].shape);
    let err = run::run(&a, &model, Mode::Strict, &input, &limits, &mut engines(&a)).unwrap_err();
    assert_eq!(err.1.code.as_str(), "PARTITION_NOT_NPU_RESIDENT");
    assert_eq!((err.0.npu_attempts, err.0.cpu_sessions), (0, 0));
}

#[test]
fn tensor_boundary_refusals() {
    let model = fixtures::spectral_mask().encode_to_vec();
    let a = audit_bytes(&model).unwrap();
    let good = Tensor::from_f32("features", &[1, 1, 8], &fixtures::FEATURES);
    let limits = Limits::default();
    let refuse = |inputs: Vec<Tensor>| {
        run::run(&a, &model, Mode::Cpu, &inputs, &limits, &mut engines(&a))
            .unwrap_err()
            .1
            .code
            .as_str()
    };
    assert_eq!(refuse(vec![]), "TENSOR_BOUNDARY");
    assert_eq!(
        refuse(vec![good.clone(), Tensor::from_f32("extra", &[1], &[0.0])]),
        "TENSOR_BOUNDARY"
    );
    assert_eq!(
        refuse(vec![Tensor::from_f32(
            "features",
            &[1, 8],
            &fixtures::FEATURES
        )]),
        "TENSOR_BOUNDARY"
    );
    assert_eq!(
        refuse(vec![Tensor::from_f32(
            "features",
            &[1, 2, 4],
            &fixtures::FEATURES
        )]),
        "TENSOR_BOUNDARY"
    );
    let mut nan = fixtures::FEATURES;
    nan[3] = f32::NAN;
    assert_eq!(
        refuse(vec![Tensor::from_f32("features", &[1, 1, 8], &nan)]),
        "TENSOR_BOUNDARY"
    );
    let mut wrong_type = good.clone();
    wrong_type.dtype = npz::Dtype::I32;
    assert_eq!(refuse(vec![wrong_type]), "TENSOR_BOUNDARY");
    let (r, _) = run::run(&a, &model, Mode::Cpu, &[good], &limits, &mut engines(&a)).unwrap();
    assert_eq!(r.outputs[0].shape, [1, 1, 8]);
}

#[test]
fn engine_versions_are_the_pinned_ones() {
    let lock = std::fs::read_to_string(common::root().join("Cargo.lock")).unwrap();
    assert!(lock.contains(&format!(
        "name = \"tract-onnx\"\nversion = \"{}\"",
        run::TRACT_VERSION
    )));
    let toml = std::fs::read_to_string(common::root().join("Cargo.toml")).unwrap();
    assert!(toml.contains(&format!(
        "tract-onnx = {{ version = \"={}\"",
        run::TRACT_VERSION
    )));
    // The ONNX Runtime wheel .ci/setup installs is the one the engine requires.
    let setup = std::fs::read_to_string(common::root().join(".ci/setup")).unwrap();
    assert!(setup.contains(&format!("onnxruntime=={}", ort_engine::VERSION)));
    assert_eq!(run::Engine::Ort.version(), ort_engine::VERSION);
}

/// A session that panics, as an engine bug would.
struct Panicking;
impl Session for Panicking {
    fn run(&mut self, _: &[Tensor]) -> Result<Vec<Tensor>, OnnxError> {
        panic!("index out of bounds in the engine")
    }
}
struct PanicFactory {
    in_construction: bool,
}
impl Factory for PanicFactory {
    fn npu(&mut self, _: &[u8], _: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        Err(OnnxError::NpuUnqualified)
    }
    fn cpu(&mut self, _: &[u8], _: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        if self.in_construction {
            panic!("analyser.rs:97")
        }
        Ok(Box::new(Panicking))
    }
}

#[test]
fn engine_panics_are_contained() {
    let model = fixtures::spectral_mask().encode_to_vec();
    let a = audit_bytes(&model).unwrap();
    let input = [Tensor::from_f32(
        "features",
        &[1, 1, 8],
        &fixtures::FEATURES,
    )];
    for in_construction in [false, true] {
        let mut f = PanicFactory { in_construction };
        let (ex, r) = run::run(&a, &model, Mode::Cpu, &input, &Limits::default(), &mut f)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(r.code.as_str(), "CPU_ENGINE_FAILED", "{r}");
        assert!(r.message.contains("panicked"), "{r}");
        assert_eq!(
            ex.classification.as_str(),
            if in_construction {
                "cpu-refused"
            } else {
                "cpu-explicit"
            }
        );
    }
}

#[test]
fn ort_sessions_use_the_cpu_provider_only() {
    let model = fixtures::spectral_mask().encode_to_vec();
    let s = ort_engine::session(&model, &["mask".into()])
        .expect("ONNX Runtime loads (.ci/setup installs it)");
    assert_eq!(s.providers(), ["CPUExecutionProvider"]);
}

#[test]
fn crosscheck_reports_both_engines() {
    let model = fixtures::spectral_mask().encode_to_vec();
    let a = audit_bytes(&model).unwrap();
    let input = [Tensor::from_f32(
        "features",
        &[1, 1, 8],
        &fixtures::FEATURES,
    )];
    let c = crosscheck::crosscheck(
        &a,
        &model,
        &input,
        &Limits::default(),
        crosscheck::Isolation::InProcess,
    );
    assert_eq!(c.verdict, crosscheck::Verdict::Agree);
    assert_eq!(c.outputs.len(), 1);
    assert!(c.outputs[0].max_abs <= 1e-6);
    assert_eq!(
        (c.ort.engine, c.tract.engine),
        ("onnxruntime", "tract-onnx")
    );
    // A difference beyond the tolerance is a disagreement.
    let x = Tensor::from_f32("y", &[2], &[1.0, 2.0]);
    let y = Tensor::from_f32("y", &[2], &[1.0, 2.01]);
    let d = crosscheck::compare(&x, &y, crosscheck::TOLERANCE);
    assert!(!d.agree && (d.max_abs - 0.01).abs() < 1e-6);
    assert!(crosscheck::compare(&x, &x, crosscheck::TOLERANCE).agree);
    let z = Tensor::from_f32("y", &[1, 2], &[1.0, 2.0]);
    assert!(
        !crosscheck::compare(&x, &z, crosscheck::TOLERANCE).agree,
        "shape differs"
    );
}

/// The Silero VAD files of the PyPI package `silero-vad` 6.2.3 (installed without
/// dependencies by `.ci/setup`); the test fails, never skips, when it is missing.
pub(crate) fn silero(name: &str) -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import importlib.util as u; print(u.find_spec('silero_vad').submodule_search_locations[0])"])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "silero-vad is not installed: run `pip install --no-deps silero-vad==6.2.3` (.ci/setup does)"
    );
    Path::new(String::from_utf8(out.stdout).unwrap().trim())
        .join("data")
        .join(name)
}

#[test]
fn silero_vad_audit_is_pinned() {
    let bytes = std::fs::read(silero("silero_vad.onnx")).unwrap();
    let a = audit_bytes(&bytes).unwrap();
    let i = &a.inventory;
    let got = serde_json::json!({
        "sha256": a.source.sha256, "bytes": a.source.bytes, "signature": a.signature,
        "graphs": i.graphs, "max_depth": i.max_depth, "top_level_nodes": i.top_level_nodes,
        "nested_nodes": i.nested_nodes, "total_nodes": i.total_nodes, "initializers": i.initializers,
        "attribute_tensors": i.attribute_tensors, "encoded_constant_bytes": i.encoded_constant_bytes,
        "ops": a.placement.iter().map(|p| p.op_type.clone()).collect::<Vec<_>>(),
        "partitions": a.partitions.len(),
        "inputs": a.inputs, "outputs": a.outputs,
    });
    common::snapshot(common::snapshot_file!("silero_vad_audit.json"), &got);
    assert!(
        a.placement
            .iter()
            .all(|p| p.placement == audit::Device::Cpu)
    );
}

fn silero_run(
    name: &str,
    engine: run::Engine,
) -> Result<(run::RunReport, Vec<Tensor>), (Execution, Refusal)> {
    let bytes = std::fs::read(silero(name)).unwrap();
    let a = audit_bytes(&bytes).unwrap();
    let mut inputs = Vec::new();
    for v in &a.inputs {
        if v.name == "sr" {
            inputs.push(Tensor {
                name: "sr".into(),
                dtype: npz::Dtype::I64,
                shape: vec![],
                data: 16_000i64.to_le_bytes().to_vec(),
            });
            continue;
        }
        // Symbolic dimensions: batch 1, and 512 samples for an open frame length.
        let shape = v.shape.as_ref().unwrap();
        let dims: Vec<u64> = shape
            .iter()
            .enumerate()
            .map(|(i, d)| {
                d.as_u64()
                    .unwrap_or(if v.name == "input" && i == 1 { 512 } else { 1 })
            })
            .collect();
        let n: u64 = dims.iter().product();
        let values: Vec<f32> = match v.name.as_str() {
            // A fixed 16 kHz chirp-like frame; states start at zero.
            "input" => (0..n).map(|i| ((i as f32) * 0.05).sin() * 0.1).collect(),
            _ => vec![0.0; n as usize],
        };
        inputs.push(Tensor::from_f32(&v.name, &dims, &values));
    }
    run::run(
        &a,
        &bytes,
        Mode::Cpu,
        &inputs,
        &Limits::default(),
        &mut run::Engines::with_engine(&a, engine),
    )
    .map(|(r, archive)| (r, npz::read(&archive, 1 << 24).unwrap()))
}

/// The largest absolute difference between two archives' tensors, which must agree in type and
/// element count (tract and ONNX Runtime may differ in a unit dimension: tract gives the
/// sequence model's `speech_probs` as `[1]`, ONNX Runtime as `[1, 1]`).
fn max_difference(got: &[Tensor], want: &[Tensor]) -> f64 {
    assert_eq!(got.len(), want.len());
    let mut max = 0f64;
    for (g, w) in got.iter().zip(want) {
        let count = |t: &Tensor| t.shape.iter().product::<u64>();
        assert_eq!(
            (g.dtype, count(g)),
            (w.dtype, count(w)),
            "{} {}",
            g.name,
            w.name
        );
        for (x, y) in g.to_f64().unwrap().iter().zip(w.to_f64().unwrap()) {
            max = max.max((x - y).abs());
        }
    }
    max
}

#[test]
fn silero_files_on_tract_run_or_fail_closed() {
    // The main file's control flow is beyond tract: refused with the engine's reason.
    let (ex, r) = silero_run("silero_vad.onnx", run::Engine::Tract).unwrap_err();
    assert_eq!(r.code.as_str(), "CPU_ENGINE_UNSUPPORTED");
    assert!(
        r.message
            .starts_with("Failed analyse for node #5 \"If_0\" If"),
        "{}",
        r.message
    );
    assert_eq!((ex.npu_attempts, ex.cpu_sessions), (0, 0));
    // Two fixed-frame variants run on tract and agree with ONNX Runtime on the same inputs. Not
    // bit for bit: tract picks its float kernels by the CPU it runs on (AVX2, AVX-512), so the
    // last bits of its outputs are the machine's, not the model's.
    let mut probs = Vec::new();
    for name in [
        "silero_vad_16k_sequence.onnx",
        "silero_vad_openvino_16k.onnx",
    ] {
        let (r, tract) = silero_run(name, run::Engine::Tract).unwrap();
        assert_eq!((r.engine, r.cpu_sessions), ("tract-onnx", 1), "{name}");
        let (_, ort) = silero_run(name, run::Engine::Ort).unwrap();
        let max = max_difference(&tract, &ort);
        assert!(max <= 1e-4, "{name}: tract and onnxruntime differ by {max}");
        probs.push(tract.into_iter().next().unwrap());
    }
    // The speech probability is the same in both variants.
    let (seq, ov) = (&probs[0], &probs[1]);
    let max = max_difference(
        std::slice::from_ref(seq),
        &[Tensor {
            name: seq.name.clone(),
            ..ov.clone()
        }],
    );
    assert!(
        max <= 1e-6,
        "the two variants' speech probabilities differ by {max}"
    );
}

/// All six Silero files on ONNX Runtime, in cpu and hybrid modes, on the committed input: the
/// two output archives are byte-identical and within 1e-5 of the Python onnxruntime's
/// (`bench/silero_reference.py`); strict refuses before any session.
#[test]
fn silero_files_run_on_ort_and_match_python_onnxruntime() {
    let dir = common::root().join("onnx/silero");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_array().unwrap();
    assert_eq!(files.len(), 6);
    for f in files {
        let name = f["model"].as_str().unwrap();
        let model = std::fs::read(silero(name)).unwrap();
        assert_eq!(
            nbg_lab::digest::Hash256::of(&model).hex(),
            f["model_sha256"].as_str().unwrap(),
            "{name}"
        );
        let a = audit_bytes(&model).unwrap();
        let read = |k: &str| {
            npz::read(
                &std::fs::read(dir.join(f[k].as_str().unwrap())).unwrap(),
                1 << 24,
            )
            .unwrap()
        };
        let (input, expected) = (read("input"), read("expected"));
        let limits = Limits::default();
        let mut outs = Vec::new();
        for mode in [Mode::Cpu, Mode::Hybrid] {
            let (r, archive) = run::run(&a, &model, mode, &input, &limits, &mut engines(&a))
                .unwrap_or_else(|(_, r)| panic!("{name} {mode}: {r}"));
            assert_eq!(
                (r.engine, r.npu_attempts, r.cpu_sessions),
                ("onnxruntime", 0, 1)
            );
            outs.push(archive);
        }
        assert_eq!(
            outs[0], outs[1],
            "{name}: cpu and hybrid outputs are byte-identical"
        );
        let got = npz::read(&outs[0], 1 << 24).unwrap();
        assert_eq!(got.len(), expected.len(), "{name}");
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(
                (&g.name, g.dtype, &g.shape),
                (&e.name, e.dtype, &e.shape),
                "{name}"
            );
            let max = g
                .to_f64()
                .unwrap()
                .iter()
                .zip(e.to_f64().unwrap())
                .map(|(x, y)| (x - y).abs())
                .fold(0f64, f64::max);
            assert!(max <= 1e-5, "{name} {}: max abs difference {max}", g.name);
        }
        let (ex, r) = run::run(&a, &model, Mode::Strict, &input, &limits, &mut engines(&a))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(r.code.as_str(), "PARTITION_NOT_NPU_RESIDENT");
        assert_eq!(
            (ex.classification.as_str(), ex.npu_attempts, ex.cpu_sessions),
            ("strict-refused-before-session", 0, 0)
        );
    }
}

#[test]
fn cli_audit_and_run() {
    let tmp = tempfile::tempdir().unwrap();
    let nbg = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
            .args(args)
            .current_dir(common::root())
            .output()
            .unwrap()
    };
    let o = nbg(&[
        "onnx",
        "audit",
        "--json",
        "onnx/fixtures/spectral_mask_conv.onnx",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in [
        "inventory",
        "signature",
        "inputs",
        "outputs",
        "placement",
        "partitions",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    for key in [
        "graphs",
        "max_depth",
        "top_level_nodes",
        "nested_nodes",
        "total_nodes",
        "initializers",
        "attribute_tensors",
        "encoded_constant_bytes",
    ] {
        assert!(v["inventory"].get(key).is_some(), "inventory.{key}");
    }
    for key in ["node", "op_type", "placement", "reasons"] {
        assert!(v["placement"][0].get(key).is_some(), "placement.{key}");
    }
    let bad = tmp.path().join("bad.onnx");
    std::fs::write(&bad, b"\xff\xff\xff").unwrap();
    let o = nbg(&["onnx", "audit", "--json", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "ONNX_PROTOBUF_INVALID");

    let out = tmp.path().join("out.npz");
    let ev = tmp.path().join("run.json");
    let args = |mode: &'static str, out: &Path, ev: &Path| -> Vec<String> {
        [
            "onnx",
            "run",
            "onnx/fixtures/spectral_mask_conv.onnx",
            "--mode",
            mode,
            "--input",
            "onnx/fixtures/spectral_mask_input.npz",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([
            "--output".into(),
            out.display().to_string(),
            "--evidence".into(),
            ev.display().to_string(),
            "--json".into(),
        ])
        .collect()
    };
    let run_cli = |a: Vec<String>| {
        std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
            .args(&a)
            .current_dir(common::root())
            .output()
            .unwrap()
    };
    let o = run_cli(args("hybrid", &out, &ev));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&ev).unwrap()).unwrap();
    assert_eq!(v["classification"], "cpu-preflight-fallback");
    assert_eq!(v["npu_attempts"], 0);
    assert_eq!(v["engine"], "onnxruntime");
    assert_eq!(v["providers"], serde_json::json!(["CPUExecutionProvider"]));
    // Never overwrites an output; strict writes nothing.
    assert_eq!(run_cli(args("cpu", &out, &ev)).status.code(), Some(2));
    let strict_out = tmp.path().join("strict.npz");
    let o = run_cli(args("strict", &strict_out, &tmp.path().join("strict.json")));
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "PARTITION_NOT_NPU_RESIDENT");
    assert_eq!(v["execution"]["cpu_sessions"], 0);
    assert_eq!(
        v["execution"]["classification"],
        "strict-refused-before-session"
    );
    assert!(!strict_out.exists());
    // tract on request.
    let mut a = args("cpu", &tmp.path().join("t.npz"), &tmp.path().join("t.json"));
    a.extend(["--engine".into(), "tract".into()]);
    let o = run_cli(a);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["engine"], "tract-onnx");
    // A missing ONNX Runtime is a set-up error naming the cure.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
        .args(args(
            "cpu",
            &tmp.path().join("m.npz"),
            &tmp.path().join("m.json"),
        ))
        .env("ORT_DYLIB_PATH", tmp.path().join("nothing.so"))
        .current_dir(common::root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("ORT_DYLIB_PATH") && err.contains("pip install onnxruntime=="),
        "{err}"
    );
    // crosscheck
    let o = nbg(&[
        "onnx",
        "crosscheck",
        "onnx/fixtures/spectral_mask_conv.onnx",
        "--input",
        "onnx/fixtures/spectral_mask_input.npz",
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"], "agree");
    for key in ["name", "max_abs", "max_rel", "agree"] {
        assert!(v["outputs"][0].get(key).is_some(), "outputs.{key}");
    }
    // The policy is compiled in: the audit works from any folder.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
        .args(["onnx", "audit", "--json"])
        .arg(common::root().join("onnx/fixtures/spectral_mask_conv.onnx"))
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["classification"], "audit-no-session");
}

#[test]
fn npz_reads_deflated_archives_and_writes_deterministically() {
    let t = Tensor::from_f32("features", &[1, 1, 8], &fixtures::FEATURES);
    let stored = npz::write(std::slice::from_ref(&t));
    assert_eq!(stored, npz::write(std::slice::from_ref(&t)));
    // Re-pack the entry deflated, as numpy.savez_compressed does.
    let entry = {
        let mut a = zip::ZipArchive::new(std::io::Cursor::new(&stored)).unwrap();
        let mut f = a.by_index(0).unwrap();
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut v).unwrap();
        v
    };
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    w.start_file("features.npy", opts).unwrap();
    std::io::Write::write_all(&mut w, &entry).unwrap();
    let deflated = w.finish().unwrap().into_inner();
    assert_ne!(deflated, stored);
    assert_eq!(npz::read(&deflated, 1 << 20).unwrap(), vec![t]);
    assert_eq!(
        npz::read(b"not a zip", 1 << 20).unwrap_err().code.as_str(),
        "TENSOR_ARCHIVE_INVALID"
    );
    assert_eq!(
        npz::read(&stored, 16).unwrap_err().code.as_str(),
        "TENSOR_TOO_LARGE"
    );
}

#[test]
fn npz_carries_every_dtype_and_refuses_what_it_must() {
    // Found by the `npz` fuzz target: 17 bytes that start with an end-of-central-directory
    // signature were read past their end (an index panic).
    let short = b"PK\x05\x06\x00\x01\x28\x00\x00\x00\x00\xca\x00\x00\x06\x00\x00";
    for len in 0..=short.len() {
        let r = npz::read(&short[..len], 1 << 20).unwrap_err();
        assert_eq!(
            r.code.as_str(),
            "TENSOR_ARCHIVE_INVALID",
            "{len} bytes: {r}"
        );
    }
    // Also found by it: a non-ASCII name not marked UTF-8 decoded as CP437, so it did not
    // survive a write and read. Names are marked UTF-8 when written, legacy names refused.
    let t = Tensor::from_f32("état", &[1], &[1.0]);
    let archive = npz::write(std::slice::from_ref(&t));
    assert_eq!(npz::read(&archive, 1 << 20).unwrap(), [t]);
    let mut legacy = archive.clone();
    let central = legacy.len() - 22 - (46 + "état.npy".len());
    legacy[7] &= !0x08;
    legacy[central + 9] &= !0x08;
    let r = npz::read(&legacy, 1 << 20).unwrap_err();
    assert!(r.message.contains("not marked UTF-8"), "{r}");
    for d in npz::Dtype::all() {
        let t = Tensor {
            name: "x".into(),
            dtype: d,
            shape: vec![2, 1],
            data: vec![1; 2 * d.size()],
        };
        let back = npz::read(&npz::write(std::slice::from_ref(&t)), 1 << 20).unwrap();
        assert_eq!(back, vec![t.clone()], "{d:?}");
        assert_eq!(npz::Dtype::from_onnx(d.onnx()), Some(d));
        assert!(t.finite());
    }
    // Non-finite half and bfloat16 values are seen.
    let nan16 = Tensor {
        name: "x".into(),
        dtype: npz::Dtype::F16,
        shape: vec![1],
        data: 0x7e00u16.to_le_bytes().to_vec(),
    };
    assert!(!nan16.finite());
    let inf_bf16 = Tensor {
        name: "x".into(),
        dtype: npz::Dtype::BF16,
        shape: vec![1],
        data: 0x7f80u16.to_le_bytes().to_vec(),
    };
    assert!(!inf_bf16.finite());
    let one16 = Tensor {
        name: "x".into(),
        dtype: npz::Dtype::F16,
        shape: vec![1],
        data: 0x3c00u16.to_le_bytes().to_vec(),
    };
    assert_eq!(one16.to_f64(), Some(vec![1.0]));
    // Duplicate members, data longer than the shape, big-endian data.
    let t = Tensor::from_f32("x", &[2], &[1.0, 2.0]);
    let two = npz::write(&[t.clone(), t.clone()]);
    assert_eq!(
        npz::read(&two, 1 << 20).unwrap_err().code.as_str(),
        "TENSOR_ARCHIVE_INVALID"
    );
    let mut long = t.clone();
    long.data.extend_from_slice(&[0; 4]);
    let err = npz::read(&npz::write(&[long]), 1 << 20).unwrap_err();
    assert_eq!(err.code.as_str(), "TENSOR_ARCHIVE_INVALID", "{err}");
}

/// The CI conformance sample: 240 of the ONNX backend node tests (a fixed sample chosen by the
/// SHA-256 of their names) plus the six Silero files, through audit, `--engine ort`,
/// `--engine tract` and `crosscheck` (`bench/onnx_conformance.py --strict`): no panic, no
/// wrong result under ort, every tract disagreement reported by crosscheck.
#[test]
fn conformance_sample_no_panics_no_wrong_ort_results() {
    let o = std::process::Command::new("python3")
        .args([
            "bench/onnx_conformance.py",
            "--sample",
            "240",
            "--strict",
            "--nbg",
        ])
        .arg(env!("CARGO_BIN_EXE_nbg"))
        .current_dir(common::root())
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| !l.contains("RuntimeWarning") && !l.contains("reduced ="))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(stdout.contains("| cases run | 194 |"), "{stdout}");
}

/// IR 3 lists initializers among the graph inputs: they are weights, not inputs. The input
/// limit does not count them, the audit does not list them, and supplying one is refused at the
/// boundary before any engine sees it.
#[test]
fn initializers_listed_as_inputs_are_not_inputs() {
    let mut m = fixtures::spectral_mask();
    m.ir_version = Some(3);
    let g = m.graph.as_mut().unwrap();
    let mut w = g.input[0].clone();
    w.name = Some("weight".into());
    if let Some(TypeValue::TensorType(t)) = w.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.shape.as_mut().unwrap().dim.truncate(3);
        t.shape.as_mut().unwrap().dim[2].value = Some(DimensionValue::DimValue(3));
    }
    g.input.push(w);
    let model = m.encode_to_vec();
    let one_input = Limits {
        graph_inputs: 1,
        ..Limits::default()
    };
    let a = audit::audit(&model, &one_input, &policy()).unwrap();
    assert_eq!(a.inputs.len(), 1);
    assert_eq!(a.inputs[0].name, "features");
    let inputs = [
        Tensor::from_f32("features", &[1, 1, 8], &fixtures::FEATURES),
        Tensor::from_f32("weight", &[1, 1, 3], &[1.0, 1.0, 1.0]),
    ];
    let (_, r) = run::run(
        &a,
        &model,
        Mode::Cpu,
        &inputs,
        &Limits::default(),
        &mut run::Engines::with_engine(&a, run::Engine::Tract),
    )
    .map(|_| ())
    .unwrap_err();
    assert_eq!(r.code.as_str(), "TENSOR_BOUNDARY");
    assert!(r.message.contains("weight"), "{r}");
    let (r, _) = run::run(
        &a,
        &model,
        Mode::Cpu,
        &inputs[..1],
        &Limits::default(),
        &mut engines(&a),
    )
    .unwrap();
    assert_eq!(r.outputs[0].shape, [1, 1, 8]);
}

/// `nbg onnx run` runs the engine in a child process under limits: the same result as in
/// process, and a hang or an out-of-memory in the child is a `CPU_ENGINE_FAILED` value.
#[test]
fn engine_child_process_is_contained() {
    use nbg_lab::onnx::isolate::{ChildEngines, ChildLimits};
    let model = fixtures::spectral_mask().encode_to_vec();
    let a = audit_bytes(&model).unwrap();
    let input = [Tensor::from_f32(
        "features",
        &[1, 1, 8],
        &fixtures::FEATURES,
    )];
    let limits = Limits::default();
    let exe = std::path::PathBuf::from(env!("CARGO_BIN_EXE_nbg"));
    let mut child = ChildEngines::new(exe.clone(), run::Engine::Ort, ChildLimits::default());
    let (r, archive) = run::run(&a, &model, Mode::Cpu, &input, &limits, &mut child).unwrap();
    let (_, direct) = run::run(&a, &model, Mode::Cpu, &input, &limits, &mut engines(&a)).unwrap();
    assert_eq!(
        archive, direct,
        "child and in-process outputs are byte-identical"
    );
    assert_eq!(r.providers, ["CPUExecutionProvider"]);
    // A run that outlives the wall-clock limit is killed.
    let hang = ChildLimits {
        wall: std::time::Duration::ZERO,
        ..ChildLimits::default()
    };
    let mut child = ChildEngines::new(exe.clone(), run::Engine::Ort, hang);
    let (_, r) = run::run(&a, &model, Mode::Cpu, &input, &limits, &mut child)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(r.code.as_str(), "CPU_ENGINE_FAILED", "{r}");
    assert!(r.message.contains("wall-clock"), "{r}");
    // An address space too small for the engine: refused or failed, never a crash of ours.
    let tiny = ChildLimits {
        address_space: 48 << 20,
        ..ChildLimits::default()
    };
    let mut child = ChildEngines::new(exe, run::Engine::Ort, tiny);
    let (_, r) = run::run(&a, &model, Mode::Cpu, &input, &limits, &mut child)
        .map(|_| ())
        .unwrap_err();
    assert!(
        ["CPU_ENGINE_FAILED", "CPU_ENGINE_UNSUPPORTED"].contains(&r.code.as_str()),
        "{r}"
    );
    assert!(!r.message.is_empty());
    eprintln!("48 MiB address space: {r}");
}

/// A graph input of the given element type and static dims.
fn value(name: &str, elem: i32, dims: &[i64]) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(TypeValue::TensorType(TensorTypeProto {
                elem_type: Some(elem),
                shape: Some(TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|d| Dimension {
                            value: Some(DimensionValue::DimValue(*d)),
                            denotation: None,
                        })
                        .collect(),
                }),
            })),
            denotation: None,
        }),
        doc_string: None,
        metadata_props: vec![],
    }
}

/// `max(Expand(x, shape))`: the intermediate's size is read at run time, so no declaration and
/// no static inference can bound it; only the session allocator can.
fn expand_then_max() -> Vec<u8> {
    let mut m = fixtures::dynamic_identity();
    let g = m.graph.as_mut().unwrap();
    let op = |op: &str, inputs: &[&str], output: &str| NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        name: Some(op.to_lowercase()),
        op_type: Some(op.into()),
        domain: Some(String::new()),
        ..Default::default()
    };
    g.name = Some("expand_then_max".into());
    g.node = vec![
        op("Expand", &["x", "shape"], "wide"),
        op("ReduceMax", &["wide"], "y"),
    ];
    g.input = vec![value("x", 1, &[1]), value("shape", 7, &[1])];
    g.output = vec![value("y", 1, &[1])];
    m.encode_to_vec()
}

#[test]
fn intermediate_tensors_stay_within_the_tensor_limit() {
    let model = expand_then_max();
    let a = audit_bytes(&model).expect("the audit cannot see the run-time shape");
    let limits = Limits::default();
    let inputs = |elements: i64| {
        [
            Tensor::from_f32("x", &[1], &[2.5]),
            Tensor {
                name: "shape".into(),
                dtype: npz::Dtype::I64,
                shape: vec![1],
                data: elements.to_le_bytes().to_vec(),
            },
        ]
    };
    // 4 MiB of intermediate: runs, and the maximum is the expanded value.
    let (_, archive) = run::run(
        &a,
        &model,
        Mode::Cpu,
        &inputs(1 << 20),
        &limits,
        &mut engines(&a),
    )
    .expect("a 4 MiB intermediate runs");
    assert_eq!(
        npz::read(&archive, 1 << 20).unwrap()[0]
            .f32_values()
            .unwrap(),
        [2.5]
    );
    // 512 MiB of intermediate in the contained child (the engine process of `onnx run` and
    // `onnx crosscheck`): refused before it is allocated, naming the size.
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_nbg"));
    let mut child = nbg_lab::onnx::isolate::ChildEngines::new(
        exe,
        run::Engine::Ort,
        nbg_lab::onnx::isolate::ChildLimits::default(),
    );
    let (_, archive) = run::run(&a, &model, Mode::Cpu, &inputs(1 << 20), &limits, &mut child)
        .expect("a 4 MiB intermediate runs in the child too");
    assert_eq!(
        npz::read(&archive, 1 << 20).unwrap()[0]
            .f32_values()
            .unwrap(),
        [2.5]
    );
    let (_, r) = run::run(&a, &model, Mode::Cpu, &inputs(1 << 27), &limits, &mut child)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(r.code.as_str(), "CPU_ENGINE_FAILED", "{r}");
    assert_eq!(
        r.message,
        "a tensor of 536870912 bytes exceeds the 268435456-byte tensor limit; the run is refused"
    );
}

/// The refusal codes as documented: pinned here, not read back from the enum.
const REFUSAL_CODES: [&str; 38] = [
    "ONNX_MODEL_UNREADABLE",
    "ONNX_MODEL_EMPTY",
    "ONNX_MODEL_TOO_LARGE",
    "ONNX_PROTOBUF_INVALID",
    "ONNX_UNKNOWN_FIELDS",
    "ONNX_GRAPH_MISSING",
    "ONNX_FUNCTIONS_UNSUPPORTED",
    "ONNX_TRAINING_INFO",
    "ONNX_EXTERNAL_DATA",
    "ONNX_LIMIT_EXCEEDED",
    "ONNX_SHAPE_LIMIT",
    "ONNX_DUPLICATE_NAME",
    "ONNX_GRAPH_INVALID",
    "ONNX_SCHEMA_MISMATCH",
    "ONNX_TYPE_MISMATCH",
    "ONNX_SHAPE_MISMATCH",
    "ONNX_OPSET_INVALID",
    "ONNX_SCHEMA_TABLE_INVALID",
    "ONNX_IR_VERSION_INVALID",
    "ONNX_TENSOR_DATA_INVALID",
    "TENSOR_ARCHIVE_INVALID",
    "TENSOR_TOO_LARGE",
    "TENSOR_BOUNDARY",
    "POLICY_INVALID",
    "QUALIFICATION_INVALID",
    "CPU_ENGINE_FAILED",
    "CPU_ENGINE_UNSUPPORTED",
    "CPU_ENGINE_MISSING",
    "PARTITION_NOT_NPU_RESIDENT",
    "PARTITION_COMPILE_FAILURE",
    "PARTITION_RUN_FAILURE",
    "COMPILER_DEPENDENCY_MISMATCH",
    "PARTITION_NOT_PREFLIGHTED",
    "ONNX_DOMAIN_UNSUPPORTED",
    "ONNX_OPERATOR_UNSUPPORTED",
    "ONNX_QUANTIZATION_UNSUPPORTED",
    "ONNX_TYPE_UNSUPPORTED",
    "ONNX_SHAPE_UNSUPPORTED",
];

/// The run classifications as documented.
const CLASSIFICATIONS: [&str; 10] = [
    "audit-no-session",
    "cpu-explicit",
    "cpu-preflight-fallback",
    "cpu-session-construction-fallback",
    "cpu-run-fallback",
    "npu",
    "cpu-refused",
    "hybrid-refused",
    "strict-refused-before-session",
    "refused-at-boundary",
];

#[test]
fn refusal_codes_and_classifications_keep_their_names_and_are_documented() {
    use nbg_lab::onnx::refusal::RefusalCode;
    let readme = std::fs::read_to_string(common::root().join("docs/onnx.md")).unwrap();
    let names: Vec<&str> = RefusalCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(names, REFUSAL_CODES);
    let names: Vec<&str> = run::Classification::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(names, CLASSIFICATIONS);
    for &c in RefusalCode::ALL {
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, format!("\"{}\"", c.as_str()));
        assert_eq!(c.to_string(), c.as_str());
        assert_eq!(serde_json::from_str::<RefusalCode>(&json).unwrap(), c);
        assert!(
            c.as_str().len() >= 6
                && c.as_str()
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_'),
            "{c}"
        );
        assert!(
            readme.contains(&format!("`{c}`")),
            "docs/onnx.md does not document {c}"
        );
    }
    for &c in run::Classification::ALL {
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, format!("\"{}\"", c.as_str()));
        assert_eq!(c.to_string(), c.as_str());
        assert_eq!(
            serde_json::from_str::<run::Classification>(&json).unwrap(),
            c
        );
        assert!(
            readme.contains(&format!("`{c}`")),
            "docs/onnx.md does not document {c}"
        );
    }
    let refusal = Refusal::new(RefusalCode::TensorBoundary, "m");
    assert_eq!(
        refusal.to_json(),
        serde_json::json!({"error": {"code": "TENSOR_BOUNDARY", "message": "m"}})
    );
    assert_eq!(refusal.to_string(), "TENSOR_BOUNDARY: m");
}

#[test]
fn value_kinds_serialize_as_their_names() {
    use nbg_lab::onnx::types::ValueKind::*;
    for k in [
        Tensor,
        SparseTensor,
        Sequence,
        Map,
        Optional,
        Opaque,
        Unknown,
    ] {
        assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
    }
}
