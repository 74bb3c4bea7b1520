//! Corpus configs, the inventory, verify-generated and the lab.

use crate::common;
use common::nbg;

use nbg_lab::evidence;
use nbg_lab::lab::{corpus, inventory};
use std::path::Path;

fn write_config(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("corpus.json");
    std::fs::write(&p, text).unwrap();
    p
}

fn entry(path: &str, bytes: &[u8]) -> String {
    format!(
        r#"{{"path": "{path}", "role": "stock", "sha256": "{}", "size": {}}}"#,
        nbg_lab::digest::Hash256::of(bytes),
        bytes.len()
    )
}

#[test]
fn config_strictness() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let erf = common::control("erf-u8.nb");
    std::fs::write(d.join("a.nb"), &erf).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink(d.join("a.nb"), d.join("link.nb")).unwrap();
    std::os::unix::fs::symlink(d.join("sub"), d.join("linkdir")).unwrap();
    std::fs::write(d.join("sub/b.nb"), &erf).unwrap();
    let ok = format!(
        r#"{{"schema": "nbg-corpus/1", "files": [{}, {}]}}"#,
        entry("a.nb", &erf),
        entry("sub/b.nb", &erf)
    );
    let c = corpus::load(&write_config(d, &ok)).unwrap();
    assert_eq!(c.entries.len(), 2);
    let cases = [
        (r#"{"schema": "nbg-corpus/1", "files": [], "extra": 1}"#.to_string(), "unknown field"),
        (r#"{"schema": "nbg-corpus/1", "files": [], "files": []}"#.to_string(), "duplicate field"),
        (r#"{"schema": "nbg-corpus/2", "files": []}"#.to_string(), "unknown schema"),
        (format!(r#"{{"schema": "nbg-corpus/1", "files": [{}, {}]}}"#, entry("a.nb", &erf), entry("a.nb", &erf)), "listed twice"),
        (format!(r#"{{"schema": "nbg-corpus/1", "files": [{}]}}"#, entry("/etc/passwd", &erf)), "relative"),
        (format!(r#"{{"schema": "nbg-corpus/1", "files": [{}]}}"#, entry("sub/../a.nb", &erf)), ".."),
        (format!(r#"{{"schema": "nbg-corpus/1", "files": [{}]}}"#, entry("link.nb", &erf)), "symlink"),
        (format!(r#"{{"schema": "nbg-corpus/1", "files": [{}]}}"#, entry("linkdir/b.nb", &erf)), "symlink"),
        (format!(r#"{{"schema": "nbg-corpus/1", "files": [{}]}}"#, entry("sub", &erf)), "not a regular file"),
        (format!(r#"{{"schema": "nbg-corpus/1", "files": [{}]}}"#, entry("missing.nb", &erf)), "No such file"),
        (
            r#"{"schema": "nbg-corpus/1", "files": [{"path": "a.nb", "role": "stock", "sha256": "XYZ", "size": 1}]}"#.to_string(),
            "64 lowercase hex",
        ),
        (
            r#"{"schema": "nbg-corpus/1", "files": [{"path": "a.nb", "role": "stock", "sha256": "00", "size": 1, "note": 1}]}"#
                .to_string(),
            "unknown field",
        ),
    ];
    for (text, needle) in cases {
        let e = corpus::load(&write_config(d, &text))
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle), "{text}: {}", e);
    }
}

#[test]
fn controls_inventory_is_deterministic_and_self_hashed() {
    let c = corpus::load(&common::root().join("controls/corpus.json")).unwrap();
    let one = inventory::scan(&c, 1, &|| {});
    let two = inventory::scan(&c, 2, &|| {});
    let (d1, d2) = (
        inventory::document(&c, &one).to_json(),
        inventory::document(&c, &two).to_json(),
    );
    assert_eq!(evidence::canonical(&d1), evidence::canonical(&d2));
    assert!(inventory::all_ok(&one));
    let id = &d1["identity"];
    assert_eq!(id["files"], 5);
    assert_eq!(id["unique_file_sha256"], 5);
    assert_eq!(id["unique_structural_signatures"], 5);
    // inventory_sha256 is the hash of the canonical document without that field.
    let mut without = d1.clone();
    let recorded = without["identity"]
        .as_object_mut()
        .unwrap()
        .remove("inventory_sha256")
        .unwrap();
    assert_eq!(
        recorded.as_str().unwrap(),
        nbg_lab::digest::Hash256::of(evidence::canonical(&without).as_bytes()).hex()
    );
    let text = evidence::canonical(&d1);
    assert!(
        !text.contains(common::root().to_str().unwrap()),
        "absolute path in inventory"
    );
}

#[test]
fn failures_are_listed_and_the_inventory_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let erf = common::control("erf-u8.nb");
    let mut bad = erf.clone();
    bad[0] = b'X';
    std::fs::write(d.join("good.nb"), &erf).unwrap();
    std::fs::write(d.join("bad.nb"), &bad).unwrap();
    std::fs::write(d.join("pin.nb"), &erf).unwrap();
    let wrong_pin = format!(
        r#"{{"path": "pin.nb", "role": "reference", "sha256": "{}", "size": {}}}"#,
        "0".repeat(64),
        erf.len()
    );
    let text = format!(
        r#"{{"schema": "nbg-corpus/1", "files": [{}, {}, {wrong_pin}]}}"#,
        entry("good.nb", &erf),
        entry("bad.nb", &bad)
    );
    write_config(d, &text);
    let out = d.join("inv.json");
    let o = nbg(
        d,
        &[
            "inventory",
            "corpus.json",
            "--out",
            out.to_str().unwrap(),
            "--summary",
            "inv.md",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("bad.nb: bad-magic at 0x0"), "{stderr}");
    assert!(stderr.contains("pin.nb: sha256-mismatch"), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["files"].as_array().unwrap().len(), 3);
    let codes: Vec<&str> = doc["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["bad-magic", "sha256-mismatch"]);
    let md = std::fs::read_to_string(d.join("inv.md")).unwrap();
    assert!(md.contains("| bad.nb | bad-magic |"), "{md}");

    // stdout carries the JSON when --out is absent; no progress bar off a terminal.
    let o = nbg(d, &["inventory", "corpus.json", "--jobs", "1"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["identity"]["files"], 3);
    assert!(!String::from_utf8_lossy(&o.stderr).contains('\r'));
}

#[test]
fn public_corpus_config_is_read_as_it_is() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let c = corpus::load(&dir.join("corpus.json")).unwrap();
    // The expected figures come from the config itself (its count grows with the corpus).
    let listed: Vec<serde_json::Value> = common::corpus_files()
        .unwrap()
        .into_iter()
        .map(|(_, _, pinned)| pinned)
        .collect();
    assert_eq!(c.entries.len(), listed.len());
    let version = |p: &serde_json::Value| {
        u32::from_str_radix(&p["version"].as_str().unwrap()[2..], 16).unwrap()
    };
    let bytes: u64 = listed.iter().map(|p| p["size"].as_u64().unwrap()).sum();
    let whole_file = listed.iter().filter(|p| version(p) == 0x0001_001e).count();
    let older = listed.iter().filter(|p| version(p) < 0x0001_0018).count();
    let r = inventory::scan(&c, 2, &|| {});
    assert!(inventory::all_ok(&r));
    let d = inventory::document(&c, &r).to_json();
    assert_eq!(d["identity"]["files"], listed.len());
    assert_eq!(d["identity"]["bytes"], bytes);
    assert_eq!(d["crc"]["v1 crc field matches"], whole_file);
    assert_eq!(d["crc"]["v1 crc field absent"], older);
}

/// A committed evidence file that no longer matches its rebuild is reported with a diff.
#[test]
fn verify_generated_reports_a_changed_file() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    copy_tree(&common::root().join("controls"), &proj.join("controls"));
    copy_tree(
        &common::root().join("differentials"),
        &proj.join("differentials"),
    );
    copy_tree(&common::root().join("evidence"), &proj.join("evidence"));
    copy_tree(&common::root().join("onnx"), &proj.join("onnx"));
    copy_tree(&common::root().join("policy"), &proj.join("policy"));
    let o = nbg(&proj, &["verify-generated", "--skip-vendor"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("skipped (--skip-vendor)"));

    let target = proj.join("evidence/images/erf-u8.json");
    let text =
        std::fs::read_to_string(&target)
            .unwrap()
            .replacen("\"decoded-record\"", "\"padding\"", 1);
    std::fs::write(&target, text).unwrap();
    std::fs::write(proj.join("evidence/stray.json"), "{}\n").unwrap();
    let o = nbg(&proj, &["verify-generated", "--skip-vendor"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("evidence/images/erf-u8.json: differs"),
        "{out}"
    );
    assert!(out.contains("-      \"class\": \"padding\","), "{out}");
    assert!(
        out.contains("+      \"class\": \"decoded-record\","),
        "{out}"
    );
    assert!(out.contains("evidence/stray.json"), "{out}");

    // --write restores the rebuilt files (stray files are left for a human to remove).
    let o = nbg(&proj, &["verify-generated", "--write"]);
    assert_eq!(o.status.code(), Some(0));
    std::fs::remove_file(proj.join("evidence/stray.json")).unwrap();
    assert_eq!(
        nbg(&proj, &["verify-generated", "--skip-vendor"])
            .status
            .code(),
        Some(0)
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn lab_passes_on_the_project() {
    let o = nbg(&common::root(), &["lab"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("lab: 9 steps, 9 passed, 0 failed"), "{out}");
    assert!(out.contains("inventory public-controls"), "{out}");
    assert!(out.contains("15 files, 15 ok, 0 failed"), "{out}");
}

/// What a fresh clone holds (its tracked folders, nothing beside it) is enough for the lab; run
/// from another folder, it finds the checkout it was built from.
#[test]
fn lab_passes_on_a_clone_with_nothing_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("clone");
    for dir in ["controls", "differentials", "evidence", "onnx", "policy"] {
        copy_tree(&common::root().join(dir), &proj.join(dir));
    }
    assert!(!tmp.path().join("shared").exists());
    let o = nbg(&proj, &["lab"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("lab: 9 steps, 9 passed, 0 failed"), "{out}");

    let elsewhere = tempfile::tempdir().unwrap();
    let o = nbg(elsewhere.path(), &["lab"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

/// `--corpus` adds a user's corpus as a step named after the config, with its counts; its
/// inventory is written only with `--out`, into a new folder, all or nothing.
#[test]
fn lab_adds_a_users_corpus() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mine = d.join("mine");
    std::fs::create_dir(&mine).unwrap();
    let erf = common::control("erf-u8.nb");
    let timvx = common::public_control("timvx-conv2d_relu_maxpool2d_fp32-001e.nb");
    std::fs::write(mine.join("a.nb"), &erf).unwrap();
    std::fs::write(mine.join("b.nb"), &timvx).unwrap();
    std::fs::write(mine.join("bad.nb"), b"VPMX").unwrap();
    write_config(
        &mine,
        &format!(
            r#"{{"schema": "nbg-corpus/1", "files": [{}, {}, {}]}}"#,
            entry("a.nb", &erf),
            entry("b.nb", &timvx),
            entry("bad.nb", b"VPMX")
        ),
    );
    let before: Vec<_> = std::fs::read_dir(d).unwrap().collect();
    let o = nbg(d, &["lab", "--corpus", "mine/corpus.json"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("inventory mine/corpus.json"),
        "the step names the config: {out}"
    );
    assert!(out.contains("3 files, 2 ok, 1 failed"), "{out}");
    assert!(out.contains("bad-magic"), "{out}");
    assert!(out.contains("lab: 10 steps, 9 passed, 1 failed"), "{out}");
    assert_eq!(
        std::fs::read_dir(d).unwrap().count(),
        before.len(),
        "nothing written"
    );

    // Two configs, one good; --out receives both inventories under their stems.
    let good = d.join("good");
    std::fs::create_dir(&good).unwrap();
    std::fs::write(good.join("a.nb"), &erf).unwrap();
    write_config(
        &good,
        &format!(
            r#"{{"schema": "nbg-corpus/1", "files": [{}]}}"#,
            entry("a.nb", &erf)
        ),
    );
    let o = nbg(
        d,
        &[
            "lab",
            "--corpus",
            "good/corpus.json",
            "--corpus",
            "good/corpus.json",
            "--out",
            "inv",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let mut names: Vec<String> = std::fs::read_dir(d.join("inv"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["corpus-2.json", "corpus-2.md", "corpus.json", "corpus.md"]
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("inv/corpus.json")).unwrap()).unwrap();
    assert_eq!(doc["identity"]["files"], 1);
    // An existing --out is refused before any work; a broken config is a usage error.
    let o = nbg(d, &["lab", "--corpus", "good/corpus.json", "--out", "inv"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
    let o = nbg(d, &["lab", "--corpus", "missing.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&o.stderr).contains(".nbg-partial"));
}

/// Files the lab writes get the mode any program's output gets under the umask (0644 under
/// 022), not tempfile's private 0600.
#[test]
fn written_files_get_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let plain = d.join("plain");
    std::fs::write(&plain, b"x").unwrap();
    let expected = std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777;
    let erf = common::root().join("controls/erf-u8.nb");
    let o = nbg(
        d,
        &["image", erf.to_str().unwrap(), "--svg", "map.svg", "--json"],
    );
    assert_eq!(o.status.code(), Some(0));
    let o = nbg(
        d,
        &[
            "inventory",
            common::root()
                .join("controls/corpus.json")
                .to_str()
                .unwrap(),
            "--out",
            "inv.json",
            "--summary",
            "inv.md",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    for f in ["map.svg", "inv.json", "inv.md"] {
        let mode = std::fs::metadata(d.join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, expected, "{f}: mode {mode:o}");
    }
    // The SVG names the file as it was typed, not as an absolute path.
    std::fs::copy(&erf, d.join("erf.nb")).unwrap();
    let o = nbg(d, &["image", "./erf.nb", "--svg", "typed.svg"]);
    assert_eq!(o.status.code(), Some(0));
    let svg = std::fs::read_to_string(d.join("typed.svg")).unwrap();
    assert!(svg.contains(">./erf.nb (nbg-v2)</text>"), "{}", &svg[..400]);
    assert!(!svg.contains(d.to_str().unwrap()));
}

#[test]
fn atomic_writes_leave_no_partial_files() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("out.json");
    nbg_lab::files::write_atomic(&p, b"first", false).unwrap();
    assert!(nbg_lab::files::write_atomic(&p, b"second", false).is_err());
    assert_eq!(std::fs::read(&p).unwrap(), b"first");
    nbg_lab::files::write_atomic(&p, b"third", true).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"third");
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "temporary files left behind: {names:?}");
    // A write into a missing folder fails cleanly.
    assert!(nbg_lab::files::write_atomic(&tmp.path().join("no/such/x"), b"x", true).is_err());
}
