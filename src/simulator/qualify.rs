//! Qualification of one graph signature on one target: the ONNX audit, the compile through the
//! project's lowering, a run of the compiled NBG on the simulator and a run of the model on the
//! CPU oracle (ONNX Runtime) on the same inputs, every output compared within a tolerance stated
//! per stored type. The record names the signature, the driver pin (SHA-256 of
//! `simulator/sdk.json`), the target and the NBG's SHA-256: the hybrid policy approves a signature
//! only beside a passing record for the same three (`onnx::policy`).

use super::convert::Storage;
use super::run::{Prepared, RunVerdict};
use super::{Config, Sdk, VendorError};
use crate::digest::Hash256;
use crate::onnx::npz::{Dtype, Tensor};
use crate::onnx::run::Factory;
use serde::{Deserialize, Serialize};

/// Schema tag of a qualification record.
pub const SCHEMA: &str = "nbg-qualification/1";

pub use crate::onnx::pins::driver_pin_sha256 as driver_pin;

/// How close an output must be to the oracle's, by the type the NBG stores it in.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "kebab-case")]
pub enum Tolerance {
    /// Floats (float16 arithmetic on the NPU): |npu - cpu| <= fraction x the oracle output's
    /// range (max - min), and at least `floor`.
    RangeFraction {
        /// The fraction of the range.
        fraction: f64,
        /// The smallest bound.
        floor: f64,
    },
    /// Quantized integers: |npu - cpu| <= steps x the output's quantization step (the affine
    /// scale, or 2^-position).
    Steps {
        /// How many steps.
        steps: f64,
        /// The step.
        step: f64,
    },
}

impl Tolerance {
    /// The rule for an output stored as `s`: floats within 1 % of the oracle's range (float16
    /// carries 11 significant bits; one layer's rounding stays well under this), quantized
    /// outputs within 2 steps (one for the input's quantization carried through, one for the
    /// output's rounding; the NPU requantizes with integer multipliers, the oracle in float).
    pub fn for_storage(s: Storage) -> Tolerance {
        match s {
            Storage::Float32 | Storage::Float16 | Storage::Bfloat16 => Tolerance::RangeFraction {
                fraction: 0.01,
                floor: 1e-3,
            },
            Storage::Affine { scale, .. } => Tolerance::Steps {
                steps: 2.0,
                step: f64::from(scale),
            },
            Storage::DynamicFixedPoint { position, .. } => Tolerance::Steps {
                steps: 2.0,
                step: 2f64.powi(-position),
            },
            Storage::Integer { .. } => Tolerance::Steps {
                steps: 0.0,
                step: 1.0,
            },
        }
    }

    /// The largest absolute error allowed against a reference of `range`.
    pub fn bound(self, range: f64) -> f64 {
        match self {
            Tolerance::RangeFraction { fraction, floor } => (fraction * range).max(floor),
            Tolerance::Steps { steps, step } => steps * step,
        }
    }
}

/// One output of one input set, compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputCheck {
    /// The input set (index into `inputs`).
    pub set: usize,
    /// The model's output name.
    pub name: String,
    /// Its shape, outermost first.
    pub shape: Vec<u64>,
    /// How the NBG stores it.
    pub storage: Storage,
    /// The rule.
    pub tolerance: Tolerance,
    /// The oracle output's smallest and largest value.
    pub reference_range: [f64; 2],
    /// The largest absolute error allowed.
    pub bound: f64,
    /// max |npu - cpu|.
    pub max_abs_error: f64,
    /// max |npu - cpu| / max |cpu| (0 where the reference is all zero).
    pub max_rel_error: f64,
    /// Share of the simulator's stored elements at the limits of their integer type (0 for
    /// floats): an output pinned there compares nothing.
    pub saturated: f64,
    /// Whether `max_abs_error <= bound` and not every element is saturated.
    pub pass: bool,
}

/// The verdict of a qualification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every output of every input set within its tolerance.
    Qualified,
    /// An output outside its tolerance, or the simulator did not run the graph.
    NotQualified,
}

/// The driver a record was made with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverPin {
    /// SHA-256 of `simulator/sdk.json`.
    pub pin_sha256: String,
    /// The wheel it names.
    pub wheel: String,
}

/// The target a record was made on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The configuration name.
    pub name: String,
    /// Its PID.
    pub pid: String,
}

/// The oracle a record compared with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Oracle {
    /// Its name.
    pub engine: String,
    /// Its pinned version.
    pub version: String,
}

/// One input of a set, without its values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputFacts {
    /// The model's input name.
    pub name: String,
    /// Its NPY descriptor.
    pub dtype: String,
    /// Its dimensions, outermost first.
    pub shape: Vec<u64>,
    /// SHA-256 of its elements.
    pub sha256: String,
}

impl InputFacts {
    fn of(t: &Tensor) -> InputFacts {
        let f = t.facts();
        InputFacts {
            name: f.name,
            dtype: f.dtype,
            shape: f.shape,
            sha256: f.sha256.hex(),
        }
    }
}

/// A qualification record (`SCHEMA`): deterministic (no times), committed under
/// `policy/qualifications/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// `nbg-qualification/1`.
    pub schema: String,
    /// The model's graph signature.
    pub signature: String,
    /// SHA-256 of the model file.
    pub model_sha256: String,
    /// The driver.
    pub driver: DriverPin,
    /// The target.
    pub target: Target,
    /// SHA-256 of the compiled NBG.
    pub nbg_sha256: String,
    /// The oracle.
    pub oracle: Oracle,
    /// The input sets: each input's name, dtype, shape and SHA-256.
    pub inputs: Vec<Vec<InputFacts>>,
    /// Every output of every set, compared.
    pub outputs: Vec<OutputCheck>,
    /// What the simulator did, when it did not run the graph.
    pub refusal: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
}

/// A deterministic input for `shape`, uniform in [-1, 1) (the range of a normalized input;
/// quantized inputs take it through their own grid), from a splitmix64 sequence seeded by
/// `seed`.
pub fn generated_input(name: &str, shape: &[u64], seed: u64) -> Tensor {
    let n: u64 = shape.iter().product();
    let mut state = seed;
    let values: Vec<f32> = (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let u = (z >> 11) as f64 / (1u64 << 53) as f64;
            (2.0 * u - 1.0) as f32
        })
        .collect();
    Tensor::from_f32(name, shape, &values)
}

/// Qualify `model` (already audited: its `signature`) on `config`: compile it, then for each
/// input set (given, or one generated over each input's stored range) run the NBG on the
/// simulator and the model on `cpu`, and compare every output.
pub fn qualify(
    sdk: &Sdk,
    config: &Config,
    model: &[u8],
    signature: &Hash256,
    sets: &[Vec<Tensor>],
    shapes: &[(String, Vec<u64>)],
    cpu: &mut dyn Factory,
) -> Result<(Record, Vec<u8>), VendorError> {
    let generated;
    let sets = if sets.is_empty() {
        generated = vec![generated_set(model, shapes)?];
        &generated[..]
    } else {
        sets
    };
    // The input sets fix any symbolic dimension; they must agree on every input's shape.
    let fixed: Vec<(String, Vec<u64>)> = sets
        .first()
        .map(|s| {
            s.iter()
                .map(|t| (t.name.clone(), t.shape.clone()))
                .collect()
        })
        .unwrap_or_default();
    for (k, set) in sets.iter().enumerate() {
        for t in set {
            if fixed.iter().any(|(n, s)| *n == t.name && *s != t.shape) {
                return Err(VendorError::InputMismatch(format!(
                    "input set {k}: {:?} has shape {:?}, set 0 gives {:?}",
                    t.name,
                    t.shape,
                    fixed.iter().find(|(n, _)| *n == t.name).map(|(_, s)| s)
                )));
            }
        }
    }
    let compiled = super::compile_fixed(sdk, config, model, None, &fixed)?;
    let nbg = compiled.nbg;
    let g = crate::parse(&nbg).map_err(VendorError::Invalid)?;
    use crate::nbg::family::NbgFamily as _;
    let nbg_inputs: Vec<(String, Vec<u64>, Storage)> = g
        .inputs()
        .iter()
        .map(|r| {
            let storage = Storage::of(r).map_err(|e| VendorError::Unconvertible(e.to_string()))?;
            let shape = r.dimensions.iter().rev().map(|&d| u64::from(d)).collect();
            Ok((r.name.clone().unwrap_or_default(), shape, storage))
        })
        .collect::<Result<_, VendorError>>()?;
    let model_inputs = model_input_names(model)?;
    let mut record = Record {
        schema: SCHEMA.into(),
        signature: signature.hex(),
        model_sha256: Hash256::of(model).hex(),
        driver: DriverPin {
            pin_sha256: driver_pin().hex(),
            wheel: sdk.wheel.clone(),
        },
        target: Target {
            name: config.name.clone(),
            pid: format!("0x{:08x}", config.pid),
        },
        nbg_sha256: Hash256::of(&nbg).hex(),
        oracle: Oracle {
            engine: crate::onnx::ort_engine::NAME.into(),
            version: crate::onnx::ort_engine::VERSION.into(),
        },
        inputs: sets
            .iter()
            .map(|s| s.iter().map(InputFacts::of).collect())
            .collect(),
        outputs: vec![],
        refusal: None,
        verdict: Verdict::Qualified,
    };
    for (k, set) in sets.iter().enumerate() {
        // The NBG's inputs in the model's order, under the NBG's names.
        let mut renamed = Vec::with_capacity(set.len());
        for (name, (nbg_name, _, _)) in model_inputs.iter().zip(&nbg_inputs) {
            let t = set.iter().find(|t| &t.name == name).ok_or_else(|| {
                VendorError::InputMismatch(format!("input set {k}: no tensor {name:?}"))
            })?;
            renamed.push(Tensor {
                name: nbg_name.clone(),
                ..t.clone()
            });
        }
        if renamed.len() != nbg_inputs.len() {
            return Err(VendorError::InputMismatch(format!(
                "the model has {} inputs, the compiled graph {}",
                model_inputs.len(),
                nbg_inputs.len()
            )));
        }
        let prepared = Prepared::new(&nbg, &renamed)?;
        let ran = super::run::run(sdk, config, &prepared)?;
        if !matches!(ran.report.verdict, RunVerdict::Ran { .. }) {
            record.refusal = Some(format!("input set {k}: {:?}", ran.report.verdict));
            record.verdict = Verdict::NotQualified;
            return Ok((record, nbg));
        }
        let reference = crate::onnx::run::contained(|| {
            let mut s = cpu.cpu(model, set)?;
            s.run(set)
        })
        .map_err(|c| VendorError::Oracle(format!("{c:?}")))?;
        let outputs = ran.float.iter().zip(&ran.report.outputs).zip(&ran.stored);
        for (((out, rec), stored), r) in outputs.zip(&reference) {
            record
                .outputs
                .push(compare(k, out, rec.storage, &stored.data, r)?);
        }
    }
    if record.outputs.iter().any(|o| !o.pass) {
        record.verdict = Verdict::NotQualified;
    }
    Ok((record, nbg))
}

/// One generated input set: each model input at its declared shape, symbolic dimensions
/// fixed by `shapes` (a name's whole shape), uniform in [-1, 1) (`generated_input`).
fn generated_set(model: &[u8], shapes: &[(String, Vec<u64>)]) -> Result<Vec<Tensor>, VendorError> {
    use prost::Message as _;
    let proto = crate::onnx::proto::ModelProto::decode(model)
        .map_err(|e| VendorError::Admission(e.to_string()))?;
    let g = proto.graph.unwrap_or_default();
    let names = model_input_names(model)?;
    let mut out = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let declared = g
            .input
            .iter()
            .find(|v| v.name.as_ref() == Some(name))
            .map(crate::onnx::types::value_type)
            .and_then(|v| v.static_dims());
        let shape: Vec<u64> = match (shapes.iter().find(|(n, _)| n == name), declared) {
            (Some((_, s)), _) => s.clone(),
            (None, Some(d)) => d.iter().map(|&x| x.max(0) as u64).collect(),
            (None, None) => {
                return Err(VendorError::InputMismatch(format!(
                    "input {name:?} has symbolic dimensions: give --shape {name}=D,D,... or --input"
                )));
            }
        };
        out.push(generated_input(name, &shape, 0x006e_6267 + i as u64));
    }
    Ok(out)
}

/// The model's graph input names that are not initializers, in order.
pub(super) fn model_input_names(model: &[u8]) -> Result<Vec<String>, VendorError> {
    use prost::Message as _;
    let proto = crate::onnx::proto::ModelProto::decode(model)
        .map_err(|e| VendorError::Admission(e.to_string()))?;
    let g = proto.graph.unwrap_or_default();
    let inits: Vec<&str> = g
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    Ok(g.input
        .iter()
        .filter_map(|v| v.name.clone())
        .filter(|n| !inits.contains(&n.as_str()))
        .collect())
}

/// One simulator output against the oracle's.
pub(super) fn compare(
    set: usize,
    npu: &Tensor,
    storage: Storage,
    stored: &[u8],
    cpu: &Tensor,
) -> Result<OutputCheck, VendorError> {
    let saturated = storage.saturated(stored);
    let reference = cpu
        .to_f64()
        .filter(|_| cpu.dtype != Dtype::Bool)
        .ok_or_else(|| VendorError::Oracle(format!("{}: not numeric", cpu.name)))?;
    let got = npu.f32_values().unwrap_or_default();
    if npu.shape != cpu.shape || got.len() != reference.len() {
        return Err(VendorError::Oracle(format!(
            "output {}: the simulator's shape {:?}, the oracle's {:?}",
            cpu.name, npu.shape, cpu.shape
        )));
    }
    let (mut lo, mut hi, mut peak, mut err) = (f64::INFINITY, f64::NEG_INFINITY, 0f64, 0f64);
    for (&a, &b) in got.iter().zip(&reference) {
        lo = lo.min(b);
        hi = hi.max(b);
        peak = peak.max(b.abs());
        err = err.max((f64::from(a) - b).abs());
    }
    if reference.is_empty() {
        (lo, hi) = (0.0, 0.0);
    }
    let tolerance = Tolerance::for_storage(storage);
    let bound = tolerance.bound(hi - lo);
    Ok(OutputCheck {
        set,
        name: cpu.name.clone(),
        shape: cpu.shape.clone(),
        storage,
        tolerance,
        reference_range: [lo, hi],
        bound,
        max_abs_error: err,
        max_rel_error: if peak > 0.0 { err / peak } else { 0.0 },
        saturated,
        pass: err <= bound && saturated < 1.0,
    })
}
