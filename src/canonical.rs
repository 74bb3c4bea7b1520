//! Canonical JSON text: sorted keys, two-space indent, trailing newline. Every evidence file,
//! inventory and capture spec the lab writes is in this form, so a rebuild compares byte for byte.

use serde_json::Value;

/// One generated file (evidence, an inventory, an export): its path relative to the project
/// root and its exact text. Generators return these; `verify-generated` compares them with the
/// committed files byte for byte.
pub struct Generated {
    /// Path of the file relative to the repository root.
    pub path: String,
    /// The file's exact bytes, as text.
    pub text: String,
}

/// Canonical text of a JSON value. `serde_json`'s map is ordered by key, so keys are sorted.
pub fn canonical(value: &Value) -> String {
    // A `Value` has only string keys and finite numbers, so printing it cannot fail.
    let mut s = serde_json::to_string_pretty(value).unwrap_or_default();
    s.push('\n');
    s
}
