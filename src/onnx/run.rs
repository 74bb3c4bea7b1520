//! Runs: `cpu` (one CPU session), `hybrid` (NPU only for eligible partitions, else one CPU
//! session and zero NPU attempts) and `strict` (refuse before any session unless every
//! partition is NPU-resident). Sessions come from an injectable factory so tests can count NPU
//! attempts and CPU sessions; an NPU construction is tried at most once, never retried.
//!
//! The CPU oracle is ONNX Runtime (`ort_engine`, the spec's engine); `tract-onnx` (pure Rust,
//! pinned) stays as an independent second engine (`Engine::Tract`, and `crosscheck`). Models an
//! engine cannot run fail closed with the engine's own reason, and a panic inside an engine is
//! caught and becomes `CPU_ENGINE_FAILED`. The tensor boundary refuses missing or extra names,
//! wrong dtype, rank or known dimension, oversized tensors and NaN/Inf, on inputs and outputs.

use super::audit::{Audit, Limits, Refusal, RefusalCode, ValueType};
use super::error::OnnxError;
use super::npz::{Tensor, TensorFacts};
pub use super::types::Classification;
use crate::digest::Hash256;
use serde::Serialize;

/// Pinned with `=` in Cargo.toml; a test checks the two agree.
pub const TRACT_VERSION: &str = "0.23.9";

/// Which CPU engine a session runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// ONNX Runtime, the oracle (default).
    Ort,
    /// tract, the independent second opinion.
    Tract,
}

impl Engine {
    /// The name evidence records.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Ort => super::ort_engine::NAME,
            Engine::Tract => "tract-onnx",
        }
    }

    /// The pinned version evidence records.
    pub fn version(self) -> &'static str {
        match self {
            Engine::Ort => super::ort_engine::VERSION,
            Engine::Tract => TRACT_VERSION,
        }
    }
}

/// Run `f`, turning a panic inside it (an engine's) into an error carrying the panic message.
pub fn contained<T>(f: impl FnOnce() -> Result<T, OnnxError>) -> Result<T, Contained> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(x)) => Ok(x),
        Ok(Err(e)) => Err(Contained::Error(e)),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(Contained::Panic(msg))
        }
    }
}

/// How a contained engine call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contained {
    /// The engine returned an error.
    Error(OnnxError),
    /// The engine panicked; the message is kept.
    Panic(String),
}

impl Contained {
    /// The refusal: a panic is always `CPU_ENGINE_FAILED`; an error keeps `code`.
    pub fn refusal(self, code: RefusalCode) -> Refusal {
        match self {
            Contained::Error(e) => Refusal::new(code, e.to_string()),
            Contained::Panic(m) => Refusal::new(
                RefusalCode::CpuEngineFailed,
                format!("the engine panicked: {m}"),
            ),
        }
    }

    /// The engine's own words: the error's message, or the panic message as it was.
    fn reason(self) -> String {
        match self {
            Contained::Error(e) => e.to_string(),
            Contained::Panic(m) => m,
        }
    }
}

/// How a run may use the NPU (`--mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One CPU session, never the NPU.
    Cpu,
    /// The NPU for eligible partitions; otherwise one CPU session and zero NPU attempts.
    Hybrid,
    /// Every partition on the NPU, or a refusal before any session.
    Strict,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Cpu => "cpu",
            Mode::Hybrid => "hybrid",
            Mode::Strict => "strict",
        })
    }
}

pub use super::types::Session;

/// Where sessions come from.
pub trait Factory {
    /// Compile and load the NPU session for the whole model, its input shapes those of
    /// `inputs` (which fix any symbolic dimension).
    fn npu(&mut self, model: &[u8], inputs: &[Tensor]) -> Result<Box<dyn Session>, OnnxError>;
    /// One CPU session for the whole model.
    fn cpu(&mut self, model: &[u8], inputs: &[Tensor]) -> Result<Box<dyn Session>, OnnxError>;
    /// The CPU engine evidence names.
    fn engine(&self) -> Engine {
        Engine::Ort
    }
    /// The execution providers the CPU session used, as the engine observed them.
    fn providers(&self) -> Vec<String> {
        vec![]
    }
}

/// What the mode decided and what it cost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Execution {
    /// What was decided (a refusal class until a session exists).
    pub classification: Classification,
    /// NPU session constructions tried (at most one, never retried).
    pub npu_attempts: u32,
    /// CPU sessions built.
    pub cpu_sessions: u32,
}

/// Decide and construct the session for a mode. `eligible` is the number of partitions an
/// approved signature makes NPU-eligible (zero while the registry is empty).
pub fn construct(
    mode: Mode,
    eligible: usize,
    model: &[u8],
    inputs: &[Tensor],
    factory: &mut dyn Factory,
) -> Result<(Execution, Box<dyn Session>), (Execution, Refusal)> {
    // Every refusal carries a classification, never an empty one: refused until a session exists.
    let refused = match mode {
        Mode::Cpu => Classification::CpuRefused,
        Mode::Hybrid => Classification::HybridRefused,
        Mode::Strict => Classification::StrictRefusedBeforeSession,
    };
    let mut ex = Execution {
        classification: refused,
        npu_attempts: 0,
        cpu_sessions: 0,
    };
    let cpu = |ex: &mut Execution, factory: &mut dyn Factory, class| match contained(|| {
        factory.cpu(model, inputs)
    }) {
        Ok(s) => {
            ex.cpu_sessions += 1;
            ex.classification = class;
            Ok(s)
        }
        Err(c) => Err(c.refusal(RefusalCode::CpuEngineUnsupported)),
    };
    let result = match (mode, eligible) {
        (Mode::Cpu, _) => cpu(&mut ex, factory, Classification::CpuExplicit),
        (Mode::Hybrid, 0) => cpu(&mut ex, factory, Classification::CpuPreflightFallback),
        (Mode::Strict, 0) => Err(Refusal::new(
            RefusalCode::PartitionNotNpuResident,
            "strict mode needs every partition NPU-resident; none is (no approved signature)",
        )),
        (Mode::Hybrid | Mode::Strict, _) => {
            ex.npu_attempts += 1;
            match contained(|| factory.npu(model, inputs)) {
                Ok(s) => {
                    ex.classification = Classification::Npu;
                    Ok(s)
                }
                Err(c) if mode == Mode::Hybrid => {
                    let e = c.reason();
                    cpu(
                        &mut ex,
                        factory,
                        Classification::CpuSessionConstructionFallback,
                    )
                    .map_err(|r| {
                        Refusal::new(
                            r.code,
                            format!("{} (after NPU construction failed: {e})", r.message),
                        )
                    })
                }
                Err(c) => Err(Refusal::new(
                    RefusalCode::PartitionCompileFailure,
                    c.reason(),
                )),
            }
        }
    };
    match result {
        Ok(s) => Ok((ex, s)),
        Err(r) => {
            ex.classification = refused;
            Err((ex, r))
        }
    }
}

/// Inputs must match the declared graph inputs exactly (initializers listed as inputs are
/// optional overrides and are not accepted here).
pub fn check_tensors(
    side: &str,
    declared: &[ValueType],
    given: &[Tensor],
    limits: &Limits,
) -> Result<(), Refusal> {
    let refuse = |m: String| {
        Err(Refusal::new(
            RefusalCode::TensorBoundary,
            format!("{side}: {m}"),
        ))
    };
    for d in declared {
        if !given.iter().any(|t| t.name == d.name) {
            return refuse(format!("missing tensor {:?}", d.name));
        }
    }
    for t in given {
        let Some(d) = declared.iter().find(|d| d.name == t.name) else {
            return refuse(format!("unexpected tensor {:?}", t.name));
        };
        if d.elem_type != Some(t.dtype.onnx()) {
            return refuse(format!(
                "{:?} is {:?}, the model declares {:?}",
                t.name, t.dtype, d.elem_type_name
            ));
        }
        if let Some(shape) = &d.shape {
            if shape.len() != t.shape.len() {
                return refuse(format!(
                    "{:?} has rank {}, the model declares {}",
                    t.name,
                    t.shape.len(),
                    shape.len()
                ));
            }
            for (i, (want, got)) in shape.iter().zip(&t.shape).enumerate() {
                if want.as_i64().is_some_and(|w| w as u64 != *got) {
                    return refuse(format!(
                        "{:?} dimension {i} is {got}, the model declares {want}",
                        t.name
                    ));
                }
            }
        }
        if t.data.len() as u64 > limits.tensor_bytes {
            return refuse(format!(
                "{:?} holds more than {} bytes",
                t.name, limits.tensor_bytes
            ));
        }
        if t.data.len() as u64 != t.elements() * t.dtype.size() as u64 {
            return refuse(format!("{:?} data does not match its shape", t.name));
        }
        if !t.finite() {
            return refuse(format!("{:?} holds NaN or infinity", t.name));
        }
    }
    Ok(())
}

/// Evidence of one run: no tensor values, only their facts and hashes.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// The mode asked for.
    pub mode: Mode,
    /// What the mode decided.
    pub classification: Classification,
    /// NPU session constructions tried.
    pub npu_attempts: u32,
    /// CPU sessions built.
    pub cpu_sessions: u32,
    /// The CPU engine's name ([`Engine::name`]).
    pub engine: &'static str,
    /// Its pinned version.
    pub engine_version: &'static str,
    /// The execution providers the session used (ONNX Runtime: checked to be CPU only).
    pub providers: Vec<String>,
    /// SHA-256 of the model file.
    pub model_sha256: Hash256,
    /// The model's graph signature (from the audit).
    pub signature: Hash256,
    /// Facts of the input tensors, in the archive's order.
    pub inputs: Vec<TensorFacts>,
    /// Facts of the output tensors, in the model's order.
    pub outputs: Vec<TensorFacts>,
    /// SHA-256 of the output archive written (deterministic `.npz`).
    pub output_npz_sha256: Hash256,
}

/// Audit-checked run: boundary on inputs, session by mode, run, boundary on outputs.
pub fn run(
    audit: &Audit,
    model: &[u8],
    mode: Mode,
    inputs: &[Tensor],
    limits: &Limits,
    factory: &mut dyn Factory,
) -> Result<(RunReport, Vec<u8>), (Execution, Refusal)> {
    let none = Execution {
        classification: Classification::RefusedAtBoundary,
        npu_attempts: 0,
        cpu_sessions: 0,
    };
    check_tensors("input", &audit.inputs, inputs, limits).map_err(|r| (none.clone(), r))?;
    // The NPU session runs the whole graph: eligible only when every partition is placed there.
    let npu = super::types::Device::Npu;
    let eligible = usize::from(
        !audit.partitions.is_empty() && audit.partitions.iter().all(|p| p.placement == npu),
    );
    let (mut ex, mut session) = construct(mode, eligible, model, inputs, factory)?;
    let outputs = match contained(|| session.run(inputs)) {
        Ok(o) => o,
        // An NPU run that fails falls back once to the CPU in hybrid mode, never retried.
        Err(c) if ex.classification == Classification::Npu && mode == Mode::Hybrid => {
            let e = c.reason();
            let fallback = contained(|| {
                let mut s = factory.cpu(model, inputs)?;
                ex.cpu_sessions += 1;
                s.run(inputs)
            });
            ex.classification = Classification::CpuRunFallback;
            match fallback {
                Ok(o) => o,
                Err(c) => {
                    ex.classification = Classification::HybridRefused;
                    let r = c.refusal(RefusalCode::CpuEngineFailed);
                    let message = format!("{} (after the NPU run failed: {e})", r.message);
                    return Err((ex, Refusal::new(r.code, message)));
                }
            }
        }
        Err(c) if ex.classification == Classification::Npu => {
            return Err((
                ex.clone(),
                Refusal::new(RefusalCode::PartitionRunFailure, c.reason()),
            ));
        }
        Err(c) => return Err((ex.clone(), c.refusal(RefusalCode::CpuEngineFailed))),
    };
    check_tensors("output", &audit.outputs, &outputs, limits).map_err(|r| (ex.clone(), r))?;
    let archive = super::npz::write(&outputs);
    Ok((
        RunReport {
            mode,
            classification: ex.classification,
            npu_attempts: ex.npu_attempts,
            cpu_sessions: ex.cpu_sessions,
            engine: factory.engine().name(),
            engine_version: factory.engine().version(),
            providers: factory.providers(),
            model_sha256: audit.source.sha256,
            signature: audit.signature,
            inputs: inputs.iter().map(Tensor::facts).collect(),
            outputs: outputs.iter().map(Tensor::facts).collect(),
            output_npz_sha256: Hash256::of(&archive),
        },
        archive,
    ))
}

/// The real factory: ONNX Runtime (or tract) for the CPU, and no NPU.
pub struct Engines {
    /// Which CPU engine sessions are built on.
    pub engine: Engine,
    /// What the last ONNX Runtime session reported.
    observed: Vec<String>,
    /// Output names in graph order, to label tract's positional outputs.
    pub outputs: Vec<String>,
    /// Input names in graph order, to order the tensors tract receives.
    pub inputs: Vec<String>,
}

impl Engines {
    /// The default engine (ONNX Runtime) wired to an audited model's input and output names.
    pub fn for_audit(a: &Audit) -> Self {
        Self::with_engine(a, Engine::Ort)
    }

    /// A chosen engine wired to an audited model's input and output names.
    pub fn with_engine(a: &Audit, engine: Engine) -> Self {
        Engines {
            engine,
            observed: vec![],
            inputs: a.inputs.iter().map(|v| v.name.clone()).collect(),
            outputs: a.outputs.iter().map(|v| v.name.clone()).collect(),
        }
    }
}

impl Factory for Engines {
    fn npu(&mut self, _model: &[u8], _inputs: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        Err(OnnxError::NpuUnqualified)
    }

    fn cpu(&mut self, model: &[u8], inputs: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        match self.engine {
            Engine::Ort => super::ort_engine::session(model, &self.outputs).map(|s| {
                self.observed = s.providers().to_vec();
                Box::new(s) as Box<dyn Session>
            }),
            Engine::Tract => tract::session(model, &self.inputs, &self.outputs, inputs)
                .map(|s| Box::new(s) as Box<dyn Session>),
        }
    }

    fn engine(&self) -> Engine {
        self.engine
    }

    fn providers(&self) -> Vec<String> {
        self.observed.clone()
    }
}

mod tract {
    use super::super::error::OnnxError;
    use super::super::npz::{Dtype, Tensor};
    use tract_onnx::prelude::*;

    pub struct TractSession {
        plan: std::sync::Arc<TypedRunnableModel>,
        inputs: Vec<String>,
        outputs: Vec<String>,
    }

    /// tract's error with its causes, as `{:#}` prints it.
    fn tract_error(e: TractError) -> OnnxError {
        OnnxError::Tract(format!("{e:#}"))
    }

    fn datum(d: Dtype) -> Result<DatumType, OnnxError> {
        Ok(match d {
            Dtype::F32 => f32::datum_type(),
            Dtype::F64 => f64::datum_type(),
            Dtype::F16 => f16::datum_type(),
            Dtype::I8 => i8::datum_type(),
            Dtype::I16 => i16::datum_type(),
            Dtype::I32 => i32::datum_type(),
            Dtype::I64 => i64::datum_type(),
            Dtype::U8 => u8::datum_type(),
            Dtype::U16 => u16::datum_type(),
            Dtype::U32 => u32::datum_type(),
            Dtype::U64 => u64::datum_type(),
            Dtype::Bool => bool::datum_type(),
            Dtype::BF16 => return Err(OnnxError::TractBfloat16),
            Dtype::Str(_) => return Err(OnnxError::TractStrings),
        })
    }

    /// Build an optimized plan with the concrete input shapes fixed.
    pub fn session(
        model: &[u8],
        inputs: &[String],
        outputs: &[String],
        given: &[Tensor],
    ) -> Result<TractSession, OnnxError> {
        let mut m = tract_onnx::onnx()
            .model_for_read(&mut &model[..])
            .map_err(tract_error)?;
        for (i, name) in inputs.iter().enumerate() {
            let t = given
                .iter()
                .find(|t| &t.name == name)
                .ok_or_else(|| OnnxError::NoInputTensor(name.clone()))?;
            let shape: Vec<usize> = t.shape.iter().map(|&d| d as usize).collect();
            m = m
                .with_input_fact(i, InferenceFact::dt_shape(datum(t.dtype)?, shape))
                .map_err(tract_error)?;
        }
        let plan = m
            .into_optimized()
            .map_err(tract_error)?
            .into_runnable()
            .map_err(tract_error)?;
        Ok(TractSession {
            plan,
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
        })
    }

    impl super::Session for TractSession {
        fn run(&mut self, given: &[Tensor]) -> Result<Vec<Tensor>, OnnxError> {
            let mut values = TVec::new();
            for name in &self.inputs {
                let t = given
                    .iter()
                    .find(|t| &t.name == name)
                    .ok_or_else(|| OnnxError::NoTensor(name.clone()))?;
                let shape: Vec<usize> = t.shape.iter().map(|&d| d as usize).collect();
                let tensor = to_tract(t.dtype, &shape, &t.data)?;
                values.push(tensor.into_tvalue());
            }
            let out = self.plan.run(values).map_err(tract_error)?;
            out.into_iter()
                .zip(&self.outputs)
                .map(|(v, name)| {
                    let t = v.into_tensor();
                    let (dtype, data) = bytes_of(&t).ok_or_else(|| OnnxError::TractOutputType {
                        name: name.clone(),
                        datum: format!("{:?}", t.datum_type()),
                    })?;
                    Ok(Tensor {
                        name: name.clone(),
                        dtype,
                        shape: t.shape().iter().map(|&d| d as u64).collect(),
                        data,
                    })
                })
                .collect()
        }
    }

    fn to_tract(
        d: Dtype,
        shape: &[usize],
        data: &[u8],
    ) -> Result<tract_onnx::prelude::Tensor, OnnxError> {
        fn typed<T: Datum + Copy, const N: usize>(
            shape: &[usize],
            data: &[u8],
            f: fn([u8; N]) -> T,
        ) -> TractResult<tract_onnx::prelude::Tensor> {
            let v: Vec<T> = data
                .chunks_exact(N)
                .map(|c| f(std::array::from_fn(|k| c[k])))
                .collect();
            tract_onnx::prelude::Tensor::from_shape(shape, &v)
        }
        match d {
            Dtype::F32 => typed(shape, data, f32::from_le_bytes),
            Dtype::F64 => typed(shape, data, f64::from_le_bytes),
            Dtype::F16 => typed(shape, data, f16::from_le_bytes),
            Dtype::I8 => typed(shape, data, i8::from_le_bytes),
            Dtype::I16 => typed(shape, data, i16::from_le_bytes),
            Dtype::I32 => typed(shape, data, i32::from_le_bytes),
            Dtype::I64 => typed(shape, data, i64::from_le_bytes),
            Dtype::U8 => typed(shape, data, u8::from_le_bytes),
            Dtype::U16 => typed(shape, data, u16::from_le_bytes),
            Dtype::U32 => typed(shape, data, u32::from_le_bytes),
            Dtype::U64 => typed(shape, data, u64::from_le_bytes),
            Dtype::Bool => typed(shape, data, |b: [u8; 1]| b[0] != 0),
            Dtype::BF16 | Dtype::Str(_) => {
                return Err(OnnxError::TractNotCarried);
            }
        }
        .map_err(tract_error)
    }

    fn bytes_of(t: &tract_onnx::prelude::Tensor) -> Option<(Dtype, Vec<u8>)> {
        fn collect<T: Datum + Copy, const N: usize>(
            t: &tract_onnx::prelude::Tensor,
            f: fn(T) -> [u8; N],
        ) -> Option<Vec<u8>> {
            t.to_plain_array_view::<T>()
                .ok()
                .map(|a| a.iter().flat_map(|&v| f(v)).collect())
        }
        let dt = t.datum_type();
        Some(if dt == f32::datum_type() {
            (Dtype::F32, collect(t, f32::to_le_bytes)?)
        } else if dt == f64::datum_type() {
            (Dtype::F64, collect(t, f64::to_le_bytes)?)
        } else if dt == i64::datum_type() {
            (Dtype::I64, collect(t, i64::to_le_bytes)?)
        } else if dt == i32::datum_type() {
            (Dtype::I32, collect(t, i32::to_le_bytes)?)
        } else if dt == u8::datum_type() {
            (Dtype::U8, collect(t, u8::to_le_bytes)?)
        } else if dt == i8::datum_type() {
            (Dtype::I8, collect(t, i8::to_le_bytes)?)
        } else if dt == f16::datum_type() {
            (Dtype::F16, collect(t, f16::to_le_bytes)?)
        } else if dt == i16::datum_type() {
            (Dtype::I16, collect(t, i16::to_le_bytes)?)
        } else if dt == u16::datum_type() {
            (Dtype::U16, collect(t, u16::to_le_bytes)?)
        } else if dt == u32::datum_type() {
            (Dtype::U32, collect(t, u32::to_le_bytes)?)
        } else if dt == u64::datum_type() {
            (Dtype::U64, collect(t, u64::to_le_bytes)?)
        } else if dt == bool::datum_type() {
            (Dtype::Bool, collect(t, |b: bool| [u8::from(b)])?)
        } else {
            return None;
        })
    }
}
