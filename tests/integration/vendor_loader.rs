//! The vendor's loader as a differential oracle: nbg's and the loader's verdicts on every file
//! the project holds, a vendor sweep (every crash refused by nbg), and the target and version
//! checks the loader makes, measured.

use super::common;
use serde_json::Value;

fn driver() -> bool {
    common::vendor_driver().is_some()
}

fn json(o: &std::process::Output) -> Value {
    common::stdout_json(o)
}

#[test]
fn nbg_and_the_loader_agree_on_every_file_the_project_holds() {
    if !driver() {
        return;
    }
    let root = common::root();
    let corpus = root.join("../shared/corpus/v1");
    let mut args = vec!["vendor", "agreement", "--json"];
    let c = corpus.display().to_string();
    if corpus.is_dir() {
        args.extend(["--corpus", c.as_str()]);
    }
    let o = common::nbg(&root, &args);
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["disagreements"], 0);
    let rows = v["rows"].as_array().unwrap();
    // Every serializer control and capture-set file is loaded and accepted.
    let serializer: Vec<&Value> = rows
        .iter()
        .filter(|r| r["file"].as_str().unwrap().contains("serializer/"))
        .collect();
    assert!(serializer.len() > 300, "{}", serializer.len());
    assert!(
        serializer
            .iter()
            .all(|r| r["loader"]["verdict"] == "accepted")
    );
    // Every file is loaded: each target word has a configuration (the v1 capture sets' too).
    let unloaded: Vec<&Value> = rows.iter().filter(|r| r["loader"].is_null()).collect();
    assert!(unloaded.is_empty(), "{unloaded:?}");
    for r in rows
        .iter()
        .filter(|r| r["file"].as_str().unwrap().contains("/v1-"))
    {
        assert_eq!(r["loader"]["verdict"], "accepted", "{r}");
    }
}

#[test]
fn a_vendor_sweep_tabulates_both_verdicts_and_nbg_refuses_every_crash() {
    if !driver() {
        return;
    }
    let root = common::root();
    let file = "controls/serializer/add-const-fp16-15.nb";
    let size = std::fs::metadata(root.join(file)).unwrap().len();
    let o = common::nbg(
        &root,
        &["sweep", file, "--vendor", "--stride", "16", "--json"],
    );
    let v = json(&o);
    assert_eq!(v["schema"], "nbg-vendor-sweep/1");
    assert_eq!(v["baseline"]["verdict"], "accepted");
    assert_eq!(v["stride"], 16);
    let mutations = size.div_ceil(16) * 3;
    assert_eq!(v["mutations"], mutations);
    let t = &v["total"];
    let sum: u64 = [
        "both_refuse",
        "only_nbg_refuses",
        "only_loader_refuses",
        "both_accept",
        "loader_crashed",
        "loader_hung",
    ]
    .iter()
    .map(|k| t[*k].as_u64().unwrap())
    .sum();
    assert_eq!(sum, mutations);
    // A crash or hang of the loader is a finding nbg must refuse.
    let findings = v["findings"].as_array().unwrap();
    for f in findings {
        if matches!(f["loader"]["verdict"].as_str(), Some("crashed" | "hung")) {
            assert_eq!(f["nbg"]["verdict"], "refused", "{f}");
        }
    }
    assert_eq!(t["only_loader_refuses"], 0, "a check nbg lacks: {v}");
    let bad = t["loader_crashed"].as_u64().unwrap() + t["loader_hung"].as_u64().unwrap();
    assert_eq!(o.status.code(), Some(if bad > 0 { 1 } else { 0 }));

    // The report shows it on the byte map; a sweep of another file is refused.
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("sweep.json");
    std::fs::write(&sweep, &o.stdout).unwrap();
    let out = dir.path().join("r.html");
    let s = sweep.display().to_string();
    let r = common::nbg(
        &root,
        &[
            "report",
            file,
            "--vendor-sweep",
            &s,
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("Loader verdicts (vendor sweep)"));
    assert!(html.contains("loader verdicts (vendor sweep)"));
    let other = dir.path().join("other.html");
    let r = common::nbg(
        &root,
        &[
            "report",
            "controls/erf-u8.nb",
            "--vendor-sweep",
            &s,
            "-o",
            other.to_str().unwrap(),
        ],
    );
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("not of this file"));
    assert!(!other.exists());
}

#[test]
fn the_loader_checks_a_v1_target_and_version_and_ignores_a_v2_target() {
    if !driver() {
        return;
    }
    let root = common::root();
    let v1 = "controls/public/v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb";
    let v2 = "controls/erf-u8.nb";
    let o = common::nbg(
        &root,
        &[
            "vendor",
            "compat",
            v1,
            v2,
            "--target",
            "0xba",
            "--target",
            "0x15",
            "--version",
            "0x0001001f",
            "--version",
            "0x00010014",
            "--version",
            "0x00020005",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    let verdict = |file: &str, pid: &str, version: &str| -> String {
        let t = v["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["file"] == file && t["pid"] == pid && t["version"] == version)
            .unwrap_or_else(|| panic!("{file} {pid} {version}"));
        match t["loader"]["verdict"].as_str().unwrap() {
            "refused" => format!("refused {}", t["loader"]["status"]),
            other => other.to_string(),
        }
    };
    // v1: its own configuration only, and a version word it shares a layout with.
    assert_eq!(verdict(v1, "0x000000ba", "0x0001001e"), "accepted");
    assert_eq!(verdict(v1, "0x00000015", "0x0001001e"), "refused -7");
    assert_eq!(verdict(v1, "0x000000ba", "0x0001001f"), "accepted");
    assert_eq!(verdict(v1, "0x000000ba", "0x00020005"), "refused -7");
    // v2: any configuration; a v1 version word is refused.
    assert_eq!(verdict(v2, "0x00000015", "0x00020000"), "accepted");
    assert_eq!(verdict(v2, "0x000000ba", "0x00020005"), "accepted");
    assert_eq!(verdict(v2, "0x000000ba", "0x00010014"), "refused -7");
}
