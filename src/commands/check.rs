//! `nbg check FILE...`.

use super::{print, status, usage_error};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub fn exec(args: Args) -> ExitCode {
    let mut ok = true;
    for file in &args.files {
        match nbg_lab::open::parse_file(file, Default::default()) {
            Err(e) => return usage_error(e),
            Ok(Ok(_)) => print(&format!("{}: ok\n", file.display())),
            Ok(Err(f)) => {
                print(&format!(
                    "{}: {} at 0x{:x}\n",
                    file.display(),
                    f.code,
                    f.offset
                ));
                ok = false;
            }
        }
    }
    status(ok)
}
