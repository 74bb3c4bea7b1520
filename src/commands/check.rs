//! `nbg check FILE... [--target 0xPID] [--runtime 0xVERSION] [--strict] [--json]`.

use super::{print, print_json, status};
use nbg_lab::exit::Exit;
use nbg_lab::lab::compatibility::{self, Expect};
use nbg_lab::nbg::family::NbgFamily;
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
        let unexplained = parsed
            .as_ref()
            .ok()
            .and_then(|g| g.crc_summary().unexplained());
        let crc = unexplained.is_some().then_some("unexplained");
        let parsed = match (parsed, unexplained) {
            (Ok(_), Some(f)) if args.strict => Err(f),
            (p, _) => p,
        };
        match parsed {
            Ok(g) if expect.target.is_some() || expect.runtime.is_some() => {
                let v = compatibility::verdict(&shown, &g, expect);
                ok &= v.verdict == compatibility::Outcome::Compatible;
                if args.format.json {
                    docs.push(json::value(&v));
                } else {
                    print(&board::verdict(&v));
                }
            }
            Ok(_) if args.format.json => {
                docs.push(json::Entry::done(&shown, json::Parses { verdict: "ok", crc }).to_json())
            }
            Ok(_) => print(&text::parses(&shown, crc.is_some())),
            Err(f) => {
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
    if unreadable {
        return Exit::Usage.into();
    }
    status(ok)
}
