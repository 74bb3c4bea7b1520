//! Canonical JSON text: sorted keys, two-space indent, trailing newline. Every evidence file,
//! inventory and capture spec the lab writes is in this form, so a rebuild compares byte for byte.

use serde_json::Value;

/// Canonical text of a JSON value. `serde_json`'s map is ordered by key, so keys are sorted.
pub fn canonical(value: &Value) -> String {
    // A `Value` has only string keys and finite numbers, so printing it cannot fail.
    let mut s = serde_json::to_string_pretty(value).unwrap_or_default();
    s.push('\n');
    s
}
