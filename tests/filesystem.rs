//! Filesystem bounds: symlinks, directories, FIFOs, unreadable files and paths escaping a
//! corpus root are refused with exit 2; an interrupted write never leaves a half-written file.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn nbg(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nbg"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

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
    let sha = nbg_lab::fingerprint::Hash256::of(&erf);
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
