//! `nbg vendor load`.

use super::{fail, file_driver};
use crate::commands::{print, print_json, usage_error};
use nbg_lab::NbgFamily as _;
use nbg_lab::simulator;
use nbg_lab::simulator::Image;
use nbg_lab::simulator::LoadVerdict;
use serde_json::json;
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
    let (nbg_verdict, differences) = match (&parsed, &verdict) {
        (Ok(g), LoadVerdict::Accepted { parameters, .. }) => (
            json!("valid"),
            simulator::compare_io(g.inputs(), g.outputs(), parameters),
        ),
        (Ok(_), _) => (json!("valid"), vec![]),
        (Err(f), _) => (
            json!({"code": f.code.to_string(), "offset": f.offset}),
            vec![],
        ),
    };
    let accepted = matches!(verdict, LoadVerdict::Accepted { .. });
    if json {
        print_json(&json!({
            "file": file.display().to_string(),
            "config": config,
            "driver": sdk.to_json(),
            "loader": verdict,
            "seconds": seconds,
            "nbg": nbg_verdict,
            "io_differences": differences,
        }));
    } else {
        let mut t = format!("{} under {}: ", file.display(), config.name);
        match &verdict {
            LoadVerdict::Accepted {
                import_type,
                parameters,
            } => {
                t.push_str(&format!(
                    "accepted ({import_type}), {} parameters\n",
                    parameters.len()
                ));
                for (i, p) in parameters.iter().enumerate() {
                    t.push_str(&format!(
                        "  {i} {:<6} {:?} {} scale {:?} zero point {:?}\n",
                        p.direction,
                        p.dims.clone().unwrap_or_default(),
                        p.data_type.as_deref().unwrap_or("?"),
                        p.scale,
                        p.zero_point
                    ));
                }
            }
            LoadVerdict::Refused {
                step,
                status,
                status_name,
            } => t.push_str(&format!(
                "refused at {step}: status {status} ({status_name})\n"
            )),
            LoadVerdict::Crashed { failure } => t.push_str(&format!("crashed: {failure}\n")),
        }
        t.push_str(&format!("nbg: {nbg_verdict}\n"));
        for d in &differences {
            t.push_str(&format!("differs: {d}\n"));
        }
        print(&t);
    }
    if accepted && differences.is_empty() && parsed.is_ok() {
        ExitCode::SUCCESS
    } else {
        crate::commands::failed()
    }
}
