//! Committed evidence files: what they contain and how each is rebuilt in memory.
//!
//! Every evidence file is canonical JSON (sorted keys, two-space indent, trailing newline, no
//! timestamps, no absolute paths), so a rebuild can be compared byte for byte.

use crate::failure::Failure;
use crate::image::NbgImage;
use crate::parse;
use serde_json::Value;
use std::path::Path;

/// Canonical text of a JSON value. `serde_json`'s map is ordered by key, so keys are sorted.
pub fn canonical(value: &Value) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("JSON value serializes");
    s.push('\n');
    s
}

/// The image ledger document of one file: `owners`, `views`, `totals`, `reconstruction`.
pub fn image_document(bytes: &[u8]) -> Result<Value, Failure> {
    let graph = parse(bytes)?;
    Ok(NbgImage::new(&graph)?.to_json())
}

/// One evidence file: its path relative to the project root and its rebuilt text.
pub struct Generated {
    pub path: String,
    pub text: String,
}

/// Names of the pinned controls, from `controls/controls.json`.
pub fn control_names(root: &Path) -> Result<Vec<String>, String> {
    let path = root.join("controls/controls.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let controls = v["controls"]
        .as_array()
        .ok_or("controls.json: no controls array")?;
    controls
        .iter()
        .map(|c| {
            c["name"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| "control without a name".to_string())
        })
        .collect()
}

/// Rebuild `evidence/images/<control>.json` for every pinned control.
pub fn image_evidence(root: &Path) -> Result<Vec<Generated>, String> {
    let mut out = Vec::new();
    for name in control_names(root)? {
        let file = root.join("controls").join(&name);
        let bytes = crate::files::read_regular(&file).map_err(|e| e.to_string())?;
        let doc = image_document(&bytes).map_err(|f| format!("{name}: {f}"))?;
        let stem = name.strip_suffix(".nb").unwrap_or(&name);
        out.push(Generated {
            path: format!("evidence/images/{stem}.json"),
            text: canonical(&doc),
        });
    }
    Ok(out)
}
