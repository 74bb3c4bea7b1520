//! The integration tests, one binary: one module per area (a binary per file would link the
//! library and its dependencies once per file).

mod common;

mod board;
mod board_v2;
mod cli;
mod coefficients;
mod diff;
mod differential;
mod failure_codes;
mod family;
mod fieldmap;
mod filesystem;
mod image;
mod inventory;
mod kaitai;
#[cfg(feature = "onnx")]
mod locate;
mod mappings;
mod mutations;
mod names;
#[cfg(feature = "onnx")]
mod onnx;
#[cfg(feature = "onnx")]
mod onnx_shapes;
mod patches;
mod python;
mod real_v2;
mod records;
mod report;
mod resources;
mod serializer_mappings;
mod streaming;
mod sweep;
mod v1_corpus;
mod v1_failures;
mod v1_tables;
mod v2_controls;
mod v2_failures;
mod v2_properties;
#[cfg(feature = "onnx")]
mod vendor;
#[cfg(feature = "onnx")]
mod vendor_hybrid;
#[cfg(feature = "onnx")]
mod vendor_loader;
mod vendor_reader;
mod vendor_refusals;
#[cfg(feature = "onnx")]
mod vendor_run;
mod verdicts;
