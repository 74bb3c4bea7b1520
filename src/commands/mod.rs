//! One module per `nbg` subcommand, as cargo's `src/bin/cargo/commands/`: each holds its
//! arguments (`Args`) and `exec`, which calls the library, prints what `nbg_lab::report`
//! renders and maps the outcome to an exit status. These modules belong to the binary only.

pub mod args;
pub mod carve;
pub mod check;
pub mod coefficients;
pub mod crc_explain;
pub mod diff;
pub mod differential;
pub mod dump;
pub mod fieldmap;
pub mod image;
pub mod info;
pub mod inventory;
pub mod lab;
#[cfg(feature = "onnx")]
pub mod locate;
pub mod mapping;
#[cfg(feature = "onnx")]
pub mod onnx;
pub mod parse;
pub mod patches;
pub mod report;
pub mod roundtrip;
#[cfg(feature = "onnx")]
pub mod simulator;
pub mod sweep;
pub mod synth;
pub mod synth_corpus;
pub mod synth_differential;
pub mod verify_generated;

use nbg_lab::Failure;
use nbg_lab::exit::Exit;
use nbg_lab::output::Outputs;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

// Every ending maps to an exit status through `nbg_lab::exit::Exit` (`From<Exit> for
// ExitCode`): the helpers below and each error's `exit_status()` name the kind, never a number.

/// Exit status 1: an invalid NBG, a refused model or a failed check.
pub fn failed() -> ExitCode {
    Exit::Failure.into()
}

/// Exit status 0 when `ok`, else 1.
pub fn status(ok: bool) -> ExitCode {
    if ok { Exit::Success } else { Exit::Failure }.into()
}

/// Exit status 2 for a usage or I/O problem, after saying what it is on stderr.
pub fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("nbg: {message}");
    Exit::Usage.into()
}

/// Standard output was closed under us (a pipe into `head`, say): an I/O ending, said once.
pub fn stdout_closed() -> ExitCode {
    Exit::Usage.into()
}

/// Write `text` to stdout; end the process with the I/O status instead of panicking when
/// stdout is closed (nothing more can be printed, and the caller's work is moot).
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        std::process::exit(i32::from(Exit::Usage.status()));
    }
}

/// Print one JSON document (`--json`), in canonical form.
pub fn print_json(value: &serde_json::Value) {
    print(&nbg_lab::canonical::canonical(value));
}

/// An invalid NBG: the failure as JSON on stdout or as text on stderr; exit 1.
/// An input of a multi-file command that could not be read (a folder, a symlink, no
/// permission): said on stderr, and an `unreadable` failure to list in its place, so the other
/// files are still judged (the command ends with the I/O status, `Exit::Usage`).
pub fn unreadable(e: impl std::fmt::Display) -> Failure {
    eprintln!("nbg: {e}");
    Failure::new(nbg_lab::nbg::failure::Code::Unreadable, 0, e.to_string())
}

pub fn report_failure(failure: &Failure, json: bool) -> ExitCode {
    if json {
        print_json(&failure.to_json());
    } else {
        eprintln!("{failure}");
    }
    failed()
}

/// Plan a run's outputs before any work: every path checked against the inputs, the other
/// outputs and what exists (see `nbg_lab::output`).
pub fn plan_outputs(
    inputs: &[&Path],
    force: bool,
    outputs: &[Option<&Path>],
) -> Result<Outputs, ExitCode> {
    let mut planned = Outputs::new(inputs, force);
    for path in outputs.iter().flatten() {
        planned.plan(path).map_err(usage_error)?;
    }
    Ok(planned)
}
