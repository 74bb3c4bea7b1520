//! `nbg patches FILE... [--json]`.

use super::{print, print_json, status, usage_error};
use nbg_lab::NbgFamily;
use nbg_lab::report::{json, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// NBG files whose patch records to resolve
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    format: super::args::Format,
}

pub fn exec(args: Args) -> ExitCode {
    let mut docs = Vec::new();
    let mut ok = true;
    for file in &args.files {
        let name = file.display().to_string();
        let graph = match nbg_lab::nbg::open::parse_file(file, Default::default()) {
            Ok(Ok(g)) => g,
            Ok(Err(f)) => {
                ok = false;
                if args.format.json {
                    docs.push(json::Entry::<()>::failed(&name, &f).to_json());
                } else {
                    eprintln!("{name}: {f}");
                }
                continue;
            }
            Err(e) => return usage_error(e),
        };
        let targets = graph.patch_targets();
        // A patch that names no field or source is a finding, not a failure of the file.
        if args.format.json {
            docs.push(json::Entry::done(&name, json::Patches { patches: targets }).to_json());
        } else {
            print(&text::patches(&name, targets.as_ref()));
        }
    }
    if args.format.json {
        print_json(&json::files(docs));
    }
    status(ok)
}
