//! `differentials/serializer/`: capture sets the vendor's serializer wrote from the project's
//! own tiny models (`simulator::models`), one source quantity changed per B, for the mapping
//! registry to prove or refute where each quantity lands. A set whose B also changes a second,
//! undeclared quantity is a refuting control. The table below is the whole definition: model,
//! the changes B makes (the first is declared), and the two targets (an NN-engine part and a
//! shader-only part); `nbg vendor capture-sets` recompiles every set and compares bytes.

use super::capture::{self, Difference, Notes as _};
use super::{Compiled, Config, Sdk, VendorError};
use crate::digest::Hash256;
use crate::lab::differential::CaptureSpec;
use crate::onnx::proto::{ModelProto, data_type};
use prost::Message as _;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// The folder, relative to the project.
pub const DIR: &str = "differentials/serializer";

/// The spec's NN-engine part (its convolutions run on shaders, measured), a GC part whose
/// every layer runs on shaders, and the A733's part, which runs these convolutions on shaders
/// too while their constants are not static: the conv and add sets.
pub const TARGETS: [&str; 3] = [
    "VIP9000NANOS_PID0X1000000E",
    "GCNANOULTRA31_VIP2_PID0X15",
    COEFFICIENT_TARGETS[0],
];
/// The part whose Relu after a Gemm runs as an NN command: the NN sets.
pub const NN_TARGETS: [&str; 1] = ["VIP9000NANODI_PID0X1000001E"];
/// Parts whose convolutions and fully connected layers run on NN once their constants are
/// static (`models::nn`), one of each generation: the A733's VIP9000-class part and a
/// VIP8000-class one whose coefficient buffers are of the same (v8) format. On 0x88 they run
/// on NN too, with a buffer of the older format, which is not decoded.
pub const COEFFICIENT_TARGETS: [&str; 2] = [
    "VIP9000NANODI_PLUS_PID0X1000003B",
    "VIP8000NANOSI_PLUS_PID0X9F",
];
/// The part whose Relu after the Gemm runs as a TP command (the VIP8000-class coefficient
/// target): the TP zero-point sets.
const TP_TARGETS: [&str; 1] = [COEFFICIENT_TARGETS[1]];
/// The coefficient target whose int8 convolutions run on NN (a shader on 0x9f).
const INT8_TARGETS: [&str; 1] = [COEFFICIENT_TARGETS[0]];
/// The part whose float16 convolutions run on NN (shaders on the coefficient targets): the
/// conv sets' NN-engine part, 0x1000000e.
const FP16_TARGETS: [&str; 1] = [TARGETS[0]];

/// One change B makes to a model.
#[derive(Clone, Copy, Debug)]
pub enum Change {
    /// Element `index` of initializer `tensor` set to `value` (in the tensor's element type).
    Element(&'static str, usize, f64),
    /// The graph name, which a capture compiles in as the network name.
    GraphName(&'static str),
}

/// One capture set: its name (the target's PID is appended), the model, the changes of B, the
/// configurations.
pub struct Set {
    /// Name before the `-PID` suffix.
    pub name: &'static str,
    /// The model's name in `simulator::models`.
    pub model: &'static str,
    /// What B changes; the first is declared in `differential.json`, any further change is
    /// undeclared (the set then refutes the first's mapping).
    pub changes: &'static [Change],
    /// The configurations it is captured on.
    pub targets: &'static [&'static str],
}

use Change::{Element as E, GraphName as N};

/// Every set, with its targets.
pub const SETS: &[Set] = &[
    set("weight-0", "conv-qdq-u8", &[E("w_q", 0, 201.0)]),
    set("weight-37", "conv-qdq-u8", &[E("w_q", 37, 200.0)]),
    set("weight-287", "conv-qdq-u8", &[E("w_q", 287, 3.0)]),
    set(
        "weight-37-and-bias",
        "conv-qdq-u8",
        &[E("w_q", 37, 200.0), E("b_q", 0, 99.0)],
    ),
    set("bias-0", "conv-qdq-u8", &[E("b_q", 0, 99.0)]),
    set("bias-7", "conv-qdq-u8", &[E("b_q", 7, -77.0)]),
    set(
        "bias-3-and-weight",
        "conv-qdq-u8",
        &[E("b_q", 3, 77.0), E("w_q", 5, 1.0)],
    ),
    set(
        "input-scale-quarter",
        "conv-qdq-u8",
        &[E("x_scale", 0, 0.25)],
    ),
    set("input-scale-one", "conv-qdq-u8", &[E("x_scale", 0, 1.0)]),
    set(
        "input-scale-and-weight",
        "conv-qdq-u8",
        &[E("x_scale", 0, 0.25), E("w_q", 5, 1.0)],
    ),
    set(
        "weight-scale-eighth",
        "conv-qdq-u8",
        &[E("w_scale", 0, 0.125)],
    ),
    set("weight-scale-half", "conv-qdq-u8", &[E("w_scale", 0, 0.5)]),
    set(
        "weight-scale-and-weight",
        "conv-qdq-u8",
        &[E("w_scale", 0, 0.125), E("w_q", 5, 1.0)],
    ),
    set("output-scale-four", "conv-qdq-u8", &[E("y_scale", 0, 4.0)]),
    set("output-scale-one", "conv-qdq-u8", &[E("y_scale", 0, 1.0)]),
    set(
        "output-scale-and-weight",
        "conv-qdq-u8",
        &[E("y_scale", 0, 4.0), E("w_q", 5, 1.0)],
    ),
    set(
        "input-zero-point-100",
        "conv-qdq-u8",
        &[E("x_zp", 0, 100.0)],
    ),
    set(
        "input-zero-point-140",
        "conv-qdq-u8",
        &[E("x_zp", 0, 140.0)],
    ),
    set(
        "input-zero-point-and-weight",
        "conv-qdq-u8",
        &[E("x_zp", 0, 100.0), E("w_q", 5, 1.0)],
    ),
    set("weight-zero-point-12", "conv-qdq-u8", &[E("w_zp", 0, 12.0)]),
    set("weight-zero-point-3", "conv-qdq-u8", &[E("w_zp", 0, 3.0)]),
    set(
        "weight-zero-point-and-weight",
        "conv-qdq-u8",
        &[E("w_zp", 0, 12.0), E("w_q", 5, 1.0)],
    ),
    set("output-zero-point-7", "conv-qdq-u8", &[E("y_zp", 0, 7.0)]),
    set("output-zero-point-20", "conv-qdq-u8", &[E("y_zp", 0, 20.0)]),
    set(
        "output-zero-point-and-weight",
        "conv-qdq-u8",
        &[E("y_zp", 0, 7.0), E("w_q", 5, 1.0)],
    ),
    set("network-name-b", "conv-qdq-u8", &[N("conv_qdq_u8_b")]),
    set("network-name-net2", "conv-qdq-u8", &[N("net2")]),
    set(
        "network-name-and-weight",
        "conv-qdq-u8",
        &[N("conv_qdq_u8_b"), E("w_q", 5, 1.0)],
    ),
    set("add-constant-0", "add-const-fp16", &[E("c", 0, 0.5)]),
    set("add-constant-17", "add-const-fp16", &[E("c", 17, -0.25)]),
    set(
        "add-constant-3-and-20",
        "add-const-fp16",
        &[E("c", 3, 0.5), E("c", 20, 0.75)],
    ),
    // The same quantities in models in a user's own names, with a Relu beside the Conv
    // (`models::named`): the conv mappings keyed by role hold on a second model.
    set("user-weight-0", "user-conv-relu-u8", &[E("k_q", 0, 201.0)]),
    set(
        "user-weight-37",
        "user-conv-relu-u8",
        &[E("k_q", 37, 200.0)],
    ),
    set("user-bias-0", "user-conv-relu-u8", &[E("bb_q", 0, 99.0)]),
    set("user-bias-7", "user-conv-relu-u8", &[E("bb_q", 7, -77.0)]),
    set(
        "user-input-scale-quarter",
        "user-conv-relu-u8",
        &[E("img_scale", 0, 0.25)],
    ),
    set(
        "user-input-scale-one",
        "user-conv-relu-u8",
        &[E("img_scale", 0, 1.0)],
    ),
    set(
        "user-weight-scale-eighth",
        "user-conv-relu-u8",
        &[E("k_scale", 0, 0.125)],
    ),
    set(
        "user-weight-scale-half",
        "user-conv-relu-u8",
        &[E("k_scale", 0, 0.5)],
    ),
    set(
        "user-input-zero-point-100",
        "user-conv-relu-u8",
        &[E("img_zp", 0, 100.0)],
    ),
    set(
        "user-input-zero-point-140",
        "user-conv-relu-u8",
        &[E("img_zp", 0, 140.0)],
    ),
    set(
        "user-weight-zero-point-12",
        "user-conv-relu-u8",
        &[E("k_zp", 0, 12.0)],
    ),
    set(
        "user-weight-zero-point-3",
        "user-conv-relu-u8",
        &[E("k_zp", 0, 3.0)],
    ),
    set(
        "user-network-name-b",
        "user-conv-relu-u8",
        &[N("user_net_b")],
    ),
    set("user-network-name-net2", "user-conv-relu-u8", &[N("net2")]),
    set(
        "user-output-scale-four",
        "user-relu-conv-u8",
        &[E("c_scale", 0, 4.0)],
    ),
    set(
        "user-output-scale-one",
        "user-relu-conv-u8",
        &[E("c_scale", 0, 1.0)],
    ),
    set(
        "user-output-zero-point-7",
        "user-relu-conv-u8",
        &[E("c_zp", 0, 7.0)],
    ),
    set(
        "user-output-zero-point-20",
        "user-relu-conv-u8",
        &[E("c_zp", 0, 20.0)],
    ),
    // A padded Conv, whose shader keeps its uniforms elsewhere.
    set(
        "user-pad-input-scale-quarter",
        "user-conv-pad-u8",
        &[E("pic_scale", 0, 0.25)],
    ),
    set(
        "user-pad-weight-scale-half",
        "user-conv-pad-u8",
        &[E("wt_scale", 0, 0.5)],
    ),
    set(
        "user-pad-output-scale-four",
        "user-conv-pad-u8",
        &[E("feat_scale", 0, 4.0)],
    ),
    set(
        "user-pad-input-zero-point-100",
        "user-conv-pad-u8",
        &[E("pic_zp", 0, 100.0)],
    ),
    set(
        "user-pad-weight-zero-point-12",
        "user-conv-pad-u8",
        &[E("wt_zp", 0, 12.0)],
    ),
    set(
        "user-pad-output-zero-point-20",
        "user-conv-pad-u8",
        &[E("feat_zp", 0, 20.0)],
    ),
    set(
        "user-add-constant-0",
        "user-relu-add-fp16",
        &[E("offs", 0, 0.5)],
    ),
    set(
        "user-add-constant-17",
        "user-relu-add-fp16",
        &[E("offs", 17, -0.25)],
    ),
    // The Gemm + Relu sets' quantities in a user's Gemm + Relu.
    on(
        &NN_TARGETS,
        "user-nn-weight-0",
        "user-gemm-relu-u8",
        &[E("fc_q", 0, 1.0)],
    ),
    on(
        &NN_TARGETS,
        "user-nn-weight-127",
        "user-gemm-relu-u8",
        &[E("fc_q", 127, 4.0)],
    ),
    on(
        &NN_TARGETS,
        "user-nn-relu-input-scale-double",
        "user-gemm-relu-u8",
        &[E("logits_scale", 0, 0.2)],
    ),
    on(
        &NN_TARGETS,
        "user-nn-relu-input-scale-half",
        "user-gemm-relu-u8",
        &[E("logits_scale", 0, 0.05)],
    ),
    on(
        &NN_TARGETS,
        "user-nn-relu-output-scale-half",
        "user-gemm-relu-u8",
        &[E("act_scale", 0, 0.05)],
    ),
    on(
        &NN_TARGETS,
        "user-nn-relu-output-scale-double",
        "user-gemm-relu-u8",
        &[E("act_scale", 0, 0.2)],
    ),
    on(
        &NN_TARGETS,
        "user-nn-relu-input-zero-point-100",
        "user-gemm-relu-u8",
        &[E("logits_zp", 0, 100.0)],
    ),
    on(
        &NN_TARGETS,
        "user-nn-relu-input-zero-point-140",
        "user-gemm-relu-u8",
        &[E("logits_zp", 0, 140.0)],
    ),
    on(
        &NN_TARGETS,
        "user-nn-relu-output-zero-point-100",
        "user-gemm-relu-u8",
        &[E("act_zp", 0, 100.0)],
    ),
    on(
        &NN_TARGETS,
        "user-nn-relu-output-zero-point-140",
        "user-gemm-relu-u8",
        &[E("act_zp", 0, 140.0)],
    ),
    on(
        &TP_TARGETS,
        "user-tp-relu-input-zero-point-100",
        "user-gemm-relu-u8",
        &[E("logits_zp", 0, 100.0)],
    ),
    on(
        &TP_TARGETS,
        "user-tp-relu-input-zero-point-140",
        "user-gemm-relu-u8",
        &[E("logits_zp", 0, 140.0)],
    ),
    on(
        &TP_TARGETS,
        "user-tp-relu-output-zero-point-100",
        "user-gemm-relu-u8",
        &[E("act_zp", 0, 100.0)],
    ),
    on(
        &TP_TARGETS,
        "user-tp-relu-output-zero-point-140",
        "user-gemm-relu-u8",
        &[E("act_zp", 0, 140.0)],
    ),
    // The coefficient sets' quantities in the user's Conv + Relu, constants static.
    coef(
        "user-nn-conv-weight-0",
        "user-conv-relu-nn-u8",
        &[E("k_q", 0, 201.0)],
    ),
    coef(
        "user-nn-conv-weight-37",
        "user-conv-relu-nn-u8",
        &[E("k_q", 37, 3.0)],
    ),
    coef(
        "user-nn-conv-bias-0",
        "user-conv-relu-nn-u8",
        &[E("bb_q", 0, 99.0)],
    ),
    coef(
        "user-nn-conv-bias-7",
        "user-conv-relu-nn-u8",
        &[E("bb_q", 7, -77.0)],
    ),
    on(
        &FP16_TARGETS,
        "user-nn-conv-fp16-weight-0",
        "user-conv-relu-nn-fp16",
        &[E("k", 0, 0.5)],
    ),
    on(
        &FP16_TARGETS,
        "user-nn-conv-fp16-weight-200",
        "user-conv-relu-nn-fp16",
        &[E("k", 200, -0.25)],
    ),
    // The Relu's input is the Gemm's output `g` (graph output 0), its output `r` (output 1).
    nn("nn-weight-0", &[E("w_q", 0, 1.0)]),
    nn("nn-weight-127", &[E("w_q", 127, 4.0)]),
    nn(
        "nn-weight-17-and-bias",
        &[E("w_q", 17, 3.0), E("b_q", 0, 5.0)],
    ),
    nn("nn-relu-input-scale-double", &[E("g_scale", 0, 0.2)]),
    nn("nn-relu-input-scale-half", &[E("g_scale", 0, 0.05)]),
    nn(
        "nn-relu-input-scale-and-weight",
        &[E("g_scale", 0, 0.2), E("w_q", 5, 1.0)],
    ),
    nn("nn-relu-output-scale-half", &[E("r_scale", 0, 0.05)]),
    nn("nn-relu-output-scale-double", &[E("r_scale", 0, 0.2)]),
    nn(
        "nn-relu-output-scale-and-weight",
        &[E("r_scale", 0, 0.05), E("w_q", 5, 1.0)],
    ),
    nn("nn-relu-input-zero-point-100", &[E("g_zp", 0, 100.0)]),
    nn("nn-relu-input-zero-point-140", &[E("g_zp", 0, 140.0)]),
    nn(
        "nn-relu-input-zero-point-and-weight",
        &[E("g_zp", 0, 100.0), E("w_q", 5, 1.0)],
    ),
    nn("nn-relu-output-zero-point-100", &[E("r_zp", 0, 100.0)]),
    nn("nn-relu-output-zero-point-140", &[E("r_zp", 0, 140.0)]),
    nn(
        "nn-relu-output-zero-point-and-weight",
        &[E("r_zp", 0, 100.0), E("w_q", 5, 1.0)],
    ),
    // The same Relu as a TP command (0x9f): its input and output zero points.
    tp("tp-relu-input-zero-point-100", &[E("g_zp", 0, 100.0)]),
    tp("tp-relu-input-zero-point-140", &[E("g_zp", 0, 140.0)]),
    tp(
        "tp-relu-input-zero-point-and-weight",
        &[E("g_zp", 0, 100.0), E("w_q", 5, 1.0)],
    ),
    tp("tp-relu-output-zero-point-100", &[E("r_zp", 0, 100.0)]),
    tp("tp-relu-output-zero-point-140", &[E("r_zp", 0, 140.0)]),
    tp(
        "tp-relu-output-zero-point-and-weight",
        &[E("r_zp", 0, 100.0), E("w_q", 5, 1.0)],
    ),
    // The static-constant models on NN: one kernel or bias element per B, read back through
    // the decoded coefficient streams. The weight's zero point is 10, so 10 is stored as 0.
    coef("nn-conv-u8-weight-0", "conv-nn-u8", &[E("w_q", 0, 201.0)]),
    coef("nn-conv-u8-weight-37", "conv-nn-u8", &[E("w_q", 37, 10.0)]),
    coef("nn-conv-u8-weight-287", "conv-nn-u8", &[E("w_q", 287, 3.0)]),
    coef("nn-conv-u8-bias-0", "conv-nn-u8", &[E("b_q", 0, 99.0)]),
    coef("nn-conv-u8-bias-7", "conv-nn-u8", &[E("b_q", 7, -77.0)]),
    coef(
        "nn-conv-u8-weight-37-and-bias",
        "conv-nn-u8",
        &[E("w_q", 37, 200.0), E("b_q", 0, 99.0)],
    ),
    on(
        &INT8_TARGETS,
        "nn-conv-i8-weight-5",
        "conv-nn-i8",
        &[E("w_q", 5, -128.0)],
    ),
    on(
        &INT8_TARGETS,
        "nn-conv-i8-weight-100",
        "conv-nn-i8",
        &[E("w_q", 100, 77.0)],
    ),
    coef(
        "nn-depthwise-u8-weight-4",
        "depthwise-nn-u8",
        &[E("w_q", 4, 0.0)],
    ),
    coef(
        "nn-depthwise-u8-weight-70",
        "depthwise-nn-u8",
        &[E("w_q", 70, 255.0)],
    ),
    coef("nn-conv5-u8-weight-0", "conv5-nn-u8", &[E("w_q", 0, 201.0)]),
    coef(
        "nn-conv5-u8-weight-400",
        "conv5-nn-u8",
        &[E("w_q", 400, 3.0)],
    ),
    coef(
        "nn-conv-relu-u8-weight-0",
        "conv-relu-nn-u8",
        &[E("w_q", 0, 201.0)],
    ),
    coef(
        "nn-conv-relu-u8-weight-37",
        "conv-relu-nn-u8",
        &[E("w_q", 37, 3.0)],
    ),
    coef(
        "nn-conv-maxpool-u8-weight-0",
        "conv-maxpool-nn-u8",
        &[E("w_q", 0, 201.0)],
    ),
    coef(
        "nn-conv-maxpool-u8-weight-37",
        "conv-maxpool-nn-u8",
        &[E("w_q", 37, 3.0)],
    ),
    coef("nn-gemm-u8-weight-9", "gemm-nn-u8", &[E("w_q", 9, 128.0)]),
    coef("nn-gemm-u8-weight-127", "gemm-nn-u8", &[E("w_q", 127, 1.0)]),
    on(
        &FP16_TARGETS,
        "nn-conv-fp16-weight-0",
        "conv-nn-fp16",
        &[E("w", 0, 0.5)],
    ),
    on(
        &FP16_TARGETS,
        "nn-conv-fp16-weight-200",
        "conv-nn-fp16",
        &[E("w", 200, -0.25)],
    ),
];

/// A set of `model` on `targets`.
const fn on(
    targets: &'static [&'static str],
    name: &'static str,
    model: &'static str,
    changes: &'static [Change],
) -> Set {
    Set {
        name,
        model,
        changes,
        targets,
    }
}

const fn set(name: &'static str, model: &'static str, changes: &'static [Change]) -> Set {
    on(&TARGETS, name, model, changes)
}

/// A set of the QDQ Gemm + Relu model on the NN part.
const fn nn(name: &'static str, changes: &'static [Change]) -> Set {
    on(&NN_TARGETS, name, "gemm-relu-qdq-u8", changes)
}

/// A set of the QDQ Gemm + Relu model on the part that runs the Relu on TP.
const fn tp(name: &'static str, changes: &'static [Change]) -> Set {
    on(&TP_TARGETS, name, "gemm-relu-qdq-u8", changes)
}

/// A set of a static-constant model on the coefficient targets.
const fn coef(name: &'static str, model: &'static str, changes: &'static [Change]) -> Set {
    on(&COEFFICIENT_TARGETS, name, model, changes)
}

/// The folder of set `name` captured on the part with PID `pid`: `NAME-PID`, the PID in
/// lower-case hex.
pub fn folder(name: &str, pid: u32) -> String {
    format!("{name}-{pid:x}")
}

/// Why a change cannot be made to a model.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ChangeError {
    /// The model is not ONNX or has no graph.
    #[error("model {0}: not an ONNX model with a graph")]
    Model(&'static str),
    /// The model has no such initializer stored as raw bytes, or no such element.
    #[error("model {model}: no element {index} of a raw initializer {tensor:?}")]
    Element {
        /// The model.
        model: &'static str,
        /// The initializer.
        tensor: &'static str,
        /// The element.
        index: usize,
    },
}

/// Model `base` (named `model`) with `changes` made.
pub fn changed(
    model: &'static str,
    base: &[u8],
    changes: &[Change],
) -> Result<Vec<u8>, ChangeError> {
    let mut m = ModelProto::decode(base).map_err(|_| ChangeError::Model(model))?;
    let g = m.graph.as_mut().ok_or(ChangeError::Model(model))?;
    for c in changes {
        match *c {
            Change::GraphName(name) => g.name = Some(name.to_string()),
            Change::Element(tensor, index, value) => {
                let missing = ChangeError::Element {
                    model,
                    tensor,
                    index,
                };
                let t = g
                    .initializer
                    .iter_mut()
                    .find(|t| t.name.as_deref() == Some(tensor))
                    .ok_or(missing.clone())?;
                let bytes: Vec<u8> = match t.data_type {
                    Some(data_type::FLOAT) => (value as f32).to_le_bytes().to_vec(),
                    Some(data_type::INT32) => (value as i32).to_le_bytes().to_vec(),
                    Some(data_type::UINT8) => vec![value as u8],
                    Some(data_type::INT8) => vec![value as i8 as u8],
                    _ => return Err(missing),
                };
                let raw = t.raw_data.as_mut().ok_or(missing.clone())?;
                let at = index * bytes.len();
                raw.get_mut(at..at + bytes.len())
                    .ok_or(missing)?
                    .copy_from_slice(&bytes);
            }
        }
    }
    Ok(m.encode_to_vec())
}

/// A built capture set: its folder name, the three captures and `differential.json`.
pub struct Built {
    /// `NAME-PID`.
    pub dir: String,
    /// The configuration.
    pub config: Config,
    /// A compiled twice, and B.
    pub a1: Compiled,
    /// The second compile of A.
    pub a2: Compiled,
    /// B.
    pub b: Compiled,
    /// The spec.
    pub spec: CaptureSpec,
    /// The declared quantity's key.
    pub declared: String,
    /// Keys of the undeclared quantities B also changes.
    pub undeclared: Vec<String>,
}

/// The capture spec of models `a` and `b` (`b` made from `a` by the changes of `set`): the
/// first change's difference declared with its A and B values, the model's other Q/DQ
/// parameters as context, further differences undeclared and named in the provenance only.
fn spec_of(
    set: &Set,
    a: &[u8],
    b: &[u8],
    a1: &Compiled,
    b1: &Compiled,
    config: &Config,
    sdk: &Sdk,
) -> Result<(CaptureSpec, String, Vec<String>), VendorError> {
    let refused = |m: String| VendorError::Admission(format!("set {}: {m}", set.name));
    let found = capture::differences(a, b).map_err(refused)?;
    // The declared quantity: the one difference the first change alone makes.
    let first = changed(set.model, a, &set.changes[..1]).map_err(|e| refused(e.to_string()))?;
    let key = capture::difference(a, &first).map_err(refused)?.key;
    let Some(declared) = found.iter().find(|d| d.key == key) else {
        return Err(refused(format!("{key} is not among the differences")));
    };
    let mut spec = capture::spec(declared, a1, b1, config, sdk);
    let undeclared: Vec<String> = found
        .iter()
        .filter(|d: &&Difference| d.key != key)
        .map(|d| d.key.clone())
        .collect();
    if !undeclared.is_empty() {
        if let Some(p) = &mut spec.provenance {
            p.push_str(&format!(
                "; B also changes {} (undeclared: a refuting control)",
                undeclared.join(", ")
            ));
        }
    }
    let spec = spec.with_context(capture::context(a), &|k| found.iter().any(|d| d.key == k));
    Ok((spec, declared.key.clone(), undeclared))
}

/// Compile every set on every target: each model once per target as A (twice), each B once,
/// through `compiles::all`. `progress` hears each set's
/// folder name as it is assembled.
pub fn build(
    sdk: &Sdk,
    configs: &[Config],
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Built>, VendorError> {
    let models: BTreeMap<&str, Vec<u8>> = super::models::bases()
        .into_iter()
        .map(|(n, _, b)| (n, b))
        .collect();
    // Every compile first: (configuration, set, model bytes, pass); a set of `None` is a base
    // (A), whose second compile (A2) is of pass 1: a context of its own, so that it repeats
    // the whole compile.
    let mut jobs: Vec<(&Config, &Set, Option<Vec<u8>>, u8)> = Vec::new();
    // Each part once, though it may serve several kinds of set (0x1000003b: conv and
    // coefficient sets).
    let mut parts: Vec<&str> = Vec::new();
    for name in TARGETS
        .iter()
        .chain(&NN_TARGETS)
        .chain(&COEFFICIENT_TARGETS)
    {
        if !parts.contains(name) {
            parts.push(name);
        }
    }
    for name in &parts {
        let config = configs
            .iter()
            .find(|c| c.name == *name)
            .ok_or_else(|| VendorError::Target(format!("the driver has no {name}")))?;
        let mut seen = std::collections::BTreeSet::new();
        for s in SETS.iter().filter(|s| s.targets.contains(name)) {
            let base = models
                .get(s.model)
                .ok_or_else(|| VendorError::Admission(format!("no model {}", s.model)))?;
            if seen.insert(s.model) {
                jobs.push((config, s, None, 0));
                jobs.push((config, s, None, 1));
            }
            let b_model = changed(s.model, base, s.changes)
                .map_err(|e| VendorError::Admission(e.to_string()))?;
            jobs.push((config, s, Some(b_model), 0));
        }
    }
    let mut compiles = Vec::with_capacity(jobs.len());
    for (config, s, b, pass) in &jobs {
        let model = b.as_deref().unwrap_or(&models[s.model]);
        let proto = ModelProto::decode(model)
            .map_err(|e| VendorError::Admission(format!("model {}: {e}", s.model)))?;
        compiles.push(super::compiles::Job {
            config,
            model,
            network_name: Some(capture::graph_name(&proto)),
            pass: *pass,
        });
    }
    let compiled = super::compiles::all(sdk, &compiles);
    // Then the sets, in the order of the jobs: a base's two compiles are A1 and A2 of every
    // set of its model on that target.
    let mut out = Vec::new();
    let mut bases: BTreeMap<(u32, &str), (Compiled, Compiled)> = BTreeMap::new();
    let mut results = jobs.iter().zip(compiled);
    while let Some(((config, s, b, _), x)) = results.next() {
        let Some(b_model) = b else {
            let a2 = results.next().map(|(_, x)| x).ok_or_else(|| {
                VendorError::ChildError("a base without its second compile".into())
            })?;
            bases.insert((config.pid, s.model), (x?, a2?));
            continue;
        };
        let b = x?;
        let (a1, a2) = &bases[&(config.pid, s.model)];
        let base = &models[s.model];
        let (spec, declared, undeclared) = spec_of(s, base, b_model, a1, &b, config, sdk)?;
        let dir = folder(s.name, config.pid);
        progress(&dir);
        out.push(Built {
            dir,
            config: (*config).clone(),
            a1: a1.clone(),
            a2: a2.clone(),
            b,
            spec,
            declared,
            undeclared,
        });
    }
    Ok(out)
}

/// The files of the folder, by path relative to it: every set's A1, A2, B and spec, then
/// `serializer.json` and `NOTICE.md`.
pub fn files(sdk: &Sdk, built: &[Built]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rows = Vec::new();
    for x in built {
        // Invariant: a spec is byte lists, strings and numbers, which always serialize.
        let spec = crate::canonical::canonical(&serde_json::to_value(&x.spec).unwrap_or_default());
        for (file, bytes) in [
            (crate::lab::differential::A1_FILE, x.a1.nbg.clone()),
            (crate::lab::differential::A2_FILE, x.a2.nbg.clone()),
            (crate::lab::differential::B_FILE, x.b.nbg.clone()),
            (crate::lab::differential::SPEC_FILE, spec.into_bytes()),
        ] {
            out.push((format!("{}/{file}", x.dir), bytes));
        }
        rows.push(json!({
            "set": x.dir,
            "config": x.config.name,
            "pid": format!("0x{:08x}", x.config.pid),
            "declared": x.declared,
            "undeclared": x.undeclared,
            "model_a_sha256": x.a1.model_sha256,
            "model_b_sha256": x.b.model_sha256,
            "a1_sha256": x.a1.nbg_sha256,
            "a2_sha256": x.a2.nbg_sha256,
            "b_sha256": x.b.nbg_sha256,
        }));
    }
    let doc = json!({"schema": "nbg-serializer-captures/1", "driver": sdk.to_json(), "sets": rows});
    out.push((
        "serializer.json".into(),
        crate::canonical::canonical(&doc).into_bytes(),
    ));
    out.push(("NOTICE.md".into(), notice(sdk, built).into_bytes()));
    out
}

fn notice(sdk: &Sdk, built: &[Built]) -> String {
    let configs: std::collections::BTreeSet<String> = built
        .iter()
        .map(|b| format!("{} (PID 0x{:08x})", b.config.name, b.config.pid))
        .collect();
    let mut s = format!(
        "# differentials/serializer: capture sets written by the vendor's serializer\n\n\
         Every `A1.nb`, `A2.nb` and `B.nb` here was written by VeriSilicon's x86-64 OpenVX \
         simulator driver from the PyPI wheel {} (build {}), `VIV_VX_ENABLE_SAVE_NETWORK_BINARY`, \
         from the project's own tiny models (`src/simulator/models.rs`) and the changes of \
         `src/simulator/capture_sets.rs`, for these configurations:\n\n",
        sdk.wheel, sdk.build
    );
    for c in configs {
        s.push_str(&format!("- {c}\n"));
    }
    s.push_str(
        "\nA1 and A2 are two separate compiles of the same model; the network name is the \
         model's graph name. `nbg vendor capture-sets` recompiles every set and compares bytes \
         (`--write` rewrites them); `serializer.json` lists each set's declared and undeclared \
         quantities and digests. The driver itself is not in the repository.\n",
    );
    s
}

/// Write every file under `root/DIR` (the folder is replaced file by file).
pub fn write(root: &Path, files: &[(String, Vec<u8>)]) -> Result<usize, VendorError> {
    let dir = root.join(DIR);
    for (path, bytes) in files {
        let p = dir.join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|source| crate::files::InputError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        crate::files::write_atomic(&p, bytes, true)?;
    }
    Ok(files.len())
}

/// Compare every file with the committed one: one line per difference.
pub fn compare(root: &Path, files: &[(String, Vec<u8>)]) -> Vec<String> {
    let dir = root.join(DIR);
    let mut problems = Vec::new();
    for (path, want) in files {
        match std::fs::read(dir.join(path)) {
            Ok(have) if have == *want => {}
            Ok(have) => problems.push(format!(
                "{DIR}/{path}: committed sha256 {}, rebuilt {}",
                Hash256::of(&have),
                Hash256::of(want)
            )),
            Err(e) => problems.push(format!("{DIR}/{path}: {e}")),
        }
    }
    problems
}
