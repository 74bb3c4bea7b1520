//! `nbg synth --profile P --seed S -o OUT [--force]`.

use super::{plan_outputs, usage_error};
use nbg_lab::lab::synth;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// One of: erf-u8, ctc-like, zipformer-like, tail-gap, shuffled (v2);
    /// v1-0020-suffix-crc, v1-0030-whole-file-crc, v1-0009-no-crc (v1).
    #[arg(long)]
    profile: String,
    #[arg(long)]
    seed: u64,
    /// Output file (refuses to overwrite an existing one without --force).
    #[arg(short = 'o', long = "output", alias = "out")]
    out: PathBuf,
    #[command(flatten)]
    replace: super::args::Replace,
}

pub fn exec(args: Args) -> ExitCode {
    let (profile, out) = (args.profile.as_str(), args.out.as_path());
    let mut outputs = match plan_outputs(&[], args.replace.force, &[Some(out)]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let built = match synth::profile(profile, args.seed) {
        Ok(layout) => layout.emit(),
        Err(synth::BuildError::Unknown(_)) => match nbg_lab::lab::synth_v1::profile(profile) {
            Some(bytes) => bytes.map_err(synth::BuildError::from),
            None => {
                let v1 = nbg_lab::lab::synth_v1::PROFILES.map(|p| p.0);
                return usage_error(format!(
                    "unknown profile {profile:?}; known: {}, {}",
                    synth::PROFILES.join(", "),
                    v1.join(", ")
                ));
            }
        },
        Err(e) => Err(e),
    };
    let bytes = match built {
        Ok(bytes) => bytes,
        Err(e) => return usage_error(format!("profile {profile}: {e}")),
    };
    match outputs.stage(out, &bytes).and_then(|_| outputs.commit()) {
        Ok(()) => {
            eprintln!("wrote {} ({} bytes)", out.display(), bytes.len());
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(e),
    }
}
