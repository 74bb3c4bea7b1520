//! How a command ends, the one place an ending becomes an exit status (a leaf: every layer's
//! errors name their kind with it).

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
