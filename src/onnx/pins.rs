//! What the ONNX layer is pinned to, in a leaf every module can import (its error type
//! included, whose messages name these): the ONNX Runtime version the CPU oracle requires, the
//! one execution provider a session may use, the committed schema table's path, and the
//! vendor driver the NPU path is qualified with.

/// The `onnxruntime` wheel `.ci/setup` installs; `ort` 2.0.0-rc.15 speaks its 1.31 API.
pub const ORT_VERSION: &str = "1.31.1";
/// The only execution provider a session may use.
pub const CPU_PROVIDER: &str = "CPUExecutionProvider";
/// Where the generated schema table lives in the repository (messages name it).
pub const SCHEMAS_PATH: &str = "onnx/schemas.json";
/// The vendor driver pin as committed (`simulator/sdk.json`): the wheel and every library's
/// SHA-256. The hybrid policy's compiler profile and every qualification record name its
/// SHA-256.
pub const DRIVER_PIN: &str = include_str!("../../simulator/sdk.json");

/// SHA-256 of `DRIVER_PIN`.
pub fn driver_pin_sha256() -> crate::digest::Hash256 {
    crate::digest::Hash256::of(DRIVER_PIN.as_bytes())
}
