//! `nbg vendor compile`.

use super::{driver_for, fail};
use crate::commands::{plan_outputs, print_json, usage_error};
use nbg_lab::simulator;
use serde_json::json;
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
    let verdict = match nbg_lab::parse(&compiled.nbg) {
        Ok(_) => json!("valid"),
        Err(f) => json!({"code": f.code.to_string(), "offset": f.offset}),
    };
    if json {
        let mut doc = serde_json::to_value(&compiled).unwrap_or_default();
        doc["driver"] = sdk.to_json();
        doc["model"] = json!(model.display().to_string());
        doc["out"] = json!(out.display().to_string());
        doc["nbg_parse"] = verdict;
        print_json(&doc);
    } else {
        eprintln!(
            "wrote {} ({} bytes, version {}, sha256 {}) for {} in {:.1} s",
            out.display(),
            compiled.nbg_bytes,
            compiled.nbg_version,
            compiled.nbg_sha256,
            config.name,
            compiled.seconds
        );
    }
    ExitCode::SUCCESS
}
