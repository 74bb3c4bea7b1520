//! `nbg locate MODEL.onnx|TENSORS.npz GRAPH.nb [--ops OPS.json | --layers] [--json]`: the
//! coefficient locator (PoC 12A), source tensors matched to the decoded coefficients, and (with
//! `--ops` or `--layers`) every NN command against the layer its kernel pairs it with.

use super::{print, print_json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// An ONNX model, or an .npz of named source tensors (decoded matching only).
    model: PathBuf,
    /// The NBG file to search
    graph: PathBuf,
    /// The source model's operators (`MODEL.ops.json`, as `../shared/models/tflite_facts.py`
    /// writes it): each NN command whose kernel matched a source tensor is compared with the
    /// operator reading that tensor (input and output image, kernel size and depth, output
    /// channels); a command no kernel pairs is accounted for by its output elements
    #[arg(long, value_name = "OPS.json")]
    ops: Option<PathBuf>,
    /// Check every NN command against the ONNX model's own layers (Conv, depthwise Conv,
    /// Gemm), as --ops does with an operators file
    #[arg(long, conflicts_with = "ops")]
    layers: bool,
    #[command(flatten)]
    format: super::args::Format,
}

/// Exit 0 when it ran (found or not) and no paired NN command disagrees with its layer, 1 when
/// one does, the NBG is invalid or the model refused, 2 unreadable input.
pub fn exec(args: Args) -> ExitCode {
    use nbg_lab::lab::locate::{LayerSource, locate_files, read_ops};
    let layers = match (&args.ops, args.layers) {
        (Some(path), _) => read_ops(path).map(LayerSource::Ops),
        (None, true) => Ok(LayerSource::Model),
        (None, false) => Ok(LayerSource::None),
    };
    match layers.and_then(|l| locate_files(&args.model, &args.graph, &l)) {
        Err(e) => {
            eprintln!("nbg: {e}");
            e.exit_status().into()
        }
        Ok(doc) => {
            if args.format.json {
                print_json(&doc.to_json());
            } else {
                print(&nbg_lab::report::locate::text(&doc));
            }
            if doc.disagrees() {
                nbg_lab::exit::Exit::Failure.into()
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}
