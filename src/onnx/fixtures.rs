//! Deterministic fixtures, built here with the project's own message types: the spec's
//! Conv1D/Sigmoid spectral mask (features float32 `[1,1,8]`, weight `[0.25, 0.5, 0.25]`, bias 0,
//! pads `[1,1]`), a dynamic-shape Identity, an unsupported-operator (Sin) model, and the input and
//! expected-output archives. The expected mask is an independent f64 computation.

use super::npz::{self, Tensor};
use super::proto::*;
use crate::digest::Hash256;
use prost::Message;
use serde_json::json;

/// Folder of the committed fixtures, relative to the repository root.
pub const DIR: &str = "onnx/fixtures";

/// The spectral-mask input: fixed values spanning negative, zero and positive.
pub const FEATURES: [f32; 8] = [-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 2.0];
/// The 3-tap convolution weight of the spectral-mask fixture.
pub const WEIGHT: [f32; 3] = [0.25, 0.5, 0.25];

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

pub(crate) fn tensor_value(
    name: &str,
    elem: i32,
    dims: &[Option<i64>],
    params: &[&str],
) -> ValueInfoProto {
    let mut p = params.iter();
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Some(n) => DimensionValue::DimValue(*n),
                None => {
                    // Invariant: every caller passes one symbol per `None` dimension (the one
                    // dynamic fixture passes `["batch"]` for its one unnamed dimension; every
                    // other shape is static), and `verify-fixtures` rebuilds each fixture.
                    DimensionValue::DimParam(p.next().expect("a name per symbolic dim").to_string())
                }
            }),
            denotation: None,
        })
        .collect();
    ValueInfoProto {
        name: s(name),
        r#type: Some(TypeProto {
            value: Some(TypeValue::TensorType(TensorTypeProto {
                elem_type: Some(elem),
                shape: Some(TensorShapeProto { dim }),
            })),
            denotation: None,
        }),
        doc_string: None,
        metadata_props: vec![],
    }
}

pub(crate) fn float_tensor(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        dims: dims.to_vec(),
        data_type: Some(data_type::FLOAT),
        name: s(name),
        raw_data: Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        ..Default::default()
    }
}

pub(crate) fn node(
    op: &str,
    name: &str,
    inputs: &[&str],
    outputs: &[&str],
    attribute: Vec<AttributeProto>,
) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|x| x.to_string()).collect(),
        output: outputs.iter().map(|x| x.to_string()).collect(),
        name: s(name),
        op_type: s(op),
        attribute,
        domain: s(""),
        ..Default::default()
    }
}

pub(crate) fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: s(name),
        ints: v.to_vec(),
        r#type: Some(attribute_type::INTS),
        ..Default::default()
    }
}

pub(crate) fn model(graph: GraphProto) -> ModelProto {
    ModelProto {
        ir_version: Some(8),
        producer_name: s("nbg-lab"),
        producer_version: s("fixtures/1"),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto {
            domain: s(""),
            version: Some(13),
        }],
        ..Default::default()
    }
}

/// `spectral_mask_conv.onnx`: a 3-tap Conv and a Sigmoid on a fixed shape.
pub fn spectral_mask() -> ModelProto {
    let shape = [Some(1), Some(1), Some(8)];
    model(GraphProto {
        node: vec![
            node(
                "Conv",
                "conv",
                &["features", "weight", "bias"],
                &["conv_out"],
                vec![ints("kernel_shape", &[3]), ints("pads", &[1, 1])],
            ),
            node("Sigmoid", "sigmoid", &["conv_out"], &["mask"], vec![]),
        ],
        name: s("spectral_mask"),
        initializer: vec![
            float_tensor("weight", &[1, 1, 3], &WEIGHT),
            float_tensor("bias", &[1], &[0.0]),
        ],
        input: vec![tensor_value("features", data_type::FLOAT, &shape, &[])],
        output: vec![tensor_value("mask", data_type::FLOAT, &shape, &[])],
        value_info: vec![tensor_value("conv_out", data_type::FLOAT, &shape, &[])],
        ..Default::default()
    })
}

/// `dynamic_identity.onnx`: an Identity with a symbolic batch dimension.
pub fn dynamic_identity() -> ModelProto {
    let shape = [None, Some(4)];
    model(GraphProto {
        node: vec![node("Identity", "identity", &["x"], &["y"], vec![])],
        name: s("dynamic_identity"),
        input: vec![tensor_value("x", data_type::FLOAT, &shape, &["batch"])],
        output: vec![tensor_value("y", data_type::FLOAT, &shape, &["batch"])],
        ..Default::default()
    })
}

/// `mixed_sin.onnx`: a Sin then a Sigmoid, for mixed placement.
pub fn mixed_sin() -> ModelProto {
    let shape = [Some(1), Some(4)];
    model(GraphProto {
        node: vec![
            node("Sin", "sin", &["x"], &["s"], vec![]),
            node("Sigmoid", "sigmoid", &["s"], &["y"], vec![]),
        ],
        name: s("mixed_sin"),
        input: vec![tensor_value("x", data_type::FLOAT, &shape, &[])],
        output: vec![tensor_value("y", data_type::FLOAT, &shape, &[])],
        value_info: vec![tensor_value("s", data_type::FLOAT, &shape, &[])],
        ..Default::default()
    })
}

/// The mask computed in f64, independently of any engine: zero-padded 3-tap convolution, then
/// the logistic function.
pub fn reference_mask(x: &[f32]) -> Vec<f64> {
    let at = |i: isize| {
        if i < 0 || i as usize >= x.len() {
            0.0
        } else {
            f64::from(x[i as usize])
        }
    };
    (0..x.len() as isize)
        .map(|i| {
            let y: f64 = WEIGHT
                .iter()
                .enumerate()
                .map(|(k, &w)| f64::from(w) * at(i + k as isize - 1))
                .sum();
            1.0 / (1.0 + (-y).exp())
        })
        .collect()
}

/// Every fixture file: (name, purpose, bytes).
pub fn all() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let input = Tensor::from_f32("features", &[1, 1, 8], &FEATURES);
    let expected: Vec<f32> = reference_mask(&FEATURES)
        .iter()
        .map(|&v| v as f32)
        .collect();
    vec![
        (
            "dynamic_identity.onnx",
            "dynamic-shape CPU admission and NPU refusal",
            dynamic_identity().encode_to_vec(),
        ),
        (
            "mixed_sin.onnx",
            "unsupported-operator future-NPU boundary",
            mixed_sin().encode_to_vec(),
        ),
        (
            "spectral_mask_conv.onnx",
            "Conv/Sigmoid numerical control",
            spectral_mask().encode_to_vec(),
        ),
        (
            "spectral_mask_expected.npz",
            "f64 reference mask, rounded to float32",
            npz::write(&[Tensor::from_f32("mask", &[1, 1, 8], &expected)]),
        ),
        (
            "spectral_mask_input.npz",
            "fixed spectral-mask features",
            npz::write(&[input]),
        ),
    ]
}

/// `onnx/fixtures/manifest.json`.
pub fn manifest() -> serde_json::Value {
    json!({
        "schema": "nbg-onnx-fixtures/1",
        "files": all().into_iter().map(|(name, purpose, bytes)| json!({
            "name": name, "purpose": purpose, "bytes": bytes.len(), "sha256": Hash256::of(&bytes),
        })).collect::<Vec<_>>(),
    })
}

/// Rebuild every fixture and the manifest in memory and compare with the committed files.
/// Returns one line per file; `Err` lists the mismatches.
pub fn verify(root: &std::path::Path) -> Result<Vec<String>, Vec<String>> {
    let dir = root.join(DIR);
    let mut files: Vec<(String, Vec<u8>)> = all()
        .into_iter()
        .map(|(n, _, b)| (n.to_string(), b))
        .collect();
    files.push((
        "manifest.json".into(),
        crate::canonical::canonical(&manifest()).into_bytes(),
    ));
    let (mut ok, mut bad) = (Vec::new(), Vec::new());
    for (name, bytes) in files {
        match crate::files::read_regular(&dir.join(&name)) {
            Ok(committed) if committed == bytes => {
                ok.push(format!("{name}: identical ({} bytes)", bytes.len()))
            }
            Ok(_) => bad.push(format!("{name}: differs from its rebuild")),
            Err(e) => bad.push(format!("{name}: {e}")),
        }
    }
    if bad.is_empty() { Ok(ok) } else { Err(bad) }
}

/// Check the committed operator schema table against its regeneration from the pinned `onnx`
/// package (`python3 bench/onnx_schemas.py --check`). Without python3 or `onnx` the check is
/// skipped visibly, except under `CI=true`, where that is a failure.
pub fn verify_schemas(root: &std::path::Path) -> Result<String, super::error::OnnxError> {
    let described = super::checker::describe()?;
    let out = std::process::Command::new("python3")
        .arg(super::checker::SCHEMAS_GENERATOR)
        .arg("--check")
        .current_dir(root)
        .output();
    let missing = |why: String| {
        if std::env::var("CI").as_deref() == Ok("true") {
            Err(super::error::OnnxError::SchemaRegenerationUnavailable(why))
        } else {
            Ok(format!(
                "skipped: {} regeneration ({why}); {described}",
                super::checker::SCHEMAS_PATH
            ))
        }
    };
    match out {
        Err(e) => missing(format!("python3: {e}")),
        Ok(o) if o.status.success() => Ok(format!("{described}: identical to its regeneration")),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            if err.contains("ModuleNotFoundError")
                || err.contains("is installed; the table is generated")
            {
                missing(err.lines().last().unwrap_or_default().to_string())
            } else {
                Err(super::error::OnnxError::SchemaMismatch {
                    stdout: String::from_utf8_lossy(&o.stdout).trim().to_string(),
                    stderr: err.trim().to_string(),
                })
            }
        }
    }
}
