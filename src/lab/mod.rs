//! The lab: what is done with parsed graphs. Owner-by-owner diffs, controlled differentials
//! and their capture sets, the field-mapping registry, the coefficient locator, hash-pinned
//! corpora and their inventories, the mutation sweep, synthetic controls, and what a `nbg lab`
//! run reports (`step`; the steps run in `evidence::steps`, above the report renderers).

pub mod capture;
pub mod carve;
pub mod coefficient_changes;
pub mod compatibility;
pub mod corpus;
pub mod diff;
pub mod differential;
pub mod dump;
pub mod fields;
pub mod info;
pub mod inventory;
#[cfg(feature = "onnx")]
pub mod kernel_match;
#[cfg(feature = "onnx")]
pub mod layers;
#[cfg(feature = "onnx")]
pub mod locate;
pub mod mapping;
pub mod step;
pub mod sweep;
pub mod synth;
pub mod synth_v1;

pub use step::{Report, Row, Step};
