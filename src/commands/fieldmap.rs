//! `nbg fieldmap [--family v1|v2] [--format json|ksy|md]`: the field map, exported.

use super::{print, usage_error};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_name = "v1|v2")]
    family: Option<String>,
    #[arg(long, value_name = "json|ksy|md", default_value = "json")]
    format: String,
}

pub fn exec(args: Args) -> ExitCode {
    match nbg_lab::fieldmap::render(args.family.as_deref(), &args.format) {
        Ok(text) => {
            print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(e),
    }
}
