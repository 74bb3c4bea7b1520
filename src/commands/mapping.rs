//! `nbg mapping check|promote|fields`: field mappings as evidence.

use super::{failed, print, print_json};
use nbg_lab::lab::mapping::{self, Promoted, Stop};
use nbg_lab::nbg::fingerprint::Hash256;
use nbg_lab::report;
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
    /// List the record bit fields the promoted mappings of MAPPINGS prove: a part one of a
    /// mapping's placements covers exactly, on capture sets of its evidence (relative to
    /// MAPPINGS' folder) that still prove it and change that part's value. Parts covered but
    /// never changed are `held`; placements over several parts are `not aligned`. The field
    /// map's `proved` labels are these parts. Writes nothing. Exit 0, 1 when a capture set is
    /// an invalid NBG, 2 on a bad mappings file.
    Fields {
        mappings: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

fn stopped(e: &Stop) -> ExitCode {
    eprintln!("nbg: {e}");
    e.exit_status().into()
}

pub fn exec(command: Command) -> ExitCode {
    match command {
        Command::Check {
            mappings,
            captures,
            json,
        } => match mapping::run_check(&mappings, &captures) {
            Err(e) => stopped(&e),
            Ok((registry, rows)) => {
                if json {
                    let sha = Hash256::of(registry.canonical().as_bytes());
                    print_json(&mapping::check_document(&sha, &rows));
                } else {
                    print(&report::mapping::check(&rows));
                }
                let refuted = rows.iter().any(|r| r.outcome == mapping::Outcome::Refuted);
                if refuted { failed() } else { ExitCode::SUCCESS }
            }
        },
        Command::Fields { mappings, json } => match mapping::run_fields(&mappings) {
            Err(e) => stopped(&e),
            Ok((registry, proofs)) => {
                if json {
                    let sha = Hash256::of(registry.canonical().as_bytes());
                    print_json(&proofs.document(&sha));
                } else {
                    print(&report::mapping::fields(&proofs));
                }
                ExitCode::SUCCESS
            }
        },
        Command::Promote {
            mappings,
            name,
            evidence,
        } => match mapping::run_promote(&mappings, &name, &evidence) {
            Err(e) => stopped(&e),
            Ok(Promoted::Refused(r)) => {
                eprint!("{}", report::mapping::refused(&r));
                failed()
            }
            Ok(Promoted::Written(registry, rows)) => {
                // Invariant: a written promotion holds `name` (promote found it).
                let n = registry.get(&name).map_or(0, |m| m.evidence.len());
                print(&report::mapping::promoted(&rows, &name, n, &mappings));
                ExitCode::SUCCESS
            }
        },
    }
}
