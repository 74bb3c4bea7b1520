//! nbg-lab: strict parsing, byte ownership and differential analysis of VeriSilicon/Vivante
//! NPU network binary graphs (NBG, magic `VPMN`).

pub mod canonical;
pub mod capture;
pub mod corpus;
pub mod crc_explain;
pub mod crc_rules;
pub mod diff;
pub mod differential;
pub mod evidence;
pub mod failure;
pub mod files;
pub mod fingerprint;
pub mod format;
pub mod image;
pub mod inventory;
pub mod lab;
pub mod onnx;
pub mod output;
pub mod parse;
pub mod progress;
pub mod read;
pub mod report;
pub mod stream;
pub mod sweep;
pub mod synth;
pub mod synth_v1;

pub use failure::{Code, Failure};
pub use parse::{Graph, parse};
