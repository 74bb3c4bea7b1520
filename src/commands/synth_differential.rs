//! `nbg synth-differential --name NAME -o DIR`.

use super::usage_error;
use nbg_lab::synth;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// One of: dynaio-constant, dynaio-later-entry, dynaio-multi-byte, negative-outside-dynaio.
    #[arg(long)]
    name: String,
    #[arg(short, long)]
    out: PathBuf,
}

pub fn exec(args: Args) -> ExitCode {
    let Some(trio) = synth::trio(&args.name) else {
        return usage_error(format!(
            "unknown capture set {:?}; known: {}",
            args.name,
            synth::TRIOS.join(", ")
        ));
    };
    if let Err(e) = nbg_lab::capture::write(&trio, &args.out) {
        return usage_error(e);
    }
    eprintln!(
        "wrote capture set {} into {}",
        args.name,
        args.out.display()
    );
    ExitCode::SUCCESS
}
