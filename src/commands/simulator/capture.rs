//! `nbg vendor capture`.

use super::{driver_for, fail};
use crate::commands::{print_json, usage_error};
use nbg_lab::report;
use nbg_lab::simulator;
use std::path::Path;
use std::process::ExitCode;

pub(super) fn capture(a: &Path, b: &Path, target: &str, out: &Path, json: bool) -> ExitCode {
    let read = |p: &Path| nbg_lab::files::read_regular(p);
    let (ma, mb) = match (read(a), read(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return usage_error(e),
    };
    let quantity = match simulator::capture::difference(&ma, &mb) {
        Ok(q) => q,
        Err(m) => {
            eprintln!("nbg: capture-refused: {m}");
            return crate::commands::failed();
        }
    };
    // The folder is checked before the compiles, which take seconds each.
    if out.symlink_metadata().is_ok() {
        return usage_error(format!("{}: already exists", out.display()));
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return usage_error(format!("{}: no such folder", parent.display()));
        }
    }
    let (sdk, config) = match driver_for(target, json) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let mut compiled = Vec::new();
    for m in [&ma, &ma, &mb] {
        let name = simulator::capture::graph_name(&prost_decode(m));
        match simulator::compile(
            &sdk,
            &config,
            m,
            Some(name.as_str()).filter(|n| !n.is_empty()),
        ) {
            Ok(c) => compiled.push(c),
            Err(e) => return fail(&e, json),
        }
    }
    use simulator::capture::Notes as _;
    let spec = simulator::capture::spec(&quantity, &compiled[0], &compiled[2], &config, &sdk)
        .with_context(simulator::capture::context(&ma), &|k| k == quantity.key);
    if let Err(e) = nbg_lab::lab::capture::write_set(
        &compiled[0].nbg,
        &compiled[1].nbg,
        &compiled[2].nbg,
        &spec,
        out,
    ) {
        return usage_error(e);
    }
    let a2_same = compiled[0].nbg == compiled[1].nbg;
    let doc = report::simulator::Capture {
        out: out.display().to_string(),
        config: &config,
        quantity: &quantity.key,
        a1_sha256: compiled[0].nbg_sha256,
        a2_sha256: compiled[1].nbg_sha256,
        b_sha256: compiled[2].nbg_sha256,
        a1_equals_a2: a2_same,
    };
    if json {
        print_json(&report::json::value(&doc));
    } else {
        eprint!("{}", report::simulator::capture(&doc));
    }
    if a2_same {
        ExitCode::SUCCESS
    } else {
        crate::commands::failed()
    }
}

/// A model already admitted by `capture::difference` (so it decodes).
fn prost_decode(m: &[u8]) -> nbg_lab::onnx::proto::ModelProto {
    use prost::Message as _;
    nbg_lab::onnx::proto::ModelProto::decode(m).unwrap_or_default()
}
