//! nbg-lab: strict parsing, byte ownership and differential analysis of VeriSilicon/Vivante
//! NPU network binary graphs (NBG, magic `VPMN`).

pub mod canonical;
pub mod capture;
pub mod corpus;
pub mod diff;
pub mod differential;
pub mod evidence;
pub mod inventory;
pub mod lab;
pub mod nbg;
pub mod onnx;
pub mod output;
pub mod progress;
pub mod report;
pub mod sweep;
pub mod synth;
pub mod synth_v1;

// The core's modules keep their paths at the crate root (`nbg_lab::parse`, ...).
pub use nbg::{
    crc_explain, crc_rules, failure, files, fingerprint, format, image, parse, read, stream,
};

pub use failure::{Code, Failure};
pub use parse::{Graph, parse};
