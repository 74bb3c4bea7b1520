//! Field mappings as evidence (PoC 12B/12C): a finite, recorded registry of hypotheses that say
//! where a source quantity lands in an NBG and which values the producer derives from it.
//!
//! A mapping is data (`differentials/mappings.json`, schema `nbg-mappings/1`), never code: a
//! new kind of mapping is a new entry. A capture set (A1/A2/B, `differential.json`) either
//! proves a mapping (the substitution plus the derived values, replayed in memory on A,
//! reproduces B's SHA-256, so every changed byte is explained), refutes it (the first byte the
//! replay does not explain, with its owner and field), or does not apply to it. Only a mapping
//! proved by at least two capture sets with different source values, and refuted by none, is
//! promoted; the registry never broadens silently.
//!
//! Nothing here writes an NBG; `promote` writes only the mappings file, atomically.

pub mod captures;
pub mod computed;
pub mod numeric;

mod check;
mod decoded;
mod encode;
mod error;
mod fields;
mod load;
mod model;
mod promote;
mod run;

pub use check::*;
pub use decoded::DecodedMismatch;
pub use encode::*;
pub use error::*;
pub use fields::*;
pub use load::*;
pub use model::*;
pub use promote::*;
pub use run::*;

use crate::digest::Hash256;
use crate::exit::Exit;
use crate::files::InputError;
use crate::lab::capture::{CaptureSet, KeyMatch};
pub use crate::lab::capture::{MAX_QUANTITIES, Quantity, Value};
use crate::nbg::failure::Failure;
use crate::nbg::family::NbgFamily;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::{Graph, parse};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
