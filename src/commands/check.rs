//! `nbg check FILE... [--target 0xPID] [--runtime 0xVERSION] [--strict] [--json]`.

use super::{print, print_json, status};
use nbg_lab::exit::Exit;
use nbg_lab::lab::compatibility::{self, Expect, Judgement};
use nbg_lab::report::{board, json, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// NBG files to judge, each on its own line (a folder or unreadable input is a failed line)
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The device's NPU PID (0x1000003b): each file's target word must be it.
    #[arg(long, value_name = "0xPID", value_parser = nbg_lab::word::parse)]
    target: Option<u32>,
    /// The newest NBG format version the device's runtime reads (0x00010020): no file may be
    /// newer.
    #[arg(long, value_name = "0xVERSION", value_parser = nbg_lab::word::parse)]
    runtime: Option<u32>,
    /// Refuse a file whose v1 CRC field no known rule reproduces (`crc-field-unexplained`, as
    /// `carve` and the sweep name it); without it such a file is `ok (crc unexplained)`.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    format: super::args::Format,
}

pub fn exec(args: Args) -> ExitCode {
    let expect = Expect {
        target: args.target,
        runtime: args.runtime,
    };
    let (mut ok, mut unreadable) = (true, false);
    let mut docs = Vec::new();
    for file in &args.files {
        let shown = file.display().to_string();
        let parsed = nbg_lab::nbg::open::parse_file(file, Default::default());
        // An input that cannot be read (a folder, a symlink, no permission) is one failed line,
        // said on stderr too (exit 2 at the end); the other files are still judged.
        let parsed = parsed.unwrap_or_else(|e| {
            unreadable = true;
            Err(super::unreadable(e))
        });
        let judged = compatibility::judge(&shown, parsed, expect, args.strict);
        ok &= judged.passes();
        if args.format.json {
            docs.push(json::judgement(&shown, &judged));
            continue;
        }
        match &judged {
            Judgement::Verdict(v) => print(&board::verdict(v)),
            Judgement::Parses { crc_unexplained } => print(&text::parses(&shown, *crc_unexplained)),
            Judgement::Failed(f) => print(&text::failed(&shown, f)),
        }
    }
    if args.format.json {
        print_json(&json::files(docs));
    }
    if unreadable {
        return Exit::Usage.into();
    }
    status(ok)
}
