//! `nbg vendor agreement`.

use super::{fail, setup};
use crate::commands::{print, print_json};
use nbg_lab::simulator;
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

pub(super) fn agreement(corpus: Option<&Path>, json: bool) -> ExitCode {
    let (sdk, configs) = match setup() {
        Ok(s) => s,
        Err(e) => return fail(&e, json),
    };
    let root = nbg_lab::project::root();
    let files = simulator::agreement::files(&root, corpus);
    let rows = match simulator::agreement::run(&sdk, &configs, &files) {
        Ok(r) => r,
        Err(e) => return fail(&e, json),
    };
    let disagreements = rows.iter().filter(|r| r.disagree).count();
    if json {
        let unjudged = rows.iter().filter(|r| r.loader.is_none()).count();
        print_json(
            &json!({"rows": rows, "files": rows.len(), "disagreements": disagreements, "not_loaded": unjudged}),
        );
    } else {
        let mut s = String::new();
        for r in &rows {
            let loader = match &r.loader {
                None => "no configuration for its target".to_string(),
                Some(v) => serde_json::to_value(v)
                    .ok()
                    .map(|v| match (v["verdict"].as_str(), v["status"].as_i64()) {
                        (Some(k), Some(st)) => format!("{k} {st}"),
                        (Some(k), None) => k.to_string(),
                        _ => String::new(),
                    })
                    .unwrap_or_default(),
            };
            s.push_str(&format!(
                "{} {:<60} {} {} nbg {:<24} loader {}\n",
                if r.disagree { "!" } else { " " },
                r.file,
                r.version,
                r.target,
                r.nbg,
                loader
            ));
        }
        let unjudged = rows.iter().filter(|r| r.loader.is_none()).count();
        s.push_str(&format!(
            "{} files: {} judged by both, {} agree, {disagreements} disagree; {unjudged} not loaded (no configuration for their target)\n",
            rows.len(),
            rows.len() - unjudged,
            rows.len() - unjudged - disagreements
        ));
        print(&s);
    }
    crate::commands::status(disagreements == 0)
}
