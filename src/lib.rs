//! nbg-lab: strict parsing, byte ownership and differential analysis of VeriSilicon/Vivante
//! NPU network binary graphs (NBG, magic `VPMN`).
#![warn(missing_docs)]

pub mod canonical;
pub mod contain;
pub mod evidence;
pub mod lab;
pub mod nbg;
#[cfg(feature = "onnx")]
pub mod onnx;
pub mod output;
pub mod progress;
pub mod report;
#[cfg(feature = "onnx")]
pub mod vendor;

// The core's modules keep their paths at the crate root (`nbg_lab::parse`, ...).
pub use nbg::{
    crc_explain, crc_rules, failure, family, fieldmap, files, fingerprint, format, holds, image,
    open, parse, read, reencode, stream,
};

// The lab's modules, likewise (`nbg_lab::diff`, ...).
#[cfg(feature = "onnx")]
pub use lab::locate;
pub use lab::{capture, corpus, diff, differential, inventory, mapping, sweep, synth, synth_v1};

pub use failure::{Code, Failure};
pub use family::{Family, NbgFamily};
pub use parse::{Graph, parse};
