//! Filesystem bounds: symlinks, directories, FIFOs, unreadable files and paths escaping a
//! corpus root are refused with exit 2; an interrupted write never leaves a half-written file.

use crate::common;
use common::nbg;

use std::path::Path;
use std::process::{Command, Stdio};

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn special_files_are_refused_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let fifo = d.join("pipe.nb");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // Must answer at once: a FIFO is refused before it is opened, so nothing blocks.
    for cmd in [
        &["parse"][..],
        &["check"],
        &["image"],
        &["roundtrip"],
        &["sweep"],
    ] {
        let mut args = cmd.to_vec();
        args.push("pipe.nb");
        let o = nbg(d, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("not a regular file"),
            "{args:?}"
        );
    }
    std::fs::write(d.join("real.nb"), common::control("erf-u8.nb")).unwrap();
    std::os::unix::fs::symlink(d.join("real.nb"), d.join("link.nb")).unwrap();
    let o = nbg(d, &["check", "link.nb"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("symlink"));

    let unreadable = d.join("secret.nb");
    std::fs::write(&unreadable, b"VPMN").unwrap();
    std::fs::set_permissions(
        &unreadable,
        std::os::unix::fs::PermissionsExt::from_mode(0o000),
    )
    .unwrap();
    // Root reads mode-000 files, so as root the check runs as `nobody` through setpriv.
    std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = if is_root() {
        // A copy of the binary in the world-readable temp folder, whatever the clone's parents allow.
        let bin = d.join("nbg");
        std::fs::copy(env!("CARGO_BIN_EXE_nbg"), &bin).unwrap();
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .arg("parse")
            .arg(&unreadable)
            .output()
            .expect("setpriv (util-linux) runs the check as an unprivileged user")
    } else {
        nbg(d, &["parse", "secret.nb"])
    };
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("ermission denied"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn corpus_paths_cannot_escape_their_root() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let root = d.join("corpus");
    std::fs::create_dir(&root).unwrap();
    let erf = common::control("erf-u8.nb");
    std::fs::write(d.join("outside.nb"), &erf).unwrap();
    std::os::unix::fs::symlink(d, root.join("up")).unwrap();
    let sha = nbg_lab::digest::Hash256::of(&erf);
    for path in ["../outside.nb", "up/outside.nb", "/etc/hostname", "./x.nb"] {
        let text = format!(
            r#"{{"schema": "nbg-corpus/1", "files": [{{"path": "{path}", "role": "stock", "sha256": "{sha}", "size": {}}}]}}"#,
            erf.len()
        );
        std::fs::write(root.join("corpus.json"), text).unwrap();
        let o = nbg(&root, &["inventory", "corpus.json"]);
        assert_eq!(o.status.code(), Some(2), "{path}");
        assert!(o.stdout.is_empty(), "{path}: an inventory was printed");
    }
}

/// Kill `nbg inventory --out` at several points: the output is absent or complete, never
/// half-written.
#[test]
fn interrupted_writes_leave_no_partial_output() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("bulk");
    let o = nbg(
        tmp.path(),
        &[
            "synth-corpus",
            "--files",
            "6",
            "--bytes",
            "2000000",
            "-o",
            corpus.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let complete = nbg(tmp.path(), &["inventory", "bulk/corpus.json"]).stdout;
    for delay_ms in [0u64, 5, 20, 40, 80] {
        let out = tmp.path().join(format!("inv-{delay_ms}.json"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_nbg"))
            .args([
                "inventory",
                "bulk/corpus.json",
                "--jobs",
                "1",
                "--out",
                out.to_str().unwrap(),
            ])
            .current_dir(tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        if out.exists() {
            assert_eq!(
                std::fs::read(&out).unwrap(),
                complete,
                "{delay_ms} ms: output differs from a full run"
            );
        }
    }
}

/// Outputs never destroy anything: an input, the config, a corpus member, a device or a capture
/// file is never replaced; an existing file only with --force; several outputs land together or
/// not at all; two inputs with one name are refused before anything is written.
#[test]
fn outputs_never_destroy_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let erf = common::control("erf-u8.nb");
    std::fs::write(d.join("a.nb"), &erf).unwrap();
    let config = format!(
        r#"{{"schema": "nbg-corpus/1", "files": [{{"path": "a.nb", "role": "stock", "sha256": "{}", "size": {}}}]}}"#,
        nbg_lab::digest::Hash256::of(&erf),
        erf.len()
    );
    std::fs::write(d.join("corpus.json"), &config).unwrap();
    let unchanged = |what: &str| {
        assert_eq!(std::fs::read(d.join("a.nb")).unwrap(), erf, "{what}");
        assert_eq!(
            std::fs::read_to_string(d.join("corpus.json")).unwrap(),
            config,
            "{what}"
        );
    };
    for out in ["corpus.json", "a.nb", "./a.nb"] {
        for flag in [&[][..], &["--force"][..]] {
            let mut args = vec!["inventory", "corpus.json", "--out", out];
            args.extend_from_slice(flag);
            let o = nbg(d, &args);
            assert_eq!(o.status.code(), Some(2), "--out {out} {flag:?}");
            assert!(String::from_utf8_lossy(&o.stderr).contains("is an input"));
            unchanged(out);
        }
    }
    // A hard link to an input is the same file.
    std::fs::hard_link(d.join("a.nb"), d.join("link.nb")).unwrap();
    let o = nbg(d, &["image", "a.nb", "--svg", "link.nb", "--force"]);
    assert_eq!(o.status.code(), Some(2));
    unchanged("hard link");
    // A device node is never replaced, not even with --force.
    let o = nbg(
        d,
        &["inventory", "corpus.json", "--out", "/dev/null", "--force"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a regular file"));
    // An existing file needs --force; with it, it is replaced.
    std::fs::write(d.join("old.json"), "keep").unwrap();
    let o = nbg(d, &["inventory", "corpus.json", "--out", "old.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(d.join("old.json")).unwrap(), "keep");
    let o = nbg(
        d,
        &["inventory", "corpus.json", "--out", "old.json", "--force"],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(
        std::fs::read_to_string(d.join("old.json"))
            .unwrap()
            .contains("nbg-inventory/1")
    );
    // Two outputs: the second invalid means neither is written.
    std::fs::create_dir(d.join("sub")).unwrap();
    let o = nbg(
        d,
        &[
            "inventory",
            "corpus.json",
            "--out",
            "new.json",
            "--summary",
            "sub",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!d.join("new.json").exists());
    let o = nbg(
        d,
        &[
            "inventory",
            "corpus.json",
            "--out",
            "x.json",
            "--summary",
            "x.json",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!d.join("x.json").exists());
    // A capture set's own files are inputs of `differential`.
    let cap = d.join("cap");
    let o = nbg(
        d,
        &[
            "synth-differential",
            "--name",
            "dynaio-constant",
            "-o",
            "cap",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let spec = std::fs::read(cap.join("differential.json")).unwrap();
    let o = nbg(
        d,
        &[
            "differential",
            "cap",
            "--evidence",
            "cap/differential.json",
            "--force",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(cap.join("differential.json")).unwrap(), spec);
    // roundtrip: two inputs with one name are refused before anything is written, and a
    // failing file means no reconstruction is written at all.
    std::fs::create_dir(d.join("other")).unwrap();
    std::fs::write(d.join("other/a.nb"), &erf).unwrap();
    std::fs::create_dir(d.join("rt")).unwrap();
    let o = nbg(d, &["roundtrip", "a.nb", "other/a.nb", "--out", "rt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("named twice"));
    std::fs::write(d.join("bad.nb"), b"VPMN\x00\x00\x02\x00").unwrap();
    std::fs::copy(d.join("a.nb"), d.join("b.nb")).unwrap();
    let o = nbg(d, &["roundtrip", "a.nb", "b.nb", "bad.nb", "--out", "rt"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read_dir(d.join("rt")).unwrap().count(), 0);
    let o = nbg(d, &["roundtrip", "a.nb", "b.nb", "--out", "rt"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_dir(d.join("rt")).unwrap().count(), 2);
    // Nothing temporary is left anywhere.
    for e in walk(d) {
        let rel = e.strip_prefix(d.to_str().unwrap()).unwrap();
        assert!(
            !rel.contains(".nbg-partial-") && !rel.contains(".tmp"),
            "{rel}"
        );
    }
}

fn walk(d: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        out.push(e.path().display().to_string());
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

/// JSON inputs are objects: the array form serde would accept for a struct is refused; a
/// corpus of many files loads in linear time; --jobs is capped; synth-corpus refuses sizes it
/// cannot build and leaves no folder behind.
#[test]
fn inputs_have_strict_shapes_and_bounds() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let cap = d.join("cap");
    let o = nbg(
        d,
        &[
            "synth-differential",
            "--name",
            "dynaio-constant",
            "-o",
            "cap",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    std::fs::write(cap.join("differential.json"), "[[0,1,2,3],[0,1,2,4]]").unwrap();
    let o = nbg(d, &["differential", "cap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("must be a JSON object"));

    let erf = common::control("erf-u8.nb");
    std::fs::write(d.join("a.nb"), &erf).unwrap();
    let sha = nbg_lab::digest::Hash256::of(&erf);
    std::fs::write(
        d.join("arr.json"),
        format!(
            r#"{{"schema": "nbg-corpus/1", "files": [["a.nb", "stock", "{sha}", {}]]}}"#,
            erf.len()
        ),
    )
    .unwrap();
    let o = nbg(d, &["inventory", "arr.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("files[0] must be a JSON object"));

    // 20,000 entries, all the same file under distinct names via a deep listing of links is
    // not allowed, so distinct real files: loading is linear (no pairwise comparison).
    let many = d.join("many");
    std::fs::create_dir(&many).unwrap();
    let mut entries = Vec::new();
    for i in 0..20_000 {
        let name = format!("f{i}.nb");
        std::fs::write(many.join(&name), b"").unwrap();
        entries.push(format!(
            r#"{{"path": "{name}", "role": "x", "sha256": "{}", "size": 0}}"#,
            nbg_lab::digest::Hash256::of(b"")
        ));
    }
    let text = format!(
        r#"{{"schema": "nbg-corpus/1", "files": [{}]}}"#,
        entries.join(",")
    );
    std::fs::write(many.join("corpus.json"), text).unwrap();
    let c = nbg_lab::lab::corpus::load(&many.join("corpus.json")).unwrap();
    assert_eq!(c.entries.len(), 20_000);

    let o = nbg(d, &["inventory", "arr.json", "--jobs", "100000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("64"));
    for bytes in ["18446744073709551615", "100000000000"] {
        let o = nbg(
            d,
            &[
                "synth-corpus",
                "--files",
                "1",
                "--bytes",
                bytes,
                "-o",
                "big",
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{bytes}");
        assert!(!d.join("big").exists());
    }
}

/// `onnx run` plans OUT.npz and the evidence together: neither may be an input, and a bad
/// evidence path leaves no OUT.npz behind (it used to write OUT.npz and then exit 2).
#[test]
#[cfg(feature = "onnx")]
fn onnx_run_outputs_land_together_or_not_at_all() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let fixtures = common::root().join("onnx/fixtures");
    for f in ["spectral_mask_conv.onnx", "spectral_mask_input.npz"] {
        std::fs::copy(fixtures.join(f), d.join(f)).unwrap();
    }
    let model = std::fs::read(d.join("spectral_mask_conv.onnx")).unwrap();
    let run = |evidence: &str, extra: &[&str]| {
        let mut args = vec![
            "onnx",
            "run",
            "spectral_mask_conv.onnx",
            "--mode",
            "cpu",
            "--engine",
            "tract",
            "--input",
            "spectral_mask_input.npz",
            "--output",
            "o.npz",
            "--evidence",
            evidence,
        ];
        args.extend_from_slice(extra);
        nbg(d, &args)
    };
    let o = run("spectral_mask_conv.onnx", &["--force"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is an input"));
    assert_eq!(
        std::fs::read(d.join("spectral_mask_conv.onnx")).unwrap(),
        model
    );
    std::fs::create_dir(d.join("dir")).unwrap();
    let o = run("dir", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!d.join("o.npz").exists());
    let o = run("e.json", &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(d.join("o.npz").is_file() && d.join("e.json").is_file());
    // Both exist now: refused without --force, replaced with it.
    assert_eq!(run("e.json", &[]).status.code(), Some(2));
    assert_eq!(run("e.json", &["--force"]).status.code(), Some(0));
}
