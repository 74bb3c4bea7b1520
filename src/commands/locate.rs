//! `nbg locate MODEL.onnx|TENSORS.npz GRAPH.nb [--json]`: the coefficient locator (PoC 12A),
//! and source tensors matched to the decoded coefficients.

use super::{print, print_json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// An ONNX model, or an .npz of named source tensors (decoded matching only).
    model: PathBuf,
    graph: PathBuf,
    #[command(flatten)]
    format: super::args::Format,
}

/// Exit 0 when it ran (found or not), 1 an invalid NBG or a refused model, 2 unreadable input.
pub fn exec(args: Args) -> ExitCode {
    match nbg_lab::lab::locate::locate_files(&args.model, &args.graph) {
        Err(e) => {
            eprintln!("nbg: {e}");
            e.exit_status().into()
        }
        Ok(doc) if args.format.json => {
            print_json(&doc.to_json());
            ExitCode::SUCCESS
        }
        Ok(doc) => {
            print(&nbg_lab::report::locate::text(&doc));
            ExitCode::SUCCESS
        }
    }
}
