//! The lab: what is done with parsed graphs. Owner-by-owner diffs, controlled differentials
//! and their capture sets, the field-mapping registry, the coefficient locator, hash-pinned corpora and their inventories, the mutation sweep,
//! synthetic controls, the committed evidence and `nbg lab`'s steps (`steps`, re-exported
//! here so `lab::run` reads as before).

pub mod capture;
pub mod corpus;
pub mod diff;
pub mod differential;
pub mod evidence;
pub mod inventory;
#[cfg(feature = "onnx")]
pub mod locate;
pub mod mapping;
pub mod steps;
pub mod sweep;
pub mod synth;
pub mod synth_v1;

pub use steps::*;
