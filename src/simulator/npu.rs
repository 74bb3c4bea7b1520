//! The simulated NPU as the hybrid runner's NPU: a session is the model compiled by the
//! project's lowering for one target (in the driver child), and a run is the compiled NBG run
//! once on the simulator (`simulator::run`), its outputs converted to float32 under the model's
//! output names. The CPU side is any other factory (the isolated ONNX Runtime child).

use super::run::{Prepared, RunVerdict};
use super::{Config, Sdk};
use crate::nbg::family::NbgFamily as _;
use crate::onnx::error::OnnxError;
use crate::onnx::npz::Tensor;
use crate::onnx::run::{Engine, Factory, Session};

/// NPU sessions on `config`, CPU sessions from `cpu`.
pub struct Simulator<'a> {
    /// The driver.
    pub sdk: Sdk,
    /// The target simulated.
    pub config: Config,
    /// Where CPU sessions come from.
    pub cpu: &'a mut dyn Factory,
    /// The model's input names in order (the NBG's inputs follow them).
    pub inputs: Vec<String>,
    /// The model's output names in order.
    pub outputs: Vec<String>,
}

/// One compiled graph on the simulator.
struct NpuSession {
    sdk: Sdk,
    config: Config,
    nbg: Vec<u8>,
    inputs: Vec<String>,
    outputs: Vec<String>,
}

impl Factory for Simulator<'_> {
    fn npu(&mut self, model: &[u8], inputs: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        let fixed: Vec<(String, Vec<u64>)> = inputs
            .iter()
            .map(|t| (t.name.clone(), t.shape.clone()))
            .collect();
        let compiled = super::compile_fixed(&self.sdk, &self.config, model, None, &fixed)
            .map_err(|e| OnnxError::Npu(format!("compile for {}: {e}", self.config.name)))?;
        Ok(Box::new(NpuSession {
            sdk: self.sdk.clone(),
            config: self.config.clone(),
            nbg: compiled.nbg,
            inputs: self.inputs.clone(),
            outputs: self.outputs.clone(),
        }))
    }

    fn cpu(&mut self, model: &[u8], inputs: &[Tensor]) -> Result<Box<dyn Session>, OnnxError> {
        self.cpu.cpu(model, inputs)
    }

    fn engine(&self) -> Engine {
        self.cpu.engine()
    }

    fn providers(&self) -> Vec<String> {
        self.cpu.providers()
    }
}

impl Session for NpuSession {
    fn run(&mut self, given: &[Tensor]) -> Result<Vec<Tensor>, OnnxError> {
        let g = crate::parse(&self.nbg).map_err(|f| OnnxError::Npu(f.to_string()))?;
        let nbg_names: Vec<String> = g
            .inputs()
            .iter()
            .map(|r| r.name.clone().unwrap_or_default())
            .collect();
        if nbg_names.len() != self.inputs.len() || g.outputs().len() != self.outputs.len() {
            return Err(OnnxError::Npu(format!(
                "the compiled graph has {} inputs and {} outputs, the model {} and {}",
                nbg_names.len(),
                g.outputs().len(),
                self.inputs.len(),
                self.outputs.len()
            )));
        }
        let mut renamed = Vec::with_capacity(given.len());
        for (name, nbg_name) in self.inputs.iter().zip(&nbg_names) {
            let t = given
                .iter()
                .find(|t| &t.name == name)
                .ok_or_else(|| OnnxError::NoInputTensor(name.clone()))?;
            renamed.push(Tensor {
                name: nbg_name.clone(),
                ..t.clone()
            });
        }
        let prepared =
            Prepared::new(&self.nbg, &renamed).map_err(|e| OnnxError::Npu(e.to_string()))?;
        let ran = super::run::run(&self.sdk, &self.config, &prepared)
            .map_err(|e| OnnxError::Npu(e.to_string()))?;
        if !matches!(ran.report.verdict, RunVerdict::Ran { .. }) {
            return Err(OnnxError::Npu(format!(
                "the run on {}: {:?}",
                self.config.name, ran.report.verdict
            )));
        }
        Ok(ran
            .float
            .into_iter()
            .zip(&self.outputs)
            .map(|(t, name)| Tensor {
                name: name.clone(),
                ..t
            })
            .collect())
    }
}
