//! `nbg vendor load`.

use super::{fail, file_driver};
use crate::commands::{print, print_json, usage_error};
use nbg_lab::NbgFamily as _;
use nbg_lab::report;
use nbg_lab::simulator;
use nbg_lab::simulator::Image;
use nbg_lab::simulator::LoadVerdict;
use std::path::Path;
use std::process::ExitCode;

pub(super) fn load(file: &Path, target: Option<&str>, from_file: bool, json: bool) -> ExitCode {
    let bytes = match nbg_lab::files::read_regular(file) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let (sdk, config) = match file_driver(&bytes, target) {
        Ok(d) => d,
        Err(e) => return fail(&e, json),
    };
    let image = if from_file {
        Image::File(file)
    } else {
        Image::Memory(&bytes)
    };
    let (verdict, seconds) = match simulator::load(&sdk, &config, image) {
        Ok(v) => v,
        Err(e) => return fail(&e, json),
    };
    let parsed = nbg_lab::parse(&bytes);
    let differences = match (&parsed, &verdict) {
        (Ok(g), LoadVerdict::Accepted { parameters, .. }) => {
            simulator::compare_io(g.inputs(), g.outputs(), parameters)
        }
        _ => vec![],
    };
    let accepted = matches!(verdict, LoadVerdict::Accepted { .. });
    let doc = report::simulator::Load {
        file: file.display().to_string(),
        config: &config,
        driver: sdk.to_json(),
        loader: &verdict,
        seconds,
        nbg: report::simulator::ParseVerdict::of(&parsed),
        io_differences: differences,
    };
    if json {
        print_json(&report::json::value(&doc));
    } else {
        print(&report::simulator::load(&doc));
    }
    if accepted && doc.io_differences.is_empty() && parsed.is_ok() {
        ExitCode::SUCCESS
    } else {
        crate::commands::failed()
    }
}
