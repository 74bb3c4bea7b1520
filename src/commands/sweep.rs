//! `nbg sweep FILE [--json] [--svg OUT.svg] [--force] [--exhaustive]`, and with `--vendor
//! [--target T] [--stride N]` the same flips judged by the vendor's loader too.

use super::{plan_outputs, print, print_json, report_failure, status, usage_error};
use nbg_lab::files::read_regular;
use nbg_lab::progress;
use nbg_lab::report::{json, svg, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The NBG file whose bytes to flip, in memory only
    file: PathBuf,
    #[command(flatten)]
    format: super::args::Format,
    /// Also write a byte map of the three classes (refuses to overwrite without --force).
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    replace: super::args::Replace,
    /// Flip and parse every offset even in large files (no coverage-derived payload bytes).
    #[arg(long)]
    exhaustive: bool,
    /// Also hand every flipped image to the vendor's loader (from memory, in contained
    /// children, 128 images each) and tabulate nbg's and the loader's verdicts per owner
    /// class and field (both refuse, only nbg, only the loader, both accept; crashes, hangs).
    /// Exit 0 when the loader neither crashed, hung nor refused what nbg accepts.
    #[cfg(feature = "onnx")]
    #[arg(long)]
    vendor: bool,
    /// With --vendor: the configuration (name or 0xPID); the file's own target word by default.
    #[cfg(feature = "onnx")]
    #[arg(long, requires = "vendor")]
    target: Option<String>,
    /// With --vendor: flip every N-th offset only (the sampling is reported).
    #[cfg(feature = "onnx")]
    #[arg(long, requires = "vendor", default_value_t = 1)]
    stride: u64,
}

pub fn exec(args: Args) -> ExitCode {
    #[cfg(feature = "onnx")]
    if args.vendor {
        return super::simulator::sweep::sweep(
            &args.file,
            args.target.as_deref(),
            args.stride,
            args.format.json,
            args.svg.as_deref(),
            args.replace.force,
        );
    }
    let file = args.file.as_path();
    let mut outputs = match plan_outputs(&[file], args.replace.force, &[args.svg.as_deref()]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bytes = match read_regular(file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let bar = if args.format.json {
        None
    } else {
        progress::bar(bytes.len() as u64, progress::Unit::Bytes)
    };
    let limit = if args.exhaustive {
        u64::MAX
    } else {
        nbg_lab::lab::sweep::EXHAUSTIVE_LIMIT
    };
    let swept =
        nbg_lab::lab::sweep::sweep_with_progress(&bytes, limit, &|n| progress::inc(&bar, n));
    progress::clear(bar);
    let (report, outcomes) = match swept {
        Ok(r) => r,
        Err(f) => return report_failure(&f, args.format.json),
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
    if args.format.json {
        print_json(&json::value(&report));
    } else {
        print(&text::sweep(&file.display().to_string(), &report));
    }
    status(report.undetected == 0)
}
