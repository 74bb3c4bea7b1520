//! `nbg locate MODEL.onnx GRAPH.nb [--json]`: the coefficient locator (PoC 12A).

use super::{print, print_json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    model: PathBuf,
    graph: PathBuf,
    #[arg(long)]
    json: bool,
}

/// Exit 0 when it ran (found or not), 1 an invalid NBG or a refused model, 2 unreadable input.
pub fn exec(args: Args) -> ExitCode {
    match nbg_lab::lab::locate::locate_files(&args.model, &args.graph) {
        Err(e) => {
            eprintln!("nbg: {e}");
            e.exit_status().into()
        }
        Ok(doc) if args.json => {
            print_json(&doc);
            ExitCode::SUCCESS
        }
        Ok(doc) => {
            print(&nbg_lab::report::locate::text(&doc));
            ExitCode::SUCCESS
        }
    }
}
