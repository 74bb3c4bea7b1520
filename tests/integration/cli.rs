//! The `nbg` command line: exit codes, stdout/stderr split, JSON contract.

use crate::common;

use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn parse_valid_control() {
    let o = common::nbg(&common::root(), &["parse", "controls/ctc-like.nb"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("nbg-v2"), "{text}");
    assert!(text.contains("NBG_SECTION_DYNAIO_TABLE"), "{text}");
    assert!(text.contains("uid_20000_sub_uid_1_out_0"), "{text}");

    let o = common::nbg(
        &common::root(),
        &["parse", "--json", "controls/ctc-like.nb"],
    );
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["format"], "nbg-v2");
    assert_eq!(v["dynamic_io"]["entry_count"], 50);
    assert_eq!(v["file_checksum"]["matches"], true);
}

#[test]
fn parse_invalid_file_exits_1_with_code_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.nb");
    let mut b = common::control("erf-u8.nb");
    common::put32(&mut b, 0x20, 3);
    std::fs::write(&path, &b).unwrap();
    let p = path.to_str().unwrap();

    let o = common::nbg(&common::root(), &["parse", p]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).is_empty());
    assert!(
        stderr(&o).starts_with("error[sub-header-count] at 0x20: "),
        "{}",
        stderr(&o)
    );

    let o = common::nbg(&common::root(), &["parse", "--json", p]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "sub-header-count");
    assert_eq!(v["error"]["offset"], 0x20);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sub-header count")
    );
}

#[test]
fn usage_and_io_problems_exit_2() {
    let o = common::nbg(&common::root(), &["parse", "no/such/file.nb"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no/such/file.nb"));

    let o = common::nbg(&common::root(), &["parse", "controls"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("directory"));

    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("link.nb");
    std::os::unix::fs::symlink(common::root().join("controls/erf-u8.nb"), &link).unwrap();
    let o = common::nbg(&common::root(), &["parse", link.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("symlink"));

    assert_eq!(
        common::nbg(&common::root(), &["parse"]).status.code(),
        Some(2)
    );
    assert_eq!(
        common::nbg(&common::root(), &["frobnicate"]).status.code(),
        Some(2)
    );
}

#[test]
fn check_lists_every_file_and_fails_if_any_fails() {
    let o = common::nbg(
        &common::root(),
        &["check", "controls/erf-u8.nb", "controls/shuffled.nb"],
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o).lines().filter(|l| l.ends_with(": ok")).count(),
        2
    );

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.nb");
    let mut b = common::control("erf-u8.nb");
    b[0] = b'W';
    std::fs::write(&bad, &b).unwrap();
    let o = common::nbg(
        &common::root(),
        &["check", "controls/erf-u8.nb", bad.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("erf-u8.nb: ok"));
    assert!(out.contains("bad.nb: bad-magic at 0x0"), "{out}");
}

#[test]
fn synth_writes_the_pinned_control_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("erf.nb");
    let o = common::nbg(
        &common::root(),
        &[
            "synth",
            "--profile",
            "erf-u8",
            "--seed",
            "11",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), common::control("erf-u8.nb"));
    let again = common::nbg(
        &common::root(),
        &[
            "synth",
            "--profile",
            "erf-u8",
            "--seed",
            "11",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(again.status.code(), Some(2));
    let o = common::nbg(
        &common::root(),
        &[
            "synth",
            "--profile",
            "nope",
            "--seed",
            "1",
            "-o",
            dir.path().join("x").to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("erf-u8"));
}

/// The text summary says what the JSON document holds about the connection region and the
/// corpus invariants, for either family (it once left both out for v1).
#[test]
fn parse_text_reports_invariants_and_covered_region_for_both_families() {
    for p in [
        "controls/public/v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb",
        "controls/erf-u8.nb",
    ] {
        let text = stdout(&common::nbg(&common::root(), &["parse", p]));
        let doc = common::stdout_json(&common::nbg(&common::root(), &["parse", "--json", p]));
        let invariants = doc["corpus_invariants"].as_array().unwrap();
        let held = invariants.iter().filter(|i| i["holds"] == true).count();
        assert!(
            text.contains(&format!(
                "corpus invariants {held} of {} hold",
                invariants.len()
            )),
            "{p}: {text}"
        );
        let covered = doc["connection_region"]["covered_by_section"] == true;
        assert_eq!(text.contains("(covered by sections)"), covered, "{p}");
    }
}

#[test]
fn v1_parse_and_crc_explain() {
    let corpus = common::root().join("controls/public/v1");
    let timvx = corpus.join("timvx-conv2d_relu_maxpool2d_fp32-001e.nb");
    let lenet = corpus.join("a733-lenet-v2-0016.nb");
    let o = common::nbg(&common::root(), &["parse", timvx.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("nbg-v1 (version 0x0001001e)"));

    let o = common::nbg(
        &common::root(),
        &[
            "crc-explain",
            "--json",
            timvx.to_str().unwrap(),
            lenet.to_str().unwrap(),
            "controls/erf-u8.nb",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["stored"], 0x4873_9b09u32);
    assert_eq!(v[0]["matches"][0]["rule"], "whole-file-field-zeroed");
    assert_eq!(
        v[0]["matches"][0]["ranges"],
        serde_json::json!([[0, 0x6c], [0x70, 9152]])
    );
    assert_eq!(
        v[0]["matches"][0]["zeroed"],
        serde_json::json!([[0x6c, 0x70]])
    );
    assert_eq!(v[1]["stored"], 0);
    assert_eq!(v[1]["matches"], serde_json::json!([]));
    assert_eq!(v[2]["format"], "nbg-v2");
    assert_eq!(v[2]["matches"][0]["rule"], "v2-directory-order");

    let o = common::nbg(&common::root(), &["crc-explain", timvx.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("whole-file-field-zeroed [0x0,0x6c) [0x70,0x23c0) zeroed [0x6c,0x70)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn image_json_svg_and_roundtrip() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("map.svg");
    let o = common::nbg(
        &common::root(),
        &[
            "image",
            "--json",
            "controls/ctc-like.nb",
            "--svg",
            svg.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in ["owners", "views", "totals", "reconstruction"] {
        assert!(v.get(key).is_some(), "{key}");
    }
    for key in ["start", "end", "class", "label"] {
        assert!(v["owners"][0].get(key).is_some(), "owners[0].{key}");
    }
    assert_eq!(v["reconstruction"]["identical"], true);
    assert_eq!(v["reconstruction"]["bytes"], 18848);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("NBG_SECTION_COEF_DATA"));
    // The SVG is never overwritten.
    let o = common::nbg(
        &common::root(),
        &[
            "image",
            "controls/ctc-like.nb",
            "--svg",
            svg.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));

    let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    let o = common::nbg(
        &common::root(),
        &["roundtrip", "controls/erf-u8.nb", "controls/shuffled.nb"],
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "controls/erf-u8.nb: exact\n\
         controls/erf-u8.nb: records: 19 re-encoded exactly (of 19 decoded-record owners)\n\
         controls/shuffled.nb: exact\n\
         controls/shuffled.nb: records: 20 re-encoded exactly (of 20 decoded-record owners)\n"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        before.len(),
        "roundtrip wrote without --out"
    );

    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = common::nbg(
        &common::root(),
        &[
            "roundtrip",
            "--out",
            out.to_str().unwrap(),
            "controls/erf-u8.nb",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        std::fs::read(out.join("erf-u8.nb")).unwrap(),
        common::control("erf-u8.nb")
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);

    let bad = dir.path().join("bad.nb");
    let mut b = common::control("erf-u8.nb");
    b[0x10] ^= 1;
    std::fs::write(&bad, &b).unwrap();
    let o = common::nbg(
        &common::root(),
        &[
            "roundtrip",
            "--out",
            out.to_str().unwrap(),
            "controls/tail-gap.nb",
            bad.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("bad.nb: declared-size-mismatch at 0x10"),
        "{}",
        stdout(&o)
    );
    assert!(!out.join("bad.nb").exists());
}

/// The driver is found from the binary's checkout, never the working folder (issue 68): from a
/// folder outside the project, `vendor targets` lists the configurations and `info` names the
/// A733 file's target.
#[test]
fn the_driver_is_found_from_any_folder() {
    if common::vendor_driver().is_none() {
        return;
    }
    // Even a folder that looks like a checkout (another clone, without the driver) is not
    // where the driver is looked for.
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(elsewhere.path().join("controls")).unwrap();
    std::fs::copy(
        common::root().join("controls/controls.json"),
        elsewhere.path().join("controls/controls.json"),
    )
    .unwrap();
    let o = common::nbg(elsewhere.path(), &["vendor", "targets"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout(&o).contains("0x1000003b"), "{}", stdout(&o));
    let file = common::root().join("controls/public/v2/a733-face_detector_int16-0000.nb");
    let o = common::nbg(elsewhere.path(), &["info", file.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("VIP9000NANODI_PID0X1000003B"),
        "{}",
        stdout(&o)
    );
}

/// Every file of a multi-file `check` is judged and named (issue 68): a folder between two
/// files is its own `unreadable` line, the file after it is still checked, `--json` prints
/// the whole document, and the exit status says an input could not be read.
#[test]
fn check_judges_every_file_past_a_folder() {
    let root = common::root();
    let o = common::nbg(
        &root,
        &["check", "controls/erf-u8.nb", "controls", "README.md"],
    );
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(out.contains("controls/erf-u8.nb: ok"), "{out}");
    assert!(
        out.contains("controls: unreadable: is a directory"),
        "{out}"
    );
    assert!(out.contains("README.md: bad-magic at 0x0"), "{out}");
    let o = common::nbg(
        &root,
        &[
            "check",
            "--json",
            "controls/erf-u8.nb",
            "controls",
            "README.md",
        ],
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let codes: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["error"]["code"].as_str().unwrap_or("ok"))
        .collect();
    assert_eq!(codes, ["ok", "unreadable", "bad-magic"]);

    // `info` the same: every file read, each error named with its file.
    let files = ["controls/erf-u8.nb", "controls", "README.md"];
    let o = common::nbg(&root, &[&["info"][..], &files].concat());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("README.md: error[bad-magic]"), "{err}");
    assert!(err.contains("controls: is a directory"), "{err}");
    let o = common::nbg(&root, &[&["info", "--json"][..], &files].concat());
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["files"].as_array().map(Vec::len), Some(3));
}

/// One name and one overwrite rule for outputs (issue 68): every command that writes takes
/// `-o/--output` (the former `--out` still accepted), `coefficients -o` refuses to replace a
/// file without --force, and `carve -o` an existing folder with the reason, not an OS error.
#[test]
fn every_output_is_dash_o_and_never_replaced_without_force() {
    let root = common::root();
    for cmd in [
        &["report"][..],
        &["carve"],
        &["roundtrip"],
        &["inventory"],
        &["lab"],
        &["coefficients"],
        &["synth"],
        &["onnx", "run"],
        &["vendor", "run"],
    ] {
        let o = common::nbg(&root, &[cmd, &["--help"]].concat());
        let help = stdout(&o);
        assert!(help.contains("-o, --output"), "{cmd:?}: {help}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let npz = tmp.path().join("w.npz");
    let npz = npz.to_str().unwrap();
    let file = "controls/public/v2/a733-face_detector_int16-0000.nb";
    let run = |args: &[&str]| common::nbg(&root, &[&["coefficients", file][..], args].concat());
    assert_eq!(run(&["-o", npz]).status.code(), Some(0));
    let again = run(&["-o", npz]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert_eq!(run(&["--out", npz, "--force"]).status.code(), Some(0));
    let o = common::nbg(
        &root,
        &[
            "carve",
            "controls/erf-u8.nb",
            "-o",
            tmp.path().to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("already exists") && !err.contains("os error"),
        "{err}"
    );
}

/// `nbg dump` (issue 68): a payload by name, an owner by its label, a range of a damaged file,
/// raw bytes; an unknown name lists the payloads there are.
#[test]
fn dump_shows_one_owner_payload_or_range() {
    let root = common::root();
    let file = "controls/erf-u8.nb";
    let bytes = common::control("erf-u8.nb");
    let raw = |what: &str| {
        let o = common::nbg(&root, &["dump", file, what, "--raw"]);
        assert_eq!(o.status.code(), Some(0), "{what}");
        o.stdout
    };
    assert_eq!(raw("0:48"), &bytes[..48]);
    assert_eq!(raw("header"), &bytes[..48]);
    let layer = raw("layer");
    assert_eq!(layer, raw("NBG_SECTION_LAYER"));
    assert_eq!(layer, &bytes[0x434..0x564]);
    let o = common::nbg(&root, &["dump", file, "0x30:12"]);
    assert!(
        stdout(&o)
            .contains("00000030  3c 00 00 00 2c 00 00 00  12 00 00 00              |<...,.......|"),
        "{}",
        stdout(&o)
    );
    // A damaged file: a range needs no parse.
    let tmp = tempfile::tempdir().unwrap();
    let damaged = tmp.path().join("bad.nb");
    let mut b = bytes.clone();
    b[0] = b'W';
    std::fs::write(&damaged, &b).unwrap();
    let o = common::nbg(&root, &["dump", damaged.to_str().unwrap(), "0:4", "--raw"]);
    assert_eq!(o.stdout, b"WPMN");
    let o = common::nbg(&root, &["dump", file, "nothing"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("NBG_SECTION_LAYER"));
    let o = common::nbg(&root, &["dump", file, "4500:100"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("leaves the 4552-byte file"));
}

/// Counts that add up (issue 68, item 7): where the network info declares more operations
/// than the table lists, `parse` says both; `info` names only the INIT and END records the
/// file has; a corpus invariant reads as the corpus's value beside the file's, not a failure.
#[test]
fn counts_say_what_they_count() {
    let root = common::root();
    let file = "controls/public/v2/a733-face_detector_int16-0000.nb";
    let parsed = stdout(&common::nbg(&root, &["parse", file]));
    assert!(
        parsed.contains("60 operations declared, 57 in the operation table"),
        "{parsed}"
    );
    assert!(parsed.contains("target: the spec's corpus had 0x1000000e; this file has 0x1000003b"));
    assert!(!parsed.contains("expected"), "{parsed}");
    let info = stdout(&common::nbg(&root, &["info", file]));
    assert!(info.contains("(56, 1 INIT left out)"), "{info}");
    assert!(!info.contains("END"), "{info}");
}

/// Shapes with their order named (issue 68, item 2): `info` and `parse` give each input's
/// dimensions as the file stores them (innermost first) and outermost first, the shape
/// `vendor run` wants an NPZ array in (its refusal names the same order).
#[test]
fn shapes_name_their_order() {
    let root = common::root();
    let file = "controls/public/v2/a733-face_detector_int16-0000.nb";
    let o = common::nbg(&root, &["info", file, "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let input = &doc["files"][0]["inputs"][0];
    assert_eq!(input["shape"], serde_json::json!([3, 128, 128, 1]));
    assert_eq!(input["npz_shape"], serde_json::json!([1, 128, 128, 3]));
    let info = stdout(&common::nbg(&root, &["info", file]));
    assert!(
        info.contains("[3, 128, 128, 1] (innermost first; NPZ [1, 128, 128, 3])"),
        "{info}"
    );
    let parsed = stdout(&common::nbg(&root, &["parse", file]));
    assert!(
        parsed.contains("[3, 128, 128, 1] (innermost first; NPZ [1, 128, 128, 3])"),
        "{parsed}"
    );
}

/// `parse --all` lists every layer and operation, each operation beside its layer's name
/// (issue 68, item 8); without it the text stops at 32 and says how to see the rest.
#[test]
fn parse_all_lists_every_operation_with_its_layer() {
    let root = common::root();
    let file = "controls/public/v2/a733-face_detector_int16-0000.nb";
    let short = stdout(&common::nbg(&root, &["parse", file]));
    assert!(
        short.contains("... 25 more (--all or --json lists all)"),
        "{short}"
    );
    let all = stdout(&common::nbg(&root, &["parse", file, "--all"]));
    assert!(!all.contains("more (--all"), "{all}");
    let ops = all.split("operations (57):").nth(1).unwrap();
    let rows = ops
        .lines()
        .take_while(|l| !l.starts_with("patches"))
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(rows, 57);
    assert!(ops.contains("ConvolutionReluPoolingLayer2"), "{ops}");
}

/// Help a newcomer can start from (issue 68, item 9): `-h` gives each command one short line,
/// `--help` the detail.
#[test]
fn short_help_is_short() {
    let root = common::root();
    let short = stdout(&common::nbg(&root, &["-h"]));
    let long_lines = short.lines().filter(|l| l.len() > 240).count();
    assert_eq!(long_lines, 0, "{short}");
    let check = stdout(&common::nbg(&root, &["check", "-h"]));
    let full = stdout(&common::nbg(&root, &["check", "--help"]));
    assert!(check.len() < full.len(), "{check}");
    assert!(full.contains("crc unexplained"), "{full}");
}

/// `nbg --help` groups the commands by what a user came to do (issue 68, item 9): every
/// command under exactly one heading, none left under "Other".
#[test]
fn every_command_is_in_one_help_group() {
    let root = common::root();
    let help = stdout(&common::nbg(&root, &["--help"]));
    let headings = [
        "Board and deployment:",
        "Reverse engineering:",
        "Captures and field mappings:",
        "Lab upkeep:",
    ];
    for h in headings {
        assert!(help.lines().any(|l| l == h), "{h} missing:\n{help}");
    }
    assert!(
        !help.lines().any(|l| l == "Other:" || l == "Commands:"),
        "{help}"
    );
    // Each command line ("  name  summary") once; `help` names no command of its own.
    let names: Vec<&str> = help
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| !n.starts_with('-'))
        .collect();
    let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    for c in [
        "parse", "check", "info", "vendor", "image", "diff", "lab", "mapping",
    ] {
        assert!(unique.contains(c), "{c} missing:\n{help}");
    }
    // Each listed name is a command (a command the groups forgot lands under "Other", refused
    // above).
    for n in &names {
        assert!(common::nbg(&root, &[n, "-h"]).status.success(), "{n}");
    }
}

/// Every positional argument says what it takes (issue 68, item 9: `<FILE>` described), in
/// every command and in the subcommands of `vendor`, `onnx` and `mapping`.
#[test]
fn every_argument_is_described() {
    let root = common::root();
    let help = |args: &[&str]| {
        let mut a = args.to_vec();
        a.push("-h");
        stdout(&common::nbg(&root, &a))
    };
    // The command names a help lists ("  name  summary" lines under a heading).
    let commands = |text: &str| -> Vec<String> {
        let mut in_list = false;
        let mut out = Vec::new();
        for l in text.lines() {
            if l.ends_with(':') && !l.starts_with(' ') {
                in_list = l != "Options:" && l != "Arguments:" && !l.starts_with("Usage");
                continue;
            }
            if in_list && l.starts_with("  ") && !l.starts_with("   ") {
                if let Some(n) = l.split_whitespace().next().filter(|n| *n != "help") {
                    out.push(n.to_string());
                }
            }
        }
        out
    };
    let top = help(&[]);
    let mut checked = 0;
    for c in commands(&top) {
        let text = help(&[&c]);
        let nested = commands(&text);
        let all: Vec<(Vec<&str>, String)> = if nested.is_empty() {
            vec![(vec![c.as_str()], text)]
        } else {
            nested
                .iter()
                .map(|n| (vec![c.as_str(), n.as_str()], help(&[&c, n])))
                .collect()
        };
        for (path, text) in all {
            let mut in_args = false;
            for l in text.lines() {
                if l == "Arguments:" {
                    in_args = true;
                } else if !l.starts_with(' ') {
                    in_args = false;
                } else if in_args {
                    assert!(
                        l.split_whitespace().count() > 1,
                        "nbg {}: {l:?} has no description",
                        path.join(" ")
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} arguments found");
}
