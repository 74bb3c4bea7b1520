//! `nbg vendor compat`.

use super::{fail, setup, target_word};
use crate::commands::{print, print_json, usage_error};
use nbg_lab::simulator::{self, VendorError};
use serde_json::json;
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
    if json {
        print_json(&json!({"trials": trials}));
    } else {
        let mut s = String::new();
        for t in &trials {
            let v = serde_json::to_value(&t.loader).unwrap_or_default();
            s.push_str(&format!(
                "{:<56} version {} (own {}) target {} under {:<34} nbg {:<24} loader {} {}\n",
                t.file,
                t.version,
                t.own_version,
                t.own_target,
                t.config,
                t.nbg,
                v["verdict"].as_str().unwrap_or(""),
                v["status"]
                    .as_i64()
                    .map(|x| x.to_string())
                    .unwrap_or_default()
            ));
        }
        print(&s);
    }
    ExitCode::SUCCESS
}
