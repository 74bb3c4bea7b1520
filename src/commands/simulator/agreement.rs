//! `nbg vendor agreement`.

use super::{fail, setup};
use crate::commands::{print, print_json};
use nbg_lab::report;
use nbg_lab::simulator;
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
    let doc = report::simulator::Agreement {
        rows: &rows,
        files: rows.len(),
        disagreements: rows.iter().filter(|r| r.disagree).count(),
        not_loaded: rows.iter().filter(|r| r.loader.is_none()).count(),
    };
    if json {
        print_json(&report::json::value(&doc));
    } else {
        print(&report::simulator::agreement(&doc));
    }
    crate::commands::status(doc.disagreements == 0)
}
