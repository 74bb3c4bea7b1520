//! `nbg verify-generated [--write]`.

use super::{failed, print, status};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Rewrite the evidence files instead of comparing them (the vendor-compiled files are
    /// rewritten by `nbg vendor controls --write` and `nbg vendor capture-sets --write`).
    #[arg(long)]
    write: bool,
    /// Do not recompile controls/serializer and differentials/serializer with the vendor
    /// driver (about 2 minutes on 2 cores); said on stderr.
    #[arg(long)]
    skip_vendor: bool,
}

pub fn exec(args: Args) -> ExitCode {
    if !cfg!(feature = "onnx") {
        eprintln!(
            "skipped: {} (nbg built without the onnx feature)",
            nbg_lab::evidence::ONNX_EVIDENCE.join(" and ")
        );
    }
    let root = &nbg_lab::project::root();
    if args.write {
        return match nbg_lab::evidence::write_all(root) {
            Ok(n) => {
                eprintln!("wrote {n} evidence files");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("nbg: {e}");
                e.exit_status().into()
            }
        };
    }
    let vendor_ok = if args.skip_vendor {
        eprintln!("skipped (--skip-vendor): recompiling {VENDOR_FILES} with the vendor driver");
        true
    } else {
        vendor_files(root)
    };
    match nbg_lab::evidence::verify(root) {
        Ok((n, mismatches)) => {
            let listed: Vec<(&str, Option<&str>)> = mismatches
                .iter()
                .map(|m| (m.path.as_str(), (!m.missing).then_some(m.diff.as_str())))
                .collect();
            print(&nbg_lab::report::text::verified(n, &listed, vendor_ok));
            status(mismatches.is_empty() && vendor_ok)
        }
        Err(e) => {
            eprintln!("nbg: cannot rebuild evidence: {e}");
            failed()
        }
    }
}

/// The folders the vendor's driver compiled.
const VENDOR_FILES: &str = "controls/serializer and differentials/serializer";

/// Without the onnx feature there is no driver support to recompile with (said on stderr).
#[cfg(not(feature = "onnx"))]
fn vendor_files(_root: &std::path::Path) -> bool {
    eprintln!("skipped: recompiling {VENDOR_FILES} (nbg built without the onnx feature)");
    true
}

/// Recompile the vendor-compiled files when the driver is installed and compare them: true
/// when identical, or when the driver is missing outside CI (said on stderr).
#[cfg(feature = "onnx")]
fn vendor_files(root: &std::path::Path) -> bool {
    use nbg_lab::simulator;
    let (sdk, configs) = match super::simulator::setup() {
        Ok(s) => s,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            eprintln!("nbg: CI=true and the vendor driver is needed: {e}");
            return false;
        }
        Err(e) => {
            eprintln!("skipped: recompiling {VENDOR_FILES} ({e})");
            return true;
        }
    };
    let start = std::time::Instant::now();
    let mut problems = match simulator::controls::verify(root, &sdk, &configs) {
        Ok((n, p)) => {
            eprintln!(
                "{}: {n} controls recompiled in {:.0} s",
                simulator::controls::DIR,
                start.elapsed().as_secs_f64()
            );
            p
        }
        Err(e) => vec![format!("{}: {e}", simulator::controls::DIR)],
    };
    let start = std::time::Instant::now();
    match simulator::capture_sets::build(&sdk, &configs, &mut |_| {}) {
        Ok(built) => {
            let files = simulator::capture_sets::files(&sdk, &built);
            problems.extend(simulator::capture_sets::compare(root, &files));
            eprintln!(
                "{}: {} capture sets recompiled in {:.0} s",
                simulator::capture_sets::DIR,
                built.len(),
                start.elapsed().as_secs_f64()
            );
        }
        Err(e) => problems.push(format!("{}: {e}", simulator::capture_sets::DIR)),
    }
    for p in &problems {
        print(&format!("{p}\n"));
    }
    problems.is_empty()
}
