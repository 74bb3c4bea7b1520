//! `nbg synth-corpus --files N --bytes B -o DIR`.

use super::usage_error;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Number of files, 1 to 100,000.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    files: u32,
    /// Approximate size of each file, 4 KiB to 4 GiB + 20,000 bytes (the coefficient table
    /// records sizes in 32 bits).
    #[arg(long, value_parser = clap::value_parser!(u64).range(4096..=nbg_lab::lab::synth::MAX_BULK_BYTES))]
    bytes: u64,
    #[arg(short = 'o', long = "output", alias = "out")]
    out: PathBuf,
}

pub fn exec(args: Args) -> ExitCode {
    match nbg_lab::lab::corpus::write_synthetic(&args.out, args.files, args.bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(e),
    }
}
