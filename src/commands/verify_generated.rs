//! `nbg verify-generated [--write]`.

use super::{failed, print};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Rewrite the evidence files instead of comparing them.
    #[arg(long)]
    write: bool,
}

pub fn exec(args: Args) -> ExitCode {
    if !cfg!(feature = "onnx") {
        eprintln!(
            "skipped: {} (nbg built without the onnx feature)",
            nbg_lab::evidence::ONNX_EVIDENCE.join(" and ")
        );
    }
    let root = &nbg_lab::evidence::steps::project_root();
    if args.write {
        return match nbg_lab::evidence::write_all(root) {
            Ok(n) => {
                eprintln!("wrote {n} evidence files");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("nbg: {e}");
                ExitCode::from(e.exit_status())
            }
        };
    }
    // The serializer controls are binaries a driver rebuilds, 96 compiles: their own command.
    eprintln!(
        "not rebuilt here: controls/serializer (96 compiles by the vendor driver, about 5 minutes): `nbg vendor controls` recompiles and compares them (the tests run it)"
    );
    match nbg_lab::evidence::verify(root) {
        Ok((n, mismatches)) if mismatches.is_empty() => {
            print(&format!("{n} evidence files rebuilt; all identical\n"));
            ExitCode::SUCCESS
        }
        Ok((n, mismatches)) => {
            for m in &mismatches {
                if m.missing {
                    print(&format!("{}: missing (not committed)\n", m.path));
                } else {
                    print(&format!("{}: differs\n{}", m.path, m.diff));
                }
            }
            print(&format!(
                "{} of {n} evidence files differ\n",
                mismatches.len()
            ));
            failed()
        }
        Err(e) => {
            eprintln!("nbg: cannot rebuild evidence: {e}");
            failed()
        }
    }
}
