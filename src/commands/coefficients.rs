//! `nbg coefficients FILE [--json]`.

use super::{print, print_json, report_failure, status, usage_error};
use nbg_lab::nbg::coefficients;
use nbg_lab::nbg::parse::Graph;
use nbg_lab::report::text;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    file: PathBuf,
    /// One JSON document: {"file", "buffers": [...], "refused": [...]} (an invalid file as
    /// {"error": {code, offset, message}}); each buffer with its
    /// entry, offset, size, the NN command that reads it, the decoded header, its streams
    /// (core, offset, bits, bytes, padding_zero, not_decoded {bit, reason}) and its biases.
    #[arg(long)]
    json: bool,
}

pub fn exec(args: Args) -> ExitCode {
    let name = args.file.display().to_string();
    // The buffers are read from memory: the whole file (a regular file, never a symlink).
    let bytes = match nbg_lab::nbg::files::read_regular(&args.file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let graph = match nbg_lab::nbg::parse::parse(&bytes) {
        Ok(g) => g,
        Err(f) => return report_failure(&f, args.json),
    };
    let Graph::V2(g) = &graph else {
        eprintln!("{name}: v1 coefficient buffers (inside `lcd`) are not cut yet; only v2 is read");
        return status(false);
    };
    let (buffers, refused) = coefficients::of_v2(g);
    if args.json {
        print_json(&serde_json::json!({
            "file": name,
            "buffers": buffers,
            "refused": refused,
        }));
    } else {
        print(&text::coefficients(&name, &buffers, &refused));
    }
    status(refused.is_empty())
}
