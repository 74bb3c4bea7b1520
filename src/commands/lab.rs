//! `nbg lab [--corpus CONFIG]... [--out DIR]`.

use super::{print, status, usage_error};
use nbg_lab::output;
use nbg_lab::report::text;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// A corpus config to inventory too (nbg-corpus/1 or nbg-public-corpus/1); repeatable.
    #[arg(long, value_name = "CONFIG")]
    corpus: Vec<PathBuf>,
    /// Write each added corpus's inventory (<config stem>.json and .md) into DIR, which
    /// must not exist yet; nothing is written without it.
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        value_name = "DIR",
        requires = "corpus"
    )]
    out: Option<PathBuf>,
}

pub fn exec(args: Args) -> ExitCode {
    let mut corpora = Vec::new();
    for config in &args.corpus {
        match nbg_lab::lab::corpus::load(config) {
            Ok(c) => corpora.push((config.display().to_string(), c)),
            Err(e) => {
                eprintln!("nbg: {e}");
                return e.exit_status().into();
            }
        }
    }
    if let Some(dir) = &args.out {
        if std::fs::symlink_metadata(dir).is_ok() {
            return usage_error(format!("{}: already exists", dir.display()));
        }
    }
    let report = nbg_lab::evidence::steps::run(&nbg_lab::project::root(), &corpora);
    print(&text::lab_steps(&report));
    if let Some(dir) = &args.out {
        let files: Vec<(&str, &[u8])> = report
            .inventories
            .iter()
            .map(|g| (g.path.as_str(), g.text.as_bytes()))
            .collect();
        if let Err(e) = output::write_new_dir(dir, &files) {
            return usage_error(e);
        }
        eprintln!(
            "wrote {} inventory files into {}",
            files.len(),
            dir.display()
        );
    }
    print(&text::lab_total(&report));
    status(report.steps.iter().all(|s| s.passed))
}
