//! JSON documents the commands print beside the library's own serialized values.

use crate::nbg::failure::Failure;
use serde_json::Value;

/// Any serializable report as a JSON value (`Null` for none: every report type here has string
/// keys and finite numbers, so serialization does not fail).
pub fn value<T: serde::Serialize>(report: &T) -> Value {
    serde_json::to_value(report).unwrap_or(Value::Null)
}

/// A document with the `file` it is about added.
pub fn with_file(mut doc: Value, file: &str) -> Value {
    doc["file"] = Value::from(file);
    doc
}

/// `{"error": {code, offset, message}, "file": FILE}`: a failure in one file of several.
pub fn failure_in(file: &str, failure: &Failure) -> Value {
    with_file(failure.to_json(), file)
}
