//! `nbg info FILE... [--json]`.

use super::{print, print_json, report_failure, status, usage_error};
use nbg_lab::lab::info::{self, Configuration};
use nbg_lab::report::{board, json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    format: super::args::Format,
}

/// The driver's configurations, when it is installed (it names the PIDs).
fn configurations() -> Option<Vec<Configuration>> {
    #[cfg(feature = "onnx")]
    if let Ok(configs) = nbg_lab::simulator::installed_configs() {
        return Some(
            configs
                .into_iter()
                .map(|c| Configuration {
                    name: c.name,
                    pid: c.pid,
                })
                .collect(),
        );
    }
    None
}

pub fn exec(args: Args) -> ExitCode {
    let configs = configurations();
    let mut docs = Vec::new();
    let mut ok = true;
    for file in &args.files {
        match info::info(file, configs.as_deref()) {
            Err(e) => return usage_error(e),
            Ok(Ok(i)) if args.format.json => docs.push(json::value(&i)),
            Ok(Ok(i)) => print(&board::info(&i)),
            Ok(Err(f)) if args.format.json => {
                ok = false;
                docs.push(json::Entry::<()>::failed(&file.display().to_string(), &f).to_json());
            }
            Ok(Err(f)) => {
                ok = false;
                let _ = report_failure(&f, false);
            }
        }
    }
    if args.format.json {
        print_json(&json::files(docs));
    }
    status(ok)
}
