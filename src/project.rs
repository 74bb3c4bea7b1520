//! Where the project checkout is: the committed controls, evidence and the vendor driver's
//! install folder are found from here.

use std::path::{Path, PathBuf};

/// The project root: the working directory when it is a project checkout, else the tree the
/// binary was built from when that is still there (so `nbg lab` runs from any folder).
pub fn root() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !is_checkout(Path::new(".")) && is_checkout(built) {
        built.to_path_buf()
    } else {
        PathBuf::from(".")
    }
}

/// The checkout that installed components (the vendor driver under `.ci/vendor`) live in,
/// found from the running binary, never from the working folder: the checkout above the
/// executable (`target/release/nbg`, a test binary under `target/debug/deps`), else the tree
/// the binary was built from when it is still there, else `root()`.
pub fn install_root() -> PathBuf {
    let exe = std::env::current_exe().ok();
    if let Some(d) = exe
        .as_deref()
        .and_then(|e| e.ancestors().skip(1).find(|d| is_checkout(d)))
    {
        return d.to_path_buf();
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR"));
    if is_checkout(built) {
        built.to_path_buf()
    } else {
        root()
    }
}

/// Whether `dir` is a project checkout (it holds the controls' manifest).
fn is_checkout(dir: &Path) -> bool {
    dir.join("controls/controls.json").is_file()
}
