//! `nbg crc-explain FILE... [--json]`.

use super::{print, print_json, status, usage_error};
use nbg_lab::files::read_regular;
use nbg_lab::parse;
use nbg_lab::report::{json, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[arg(long)]
    json: bool,
}

pub fn exec(args: Args) -> ExitCode {
    let mut reports = Vec::new();
    let mut ok = true;
    for file in &args.files {
        let bytes = match read_regular(file) {
            Ok(b) => b,
            Err(e) => return usage_error(e),
        };
        let name = file.display().to_string();
        match parse(&bytes) {
            Ok(graph) => {
                let e = nbg_lab::crc_explain::explain(&graph);
                if !args.json {
                    print(&text::crc_explain(&name, &e));
                }
                reports.push(json::with_file(json::value(&e), &name));
            }
            Err(f) => {
                ok = false;
                if args.json {
                    reports.push(json::failure_in(&name, &f));
                } else {
                    eprintln!("{name}: {f}");
                }
            }
        }
    }
    if args.json {
        print_json(&serde_json::Value::Array(reports));
    }
    status(ok)
}
