//! `nbg vendor compat`.

use super::{fail, setup, target_word};
use crate::commands::{print, print_json, usage_error};
use nbg_lab::report;
use nbg_lab::simulator::{self, VendorError};
use std::path::PathBuf;
use std::process::ExitCode;

pub(super) fn compat(
    files: &[PathBuf],
    targets: &[String],
    versions: &[u32],
    json: bool,
) -> ExitCode {
    let (sdk, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, json),
    };
    let mut loaded = Vec::new();
    for f in files {
        match nbg_lab::files::read_regular(f) {
            Ok(b) => loaded.push((f.display().to_string(), b)),
            Err(e) => return usage_error(e),
        }
    }
    let mut chosen: Vec<&simulator::Config> = Vec::new();
    if targets.is_empty() {
        for (_, b) in &loaded {
            match target_word(b).and_then(|t| simulator::targets::for_pid(&configs, t)) {
                Some(c) if !chosen.iter().any(|x| x.name == c.name) => chosen.push(c),
                Some(_) => {}
                None => {
                    return fail(
                        &VendorError::Target(format!(
                            "no configuration for target 0x{:08x}",
                            target_word(b).unwrap_or(0)
                        )),
                        json,
                    );
                }
            }
        }
    }
    for t in targets {
        match simulator::targets::resolve(&configs, t) {
            Ok(c) => chosen.push(c),
            Err(m) => return fail(&VendorError::Target(m), json),
        }
    }
    let trials = match simulator::compat::run(&sdk, &chosen, &loaded, versions) {
        Ok(t) => t,
        Err(e) => return fail(&e, json),
    };
    let doc = report::simulator::Compat { trials: &trials };
    if json {
        print_json(&report::json::value(&doc));
    } else {
        print(&report::simulator::compat(&doc));
    }
    ExitCode::SUCCESS
}
