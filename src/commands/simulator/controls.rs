//! `nbg vendor controls`.

use super::{fail, setup};
use crate::commands::{print, usage_error};
use nbg_lab::report;
use nbg_lab::simulator;
use std::path::Path;
use std::process::ExitCode;

/// `nbg vendor controls [--write]`: recompile controls/serializer and compare, or rewrite it.
pub(super) fn controls(write: bool) -> ExitCode {
    let (sdk, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, false),
    };
    let root = nbg_lab::project::root();
    let start = std::time::Instant::now();
    if write {
        return match simulator::controls::write(&root, &sdk, &configs) {
            Ok(n) => {
                eprintln!(
                    "wrote {n} controls into {} in {:.0} s",
                    simulator::controls::DIR,
                    start.elapsed().as_secs_f64()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e, false),
        };
    }
    match simulator::controls::verify(&root, &sdk, &configs) {
        Ok((n, problems)) if problems.is_empty() => {
            print(&report::simulator::recompiled(
                simulator::controls::DIR,
                n,
                "controls",
                start.elapsed().as_secs_f64(),
            ));
            ExitCode::SUCCESS
        }
        Ok((_, problems)) => {
            print(&report::simulator::problems(&problems));
            crate::commands::failed()
        }
        Err(e) => fail(&e, false),
    }
}

pub(super) fn capture_sets(write: bool) -> ExitCode {
    let (sdk, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, false),
    };
    let root = nbg_lab::project::root();
    let start = std::time::Instant::now();
    let built = match simulator::capture_sets::build(&sdk, &configs, &mut |d| {
        eprintln!("  {d} ({:.0} s)", start.elapsed().as_secs_f64())
    }) {
        Ok(b) => b,
        Err(e) => return fail(&e, false),
    };
    let files = simulator::capture_sets::files(&sdk, &built);
    let dir = simulator::capture_sets::DIR;
    let seconds = start.elapsed().as_secs_f64();
    if write {
        return match simulator::capture_sets::write(&root, &files) {
            Ok(n) => {
                eprintln!(
                    "wrote {} capture sets ({n} files) into {dir} in {seconds:.0} s",
                    built.len()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e, false),
        };
    }
    let problems = simulator::capture_sets::compare(&root, &files);
    if problems.is_empty() {
        print(&report::simulator::recompiled(
            dir,
            built.len(),
            "capture sets",
            seconds,
        ));
        ExitCode::SUCCESS
    } else {
        print(&report::simulator::problems(&problems));
        crate::commands::failed()
    }
}

pub(super) fn models(out: &Path) -> ExitCode {
    let folder = match nbg_lab::output::new_dir(out) {
        Ok(f) => f,
        Err(e) => return usage_error(e),
    };
    let models: Vec<_> = simulator::models::bases();
    for (name, _, bytes) in &models {
        let path = out.join(format!("{name}.onnx"));
        if let Err(e) = nbg_lab::files::write_atomic_with(&path, false, |w| w.write_all(bytes)) {
            return usage_error(e);
        }
    }
    folder.keep();
    eprintln!("wrote {} models into {}", models.len(), out.display());
    ExitCode::SUCCESS
}
