//! Shared test helpers: the committed controls and the builder's layouts.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn control(name: &str) -> Vec<u8> {
    std::fs::read(root().join("controls").join(name)).expect("committed control")
}

/// Control file names from `controls/controls.json`.
pub fn control_names() -> Vec<String> {
    manifest()["controls"]
        .as_array()
        .expect("controls array")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_string())
        .collect()
}

pub fn manifest() -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("controls/controls.json")).expect("manifest");
    serde_json::from_str(&text).expect("manifest JSON")
}

pub fn le32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

pub fn put32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// The public corpus beside the project; tests that need it fail loudly when it is missing.
pub fn corpus_dir() -> PathBuf {
    let dir = root().join("../shared/corpus");
    assert!(
        dir.join("corpus.json").is_file(),
        "the public corpus is missing: expected {} (CI provides ../shared/corpus beside the project)",
        dir.display()
    );
    dir
}

pub fn exists(p: &Path) -> bool {
    p.exists()
}
