//! The board user's questions: `nbg info` on every public file and control (operations per
//! engine checked against the vendor reader's `nbinfo -o`), `nbg check --target/--runtime`
//! (the simulator column checked against the vendor loader), and `nbg carve` on images the test
//! builds (controls at random offsets between random bytes, truncated copies, false magics).

use super::common;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every public file, v1 and the v2 board files (the shared corpus, else the committed ones), and
/// the v2 controls.
fn files() -> Vec<PathBuf> {
    let root = common::root();
    let mut out: Vec<PathBuf> = common::control_names()
        .into_iter()
        .map(|n| root.join("controls").join(n))
        .collect();
    out.push(root.join("controls/serializer/add-const-fp16-15.nb"));
    let (dir, names) = common::public_paths();
    out.extend(names.into_iter().map(|name| dir.join(name)));
    let (dir, names) = common::public_v2_paths();
    out.extend(names.into_iter().map(|name| dir.join(name)));
    out
}

/// `nbinfo -o`'s operation records per type, INIT and END left out; `None` when it refuses
/// the file (0x00020005).
fn nbinfo_engines(peer: &Path, path: &Path) -> Option<BTreeMap<String, u64>> {
    let o = std::process::Command::new(peer)
        .arg("-o")
        .arg(path)
        .output()
        .expect("nbinfo runs");
    if !o.status.success() {
        return None;
    }
    let mut counts = BTreeMap::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        if let Some(v) = line.strip_prefix("Operation Type:") {
            let t = v.trim().to_uppercase();
            if t != "INIT" && t != "END" {
                *counts.entry(t).or_insert(0) += 1;
            }
        }
    }
    Some(counts)
}

#[test]
fn info_answers_the_six_questions_on_every_public_file_and_control() {
    let root = common::root();
    let peer = common::nbinfo();
    let mut compared = 0;
    for path in files() {
        let p = path.display().to_string();
        let o = common::nbg(&root, &["info", "--json", &p]);
        assert_eq!(o.status.code(), Some(0), "{p}");
        let doc = common::stdout_json(&o);
        let i = &doc["files"][0];
        let bytes = std::fs::metadata(&path).unwrap().len();
        // Which format and version; which chip.
        assert!(i["format"].as_str().unwrap().starts_with("nbg-v"), "{p}");
        assert!(i["version"].as_str().unwrap().starts_with("0x000"), "{p}");
        assert_eq!(i["target"].as_str().unwrap().len(), 10, "{p}");
        // What goes in and out.
        for t in i["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .chain(i["outputs"].as_array().unwrap())
        {
            assert!(!t["shape"].as_array().unwrap().is_empty(), "{p}");
            assert!(t["element_type"].is_string() && t["quantization"].is_string());
            assert!(t["storage_bytes"].as_u64().unwrap() > 0, "{p}");
            if t["quantization"] == "AFFINE_ASYMMETRIC" {
                assert!(t["scale"].is_number() && t["zero_point"].is_number(), "{p}");
            }
        }
        // Where the time goes: the engines match the vendor reader's operation table.
        let engines: BTreeMap<String, u64> = i["engines"]
            .as_array()
            .unwrap_or_else(|| panic!("{p}: engines not decoded"))
            .iter()
            .map(|e| {
                (
                    e["engine"].as_str().unwrap().to_string(),
                    e["operations"].as_u64().unwrap(),
                )
            })
            .collect();
        if let Some(theirs) = peer.as_deref().and_then(|p| nbinfo_engines(p, &path)) {
            assert_eq!(engines, theirs, "{p}");
            compared += 1;
        }
        // Where the bytes go: every byte in one content.
        // `bytes_by_content` and `file_size` say what they hold; `size` and `bytes`, their
        // former keys, stay for one release.
        assert_eq!(i["size"], i["bytes_by_content"], "{p}");
        assert_eq!(i["bytes"], i["file_size"], "{p}");
        let total: u64 = i["bytes_by_content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(total, bytes, "{p}");
        // How far decoded: every byte in one class, unknown fields inside the decoded ones;
        // the padding named as `bytes_by_content` names it (`gap_bytes`, its former key).
        let d = &i["decoding"];
        assert_eq!(d["gap_bytes"], d["padding_bytes"], "{p}");
        let n = |k: &str| d[k].as_u64().unwrap();
        assert_eq!(
            n("decoded_bytes") + n("opaque_bytes") + n("padding_bytes"),
            bytes,
            "{p}"
        );
        assert!(n("unknown_field_bytes") <= n("decoded_bytes"), "{p}");
        assert!(i["crc"]["status"].is_string(), "{p}");
    }
    // nbinfo refuses 0x00020005 (and is absent on some machines): say how many were compared.
    eprintln!("info: operations per engine compared with nbinfo -o on {compared} files");
    // A file nbg refuses is an error in the document and exit 1.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.nb");
    std::fs::write(&bad, b"VPMN\x00\x00\x02\x00short").unwrap();
    let o = common::nbg(&root, &["info", "--json", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        common::stdout_json(&o)["files"][0]["error"]["code"],
        "truncated"
    );
}

#[test]
fn check_target_and_runtime_give_the_verdict_the_values_and_a_hint() {
    let root = common::root();
    let v1 = root.join("controls/public/v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb");
    let v2 = root.join("controls/serializer/add-const-fp16-15.nb");
    let run = |args: &[&str]| {
        let o = common::nbg(&root, args);
        (o.status.code(), common::stdout_json(&o))
    };
    let (v1s, v2s) = (v1.to_str().unwrap(), v2.to_str().unwrap());
    let (code, d) = run(&[
        "check",
        v1s,
        "--target",
        "0xba",
        "--runtime",
        "0x00010020",
        "--json",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(d["files"][0]["verdict"], "compatible");
    let (code, d) = run(&["check", v1s, v2s, "--target", "0x1000003b", "--json"]);
    assert_eq!(code, Some(1));
    let f = &d["files"];
    assert_eq!(f[0]["verdict"], "target-mismatch");
    let c = &f[0]["checks"][0];
    assert_eq!(
        (c["file"].as_str(), c["expected"].as_str()),
        (Some("0x000000ba"), Some("0x1000003b"))
    );
    assert!(c["hint"].as_str().unwrap().contains("re-export"));
    // The simulator: v1 refused under another PID, a v2 target word ignored.
    assert_eq!(c["vendor_simulator"], "refuses");
    assert_eq!(f[1]["verdict"], "target-mismatch");
    assert_eq!(f[1]["checks"][0]["vendor_simulator"], "accepts");
    let (code, d) = run(&["check", v2s, "--runtime", "0x00020000", "--json"]);
    assert_eq!(code, Some(1));
    assert_eq!(d["files"][0]["verdict"], "version-newer-than-runtime");
    let (_, d) = run(&["check", v2s, "--runtime", "0x00010020", "--json"]);
    assert_eq!(d["files"][0]["verdict"], "version-newer-than-runtime");
    let (code, d) = run(&["check", v1s, "--runtime", "0x00020005", "--json"]);
    assert_eq!(code, Some(1));
    assert_eq!(d["files"][0]["verdict"], "unknown");
    // Text names the code and the values.
    let o = common::nbg(&root, &["check", v1s, "--target", "0x15"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("target-mismatch") && text.contains("0x00000015"),
        "{text}"
    );
    assert_eq!(
        common::nbg(&root, &["check", v1s, "--target", "15"])
            .status
            .code(),
        Some(2)
    );
}

/// `nbg check --target`'s simulator column against the vendor loader, file by file and PID by
/// PID: one file of each public v1 version, the v2 controls, and the builder's v1 graph with
/// target 0xae under 0xd1 (the alias the loader's target check makes).
#[cfg(feature = "onnx")]
#[test]
fn the_simulator_column_reproduces_the_vendor_loader() {
    if common::vendor_driver().is_none() {
        return;
    }
    let root = common::root();
    let dir = tempfile::tempdir().unwrap();
    let alias = dir.path().join("v1-0xae.nb");
    let built = nbg_lab::lab::synth_v1::V1Spec {
        target: 0xae,
        ..nbg_lab::lab::synth_v1::V1Spec::new(
            0x0001_001e,
            0,
            nbg_lab::lab::synth_v1::V1Crc::WholeFileFieldZeroed,
        )
    }
    .build()
    .unwrap();
    std::fs::write(&alias, built).unwrap();
    let mut paths: Vec<PathBuf> = files();
    paths.push(alias);
    let targets = ["0x1000000e", "0x15", "0xba", "0x99", "0xad", "0xd1", "0xae"];
    let mut args: Vec<String> = vec!["vendor".into(), "compat".into(), "--json".into()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    for t in targets {
        args.extend(["--target".into(), t.into()]);
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let compat = common::stdout_json(&common::nbg(&root, &argv));
    let mut compared = 0;
    let mut tally: BTreeMap<String, u64> = BTreeMap::new();
    for t in compat["trials"].as_array().unwrap() {
        let file = t["file"].as_str().unwrap();
        let pid = t["pid"].as_str().unwrap();
        let loader = &t["loader"]["verdict"];
        assert!(loader == "accepted" || loader == "refused", "{t}");
        let o = common::nbg(&root, &["check", file, "--target", pid, "--json"]);
        let ours = common::stdout_json(&o)["files"][0]["checks"][0]["vendor_simulator"].clone();
        let expected = if loader == "accepted" {
            "accepts"
        } else {
            "refuses"
        };
        assert_eq!(ours, expected, "{file} under {pid}: {t}");
        compared += 1;
        let family = if t["version"].as_str().unwrap().starts_with("0x0001") {
            "v1"
        } else {
            "v2"
        };
        *tally.entry(format!("{family} {expected}")).or_default() += 1;
        if file.ends_with("v1-0xae.nb") && pid == "0x000000d1" {
            eprintln!("simulator: the v1 file of target 0xae under 0xd1: {expected}");
        }
    }
    eprintln!("simulator column: {compared} trials agree with the loader: {tally:?}");
    assert_eq!(compared, paths.len() * targets.len());
}

/// A deterministic byte source (xorshift), so the images are the same on every run.
struct Bytes(u64);

impl Bytes {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn fill(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn carve_finds_every_embedded_control_and_nothing_else() {
    let root = common::root();
    let controls: Vec<PathBuf> = files()
        .into_iter()
        .filter(|p| std::fs::metadata(p).unwrap().len() < 4 << 20)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    for seed in [1u64, 2, 3] {
        let mut r = Bytes(0x9e37_79b9_7f4a_7c15 ^ seed);
        let mut image = Vec::new();
        let mut embedded = Vec::new();
        let mut truncated = Vec::new();
        for (i, path) in controls.iter().enumerate() {
            let bytes = std::fs::read(path).unwrap();
            let gap = 1 + (r.next() % 5000) as usize;
            image.extend(r.fill(gap));
            if (i as u64 + seed) % 5 == 0 {
                // A truncated copy: a near miss, never extracted.
                truncated.push(image.len() as u64);
                image.extend_from_slice(&bytes[..bytes.len() / 2]);
                continue;
            }
            if i % 3 == 0 {
                // A false magic overlapping the control that follows: a v2 header whose
                // declared size covers it.
                image.extend_from_slice(b"VPMN\x00\x00\x02\x00");
                image.extend_from_slice(&[0; 8]);
                image.extend_from_slice(&(bytes.len() as u32 + 64).to_le_bytes());
                image.extend_from_slice(&[0; 4]);
            }
            embedded.push((image.len() as u64, bytes.clone()));
            image.extend_from_slice(&bytes);
        }
        image.extend(r.fill(777));
        let img = dir.path().join(format!("image-{seed}.bin"));
        std::fs::write(&img, &image).unwrap();
        let out = dir.path().join(format!("out-{seed}"));
        let o = common::nbg(
            &root,
            &[
                "carve",
                img.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--json",
            ],
        );
        assert_eq!(o.status.code(), Some(0));
        let c = common::stdout_json(&o);
        let found: Vec<(u64, String)> = c["found"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["offset"].as_u64().unwrap(),
                    f["sha256"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let expected: Vec<(u64, String)> = embedded
            .iter()
            .map(|(at, b)| (*at, nbg_lab::digest::Hash256::of(b).to_string()))
            .collect();
        assert_eq!(found, expected, "seed {seed}");
        // Each extracted file is the control, byte for byte; nothing else was written.
        for (at, bytes) in &embedded {
            let f = out.join(format!("0x{at:010x}.nb"));
            assert_eq!(&std::fs::read(&f).unwrap(), bytes, "{}", f.display());
        }
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), embedded.len());
        let misses = c["near_misses"].as_array().unwrap();
        // Each truncated copy is a near miss (past the image's end, refused by the parse or its
        // CRC, or holding the next file's magic), never extracted.
        for at in &truncated {
            assert!(
                misses.iter().any(|m| m["offset"] == *at),
                "seed {seed}: the truncated copy at {at} is not a near miss"
            );
        }
        assert!(
            misses
                .iter()
                .all(|m| m["code"].is_string() && m["failure_offset"].is_u64())
        );
        // The same image gives the same document; an existing folder is refused.
        let again = common::nbg(&root, &["carve", img.to_str().unwrap(), "--json"]);
        let mut c2 = common::stdout_json(&again);
        for f in c2["found"].as_array_mut().unwrap() {
            f["extracted"] = Value::Null;
        }
        let mut c1 = c.clone();
        for f in c1["found"].as_array_mut().unwrap() {
            f["extracted"] = Value::Null;
        }
        assert_eq!(c1, c2);
        let refused = common::nbg(
            &root,
            &["carve", img.to_str().unwrap(), "-o", out.to_str().unwrap()],
        );
        assert_eq!(refused.status.code(), Some(2));
    }
    // An image without any NBG: exit 1, nothing found.
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, Bytes(5).fill(100_000)).unwrap();
    let o = common::nbg(&root, &["carve", empty.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(common::stdout_json(&o)["found"], serde_json::json!([]));
}
