//! `nbg differential DIR [--json] [--evidence FILE] [--force]`.

use super::{plan_outputs, print, print_json, status, usage_error};
use nbg_lab::report::{json, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// A capture set: a folder with A1.nb, A2.nb, B.nb and differential.json
    dir: PathBuf,
    #[command(flatten)]
    format: super::args::Format,
    /// Write the report as canonical JSON to FILE (the only file ever written; an existing
    /// one only with --force, never a file of the capture set).
    #[arg(long, value_name = "FILE")]
    evidence: Option<PathBuf>,
    #[command(flatten)]
    replace: super::args::Replace,
}

pub fn exec(args: Args) -> ExitCode {
    let dir = args.dir.as_path();
    let evidence = args.evidence.as_deref();
    let mut outputs = match plan_outputs(&[dir], args.replace.force, &[evidence]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let set = match nbg_lab::lab::differential::load(dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("nbg: {e}");
            return e.exit_status().into();
        }
    };
    let report = match nbg_lab::lab::differential::run(&set) {
        Ok(r) => r,
        Err(e) => {
            if args.format.json {
                print_json(&json::Entry::<()>::failed(e.file, &e.failure).to_json());
            } else {
                eprintln!("{e}");
            }
            return e.exit_status().into();
        }
    };
    let value = json::value(&report);
    if let Some(path) = evidence {
        let text = nbg_lab::canonical::canonical(&value);
        if let Err(e) = outputs
            .stage(path, text.as_bytes())
            .and_then(|_| outputs.commit())
        {
            return usage_error(e);
        }
    }
    if args.format.json {
        print_json(&value);
    } else {
        print(&text::differential(&dir.display().to_string(), &report));
    }
    status(report.reproduced())
}
