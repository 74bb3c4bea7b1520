//! The lab: what is done with parsed graphs. Owner-by-owner diffs, controlled differentials
//! and their capture sets, the field-mapping registry, the coefficient locator, hash-pinned
//! corpora and their inventories, the mutation sweep, synthetic controls, and what a `nbg lab`
//! run reports (`step`; the steps run in `evidence::steps`, above the report renderers).

pub mod capture;
pub mod carve;
pub mod compatibility;
pub mod corpus;
pub mod diff;
pub mod differential;
pub mod info;
pub mod inventory;
#[cfg(feature = "onnx")]
pub mod kernel_match;
#[cfg(feature = "onnx")]
pub mod locate;
pub mod mapping;
pub mod step;
pub mod sweep;
pub mod synth;
pub mod synth_v1;

pub use step::{Report, Row, Step};

/// How a lab command ends. Every lab error names its kind, and the exit status follows from
/// the kind (`exit_status`), never from a number picked where the error is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit 0: the work was done and nothing failed.
    Success,
    /// Exit 1: an invalid NBG, a refused model or a failed check.
    Failure,
    /// Exit 2: a usage or I/O problem.
    Usage,
}

impl Exit {
    /// The process exit status of this ending.
    pub fn status(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.status())
    }
}
