//! `nbg diff A B [--json] [--hexdump]`.

use super::{failed, print, print_json, status, usage_error};
use nbg_lab::nbg::open::open_image;
use nbg_lab::report::{json, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The first NBG file (it must parse)
    a: PathBuf,
    /// The second NBG file, of the same family (one that does not parse is diffed through A)
    b: PathBuf,
    #[command(flatten)]
    format: super::args::Format,
    /// Show each changed range with 16 bytes of context (coloured on a terminal).
    #[arg(long)]
    hexdump: bool,
}

pub fn exec(args: Args) -> ExitCode {
    let (a, b) = (&args.a, &args.b);
    // Streamed: both files are parsed with positioned reads and compared owner by owner in
    // bounded pieces; neither is held in memory. I/O errors, wherever met, exit 2 as usage
    // errors (A's first), before any parse failure they may have caused.
    let ((sa, la), (sb, lb)) = match (open_image(a), open_image(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return usage_error(e),
    };
    let io_error = || sa.error().or_else(|| sb.error());
    if let Some(e) = io_error() {
        return usage_error(e);
    }
    let ((ga, ia), (gb, ib)) = match (la, lb) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(f), _) => {
            eprintln!("{}: {f}", a.display());
            return failed();
        }
        // B does not parse: its bytes attributed through A's ledger, and why it fails.
        (Ok((ga, ia)), Err(f)) => {
            let bytes = match nbg_lab::files::read_regular(b) {
                Ok(x) => x,
                Err(e) => return usage_error(e),
            };
            let d = nbg_lab::lab::diff::damaged(&ga, &ia, &bytes, &f);
            if args.format.json {
                print_json(&json::value(&d));
            } else {
                let (an, bn) = (a.display().to_string(), b.display().to_string());
                print(&text::damaged_diff(&an, &bn, &d));
            }
            return failed();
        }
    };
    let report = match nbg_lab::lab::diff::diff(&ga, &ia, &gb, &ib) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("nbg: {e}");
            return e.exit_status().into();
        }
    };
    if args.format.json {
        if let Some(e) = io_error() {
            return usage_error(e);
        }
        print_json(&json::value(&report));
    } else {
        let (an, bn) = (a.display().to_string(), b.display().to_string());
        let summary = text::diff(&an, &bn, &report);
        let colour = std::io::IsTerminal::is_terminal(&std::io::stdout());
        let hexdump = args
            .hexdump
            .then(|| text::diff_hexdump(&report, &ia, &ib, colour));
        if let Some(e) = io_error() {
            return usage_error(e);
        }
        print(&summary);
        if let Some(h) = hexdump {
            print(&h);
        }
    }
    status(report.identical)
}
