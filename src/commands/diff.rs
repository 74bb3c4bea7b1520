//! `nbg diff A B [--json] [--hexdump]`.

use super::{failed, print, print_json, status, usage_error};
use nbg_lab::files::read_regular;
use nbg_lab::image::NbgImage;
use nbg_lab::parse;
use nbg_lab::report::{json, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    a: PathBuf,
    b: PathBuf,
    #[arg(long)]
    json: bool,
    /// Show each changed range with 16 bytes of context (coloured on a terminal).
    #[arg(long)]
    hexdump: bool,
}

pub fn exec(args: Args) -> ExitCode {
    let (a, b) = (&args.a, &args.b);
    let (ba, bb) = match (read_regular(a), read_regular(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return usage_error(e),
    };
    let load = |bytes| parse(bytes).and_then(|g| NbgImage::new(&g).map(|i| (g, i)));
    let ((ga, ia), (gb, ib)) = match (load(&ba), load(&bb)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(f), _) => {
            eprintln!("{}: {f}", a.display());
            return failed();
        }
        (_, Err(f)) => {
            eprintln!("{}: {f}", b.display());
            return failed();
        }
    };
    let report = match nbg_lab::diff::diff(&ga, &ia, &gb, &ib) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("nbg: {e}");
            return ExitCode::from(e.exit_status());
        }
    };
    if args.json {
        print_json(&json::value(&report));
    } else {
        let (an, bn) = (a.display().to_string(), b.display().to_string());
        print(&text::diff(&an, &bn, &report));
        if args.hexdump {
            let colour = std::io::IsTerminal::is_terminal(&std::io::stdout());
            print(&text::diff_hexdump(&report, &ba, &bb, colour));
        }
    }
    status(report.identical)
}
