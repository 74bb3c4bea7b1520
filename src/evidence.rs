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

/// Rebuild `evidence/differentials/<name>.json` for every committed capture set.
pub fn differential_evidence(root: &Path) -> Result<Vec<Generated>, String> {
    let dir = root.join("differentials");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let set = crate::differential::load(&dir.join(&name)).map_err(|e| e.to_string())?;
        let report =
            crate::differential::run(&set).map_err(|(f, which)| format!("{name}/{which}: {f}"))?;
        let value = serde_json::to_value(&report).expect("report serializes");
        out.push(Generated {
            path: format!("evidence/differentials/{name}.json"),
            text: canonical(&value),
        });
    }
    Ok(out)
}
