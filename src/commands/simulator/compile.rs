//! `nbg vendor compile`.

use super::{driver_for, fail};
use crate::commands::{plan_outputs, print_json, usage_error};
use nbg_lab::report;
use nbg_lab::simulator;
use std::path::Path;
use std::process::ExitCode;

pub(super) fn compile(
    model: &Path,
    target: &str,
    out: &Path,
    name: Option<&str>,
    force: bool,
    json: bool,
) -> ExitCode {
    let mut outputs = match plan_outputs(&[model], force, &[Some(out)]) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let bytes = match nbg_lab::files::read_regular(model) {
        Ok(b) => b,
        Err(e) => return usage_error(e),
    };
    let (sdk, config) = match driver_for(target, json) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let compiled = match simulator::compile(&sdk, &config, &bytes, name) {
        Ok(c) => c,
        Err(e) => return fail(&e, json),
    };
    if let Err(e) = outputs
        .stage(out, &compiled.nbg)
        .and_then(|_| outputs.commit())
    {
        return usage_error(e);
    }
    let doc = report::simulator::Compile {
        compiled: &compiled,
        driver: sdk.to_json(),
        model: model.display().to_string(),
        out: out.display().to_string(),
        nbg_parse: report::simulator::ParseVerdict::of(&nbg_lab::parse(&compiled.nbg)),
    };
    if json {
        print_json(&report::json::value(&doc));
    } else {
        eprint!("{}", report::simulator::compile(&doc));
    }
    ExitCode::SUCCESS
}
