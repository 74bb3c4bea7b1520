//! `nbg patches FILE... [--json]`.

use super::{print, print_json, status, usage_error};
use nbg_lab::NbgFamily;
use nbg_lab::report::{json, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// One JSON document: {"files": [...]}, each file's counts and every patch (`targets`:
    /// patch, owner, kind, field, source, transformation; an unresolved field or source as
    /// {"Err": reason}), or its error.
    #[arg(long)]
    json: bool,
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
                if args.json {
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
        if args.json {
            docs.push(json::Entry::done(&name, json::Patches { patches: targets }).to_json());
        } else {
            print(&text::patches(&name, targets.as_ref()));
        }
    }
    if args.json {
        print_json(&json::files(docs));
    }
    status(ok)
}
