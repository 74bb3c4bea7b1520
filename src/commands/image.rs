//! `nbg image FILE [--json] [--fields] [--unknown] [--svg OUT.svg] [--force]`.

use super::{plan_outputs, print, print_json, report_failure, status, usage_error};
use nbg_lab::report::{svg, text};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The NBG file whose bytes to account for
    file: PathBuf,
    #[command(flatten)]
    format: super::args::Format,
    /// Also write a byte map coloured by owner class (refuses to overwrite without --force).
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<PathBuf>,
    /// Also list every decoded field with its value (and a bit-field word's parts), in file
    /// order; with --json, under `fields`.
    #[arg(long)]
    fields: bool,
    /// List only the fields the field map names unknown, grouped by name with their count and
    /// bytes (what `info`'s "fields named unknown" holds); with --json, under `unknown_fields`.
    #[arg(long)]
    unknown: bool,
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
    let (graph, image) = match built {
        Ok(x) => x,
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
    let fields = (args.fields || args.unknown).then(|| {
        let all = nbg_lab::lab::fields::fields(&graph, &image);
        if args.fields {
            all
        } else {
            all.into_iter()
                .filter(|f| f.evidence == Some(nbg_lab::nbg::fieldmap::Evidence::Unknown))
                .collect()
        }
    });
    let unknown = args
        .unknown
        .then(|| nbg_lab::lab::fields::unknown_summary(fields.as_deref().unwrap_or_default()));
    if args.format.json {
        let mut doc = image.to_json();
        if let Some(d) = doc.as_object_mut() {
            if let Some(f) = fields.as_ref().filter(|_| args.fields) {
                d.insert("fields".into(), serde_json::json!(f));
            }
            if let Some(u) = &unknown {
                let rows: Vec<_> = u
                    .iter()
                    .map(|(field, count, bytes)| {
                        serde_json::json!({ "field": field, "count": count, "bytes": bytes })
                    })
                    .collect();
                d.insert("unknown_fields".into(), serde_json::json!(rows));
            }
        }
        print_json(&doc);
    } else {
        print(&text::image(&file.display().to_string(), &image, &recon));
        if let Some(f) = fields.as_ref().filter(|_| args.fields) {
            print(&text::fields(f));
        }
        if let Some(u) = &unknown {
            print(&text::unknown_fields(u));
        }
    }
    status(recon.is_ok())
}
