//! What the ONNX layer is pinned to, in a leaf every module can import (its error type
//! included, whose messages name these): the ONNX Runtime version the CPU oracle requires, the
//! one execution provider a session may use, and the committed schema table's path.

/// The `onnxruntime` wheel `.ci/setup` installs; `ort` 2.0.0-rc.15 speaks its 1.31 API.
pub const ORT_VERSION: &str = "1.31.1";
/// The only execution provider a session may use.
pub const CPU_PROVIDER: &str = "CPUExecutionProvider";
/// Where the generated schema table lives in the repository (messages name it).
pub const SCHEMAS_PATH: &str = "onnx/schemas.json";
