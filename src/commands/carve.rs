//! `nbg carve IMAGE [-o DIR] [--json]`.

use super::{print, print_json, status, usage_error};
use nbg_lab::lab::carve;
use nbg_lab::report::board;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// A firmware image, archive or any container file.
    image: PathBuf,
    /// Extract each valid NBG into this new folder as 0x<offset>.nb (refused when it exists);
    /// without it nothing is written.
    #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    format: super::args::Format,
}

pub fn exec(args: Args) -> ExitCode {
    match carve::carve(&args.image, args.out.as_deref()) {
        Err(e) => usage_error(e),
        Ok(c) => {
            if args.format.json {
                print_json(&nbg_lab::report::json::value(&c));
            } else {
                print(&board::carve(&c));
            }
            status(!c.found.is_empty())
        }
    }
}
