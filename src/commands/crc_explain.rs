//! `nbg crc-explain FILE... [--json]`: streamed, the file is never held whole.

use super::{print, print_json, status, usage_error};
use nbg_lab::nbg::parse::Options;
use nbg_lab::nbg::read::Data;
use nbg_lab::nbg::stream::FileSource;
use nbg_lab::report::{json, text};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// NBG files whose stored CRC field to explain
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    format: super::args::Format,
}

pub fn exec(args: Args) -> ExitCode {
    let mut reports = Vec::new();
    let mut ok = true;
    for file in &args.files {
        // Streamed: the structure by positioned reads, then each hypothesis segment's CRC.
        let source = match FileSource::open(file) {
            Ok(f) => Arc::new(f),
            Err(e) => return usage_error(e),
        };
        let parsed = match nbg_lab::nbg::open::parse_source(Arc::clone(&source), Options::default())
        {
            Ok(p) => p,
            Err(e) => return usage_error(e),
        };
        let name = file.display().to_string();
        match parsed {
            Ok(graph) => {
                let data = Data::file(Arc::clone(&source));
                let e = nbg_lab::nbg::crc_explain::explain_with(&graph, |s, e| data.crc32(s, e));
                if let Some(error) = source.error() {
                    return usage_error(error);
                }
                if !args.format.json {
                    print(&text::crc_explain(&name, &e));
                }
                reports.push(json::Entry::done(&name, &e).to_json());
            }
            Err(f) => {
                ok = false;
                if args.format.json {
                    reports.push(json::Entry::<()>::failed(&name, &f).to_json());
                } else {
                    eprintln!("{name}: {f}");
                }
            }
        }
    }
    if args.format.json {
        print_json(&serde_json::Value::Array(reports));
    }
    status(ok)
}
