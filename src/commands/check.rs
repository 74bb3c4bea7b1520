//! `nbg check FILE... [--target 0xPID] [--runtime 0xVERSION] [--json]`.

use super::{print, print_json, status, usage_error};
use nbg_lab::lab::compatibility::{self, Expect};
use nbg_lab::report::{board, json, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The device's NPU PID (0x1000003b): each file's target word must be it.
    #[arg(long, value_name = "0xPID", value_parser = nbg_lab::word::parse)]
    target: Option<u32>,
    /// The newest NBG format version the device's runtime reads (0x00010020): no file may be
    /// newer.
    #[arg(long, value_name = "0xVERSION", value_parser = nbg_lab::word::parse)]
    runtime: Option<u32>,
    #[command(flatten)]
    format: super::args::Format,
}

pub fn exec(args: Args) -> ExitCode {
    let expect = Expect {
        target: args.target,
        runtime: args.runtime,
    };
    let mut ok = true;
    let mut docs = Vec::new();
    for file in &args.files {
        let shown = file.display().to_string();
        match nbg_lab::nbg::open::parse_file(file, Default::default()) {
            Err(e) => return usage_error(e),
            Ok(Ok(g)) if expect.target.is_some() || expect.runtime.is_some() => {
                let v = compatibility::verdict(&shown, &g, expect);
                ok &= v.verdict == compatibility::Outcome::Compatible;
                if args.format.json {
                    docs.push(json::value(&v));
                } else {
                    print(&board::verdict(&v));
                }
            }
            Ok(Ok(_)) if args.format.json => {
                docs.push(json::Entry::done(&shown, json::Parses { verdict: "ok" }).to_json())
            }
            Ok(Ok(_)) => print(&text::parses(&shown)),
            Ok(Err(f)) => {
                ok = false;
                if args.format.json {
                    docs.push(json::Entry::<()>::failed(&shown, &f).to_json());
                } else {
                    print(&text::failed(&shown, &f));
                }
            }
        }
    }
    if args.format.json {
        print_json(&json::files(docs));
    }
    status(ok)
}
