//! One verdict per file in every command (issue 68): `check --strict`, `info`, `carve` and the
//! sweep judge each public file and copies of it with one byte flipped the same way.

use super::common;
use nbg_lab::lab::sweep::{Outcome, flip_outcome};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A command's verdicts, file by file: `ok` or the refusing code (a v1 CRC field no rule
/// reproduces is `crc-field-unexplained` wherever a command refuses or reports it).
fn verdicts(dir: &Path, args: &[&str], files: &[String]) -> BTreeMap<String, String> {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(files.iter().map(String::as_str));
    let o = common::nbg(dir, &all);
    let doc: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
    doc["files"]
        .as_array()
        .expect("a files document")
        .iter()
        .map(|e| {
            let verdict = match (&e["error"]["code"], &e["crc"]) {
                (Value::String(code), _) => code.clone(),
                (_, Value::Object(crc)) if crc["status"] == "unexplained" => {
                    "crc-field-unexplained".into()
                }
                (_, Value::String(crc)) if crc == "unexplained" => "crc-field-unexplained".into(),
                _ => "ok".into(),
            };
            (e["file"].as_str().unwrap().to_string(), verdict)
        })
        .collect()
}

/// `carve`'s verdict on a file holding one candidate at offset 0: found, or its near miss code.
fn carved(dir: &Path, file: &str) -> String {
    let o = common::nbg(dir, &["carve", file, "--json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let at_zero = |list: &Value| {
        list.as_array()
            .into_iter()
            .flatten()
            .find(|c| c["offset"] == 0)
            .cloned()
    };
    match (at_zero(&doc["found"]), at_zero(&doc["near_misses"])) {
        (Some(_), _) => "ok".into(),
        (None, Some(m)) => m["code"].as_str().unwrap().into(),
        (None, None) => "no-candidate".into(),
    }
}

#[test]
fn check_info_carve_and_sweep_give_one_verdict_per_file() {
    let (v1, names) = common::public_paths();
    let (v2, names_v2) = common::public_v2_paths();
    let sources = names
        .iter()
        .map(|n| v1.join(n))
        .chain(names_v2.iter().map(|n| v2.join(n)));
    let work = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut flips = Vec::new();
    for (k, path) in sources.enumerate() {
        let base = std::fs::read(&path).unwrap();
        let name = format!("f{k}.nb");
        std::fs::write(work.path().join(&name), &base).unwrap();
        files.push(name.clone());
        // The flip (100,000, here modulo the size), the header's target and size
        // words, the v1 CRC field, one byte in the middle and the last byte.
        let len = base.len();
        for at in [100_000 % len, 8, 12, 0x6c % len, len / 2, len - 1] {
            let mut b = base.clone();
            b[at] ^= 0x01;
            let flipped = format!("f{k}-{at}.nb");
            std::fs::write(work.path().join(&flipped), &b).unwrap();
            files.push(flipped.clone());
            flips.push((path.clone(), base.clone(), name.clone(), at, flipped));
        }
    }
    let check = verdicts(work.path(), &["check", "--strict", "--json"], &files);
    let info = verdicts(work.path(), &["info", "--json"], &files);
    assert_eq!(check.len(), files.len());
    for f in &files {
        assert_eq!(check[f], info[f], "{f}: check --strict and info");
        assert_eq!(
            check[f],
            carved(work.path(), f),
            "{f}: check --strict and carve"
        );
    }
    // The sweep measures a flip against its base: where the base passes `check --strict`, a
    // flip it detects is one `check --strict` refuses with the same code, and one it does not
    // detect is one `check --strict` passes.
    for (path, base, name, at, flipped) in flips {
        if check[&name] != "ok" {
            continue;
        }
        let expect = match flip_outcome(&base, at, 0x01).unwrap() {
            Outcome::Detected(code) => code.to_string(),
            Outcome::Tolerated(_) | Outcome::Undetected => "ok".into(),
        };
        assert_eq!(
            check[&flipped],
            expect,
            "{}: byte {at} flipped: check --strict and the sweep",
            path.display()
        );
    }
}
