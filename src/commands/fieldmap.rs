//! `nbg fieldmap [--family v1|v2] [--format json|ksy|md]`: the field map, exported.

use super::{print, usage_error};
use nbg_lab::Family;
use nbg_lab::report::fieldmap::{Export, render};
use std::process::ExitCode;

/// A family to export.
#[derive(Clone, Copy, clap::ValueEnum)]
enum FamilyArg {
    V1,
    V2,
}

/// An export format.
#[derive(Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    Json,
    Ksy,
    Md,
}

#[derive(clap::Args)]
pub struct Args {
    /// One family (both when left out; a .ksy needs one).
    #[arg(long, value_enum)]
    family: Option<FamilyArg>,
    #[arg(long, value_enum, default_value = "json")]
    format: FormatArg,
}

pub fn exec(args: Args) -> ExitCode {
    let family = match args.family {
        None => None,
        Some(FamilyArg::V1) => Some(Family::V1),
        Some(FamilyArg::V2) => Some(Family::V2),
    };
    let format = match args.format {
        FormatArg::Json => Export::Json,
        FormatArg::Ksy => Export::Ksy,
        FormatArg::Md => Export::Markdown,
    };
    match render(family, format) {
        Ok(text) => {
            print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(e),
    }
}
