//! `nbg parse FILE [--json] [--all]`.

use super::{print, print_json, report_failure, usage_error};
use nbg_lab::NbgFamily;
use nbg_lab::report::text;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The NBG file (`*.nb`, magic `VPMN`) to parse; a symlink or folder is refused
    file: PathBuf,
    #[command(flatten)]
    format: super::args::Format,
    /// List every layer and operation in the text (it lists the first 32 of each).
    #[arg(long)]
    all: bool,
}

pub fn exec(args: Args) -> ExitCode {
    // Streamed: the structure first, the payload once, never the whole file in memory.
    let parsed = match nbg_lab::nbg::open::parse_file(&args.file, Default::default()) {
        Ok(p) => p,
        Err(e) => return usage_error(e),
    };
    match parsed {
        Ok(graph) if args.format.json => print_json(&graph.to_json()),
        Ok(graph) => print(&text::graph(&graph, args.all)),
        Err(failure) => return report_failure(&failure, args.format.json),
    }
    ExitCode::SUCCESS
}
