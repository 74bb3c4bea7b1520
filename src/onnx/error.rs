//! Why the ONNX layer could not do a piece of work: ONNX Runtime missing or not the pinned
//! version, an engine's own failure, a tensor an engine cannot carry, the engine child process,
//! the compiled-in schema table. A [`Refusal`] is a verdict with a stable code; an
//! [`OnnxError`] is the cause, and the phase it happens in (session construction, a run)
//! decides which refusal code it becomes ([`super::run::Contained::refusal`]).

use super::pins::{CPU_PROVIDER, ORT_VERSION as VERSION, SCHEMAS_PATH};
use super::refusal::Refusal;
use std::path::PathBuf;

/// The cure every "ONNX Runtime is missing or wrong" message ends with.
fn install_hint() -> String {
    format!(
        "install it with `python3 -m pip install onnxruntime=={VERSION}` (.ci/setup does), or set ORT_DYLIB_PATH to its libonnxruntime.so.{VERSION}"
    )
}

/// Why the ONNX layer could not do a piece of work. Foreign errors (ONNX Runtime's, tract's,
/// I/O) are kept as their message so the value can be cached and cloned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OnnxError {
    /// `python3` could not be started to find the `onnxruntime` package.
    #[error("ONNX Runtime not found (python3: {0}); {hint}", hint = install_hint())]
    PythonUnavailable(String),
    /// The Python package `onnxruntime` is not installed.
    #[error(
        "ONNX Runtime not found: the Python package `onnxruntime` is not installed; {hint}",
        hint = install_hint()
    )]
    PackageMissing,
    /// The package holds no library of the pinned version.
    #[error(
        "ONNX Runtime not found: {} does not exist (another onnxruntime version is installed?); {hint}",
        .0.display(),
        hint = install_hint()
    )]
    LibraryMissing(PathBuf),
    /// The shared library cannot be loaded.
    #[error("cannot load {}: {reason}; {hint}", path.display(), hint = install_hint())]
    LibraryUnloadable {
        /// The library file.
        path: PathBuf,
        /// The loader's message.
        reason: String,
    },
    /// The library has no `OrtGetApiBase` symbol.
    #[error("{} is not ONNX Runtime (no OrtGetApiBase)", .0.display())]
    NotOnnxRuntime(PathBuf),
    /// `OrtGetApiBase` returned a null pointer.
    #[error("{}: OrtGetApiBase returned null", .0.display())]
    NullApiBase(PathBuf),
    /// The library is another ONNX Runtime version than the pinned one.
    #[error(
        "{} is ONNX Runtime {found}; the pinned oracle is {VERSION}; {hint}",
        path.display(),
        hint = install_hint()
    )]
    WrongVersion {
        /// The library file.
        path: PathBuf,
        /// The version string it reports.
        found: String,
    },
    /// `ort` could not initialize from the library.
    #[error("{0}; {hint}", hint = install_hint())]
    RuntimeInit(String),
    /// The ONNX Runtime environment could not be built.
    #[error("ONNX Runtime environment: {0}")]
    Environment(String),
    /// A C API call returned an error status.
    #[error("{context}: {message}")]
    Status {
        /// What was being done.
        context: &'static str,
        /// ONNX Runtime's message.
        message: String,
    },
    /// ONNX Runtime refused to build or run a session (its message).
    #[error("{0}")]
    Runtime(String),
    /// The session assigned nodes to an execution provider other than the CPU's.
    #[error("the session assigned nodes to {0}; only {CPU_PROVIDER} is allowed")]
    ForeignProvider(String),
    /// ONNX Runtime reported an assigned subgraph without a provider name.
    #[error("a subgraph without a provider name")]
    UnnamedProvider,
    /// A tensor could not be converted to or from ONNX Runtime's values.
    #[error("{side} {name:?}: {reason}")]
    Conversion {
        /// `input` or `output`.
        side: &'static str,
        /// The tensor's name.
        name: String,
        /// ONNX Runtime's message.
        reason: String,
    },
    /// ONNX Runtime handed back a tensor without a data buffer.
    #[error("{side} {name:?}: no tensor buffer")]
    NoBuffer {
        /// `input` or `output`.
        side: &'static str,
        /// The tensor's name.
        name: String,
    },
    /// An output is a sequence, map or optional, not a tensor.
    #[error("output {name:?} is not a tensor ({found}); the boundary carries tensors only")]
    NotATensor {
        /// The output's name.
        name: String,
        /// ONNX Runtime's description of its type.
        found: String,
    },
    /// An output's element type has no NPY dtype here.
    #[error("output {name:?} has element type {element}, which the boundary does not carry")]
    UnsupportedElement {
        /// The output's name.
        name: String,
        /// ONNX Runtime's element type name.
        element: String,
    },
    /// An output has a negative (unknown) dimension.
    #[error("output {name:?} has dimension {dimension}")]
    NegativeDimension {
        /// The output's name.
        name: String,
        /// The dimension ONNX Runtime reports.
        dimension: i64,
    },
    /// An output's byte size overflows.
    #[error("output {0:?} is too large")]
    OutputTooLarge(String),
    /// ONNX Runtime did not return a declared output.
    #[error("ONNX Runtime returned no output {0:?}")]
    MissingOutput(String),
    /// tract failed (its message with causes).
    #[error("{0}")]
    Tract(String),
    /// tract has no bfloat16 tensors.
    #[error("tract has no bfloat16 tensors")]
    TractBfloat16,
    /// String tensors are not run on tract.
    #[error("string tensors are not run on tract here")]
    TractStrings,
    /// A bfloat16 or string tensor was given to tract.
    #[error("tract: bfloat16 and string tensors are not carried")]
    TractNotCarried,
    /// tract produced an output of a type the boundary does not carry.
    #[error("output {name:?} has unsupported type {datum}")]
    TractOutputType {
        /// The output's name.
        name: String,
        /// tract's datum type, as it debug-prints.
        datum: String,
    },
    /// No tensor was given for a graph input while building a tract session.
    #[error("no tensor for input {0:?}")]
    NoInputTensor(String),
    /// No tensor was given for a graph input while running a tract session.
    #[error("no tensor for {0:?}")]
    NoTensor(String),
    /// No NPU session can be built while the compiler is unqualified.
    #[error("no NPU session exists: the compiler is not qualified")]
    NpuUnqualified,
    /// The simulated NPU could not build or run the graph (the driver's own words).
    #[error("the simulated NPU: {0}")]
    Npu(String),
    /// The engine child's private temporary folder cannot be created.
    #[error("temporary folder: {0}")]
    ChildFolder(String),
    /// A file of the engine child's folder cannot be written or read (the I/O message).
    #[error("{0}")]
    ChildFile(String),
    /// The engine child process cannot be started.
    #[error("cannot start the engine process: {0}")]
    ChildStart(String),
    /// Waiting for the engine child process failed.
    #[error("waiting for the engine process: {0}")]
    ChildWait(String),
    /// The engine child's engine refused the model at construction (its last stderr line).
    #[error("{0}")]
    ChildRefused(String),
    /// The engine child's run failed (its last stderr line).
    #[error("{0}")]
    ChildFailed(String),
    /// The engine child exceeded the wall-clock limit and was killed.
    #[error("the engine process exceeded the wall-clock limit of {0} s and was killed")]
    ChildTimeout(u64),
    /// The engine child was ended by a signal.
    #[error(
        "the engine process was killed by signal {signal} ({name}): an abort, out-of-memory under the {address_gib} GiB address-space limit, or the {cpu_seconds} s CPU limit"
    )]
    ChildSignal {
        /// The signal number.
        signal: i32,
        /// Its name (`SIGABRT`, ...).
        name: &'static str,
        /// The address-space limit in GiB.
        address_gib: u64,
        /// The CPU-time limit in seconds.
        cpu_seconds: u64,
    },
    /// The engine child exited with a status the protocol does not define.
    #[error("the engine process exited with {status}: {message}")]
    ChildExit {
        /// The exit status, as the OS says it.
        status: String,
        /// The child's last stderr line.
        message: String,
    },
    /// The engine child's output archive is refused.
    #[error("{0}")]
    ChildOutput(Refusal),
    /// A child session's result was asked for twice.
    #[error("the child session already ran")]
    ChildAlreadyRan,
    /// The compiled-in operator schema table is not valid JSON of its format.
    #[error("{SCHEMAS_PATH}: {0}")]
    SchemaTable(String),
    /// The compiled-in operator schema table is not complete.
    #[error("{SCHEMAS_PATH}: not a complete schema table")]
    SchemaTableIncomplete,
    /// Under `CI=true`, the schema table cannot be regenerated (python3 or `onnx` missing).
    #[error("{SCHEMAS_PATH}: cannot regenerate under CI: {0}")]
    SchemaRegenerationUnavailable(String),
    /// The schema table differs from its regeneration (the generator's stdout and stderr).
    #[error("{stdout}{stderr}")]
    SchemaMismatch {
        /// The generator's stdout, trimmed.
        stdout: String,
        /// The generator's stderr, trimmed.
        stderr: String,
    },
}
