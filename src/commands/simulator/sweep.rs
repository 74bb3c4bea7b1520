//! `nbg vendor sweep`.

use super::{driver_for, fail, target_word};
use crate::commands::{plan_outputs, print, print_json, usage_error};
use nbg_lab::simulator;
use std::path::Path;
use std::process::ExitCode;

/// `nbg sweep FILE --vendor`: nbg's and the loader's verdicts on every flip.
pub fn sweep(
    file: &Path,
    target: Option<&str>,
    stride: u64,
    json: bool,
    svg: Option<&Path>,
    force: bool,
) -> ExitCode {
    let mut outputs = match plan_outputs(&[file], force, &[svg]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bytes = match nbg_lab::files::read_regular(file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let target = match target {
        Some(t) => t.to_string(),
        None => match target_word(&bytes) {
            Some(w) => format!("0x{w:x}"),
            None => return usage_error(format!("{}: no target word", file.display())),
        },
    };
    let (sdk, config) = match driver_for(&target, json) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let bar = if json {
        None
    } else {
        nbg_lab::progress::bar(0, nbg_lab::progress::Unit::Mutations)
    };
    let run = simulator::sweep::run(&bytes, &sdk, &config, stride, &mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    });
    nbg_lab::progress::clear(bar);
    let report = match run {
        Ok(r) => r,
        Err(simulator::sweep::SweepError::Invalid(f)) => {
            return crate::commands::report_failure(&f, json);
        }
        Err(simulator::sweep::SweepError::Vendor(e)) => return fail(&e, json),
    };
    if let Some(path) = svg {
        let title = format!(
            "vendor sweep of {} ({}, stride {})",
            file.display(),
            config.name,
            report.stride
        );
        let map = nbg_lab::report::svg::vendor_sweep_map(&title, bytes.len() as u64, &report);
        if let Err(e) = outputs
            .stage(path, map.as_bytes())
            .and_then(|_| outputs.commit())
        {
            return usage_error(e);
        }
    }
    if json {
        print_json(&nbg_lab::report::json::value(
            &nbg_lab::report::simulator::Sweep {
                schema: nbg_lab::lab::sweep::VENDOR_SCHEMA,
                report: &report,
            },
        ));
    } else {
        print(&nbg_lab::report::text::vendor_sweep(
            &file.display().to_string(),
            &report,
        ));
    }
    let t = &report.total;
    crate::commands::status(
        t.loader_crashed == 0 && t.loader_hung == 0 && t.only_loader_refuses == 0,
    )
}
