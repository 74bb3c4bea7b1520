//! `nbg inventory CONFIG [--out FILE] [--summary FILE.md] [--jobs N] [--force]`.

use super::{plan_outputs, status, usage_error};
use nbg_lab::progress;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// A hash-pinned corpus config (nbg-corpus/1 or nbg-public-corpus/1)
    config: PathBuf,
    /// Write the canonical inventory JSON here instead of stdout.
    #[arg(short = 'o', long = "output", alias = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also write the Markdown summary.
    #[arg(long, value_name = "FILE.md")]
    summary: Option<PathBuf>,
    /// Worker threads (default: the machine's parallelism; at most 64).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=nbg_lab::lab::inventory::MAX_JOBS as i64))]
    jobs: Option<u16>,
    #[command(flatten)]
    replace: super::args::Replace,
}

pub fn exec(args: Args) -> ExitCode {
    let (config, out, summary) = (&args.config, args.out.as_deref(), args.summary.as_deref());
    let corpus = match nbg_lab::lab::corpus::load(config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("nbg: {e}");
            return e.exit_status().into();
        }
    };
    // The config and every corpus member are inputs: no output may replace one.
    let mut inputs: Vec<&Path> = vec![config];
    inputs.extend(corpus.entries.iter().map(|e| e.full_path.as_path()));
    let mut outputs = match plan_outputs(&inputs, args.replace.force, &[out, summary]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bar = progress::bar(corpus.entries.len() as u64, progress::Unit::Files);
    let jobs = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(nbg_lab::evidence::default_jobs);
    // Each file's entry is written to a temporary file as soon as it is ready, then copied.
    let inventory = nbg_lab::lab::inventory::inventory(&corpus, jobs, &|| progress::inc(&bar, 1));
    progress::clear(bar);
    let inventory = match inventory {
        Ok(i) => i,
        Err(e) => {
            eprintln!("nbg: {e}");
            return e.exit_status().into();
        }
    };
    let staged = out
        .map(|path| outputs.stage_with(path, &mut |w| inventory.write(w)))
        .unwrap_or(Ok(()))
        .and_then(|_| match summary {
            Some(path) => outputs.stage(
                path,
                nbg_lab::report::inventory::summary(&inventory.head).as_bytes(),
            ),
            None => Ok(()),
        })
        .and_then(|_| outputs.commit());
    if let Err(e) = staged {
        return usage_error(e);
    }
    if out.is_none() {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        if inventory
            .write(&mut stdout)
            .and_then(|_| stdout.flush())
            .is_err()
        {
            return super::stdout_closed();
        }
    }
    for r in inventory.rows.iter().filter(|r| !r.ok()) {
        let code = match &r.failure {
            Some((code, offset, _)) => format!("{code} at 0x{offset:x}"),
            None => r.pin.to_string(),
        };
        eprintln!("{}: {code}", r.path);
    }
    status(inventory.all_ok())
}
