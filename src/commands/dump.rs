//! `nbg dump FILE OWNER|PAYLOAD|OFFSET:LEN [--raw]`.

use super::{print, report_failure, usage_error};
use nbg_lab::lab::dump::{self, Selector};
use nbg_lab::nbg::family::NbgFamily;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The file (any file for OFFSET:LEN; an NBG for a name).
    file: PathBuf,
    /// OFFSET:LEN (decimal or 0x hex), an owner label as `nbg image` lists it, or a payload
    /// name (a v2 section type such as COEF_DATA, a v1 table such as layer).
    what: String,
    /// The bytes themselves on stdout instead of a hex dump.
    #[arg(long)]
    raw: bool,
}

pub fn exec(args: Args) -> ExitCode {
    let name = args.file.display().to_string();
    let bytes = match nbg_lab::files::read_regular(&args.file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let chosen = match Selector::parse(&args.what) {
        // A range needs no parse: a damaged file dumps too.
        Selector::Range { start, len } => dump::range(start, len, bytes.len() as u64),
        Selector::Name(what) => {
            let graph = match nbg_lab::nbg::parse::parse(&bytes) {
                Ok(g) => g,
                Err(f) => return report_failure(&f, false),
            };
            let image = match nbg_lab::nbg::image::NbgImage::new(&graph) {
                Ok(i) => i,
                Err(f) => return report_failure(&f, false),
            };
            dump::named(&image, &graph.payloads(), &what)
        }
    };
    let s = match chosen {
        Ok(s) => s,
        Err(e) => return usage_error(format!("{name}: {e}")),
    };
    // The selection lies inside the file (checked, or an owner or payload the parse bounded).
    let part = &bytes[s.start as usize..s.end as usize];
    if args.raw {
        let mut out = std::io::stdout().lock();
        if out.write_all(part).and_then(|()| out.flush()).is_err() {
            return super::stdout_closed();
        }
    } else {
        print(&nbg_lab::report::text::hexdump(&name, &s, part));
    }
    ExitCode::SUCCESS
}
