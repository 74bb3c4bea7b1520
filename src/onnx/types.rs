//! The ONNX layer's shared vocabulary: the admission limits and the typed view of a graph
//! input or output. A leaf below the audit, the signature and the runs.

use super::error::OnnxError;
use super::proto::{self, ValueInfoProto};
use super::tensor::Tensor;
use serde::{Deserialize, Serialize};

/// What a command decided about sessions: evidence's `classification`, always filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Classification {
    /// The audit creates no session.
    #[serde(rename = "audit-no-session")]
    AuditNoSession,
    /// `--mode cpu`: one CPU session, as asked.
    #[serde(rename = "cpu-explicit")]
    CpuExplicit,
    /// `--mode hybrid` with no NPU-eligible partition: one CPU session, zero NPU attempts.
    #[serde(rename = "cpu-preflight-fallback")]
    CpuPreflightFallback,
    /// `--mode hybrid`: the NPU session could not be built, one CPU session instead.
    #[serde(rename = "cpu-session-construction-fallback")]
    CpuSessionConstructionFallback,
    /// `--mode hybrid`: the NPU session was built but its run failed, one CPU session instead.
    #[serde(rename = "cpu-run-fallback")]
    CpuRunFallback,
    /// An NPU session.
    #[serde(rename = "npu")]
    Npu,
    /// `--mode cpu` refused.
    #[serde(rename = "cpu-refused")]
    CpuRefused,
    /// `--mode hybrid` refused.
    #[serde(rename = "hybrid-refused")]
    HybridRefused,
    /// `--mode strict` refused before any session.
    #[serde(rename = "strict-refused-before-session")]
    StrictRefusedBeforeSession,
    /// The input tensors were refused before any session.
    #[serde(rename = "refused-at-boundary")]
    RefusedAtBoundary,
}

impl Classification {
    /// Every classification, in declaration order.
    pub const ALL: &'static [Classification] = &[
        Classification::AuditNoSession,
        Classification::CpuExplicit,
        Classification::CpuPreflightFallback,
        Classification::CpuSessionConstructionFallback,
        Classification::CpuRunFallback,
        Classification::Npu,
        Classification::CpuRefused,
        Classification::HybridRefused,
        Classification::StrictRefusedBeforeSession,
        Classification::RefusedAtBoundary,
    ];

    /// The stable kebab-case name (the same string serde writes).
    pub fn as_str(self) -> &'static str {
        match self {
            Classification::AuditNoSession => "audit-no-session",
            Classification::CpuExplicit => "cpu-explicit",
            Classification::CpuPreflightFallback => "cpu-preflight-fallback",
            Classification::CpuSessionConstructionFallback => "cpu-session-construction-fallback",
            Classification::CpuRunFallback => "cpu-run-fallback",
            Classification::Npu => "npu",
            Classification::CpuRefused => "cpu-refused",
            Classification::HybridRefused => "hybrid-refused",
            Classification::StrictRefusedBeforeSession => "strict-refused-before-session",
            Classification::RefusedAtBoundary => "refused-at-boundary",
        }
    }
}

impl std::fmt::Display for Classification {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// Where a node or partition runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    /// On the CPU engine.
    Cpu,
    /// On the NPU (only ever with an approved compiled signature).
    Npu,
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Device::Cpu => "cpu",
            Device::Npu => "npu",
        })
    }
}

/// The spec's default limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest model file.
    pub model_bytes: u64,
    /// Most nodes.
    pub nodes: u64,
    /// Most graph inputs.
    pub graph_inputs: u64,
    /// Most graph outputs.
    pub graph_outputs: u64,
    /// Most constant tensors.
    pub constant_tensors: u64,
    /// Largest constant tensor in bytes.
    pub constant_bytes: u64,
    /// Largest sum of constant tensor bytes.
    pub total_constant_bytes: u64,
    /// Largest rank.
    pub rank: u64,
    /// Largest dimension.
    pub dimension: i64,
    /// Largest tensor in bytes.
    pub tensor_bytes: u64,
}

/// The default per-tensor limit (256 MiB), which the ONNX Runtime session allocator of the
/// engine child also holds every intermediate tensor to.
pub const MAX_TENSOR_BYTES: u64 = 268_435_456;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            model_bytes: 67_108_864,
            nodes: 4_096,
            graph_inputs: 64,
            graph_outputs: 64,
            constant_tensors: 4_096,
            constant_bytes: 67_108_864,
            total_constant_bytes: 268_435_456,
            rank: 8,
            dimension: 1_048_576,
            tensor_bytes: MAX_TENSOR_BYTES,
        }
    }
}

/// Which ONNX type a graph input or output declares (the `TypeProto` case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ValueKind {
    /// A dense tensor.
    Tensor,
    /// A sparse tensor.
    SparseTensor,
    /// A sequence.
    Sequence,
    /// A map.
    Map,
    /// An optional value.
    Optional,
    /// An opaque type.
    Opaque,
    /// No type declared.
    Unknown,
}

crate::canonical::names! {
    ValueKind {
        Tensor => "tensor",
        SparseTensor => "sparse_tensor",
        Sequence => "sequence",
        Map => "map",
        Optional => "optional",
        Opaque => "opaque",
        Unknown => "unknown",
    }
}

/// A typed graph input or output; symbolic dimensions are kept by name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValueType {
    /// Value name.
    pub name: String,
    /// Which type it declares.
    pub kind: ValueKind,
    /// ONNX element type code, when declared.
    pub elem_type: Option<i32>,
    /// Its name, when known.
    pub elem_type_name: Option<&'static str>,
    /// Each dimension as a number, a symbol, or null when dynamic and unnamed (a negative
    /// `dim_value` included); `None` without a shape.
    pub shape: Option<Vec<serde_json::Value>>,
}

impl ValueType {
    /// The dimensions when every one is a fixed value.
    pub fn static_dims(&self) -> Option<Vec<i64>> {
        self.shape
            .as_ref()?
            .iter()
            .map(serde_json::Value::as_i64)
            .collect()
    }
}

/// The typed view of one graph input or output.
pub fn value_type(v: &ValueInfoProto) -> ValueType {
    let name = v.name.clone().unwrap_or_default();
    let (kind, tensor) = match v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(proto::TypeValue::TensorType(t)) => (ValueKind::Tensor, Some(t)),
        Some(proto::TypeValue::SparseTensorType(t)) => (ValueKind::SparseTensor, Some(t)),
        Some(proto::TypeValue::SequenceType(_)) => (ValueKind::Sequence, None),
        Some(proto::TypeValue::MapType(_)) => (ValueKind::Map, None),
        Some(proto::TypeValue::OptionalType(_)) => (ValueKind::Optional, None),
        Some(proto::TypeValue::OpaqueType(_)) => (ValueKind::Opaque, None),
        None => (ValueKind::Unknown, None),
    };
    let elem_type = tensor.and_then(|t| t.elem_type);
    let shape = tensor.and_then(|t| t.shape.as_ref()).map(|s| {
        s.dim
            .iter()
            .map(|d| match (&d.value, d.fixed()) {
                (_, Some(n)) => serde_json::Value::from(n),
                (Some(proto::DimensionValue::DimParam(p)), _) => serde_json::Value::from(p.clone()),
                // Unknown, or a negative dim_value: dynamic and unnamed.
                _ => serde_json::Value::Null,
            })
            .collect()
    });
    ValueType {
        name,
        kind,
        elem_type,
        elem_type_name: elem_type.and_then(proto::data_type::name),
        shape,
    }
}

/// A constructed session: what an engine (`ort_engine`, tract, a child process) runs.
pub trait Session {
    /// Run once on `inputs`; the outputs in the model's order, or why not.
    fn run(&mut self, inputs: &[Tensor]) -> Result<Vec<Tensor>, OnnxError>;
}
