//! `nbg synth-differential --name NAME -o DIR`.

use super::usage_error;
use nbg_lab::lab::mapping::captures;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// One of: dynaio-constant, dynaio-later-entry, dynaio-multi-byte, negative-outside-dynaio,
    /// v2-output-scale-64, v2-output-scale-256, v2-output-scale-with-zero-point,
    /// v1-input-scale-quarter, v1-input-scale-eighth, v1-input-scale-with-output,
    /// coef-word-a, coef-word-b, coef-word-and-tp.
    #[arg(long)]
    name: String,
    #[arg(short = 'o', long = "output", alias = "out")]
    out: PathBuf,
}

pub fn exec(args: Args) -> ExitCode {
    let set = match captures::build(&args.name) {
        Ok(set) => set,
        Err(nbg_lab::lab::synth::BuildError::Unknown(_)) => {
            return usage_error(format!(
                "unknown capture set {:?}; known: {}",
                args.name,
                captures::all_names().join(", ")
            ));
        }
        Err(e) => return usage_error(format!("capture set {}: {e}", args.name)),
    };
    if let Err(e) = nbg_lab::lab::capture::write(&set.a, &set.b, &set.spec, &args.out) {
        return usage_error(e);
    }
    eprintln!(
        "wrote capture set {} into {}",
        args.name,
        args.out.display()
    );
    ExitCode::SUCCESS
}
