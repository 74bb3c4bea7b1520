//! The Python module (`python/`, issue 69): its pytest suite against the installed wheel, with
//! this build's `nbg` to compare every document with.

use crate::common;
use std::process::Command;

/// `python/tests` pass against the wheel `.ci/setup` installed from this very tree.
#[test]
fn the_python_module_gives_what_the_command_gives() {
    let root = common::root();
    let ready = Command::new("python3")
        .args(["-c", "import nbg_lab, pytest, numpy"])
        .status();
    if !ready.is_ok_and(|s| s.success()) {
        common::skip("the nbg_lab wheel or pytest is not installed for python3 (bash .ci/setup)");
        return;
    }
    // A wheel built from other sources would test other code: refused, not run.
    let sources = Command::new(root.join(".ci/wheel_sources"))
        .output()
        .unwrap();
    let stamp = std::fs::read_to_string(root.join("target/python-wheel.stamp")).unwrap_or_default();
    assert_eq!(
        stamp.trim(),
        String::from_utf8_lossy(&sources.stdout).trim(),
        "the installed nbg_lab wheel is not this tree's: run bash .ci/setup"
    );
    let out = Command::new("python3")
        .args([
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "python/tests",
        ])
        .current_dir(&root)
        .env("NBG_BIN", env!("CARGO_BIN_EXE_nbg"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pytest python/tests failed:\n{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The summary (and any skip with its reason) where the harness shows it.
    let tail: Vec<&str> = said
        .lines()
        .rev()
        .take_while(|l| !l.contains("[100%]"))
        .collect();
    eprintln!(
        "python/tests: {}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    assert!(said.contains(" passed"), "{said}");
}
