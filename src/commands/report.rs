//! `nbg report (FILE | A B | --differential DIR) -o OUT.html [--sweep | --vendor-sweep JSON]
//! [--force]`.

use super::usage_error;
use nbg_lab::report::{ReportError, Request};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// One graph, or two graphs A and B to compare.
    #[arg(num_args = 0..=2)]
    files: Vec<PathBuf>,
    /// A capture directory (A1.nb, A2.nb, B.nb, differential.json) instead of files.
    #[arg(long, value_name = "DIR", conflicts_with = "files")]
    differential: Option<PathBuf>,
    #[arg(short = 'o', long = "output", alias = "out", value_name = "OUT.html")]
    out: PathBuf,
    /// One graph only: add the mutation sweep's protection map.
    #[arg(long)]
    sweep: bool,
    /// One graph only: show the loader's verdicts of a `nbg sweep FILE --vendor --json` run
    /// (saved as SWEEP.json; it must be of the same file) on the byte map, with its tables.
    #[arg(long, value_name = "SWEEP.json", conflicts_with = "sweep")]
    vendor_sweep: Option<PathBuf>,
    #[command(flatten)]
    replace: super::args::Replace,
}

pub fn exec(args: Args) -> ExitCode {
    let Args {
        mut files,
        differential,
        out,
        sweep,
        vendor_sweep,
        replace: super::args::Replace { force },
    } = args;
    if vendor_sweep.is_some() && (differential.is_some() || files.len() != 1) {
        return usage_error("--vendor-sweep needs exactly one FILE");
    }
    let request = match (differential, files.len(), sweep) {
        (Some(dir), 0, false) => Request::Capture { dir },
        (None, 1, _) => Request::Graph {
            file: files.remove(0),
            sweep,
            vendor_sweep,
        },
        (None, 2, false) => Request::Pair {
            b: files.remove(1),
            a: files.remove(0),
        },
        (_, _, true) => return usage_error("--sweep needs exactly one FILE"),
        _ => return usage_error("give FILE, A B, or --differential DIR"),
    };
    let written = request
        .render()
        .and_then(|html| nbg_lab::report::write(&out, &html, &request.inputs(), force));
    match written {
        Ok(()) => {
            eprintln!("wrote {}", out.display());
            ExitCode::SUCCESS
        }
        // An invalid input names its file itself; a usage problem gets the `nbg:` prefix.
        Err(e @ ReportError::Invalid(..)) => {
            eprintln!("{e}");
            e.exit_status().into()
        }
        Err(e) => {
            eprintln!("nbg: {e}");
            e.exit_status().into()
        }
    }
}
