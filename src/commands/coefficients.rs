//! `nbg coefficients FILE [--json] [-o WEIGHTS.npz [--force]]`.

use super::{print, print_json, report_failure, status, usage_error};
use nbg_lab::nbg::coefficients;
use nbg_lab::nbg::family::NbgFamily;
use nbg_lab::report::{json, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The NBG file whose coefficient entries to cut and decode
    file: PathBuf,
    #[command(flatten)]
    format: super::args::Format,
    /// Write the decoded tensors to WEIGHTS.npz: per NN buffer `NAME.weights` in the stored
    /// type, shape (channels, z, y, x), `NAME.biases` (int64; a v7 buffer's inline ones),
    /// `NAME.extras` (per-kernel extra elements) and `NAME.zero_point` (8-bit types), NAME
    /// being `layerL.LAYER.opO.nnN.entryE` (a zero-run buffer's the same); per TP
    /// fully-connected part `layerL.LAYER.opO.tpT.weights` (outputs, inputs) and `.biases`
    /// (int32); per image a shader reads, `layerL.LAYER.opO.uU.entryE` in its stored type,
    /// shape (depth, height, width, elements per pixel). Deterministic; an existing
    /// WEIGHTS.npz is replaced only with --force.
    #[cfg(feature = "onnx")]
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        value_name = "WEIGHTS.npz"
    )]
    output: Option<PathBuf>,
    #[cfg(feature = "onnx")]
    #[command(flatten)]
    replace: super::args::Replace,
    /// With -o: every weight tensor as float32, as far as the file says: floats widened,
    /// 8-bit weights less their stored zero point, 16-bit ones as signed integers. No file
    /// stores a kernel's scale or fixed-point position (the commands fold them into their
    /// output multipliers), so integer weights stay in units of their quantization step.
    #[cfg(feature = "onnx")]
    #[arg(long, requires = "output")]
    float: bool,
}

pub fn exec(args: Args) -> ExitCode {
    let name = args.file.display().to_string();
    // The output is checked before any work: never the input, replaced only with --force.
    #[cfg(feature = "onnx")]
    let mut outputs =
        match super::plan_outputs(&[&args.file], args.replace.force, &[args.output.as_deref()]) {
            Ok(o) => o,
            Err(code) => return code,
        };
    // The buffers are read from memory: the whole file (a regular file, never a symlink).
    let bytes = match nbg_lab::files::read_regular(&args.file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let graph = match nbg_lab::nbg::parse::parse(&bytes) {
        Ok(g) => g,
        Err(f) => return report_failure(&f, args.format.json),
    };
    let c = coefficients::of(&graph.coefficient_view());
    let (buffers, refused) = (&c.buffers, &c.refused);
    #[cfg(feature = "onnx")]
    if let Some(out) = &args.output {
        let npz = nbg_lab::onnx::npz::write(&nbg_lab::report::weights_npz::tensors(&c, args.float));
        if let Err(e) = outputs.stage(out, &npz).and_then(|()| outputs.commit()) {
            return usage_error(e);
        }
    }
    if args.format.json {
        print_json(&json::Entry::done(&name, &c).to_json());
    } else {
        print(&text::coefficients(&name, &c));
    }
    status(refused.is_empty() && buffers.iter().all(|b| b.weights.is_some()))
}
