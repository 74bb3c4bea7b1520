//! `nbg roundtrip FILE... [--json] [--out DIR] [--force]`: the ledger's exact re-emission and
//! the re-encoding of every decoded record through the field map.

use super::{print, print_json, status, usage_error};
use nbg_lab::output::Outputs;
use nbg_lab::report::{json, text};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// NBG files to rebuild from their ledgers and re-encode
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    format: super::args::Format,
    /// Write each exact reconstruction into DIR (an existing folder): only when every file
    /// is exact, all or nothing, never a changed image; existing files only with --force.
    #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    replace: super::args::Replace,
}

pub fn exec(args: Args) -> ExitCode {
    let (files, out) = (&args.files, args.out.as_deref());
    let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let mut outputs = Outputs::new(&inputs, args.replace.force);
    if let Some(dir) = out {
        if !std::fs::symlink_metadata(dir)
            .map(|m| m.is_dir())
            .unwrap_or(false)
        {
            return usage_error(format!(
                "{}: --out must be an existing directory (not a symlink)",
                dir.display()
            ));
        }
        // Every target is checked (and two inputs with one name refused) before any work.
        for file in files {
            if let Err(e) = outputs.plan(&dir.join(file.file_name().unwrap_or_default())) {
                return usage_error(e);
            }
        }
    }
    let mut ok = true;
    let mut docs = Vec::new();
    for file in files {
        // Streamed: the ledger holds ranges; records are read back one by one to compare, and
        // emission copies the owned ranges from the file, so memory does not grow with it.
        let (source, built) = match nbg_lab::nbg::open::open_image(file) {
            Ok(x) => x,
            Err(e) => return usage_error(e),
        };
        let name = file.display();
        let (graph, image) = match built {
            Ok(x) => x,
            Err(f) => {
                if args.format.json {
                    docs.push(json::value(&json::RoundTripFailed {
                        file: &name.to_string(),
                        failure: &f,
                    }));
                } else {
                    print(&text::failed(&name.to_string(), &f));
                }
                ok = false;
                continue;
            }
        };
        let records = nbg_lab::nbg::reencode::reencode(&graph, &image);
        let emitted = image.reconstruction();
        if let Some(e) = source.error() {
            return usage_error(e);
        }
        if args.format.json {
            docs.push(json::round_trip(&name.to_string(), &records, &emitted));
        } else {
            print(&text::roundtrip(
                &name.to_string(),
                emitted.as_ref().map(|_| ()),
                &records,
            ));
        }
        if !records.exact() {
            ok = false;
        }
        match emitted {
            Ok(_) => {
                if let Some(dir) = out {
                    // Emitted again into the staged file: the same proof (length, SHA-256
                    // against the parse's own hash) must hold for what is written.
                    let target = dir.join(file.file_name().unwrap_or_default());
                    let mut write = |w: &mut dyn std::io::Write| {
                        image
                            .emit_to(&mut { w })
                            .map(|_| ())
                            .map_err(std::io::Error::other)
                    };
                    if let Err(e) = outputs.stage_with(&target, &mut write) {
                        return usage_error(e);
                    }
                }
            }
            Err(_) => ok = false,
        }
    }
    if args.format.json {
        print_json(&json::files(docs));
    }
    if out.is_some() {
        if !ok {
            eprintln!("nbg: not every file is exact; nothing written");
        } else if let Err(e) = outputs.commit() {
            return usage_error(e);
        }
    }
    status(ok)
}
