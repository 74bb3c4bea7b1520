//! `nbg info FILE... [--json]`.

use super::{print, print_json, status};
use nbg_lab::lab::info::{self, Configuration};
use nbg_lab::report::{board, json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// NBG files, one screen each
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    format: super::args::Format,
}

/// The driver's configurations, when it is installed (the board names of `nbg info`).
fn configurations() -> Option<Vec<Configuration>> {
    #[cfg(feature = "onnx")]
    return nbg_lab::simulator::info_configurations();
    #[cfg(not(feature = "onnx"))]
    None
}

pub fn exec(args: Args) -> ExitCode {
    let configs = configurations();
    let mut docs = Vec::new();
    let (mut ok, mut unreadable) = (true, false);
    for file in &args.files {
        let shown = file.display().to_string();
        // An input that cannot be read is its own failed entry; the other files are still read.
        let got = info::info(file, configs.as_deref()).unwrap_or_else(|e| {
            unreadable = true;
            Err(super::unreadable(e))
        });
        match got {
            Ok(i) if args.format.json => docs.push(json::value(&i)),
            Ok(i) => print(&board::info(&i)),
            Err(f) if args.format.json => {
                ok = false;
                docs.push(json::Entry::<()>::failed(&shown, &f).to_json());
            }
            Err(f) => {
                ok = false;
                // Named: with several files, an error without its file says nothing (an
                // unreadable input was said already).
                if f.code != nbg_lab::nbg::failure::Code::Unreadable {
                    eprintln!("{shown}: {f}");
                }
            }
        }
    }
    if args.format.json {
        print_json(&json::files(docs));
    }
    if unreadable {
        return nbg_lab::exit::Exit::Usage.into();
    }
    status(ok)
}
