//! `nbg locate MODEL.onnx GRAPH.nb [--json]`: the coefficient locator (PoC 12A).

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    model: PathBuf,
    graph: PathBuf,
    #[arg(long)]
    json: bool,
}

pub fn exec(args: Args) -> ExitCode {
    let r = nbg_lab::lab::locate::cli(&args.model, &args.graph, args.json);
    super::print(&r.stdout);
    eprint!("{}", r.stderr);
    ExitCode::from(r.exit)
}
