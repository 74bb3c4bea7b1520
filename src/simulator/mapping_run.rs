//! `nbg mapping check --run`: a proved mapping checked by what the graph computes as well as by
//! its bytes. The in-memory replay of the substitution on A (handed to the driver child on a
//! pipe, never written) and B run on the simulator on one input; their stored outputs must be
//! equal, and B's outputs must agree with ONNX Runtime's for B's source model (rebuilt from the
//! capture-set table, `simulator::capture_sets`) within the qualification's tolerance per stored
//! type. A replay that reproduces B's bytes but computes something else is caught here.

use super::capture_sets::{SETS, changed};
use super::qualify::{OutputCheck, generated_input};
use super::run::{Prepared, RunVerdict};
use super::{Config, Sdk};
use crate::lab::mapping::{CheckRow, Outcome};
use crate::nbg::family::NbgFamily as _;
use crate::onnx::npz::Tensor;
use crate::onnx::run::Factory;
use serde::Serialize;

/// What running a proved row showed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum RunOutcome {
    /// The replay's outputs equal B's, and B's agree with the oracle's for model B.
    Agrees,
    /// The replay computes something else than B: the mapping is refuted by its outputs.
    ReplayDiffers,
    /// The replay computes what B computes, but B (the serializer's compile of model B)
    /// computes something else than model B on the oracle: the capture set's B is not model B.
    ModelDiffers,
    /// The capture set is not one of the serializer table's: no source model to run.
    NoSourceModel,
    /// The simulator or the oracle did not give outputs.
    NotRun {
        /// Why.
        reason: String,
    },
}

/// One proved row, run.
#[derive(Clone, Debug, Serialize)]
pub struct RunCheck {
    /// The mapping.
    pub mapping: String,
    /// The capture set.
    pub capture: String,
    /// The source model and the set's changes, when the capture set is the table's.
    pub model: Option<String>,
    /// The configuration simulated.
    pub config: Option<String>,
    /// Whether every stored output of the replay equals B's.
    pub replay_outputs_equal_b: Option<bool>,
    /// B's outputs against the oracle's for model B.
    pub outputs: Vec<OutputCheck>,
    /// The verdict.
    pub outcome: RunOutcome,
}

/// The table's set and configuration a capture folder named `capture` (`.../NAME-PID`) is.
fn set_of<'a>(
    capture: &str,
    configs: &'a [Config],
) -> Option<(&'static super::capture_sets::Set, &'a Config)> {
    let dir = std::path::Path::new(capture).file_name()?.to_str()?;
    SETS.iter().find_map(|s| {
        s.targets.iter().find_map(|t| {
            let c = configs.iter().find(|c| c.name == *t)?;
            (dir == super::capture_sets::folder(s.name, c.pid)).then_some((s, c))
        })
    })
}

/// Run every proved row of `rows` that carries its replay (`CheckRow::replayed`), B's bytes
/// being `b_of(capture)`.
pub fn run_rows(
    sdk: &Sdk,
    configs: &[Config],
    rows: &[CheckRow],
    b_of: &dyn Fn(&str) -> Option<Vec<u8>>,
    cpu: &mut dyn Factory,
) -> Vec<RunCheck> {
    rows.iter()
        .filter(|r| r.outcome == Outcome::Proved)
        .filter_map(|r| Some((r, r.replayed.as_deref()?)))
        .map(|(r, replayed)| {
            let mut check = RunCheck {
                mapping: r.mapping.clone(),
                capture: r.capture.clone(),
                model: None,
                config: None,
                replay_outputs_equal_b: None,
                outputs: vec![],
                outcome: RunOutcome::NoSourceModel,
            };
            let Some((set, config)) = set_of(&r.capture, configs) else {
                return check;
            };
            check.model = Some(format!("{} with {:?}", set.model, set.changes));
            check.config = Some(config.name.clone());
            let b = b_of(&r.capture);
            check.outcome = match b
                .ok_or_else(|| "B.nb could not be read".to_string())
                .and_then(|b| one(sdk, config, set, replayed, &b, cpu, &mut check))
            {
                Ok(()) if check.replay_outputs_equal_b == Some(false) => RunOutcome::ReplayDiffers,
                Ok(()) if check.outputs.iter().all(|o| o.pass) => RunOutcome::Agrees,
                Ok(()) => RunOutcome::ModelDiffers,
                Err(reason) => RunOutcome::NotRun { reason },
            };
            check
        })
        .collect()
}

/// Run the replay and B on one generated input, and model B on the oracle, into `check`.
fn one(
    sdk: &Sdk,
    config: &Config,
    set: &super::capture_sets::Set,
    replayed: &[u8],
    b: &[u8],
    cpu: &mut dyn Factory,
    check: &mut RunCheck,
) -> Result<(), String> {
    let base = super::models::bases()
        .into_iter()
        .find(|m| m.0 == set.model)
        .ok_or_else(|| format!("no model {}", set.model))?
        .2;
    let model_b = changed(set.model, &base, set.changes).map_err(|e| e.to_string())?;
    let g = crate::parse(b).map_err(|f| f.to_string())?;
    let names = model_inputs(&model_b)?;
    // One input in [-1, 1), under the model's names and the NBG's.
    let mut onnx_inputs = Vec::new();
    let mut nbg_inputs = Vec::new();
    for (i, (name, r)) in names.iter().zip(g.inputs()).enumerate() {
        let shape: Vec<u64> = r.dimensions.iter().rev().map(|&d| u64::from(d)).collect();
        let t = generated_input(name, &shape, 0x0072_756e + i as u64);
        nbg_inputs.push(Tensor {
            name: r.name.clone().unwrap_or_default(),
            ..t.clone()
        });
        onnx_inputs.push(t);
    }
    let run = |image: &[u8]| -> Result<super::run::Ran, String> {
        let p = Prepared::new(image, &nbg_inputs).map_err(|e| e.to_string())?;
        let ran = super::run::run(sdk, config, &p).map_err(|e| e.to_string())?;
        match &ran.report.verdict {
            RunVerdict::Ran { .. } => Ok(ran),
            v => Err(format!("{v:?}")),
        }
    };
    let (on_replay, on_b) = (run(replayed)?, run(b)?);
    let equal = on_replay.stored == on_b.stored;
    check.replay_outputs_equal_b = Some(equal);
    let reference = crate::onnx::run::contained(|| {
        let mut s = cpu.cpu(&model_b, &onnx_inputs)?;
        s.run(&onnx_inputs)
    })
    .map_err(|c| format!("the oracle: {c:?}"))?;
    for (((out, rec), stored), r) in on_b
        .float
        .iter()
        .zip(&on_b.report.outputs)
        .zip(&on_b.stored)
        .zip(&reference)
    {
        check.outputs.push(
            super::qualify::compare(0, out, rec.storage, &stored.data, r)
                .map_err(|e| e.to_string())?,
        );
    }
    Ok(())
}

/// A model's graph inputs that are not initializers, in order.
fn model_inputs(model: &[u8]) -> Result<Vec<String>, String> {
    super::qualify::model_input_names(model).map_err(|e| e.to_string())
}
