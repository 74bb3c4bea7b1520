//! Where the project checkout is: the committed controls, evidence and the vendor driver's
//! install folder are found from here.

use std::path::{Path, PathBuf};

/// The project root: the working directory when it is a project checkout, else the tree the
/// binary was built from when that is still there (so `nbg lab` runs from any folder).
pub fn root() -> PathBuf {
    let marker = "controls/controls.json";
    let built = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !Path::new(marker).is_file() && built.join(marker).is_file() {
        built.to_path_buf()
    } else {
        PathBuf::from(".")
    }
}
