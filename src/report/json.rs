//! JSON documents the commands print beside the library's own serialized values: a typed
//! value per document, serialized here, never assembled in a command.

use crate::nbg::failure::Failure;
use serde::Serialize;
use serde_json::Value;

/// Any serializable report as a JSON value (`Null` for none: every report type here has string
/// keys and finite numbers, so serialization does not fail).
pub fn value<T: Serialize>(report: &T) -> Value {
    serde_json::to_value(report).unwrap_or(Value::Null)
}

/// One file's entry of a multi-file document: its report with the file named, or its failure
/// (`{"error": {code, offset, message}, "file": FILE}`).
#[derive(Serialize)]
#[serde(untagged)]
pub enum Entry<'a, T: Serialize> {
    /// The file's report.
    Done {
        /// The report.
        #[serde(flatten)]
        report: T,
        /// The file, as given.
        file: &'a str,
    },
    /// The file's failure.
    Failed {
        /// Its code, offset and message.
        error: &'a Failure,
        /// The file, as given.
        file: &'a str,
    },
}

impl<'a, T: Serialize> Entry<'a, T> {
    /// `report` of `file`.
    pub fn done(file: &'a str, report: T) -> Self {
        Entry::Done { report, file }
    }

    /// `failure` of `file`.
    pub fn failed(file: &'a str, failure: &'a Failure) -> Self {
        Entry::Failed {
            error: failure,
            file,
        }
    }

    /// The entry as a JSON value.
    pub fn to_json(&self) -> Value {
        value(self)
    }
}

/// `{"files": [...]}`: the document of a command that reads several files.
pub fn files(entries: Vec<Value>) -> Value {
    value(&Files { files: entries })
}

/// The document `files` serializes.
#[derive(Serialize)]
struct Files {
    files: Vec<Value>,
}

/// A graph that parses, as `nbg check` lists it without expectations.
#[derive(Serialize)]
pub struct Parses {
    /// `ok`.
    pub verdict: &'static str,
    /// `unexplained` where the v1 CRC field matches no known rule (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crc: Option<&'static str>,
}

/// One file's entry of `nbg check --json`: its verdict, `{"verdict": "ok"}` (with `"crc":
/// "unexplained"` where a v1 CRC field matches no known rule), or its failure.
pub fn judgement(file: &str, j: &crate::lab::compatibility::Judgement) -> Value {
    use crate::lab::compatibility::Judgement;
    match j {
        Judgement::Verdict(v) => value(v),
        Judgement::Parses { crc_unexplained } => {
            let crc = crc_unexplained.then_some("unexplained");
            Entry::done(file, Parses { verdict: "ok", crc }).to_json()
        }
        Judgement::Failed(f) => Entry::<()>::failed(file, f).to_json(),
    }
}

/// A graph's patch records resolved, as `nbg patches --json` lists them.
#[derive(Serialize)]
pub struct Patches {
    /// `null` where the graph's patch table is not decoded.
    pub patches: Option<crate::nbg::parse::patch_targets::PatchTargets>,
}

/// A file's `nbg roundtrip --json` entry: the ledger's emission and the re-encoding counts.
#[derive(Serialize)]
struct RoundTrip<'a> {
    /// The re-encoding counts.
    #[serde(flatten)]
    pub reencoding: &'a crate::nbg::reencode::Reencoding,
    /// Whether the ledger re-emits the file byte for byte.
    pub ledger_exact: bool,
    /// Why it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_error: Option<String>,
}

/// One file's `nbg roundtrip --json` entry: its records re-encoded through the field map and
/// whether the ledger re-emits it byte for byte (why not, when it does not).
pub fn round_trip<T, E: std::fmt::Display>(
    file: &str,
    reencoding: &crate::nbg::reencode::Reencoding,
    emitted: &Result<T, E>,
) -> Value {
    let entry = RoundTrip {
        reencoding,
        ledger_exact: emitted.is_ok(),
        ledger_error: emitted.as_ref().err().map(ToString::to_string),
    };
    Entry::done(file, entry).to_json()
}

/// A file's `nbg roundtrip --json` entry when it does not parse or has no ledger.
#[derive(Serialize)]
pub struct RoundTripFailed<'a> {
    /// The file, as given.
    pub file: &'a str,
    /// Its failure.
    pub failure: &'a Failure,
}

/// A refused model as `--json` prints it: the refusal and, when the model ran on the CPU
/// before it was refused, the execution.
#[cfg(feature = "onnx")]
#[derive(Serialize)]
pub struct Refused<'a> {
    /// Its code and message.
    pub error: &'a crate::onnx::refusal::Refusal,
    /// What ran before the refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
}
