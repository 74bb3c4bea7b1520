//! `nbg onnx crosscheck`: the same admitted model and input on ONNX Runtime (the oracle) and on
//! tract (the independent second engine), compared per output under one stated tolerance.
//! Each engine's refusal is reported as a value; a panic inside either is contained.

use super::audit::{Audit, Limits, Refusal, RefusalCode};
use super::npz::{Tensor, TensorFacts};
use super::run::{self, Engine, Engines, Mode};
use serde::Serialize;

/// Agreement: `|ort - tract| <= atol + rtol * |ort|` for every element (integers and bools
/// must be equal: their difference is at least 1).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Tolerance {
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
}

/// float32 kernels differ in summation order and in transcendental approximations; this bound
/// accepts that and nothing structural (a wrong sign, axis or mode is far outside it).
pub const TOLERANCE: Tolerance = Tolerance {
    atol: 1e-5,
    rtol: 1e-4,
};

/// The crosscheck's verdict on the two engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Both engines ran and every output agrees.
    Agree,
    /// Both ran and some output differs beyond the tolerance (or in dtype or shape).
    Disagree,
    /// ONNX Runtime ran; tract refused (or panicked).
    TractRefused,
    /// ONNX Runtime refused (or panicked).
    OrtRefused,
}

/// An engine's error, as a typed code and message.
#[derive(Clone, Debug, Serialize)]
pub struct ErrorValue {
    /// The refusal code.
    pub code: RefusalCode,
    /// What went wrong.
    pub message: String,
}

/// One engine's run.
#[derive(Clone, Debug, Serialize)]
pub struct EngineRun {
    /// Engine name (`onnxruntime`, `tract`).
    pub engine: &'static str,
    /// Engine version.
    pub engine_version: &'static str,
    /// The error, when the run failed.
    pub error: Option<ErrorValue>,
    /// The outputs' facts.
    pub outputs: Vec<TensorFacts>,
}

/// One output compared between the engines.
#[derive(Clone, Debug, Serialize)]
pub struct OutputDiff {
    /// Output name.
    pub name: String,
    /// Whether both engines produced the same type and shape.
    pub same_dtype_and_shape: bool,
    /// Largest absolute difference.
    pub max_abs: f64,
    /// Largest relative difference.
    pub max_rel: f64,
    /// Whether the difference is within tolerance.
    pub agree: bool,
}

/// The crosscheck of one model on both engines.
#[derive(Clone, Debug, Serialize)]
pub struct Crosscheck {
    /// SHA-256 of the model.
    pub model_sha256: crate::digest::Hash256,
    /// The tolerance applied.
    pub tolerance: Tolerance,
    /// The verdict.
    pub verdict: Verdict,
    /// The ONNX Runtime run.
    pub ort: EngineRun,
    /// The tract run.
    pub tract: EngineRun,
    /// Per-output comparison.
    pub outputs: Vec<OutputDiff>,
}

/// Where the two engines run.
#[derive(Clone, Copy, Debug)]
pub enum Isolation<'a> {
    /// In this process, panics caught (tests and library callers).
    InProcess,
    /// Each in a child process of this executable under the resource limits of
    /// [`super::isolate`], so an abort or out-of-memory in either engine is a value too.
    Child(&'a std::path::Path),
}

fn one(
    a: &Audit,
    model: &[u8],
    inputs: &[Tensor],
    limits: &Limits,
    engine: Engine,
    isolation: Isolation,
) -> (EngineRun, Option<Vec<Tensor>>) {
    let mut engines: Box<dyn run::Factory> = match isolation {
        Isolation::InProcess => Box::new(Engines::with_engine(a, engine)),
        Isolation::Child(exe) => Box::new(super::isolate::ChildEngines::new(
            exe.to_path_buf(),
            engine,
            super::isolate::ChildLimits::default(),
        )),
    };
    let result = run::run(a, model, Mode::Cpu, inputs, limits, engines.as_mut())
        .map(|(_, npz)| super::npz::read(&npz, limits.tensor_bytes));
    let (error, tensors) = match result {
        Ok(Ok(t)) => (None, Some(t)),
        Ok(Err(r)) | Err((_, r)) => (Some(r), None),
    };
    (
        EngineRun {
            engine: engine.name(),
            engine_version: engine.version(),
            error: error.map(|r: Refusal| ErrorValue {
                code: r.code,
                message: r.message,
            }),
            outputs: tensors.iter().flatten().map(Tensor::facts).collect(),
        },
        tensors,
    )
}

/// Compare two tensors element by element.
pub fn compare(ort: &Tensor, tract: &Tensor, tol: Tolerance) -> OutputDiff {
    let same = ort.dtype == tract.dtype && ort.shape == tract.shape;
    let (mut max_abs, mut max_rel, mut agree) = (0f64, 0f64, same);
    if let (true, Some(x), Some(y)) = (same, ort.to_f64(), tract.to_f64()) {
        for (a, b) in x.iter().zip(&y) {
            let d = (a - b).abs();
            max_abs = max_abs.max(d);
            if a.abs() > 0.0 {
                max_rel = max_rel.max(d / a.abs());
            } else if d > 0.0 {
                max_rel = f64::INFINITY;
            }
            agree &= d <= tol.atol + tol.rtol * a.abs();
        }
    }
    OutputDiff {
        name: ort.name.clone(),
        same_dtype_and_shape: same,
        max_abs,
        // JSON has no infinity: a relative difference against an exact zero is reported as
        // f64::MAX and the absolute difference decides.
        max_rel: if max_rel.is_finite() {
            max_rel
        } else {
            f64::MAX
        },
        agree,
    }
}

/// Run both engines on an admitted model and compare.
pub fn crosscheck(
    a: &Audit,
    model: &[u8],
    inputs: &[Tensor],
    limits: &Limits,
    isolation: Isolation,
) -> Crosscheck {
    let (ort, ort_out) = one(a, model, inputs, limits, Engine::Ort, isolation);
    let (tract, tract_out) = one(a, model, inputs, limits, Engine::Tract, isolation);
    let mut outputs = Vec::new();
    let verdict = match (&ort_out, &tract_out) {
        (None, _) => Verdict::OrtRefused,
        (Some(_), None) => Verdict::TractRefused,
        (Some(x), Some(y)) => {
            for t in x {
                match y.iter().find(|u| u.name == t.name) {
                    Some(u) => outputs.push(compare(t, u, TOLERANCE)),
                    None => outputs.push(OutputDiff {
                        name: t.name.clone(),
                        same_dtype_and_shape: false,
                        max_abs: 0.0,
                        max_rel: 0.0,
                        agree: false,
                    }),
                }
            }
            if outputs.iter().all(|d| d.agree) {
                Verdict::Agree
            } else {
                Verdict::Disagree
            }
        }
    };
    Crosscheck {
        model_sha256: a.source.sha256,
        tolerance: TOLERANCE,
        verdict,
        ort,
        tract,
        outputs,
    }
}
