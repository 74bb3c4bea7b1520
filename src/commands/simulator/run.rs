//! `nbg vendor run`.

use super::{fail, file_driver};
use crate::commands::{plan_outputs, print, print_json, usage_error};
use nbg_lab::report;
use nbg_lab::simulator::substitute::Substitution;
use nbg_lab::simulator::{self, VendorError};
use std::path::Path;
use std::process::ExitCode;

/// What `nbg vendor run` was asked beside its files.
pub(super) struct Options<'a> {
    /// `--target`.
    pub target: Option<&'a str>,
    /// `--substitute`.
    pub substitute: &'a [Substitution],
    /// `--force`.
    pub force: bool,
    /// `--json`.
    pub json: bool,
}

pub(super) fn run(file: &Path, input: &Path, out: &Path, o: Options<'_>) -> ExitCode {
    let Options {
        target,
        substitute,
        force,
        json,
    } = o;
    let mut outputs = match plan_outputs(&[file, input], force, &[Some(out)]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let read = |p: &Path| nbg_lab::files::read_regular(p);
    let (bytes, archive) = match (read(file), read(input)) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => return usage_error(e),
    };
    let bounds = match simulator::run::Prepared::input_bound(&bytes) {
        Ok(b) => b,
        Err(e) => return fail(&e, json),
    };
    let tensors = nbg_lab::onnx::npz::read_bounded(&archive, |name| {
        bounds
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, max)| *max)
            .ok_or_else(|| {
                let names: Vec<String> = bounds.iter().map(|(n, _)| format!("{n:?}")).collect();
                nbg_lab::onnx::refusal::Refusal::new(
                    nbg_lab::onnx::refusal::RefusalCode::TensorBoundary,
                    format!(
                        "{name:?}: the file has no input of that name (refused before it is inflated; names that do: {})",
                        names.join(", ")
                    ),
                )
            })
    });
    let tensors = match tensors {
        Ok(t) => t,
        Err(r) => {
            return fail(
                &VendorError::InputMismatch(format!("{}: {}", input.display(), r.message)),
                json,
            );
        }
    };
    let prepared = match simulator::run::Prepared::with_substitutions(&bytes, &tensors, substitute)
    {
        Ok(p) => p,
        Err(e) => return fail(&e, json),
    };
    let (sdk, config) = match file_driver(&bytes, target) {
        Ok(d) => d,
        Err(e) => return fail(&e, json),
    };
    let ran = match simulator::run::run(&sdk, &config, &prepared) {
        Ok(r) => r,
        Err(e) => return fail(&e, json),
    };
    let done = matches!(ran.report.verdict, simulator::run::RunVerdict::Ran { .. });
    if done
        && let Err(e) = outputs
            .stage(out, &nbg_lab::onnx::npz::write(&ran.float))
            .and_then(|_| outputs.commit())
    {
        return usage_error(e);
    }
    let written = done.then(|| out.display().to_string());
    if json {
        print_json(&report::json::value(&report::simulator::Run {
            report: &ran.report,
            file: file.display().to_string(),
            driver: sdk.to_json(),
            out: written.clone(),
        }));
    } else {
        print(&nbg_lab::report::run::text(
            &file.display().to_string(),
            &ran.report,
            written.as_deref(),
        ));
    }
    if done {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
