//! `nbg image FILE [--json] [--svg OUT.svg] [--force]`.

use super::{plan_outputs, print, print_json, report_failure, status, usage_error};
use nbg_lab::report::{svg, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    file: PathBuf,
    #[command(flatten)]
    format: super::args::Format,
    /// Also write a byte map coloured by owner class (refuses to overwrite without --force).
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    replace: super::args::Replace,
}

pub fn exec(args: Args) -> ExitCode {
    let file = args.file.as_path();
    let mut outputs = match plan_outputs(&[file], args.replace.force, &[args.svg.as_deref()]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    // Streamed: the structure with positioned reads, the payload hashed once, the ledger over
    // ranges; emission reads the file again range by range. Memory does not grow with the file.
    let (source, built) = match nbg_lab::nbg::open::open_image(file) {
        Ok(x) => x,
        Err(e) => return usage_error(e),
    };
    let image = match built {
        Ok((_, i)) => i,
        Err(f) => return report_failure(&f, args.format.json),
    };
    let recon = image.reconstruction();
    if let Some(e) = source.error() {
        return usage_error(e);
    }
    if let Some(path) = &args.svg {
        let title = format!("{} ({})", file.display(), image.format());
        let map = svg::owner_map(&title, &image);
        if let Err(e) = outputs
            .stage(path, map.as_bytes())
            .and_then(|_| outputs.commit())
        {
            return usage_error(e);
        }
    }
    if args.format.json {
        print_json(&image.to_json());
    } else {
        print(&text::image(&file.display().to_string(), &image, &recon));
    }
    status(recon.is_ok())
}
