//! `nbg vendor targets`.

use super::{fail, setup, target_word};
use crate::commands::{print, print_json, usage_error};
use nbg_lab::simulator;
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

pub(super) fn targets(file: Option<&Path>, json: bool) -> ExitCode {
    let (_, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, json),
    };
    let selected = match file {
        Some(f) => {
            let bytes = match nbg_lab::files::read_regular(f) {
                Ok(b) => b,
                Err(e) => return usage_error(e),
            };
            let Some(pid) = target_word(&bytes) else {
                return usage_error(format!("{}: shorter than a header", f.display()));
            };
            Some((pid, simulator::targets::for_pid(&configs, pid).cloned()))
        }
        None => None,
    };
    if json {
        let mut doc = json!({ "configs": configs });
        if let Some((pid, c)) = &selected {
            doc["file_target"] = json!(format!("0x{pid:08x}"));
            doc["selected"] = json!(c);
        }
        print_json(&doc);
    } else {
        let mut text = String::new();
        match &selected {
            Some((pid, Some(c))) => text.push_str(&format!("target 0x{pid:08x}: {}\n", c.name)),
            Some((pid, None)) => text.push_str(&format!(
                "target 0x{pid:08x}: no configuration of the driver has this PID\n"
            )),
            None => {
                for c in &configs {
                    text.push_str(&format!("{:<48} 0x{:08x}\n", c.name, c.pid));
                }
                text.push_str(&format!("{} configurations\n", configs.len()));
            }
        }
        print(&text);
    }
    match selected {
        Some((_, None)) => crate::commands::failed(),
        _ => ExitCode::SUCCESS,
    }
}
