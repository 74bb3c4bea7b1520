//! nbg-lab: strict parsing, byte ownership and differential analysis of VeriSilicon/Vivante
//! NPU network binary graphs (NBG, magic `VPMN`).

pub mod canonical;
pub mod contain;
pub mod digest;
pub mod evidence;
pub mod exit;
pub mod files;
pub mod lab;
pub mod nbg;
#[cfg(feature = "onnx")]
pub mod onnx;
pub mod output;
pub mod progress;
pub mod project;
pub mod report;
#[cfg(feature = "onnx")]
pub mod simulator;
pub mod word;

// Types, not modules, at the root (one path per module: `nbg_lab::nbg::parse`, `nbg_lab::lab::diff`).
pub use nbg::failure::{Code, Failure};
pub use nbg::family::{Family, NbgFamily};
pub use nbg::parse::{Graph, parse};
