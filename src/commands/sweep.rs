//! `nbg sweep FILE [--json] [--svg OUT.svg] [--force] [--exhaustive]`.

use super::{plan_outputs, print, print_json, report_failure, status, usage_error};
use nbg_lab::files::read_regular;
use nbg_lab::progress;
use nbg_lab::report::{json, svg, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    file: PathBuf,
    #[arg(long)]
    json: bool,
    /// Also write a byte map of the three classes (refuses to overwrite without --force).
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<PathBuf>,
    /// Replace an existing output file (never an input of this run, never a non-regular file).
    #[arg(long)]
    force: bool,
    /// Flip and parse every offset even in large files (no coverage-derived payload bytes).
    #[arg(long)]
    exhaustive: bool,
}

pub fn exec(args: Args) -> ExitCode {
    let file = args.file.as_path();
    let mut outputs = match plan_outputs(&[file], args.force, &[args.svg.as_deref()]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bytes = match read_regular(file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let bar = if args.json {
        None
    } else {
        progress::bar(bytes.len() as u64, progress::Unit::Bytes)
    };
    let limit = if args.exhaustive {
        u64::MAX
    } else {
        nbg_lab::sweep::EXHAUSTIVE_LIMIT
    };
    let swept = nbg_lab::sweep::sweep_with_progress(&bytes, limit, &|n| progress::inc(&bar, n));
    progress::clear(bar);
    let (report, outcomes) = match swept {
        Ok(r) => r,
        Err(f) => return report_failure(&f, args.json),
    };
    if let Some(path) = &args.svg {
        let title = format!("sweep of {} ({})", file.display(), report.format);
        let map = svg::sweep_map(&title, bytes.len() as u64, &outcomes);
        if let Err(e) = outputs
            .stage(path, map.as_bytes())
            .and_then(|_| outputs.commit())
        {
            return usage_error(e);
        }
    }
    if args.json {
        print_json(&json::value(&report));
    } else {
        print(&text::sweep(&file.display().to_string(), &report));
    }
    status(report.undetected == 0)
}
