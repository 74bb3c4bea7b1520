//! `nbg mapping check|promote`: field mappings as evidence.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Check every mapping of MAPPINGS against each capture set: proved (the in-memory replay
    /// reproduces B), refuted (the first unexplained byte) or inapplicable. Writes nothing.
    /// Exit 0 when nothing is refuted, 1 when something is (or a capture is an invalid NBG),
    /// 2 on a bad mappings file or capture set.
    Check {
        mappings: PathBuf,
        #[arg(required = true)]
        captures: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Promote NAME when at least two capture sets with different source values prove it and
    /// none refutes it; rewrites MAPPINGS atomically with the evidence digests. Exit 0
    /// promoted, 1 refused (nothing written), 2 usage or I/O.
    Promote {
        mappings: PathBuf,
        name: String,
        #[arg(long = "evidence", value_name = "CAPTURE_DIR", required = true, num_args = 1..)]
        evidence: Vec<PathBuf>,
    },
}

pub fn exec(command: Command) -> ExitCode {
    let r = match command {
        Command::Check {
            mappings,
            captures,
            json,
        } => nbg_lab::lab::mapping::cli_check(&mappings, &captures, json),
        Command::Promote {
            mappings,
            name,
            evidence,
        } => nbg_lab::lab::mapping::cli_promote(&mappings, &name, &evidence),
    };
    super::print(&r.stdout);
    eprint!("{}", r.stderr);
    ExitCode::from(r.exit)
}
