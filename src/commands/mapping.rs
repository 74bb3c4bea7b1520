//! `nbg mapping check|promote|fields`: field mappings as evidence.

use super::args::Format;
use super::{failed, print, print_json};
use nbg_lab::digest::Hash256;
use nbg_lab::lab::mapping::{self, Promoted, Stop};
use nbg_lab::report;
#[cfg(feature = "onnx")]
use nbg_lab::simulator::mapping_run::{RunCheck, RunOutcome};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Check every mapping of MAPPINGS against each capture set: proved (the in-memory replay
    /// reproduces B), refuted (the first unexplained byte) or inapplicable. With --run, each
    /// proved pair of a serializer capture set is also run on the simulator: the replay (in
    /// memory, on a pipe) and B on one input must give equal outputs, and B's must agree with
    /// ONNX Runtime's for B's source model within the qualification tolerance (about 5 s per
    /// pair). Writes nothing. Exit 0 when nothing is refuted or differs, 1 when something is
    /// (or a capture is an invalid NBG, or a run could not be made), 2 on a bad mappings file,
    /// capture set, or a missing driver or runtime.
    Check {
        /// The mappings registry (nbg-mappings/1 JSON)
        mappings: PathBuf,
        /// Capture sets (folders with A1.nb, A2.nb, B.nb and differential.json)
        #[arg(required = true)]
        captures: Vec<PathBuf>,
        #[command(flatten)]
        format: super::args::Format,
        /// Also run each proved pair on the simulator and the oracle.
        #[cfg(feature = "onnx")]
        #[arg(long)]
        run: bool,
    },
    /// Promote NAME when at least two capture sets with different source values prove it and
    /// none refutes it; rewrites MAPPINGS atomically with the evidence digests. Exit 0
    /// promoted, 1 refused (nothing written), 2 usage or I/O.
    Promote {
        /// The mappings registry (nbg-mappings/1 JSON)
        mappings: PathBuf,
        /// The mapping to promote, by name
        name: String,
        #[arg(long = "evidence", value_name = "CAPTURE_DIR", required = true, num_args = 1..)]
        evidence: Vec<PathBuf>,
    },
    /// List the record bit fields the promoted mappings of MAPPINGS prove: a part one of a
    /// mapping's placements covers exactly, on capture sets of its evidence (relative to
    /// MAPPINGS' folder) that still prove it and change that part's value. Parts covered but
    /// never changed are `held`; placements over several parts are `not aligned`. Then the NN
    /// command geometry the layer check proves: over the NN capture sets in MAPPINGS' folder
    /// `serializer/`, every NN command paired with its source layer (`nbg locate --layers`)
    /// holds the layer's input image, kernel size and depth, output image and channels, and a
    /// part whose predicted value differs between the models is proved. The field map's
    /// `proved` labels are these parts. Writes nothing. Exit 0, 1 when a capture set is an
    /// invalid NBG or a command disagrees with its layer, 2 on a bad mappings file.
    Fields {
        /// The mappings registry (nbg-mappings/1 JSON)
        mappings: PathBuf,
        #[command(flatten)]
        format: super::args::Format,
    },
}

/// What `--run` gives: every proved pair run on the simulator and the oracle (a build without
/// the `onnx` feature has no simulator and no `--run`).
#[cfg(feature = "onnx")]
type Runs = Vec<RunCheck>;
#[cfg(not(feature = "onnx"))]
type Runs = Vec<()>;

/// Whether a run gives other outputs than B's, or B's differ from the oracle's.
#[cfg(feature = "onnx")]
fn differs(runs: &Runs) -> bool {
    runs.iter()
        .any(|r| !matches!(r.outcome, RunOutcome::Agrees | RunOutcome::NoSourceModel))
}

/// `--run`: every proved pair run on the simulator and the oracle.
#[cfg(feature = "onnx")]
fn run_proved(rows: &[mapping::CheckRow]) -> Result<Vec<RunCheck>, ExitCode> {
    let (sdk, configs) =
        super::simulator::setup().map_err(|e| super::simulator::fail(&e, false))?;
    nbg_lab::onnx::ort_engine::environment().map_err(|e| {
        eprintln!("nbg: CPU_ENGINE_MISSING: {e}");
        ExitCode::from(2)
    })?;
    let exe = std::env::current_exe()
        .map_err(|e| super::usage_error(format!("cannot find this executable: {e}")))?;
    let mut engines = nbg_lab::onnx::isolate::ChildEngines::new(
        exe,
        nbg_lab::onnx::run::Engine::Ort,
        nbg_lab::onnx::isolate::ChildLimits::default(),
    );
    let b_of = |capture: &str| std::fs::read(std::path::Path::new(capture).join("B.nb")).ok();
    Ok(nbg_lab::simulator::mapping_run::run_rows(
        &sdk,
        &configs,
        rows,
        &b_of,
        &mut engines,
    ))
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
            format: Format { json },
            #[cfg(feature = "onnx")]
            run,
        } => match mapping::run_check(&mappings, &captures) {
            Err(e) => stopped(&e),
            Ok((registry, rows)) => {
                #[cfg(feature = "onnx")]
                let runs: Option<Runs> = if run {
                    match run_proved(&rows) {
                        Ok(r) => Some(r),
                        Err(code) => return code,
                    }
                } else {
                    None
                };
                #[cfg(not(feature = "onnx"))]
                let runs: Option<Runs> = None;
                if json {
                    let sha = Hash256::of(registry.canonical().as_bytes());
                    let doc = mapping::CheckDocument {
                        schema: mapping::CHECK_SCHEMA,
                        mappings_sha256: sha,
                        rows: &rows,
                        summary: mapping::summary(&rows),
                        runs: runs.as_deref(),
                    };
                    print_json(&report::json::value(&doc));
                } else {
                    print(&report::mapping::check(&rows));
                    #[cfg(feature = "onnx")]
                    if let Some(r) = &runs {
                        print(&report::mapping::runs(r));
                    }
                }
                let refuted = rows.iter().any(|r| r.outcome == mapping::Outcome::Refuted);
                #[cfg(feature = "onnx")]
                let refuted = refuted || runs.as_ref().is_some_and(differs);
                if refuted { failed() } else { ExitCode::SUCCESS }
            }
        },
        Command::Fields {
            mappings,
            format: Format { json },
        } => match mapping::run_fields(&mappings) {
            Err(e) => stopped(&e),
            Ok((registry, proofs)) => {
                #[cfg(feature = "onnx")]
                let geometry = nbg_lab::simulator::geometry_proofs::geometry_proofs(
                    &mappings
                        .parent()
                        .unwrap_or(std::path::Path::new("."))
                        .join("serializer"),
                );
                if json {
                    let sha = Hash256::of(registry.canonical().as_bytes());
                    #[allow(unused_mut)]
                    let mut doc = proofs.document(&sha);
                    #[cfg(feature = "onnx")]
                    {
                        doc["geometry"] = serde_json::json!(geometry);
                    }
                    print_json(&doc);
                } else {
                    print(&report::mapping::fields(&proofs));
                    #[cfg(feature = "onnx")]
                    print(&report::mapping::geometry(&geometry));
                }
                #[cfg(feature = "onnx")]
                if !geometry.holds() {
                    return failed();
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
