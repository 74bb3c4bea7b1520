//! `nbg vendor targets`.

use super::{fail, setup, target_word};
use crate::commands::{print, print_json, usage_error};
use nbg_lab::report;
use nbg_lab::simulator;
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
    let doc = report::simulator::Targets {
        configs: &configs,
        file_target: selected.as_ref().map(|(pid, _)| format!("0x{pid:08x}")),
        selected: selected.as_ref().map(|(_, c)| c.as_ref()),
    };
    if json {
        print_json(&report::json::value(&doc));
    } else {
        print(&report::simulator::targets(&doc));
    }
    match selected {
        Some((_, None)) => crate::commands::failed(),
        _ => ExitCode::SUCCESS,
    }
}
