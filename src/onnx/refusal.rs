//! A refusal: the one error value of the ONNX layer, a stable upper-case code and a message.
//! A leaf: every other ONNX module may refuse, none of them is needed to say so.

use serde::{Deserialize, Serialize};

/// Defines [`RefusalCode`] once: each variant with its stable upper-case name, which serde,
/// `as_str` and `Display` all use, and [`RefusalCode::ALL`].
macro_rules! refusal_codes {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal,)*) => {
        /// Why the ONNX layer refuses a model, an input or a run, or why a node stays off the
        /// NPU (placement reasons). The names are a documented contract (README).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum RefusalCode {
            $($(#[doc = $doc])* #[serde(rename = $name)] $variant,)*
        }

        impl RefusalCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [RefusalCode] = &[$(RefusalCode::$variant,)*];

            /// The stable upper-case name (the same string serde writes).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(RefusalCode::$variant => $name,)*
                }
            }
        }
    };
}

refusal_codes! {
    /// The model file cannot be read (an I/O problem, not a verdict on its bytes).
    ModelUnreadable = "ONNX_MODEL_UNREADABLE",
    /// The model file is empty.
    ModelEmpty = "ONNX_MODEL_EMPTY",
    /// The model file exceeds the size limit.
    ModelTooLarge = "ONNX_MODEL_TOO_LARGE",
    /// The bytes are not an ONNX `ModelProto`.
    ProtobufInvalid = "ONNX_PROTOBUF_INVALID",
    /// Re-encoding differs: the file holds fields this schema does not know.
    UnknownFields = "ONNX_UNKNOWN_FIELDS",
    /// The model has no graph.
    GraphMissing = "ONNX_GRAPH_MISSING",
    /// The model carries model-local functions.
    FunctionsUnsupported = "ONNX_FUNCTIONS_UNSUPPORTED",
    /// The model carries training information.
    TrainingInfo = "ONNX_TRAINING_INFO",
    /// A tensor refers to external data.
    ExternalData = "ONNX_EXTERNAL_DATA",
    /// A count or size limit of the audit is exceeded.
    LimitExceeded = "ONNX_LIMIT_EXCEEDED",
    /// A rank or dimension is outside the audit's shape limits.
    ShapeLimit = "ONNX_SHAPE_LIMIT",
    /// A name appears twice in a graph.
    DuplicateName = "ONNX_DUPLICATE_NAME",
    /// The graph is not a valid ONNX graph.
    GraphInvalid = "ONNX_GRAPH_INVALID",
    /// A node does not match its operator schema.
    SchemaMismatch = "ONNX_SCHEMA_MISMATCH",
    /// Element types disagree with the schema or with each other.
    TypeMismatch = "ONNX_TYPE_MISMATCH",
    /// Shapes disagree.
    ShapeMismatch = "ONNX_SHAPE_MISMATCH",
    /// The operator set imports are invalid.
    OpsetInvalid = "ONNX_OPSET_INVALID",
    /// The compiled-in schema table cannot be read.
    SchemaTableInvalid = "ONNX_SCHEMA_TABLE_INVALID",
    /// `ir_version` is missing or not positive.
    IrVersionInvalid = "ONNX_IR_VERSION_INVALID",
    /// A tensor's payload does not match its type and shape.
    TensorDataInvalid = "ONNX_TENSOR_DATA_INVALID",
    /// The `.npz` archive is invalid.
    TensorArchiveInvalid = "TENSOR_ARCHIVE_INVALID",
    /// A tensor of the archive exceeds the tensor limit.
    TensorTooLarge = "TENSOR_TOO_LARGE",
    /// The tensors given or produced do not match the model's declarations.
    TensorBoundary = "TENSOR_BOUNDARY",
    /// The policy file is invalid.
    PolicyInvalid = "POLICY_INVALID",
    /// An approval's qualification record does not bind it: unreadable, not qualified, or of
    /// another signature, driver pin or target.
    QualificationInvalid = "QUALIFICATION_INVALID",
    /// The CPU engine failed (an error while running, a panic, an abort, OOM or a hang).
    CpuEngineFailed = "CPU_ENGINE_FAILED",
    /// The CPU engine cannot build a session for the model.
    CpuEngineUnsupported = "CPU_ENGINE_UNSUPPORTED",
    /// ONNX Runtime is not installed or not the pinned version (a set-up problem).
    CpuEngineMissing = "CPU_ENGINE_MISSING",
    /// Strict mode: not every partition is NPU-resident.
    PartitionNotNpuResident = "PARTITION_NOT_NPU_RESIDENT",
    /// Strict mode: an NPU partition failed to compile.
    PartitionCompileFailure = "PARTITION_COMPILE_FAILURE",
    /// Strict mode: an NPU partition compiled but failed to run.
    PartitionRunFailure = "PARTITION_RUN_FAILURE",
    /// Placement: the NPU compiler is not qualified.
    CompilerDependencyMismatch = "COMPILER_DEPENDENCY_MISMATCH",
    /// Placement: no approved signature covers the partition.
    PartitionNotPreflighted = "PARTITION_NOT_PREFLIGHTED",
    /// Placement: the node's domain is not the default ONNX domain.
    DomainUnsupported = "ONNX_DOMAIN_UNSUPPORTED",
    /// Placement: the operator is not an NPU candidate.
    OperatorUnsupported = "ONNX_OPERATOR_UNSUPPORTED",
    /// Placement: the node quantizes or dequantizes.
    QuantizationUnsupported = "ONNX_QUANTIZATION_UNSUPPORTED",
    /// Placement: a tensor's element type is not an NPU candidate.
    TypeUnsupported = "ONNX_TYPE_UNSUPPORTED",
    /// Placement: a shape is not static.
    ShapeUnsupported = "ONNX_SHAPE_UNSUPPORTED",
}

impl RefusalCode {
    /// The CLI's exit status for a refusal with this code: 2 for a set-up or I/O problem
    /// (the model cannot be read, ONNX Runtime is missing), 1 for a verdict on the bytes.
    pub fn exit_status(self) -> crate::exit::Exit {
        match self {
            RefusalCode::ModelUnreadable | RefusalCode::CpuEngineMissing => {
                crate::exit::Exit::Usage
            }
            _ => crate::exit::Exit::Failure,
        }
    }
}

impl std::fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A refusal: a stable upper-case code and a message.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    /// Why.
    pub code: RefusalCode,
    /// What, in words.
    pub message: String,
}

impl Refusal {
    /// A refusal with `code` and `message`.
    pub fn new(code: RefusalCode, message: impl Into<String>) -> Self {
        Refusal {
            code,
            message: message.into(),
        }
    }

    /// `{"error": {"code": ..., "message": ...}}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "error": self })
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}
