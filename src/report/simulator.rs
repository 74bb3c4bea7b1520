//! What the `nbg vendor` commands print: a typed document per command, serialized for `--json`
//! and rendered as text here.

use crate::nbg::failure::Failure;
use crate::simulator::agreement::Row as AgreementRow;
use crate::simulator::compat::Trial;
use crate::simulator::run::RunReport;
use crate::simulator::{BatchVerdict, Compiled, Config, LoadVerdict};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write;

/// nbg's own verdict on a file the driver read or wrote: `valid`, or the failure's code and
/// offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseVerdict {
    /// It parses.
    Valid,
    /// It does not.
    Invalid {
        /// The failure's code.
        code: String,
        /// Where.
        offset: u64,
    },
}

impl ParseVerdict {
    /// The verdict of a parse.
    pub fn of<T>(parsed: &Result<T, Failure>) -> Self {
        match parsed {
            Ok(_) => ParseVerdict::Valid,
            Err(f) => ParseVerdict::Invalid {
                code: f.code.to_string(),
                offset: f.offset,
            },
        }
    }
}

impl Serialize for ParseVerdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            ParseVerdict::Valid => s.serialize_str("valid"),
            ParseVerdict::Invalid { code, offset } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("code", code)?;
                m.serialize_entry("offset", offset)?;
                m.end()
            }
        }
    }
}

impl std::fmt::Display for ParseVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseVerdict::Valid => f.write_str("valid"),
            ParseVerdict::Invalid { code, offset } => write!(f, "{code} at 0x{offset:x}"),
        }
    }
}

/// A driver error as `--json` prints it.
#[derive(Serialize)]
pub struct ErrorDoc<'a> {
    /// Its code and message.
    pub error: ErrorBody<'a>,
}

/// The code and message of a driver error.
#[derive(Serialize)]
pub struct ErrorBody<'a> {
    /// `VendorError::code`.
    pub code: &'a str,
    /// Its message.
    pub message: String,
}

/// `nbg vendor targets`: the driver's configurations, or the one a file's target selects.
#[derive(Serialize)]
pub struct Targets<'a> {
    /// Every configuration of the installed driver.
    pub configs: &'a [Config],
    /// The file's target word, hex, when a file was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_target: Option<String>,
    /// The configuration it selects (`null`: none has its PID), when a file was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected: Option<Option<&'a Config>>,
}

/// The text of `nbg vendor targets`.
pub fn targets(t: &Targets<'_>) -> String {
    let mut s = String::new();
    match (&t.file_target, &t.selected) {
        (Some(pid), Some(Some(c))) => {
            let _ = writeln!(s, "target {pid}: {}", c.name);
        }
        (Some(pid), _) => {
            let _ = writeln!(
                s,
                "target {pid}: no configuration of the driver has this PID"
            );
        }
        (None, _) => {
            for c in t.configs {
                let _ = writeln!(s, "{:<48} 0x{:08x}", c.name, c.pid);
            }
            let _ = writeln!(s, "{} configurations", t.configs.len());
        }
    }
    s
}

/// `nbg vendor load`: the loader's verdict on one file beside nbg's.
#[derive(Serialize)]
pub struct Load<'a> {
    /// The file, as given.
    pub file: String,
    /// The configuration simulated.
    pub config: &'a Config,
    /// The driver's pin (`Sdk::to_json`).
    pub driver: Value,
    /// The loader's verdict.
    pub loader: &'a LoadVerdict,
    /// Seconds the load took.
    pub seconds: f64,
    /// nbg's verdict.
    pub nbg: ParseVerdict,
    /// Where the loader's parameters differ from nbg's I/O records.
    pub io_differences: Vec<String>,
}

/// The text of `nbg vendor load`.
pub fn load(l: &Load<'_>) -> String {
    let mut t = format!("{} under {}: ", l.file, l.config.name);
    match l.loader {
        LoadVerdict::Accepted {
            import_type,
            parameters,
        } => {
            let _ = writeln!(
                t,
                "accepted ({import_type}), {} parameters",
                parameters.len()
            );
            for (i, p) in parameters.iter().enumerate() {
                let _ = writeln!(
                    t,
                    "  {i} {:<6} {:?} {} scale {:?} zero point {:?}",
                    p.direction,
                    p.dims.clone().unwrap_or_default(),
                    p.data_type.as_deref().unwrap_or("?"),
                    p.scale,
                    p.zero_point
                );
            }
        }
        LoadVerdict::Refused(r) => {
            let _ = writeln!(t, "{r}");
        }
        LoadVerdict::Crashed { failure } => {
            let _ = writeln!(t, "crashed: {failure}");
        }
    }
    let _ = writeln!(t, "nbg: {}", l.nbg);
    for d in &l.io_differences {
        let _ = writeln!(t, "differs: {d}");
    }
    t
}

/// A loader verdict in a line: its name, and the status of a refusal.
fn batch_verdict(v: &BatchVerdict) -> String {
    match v.status() {
        Some(st) => format!("{} {st}", v.name()),
        None => v.name().to_string(),
    }
}

/// `nbg vendor compat`: each file under each configuration and version word.
#[derive(Serialize)]
pub struct Compat<'a> {
    /// One per (file, configuration, version).
    pub trials: &'a [Trial],
}

/// The text of `nbg vendor compat`.
pub fn compat(c: &Compat<'_>) -> String {
    let mut s = String::new();
    for t in c.trials {
        let _ = writeln!(
            s,
            "{:<56} version {} (own {}) target {} under {:<34} nbg {:<24} loader {}",
            t.file,
            t.version,
            t.own_version,
            t.own_target,
            t.config,
            t.nbg,
            batch_verdict(&t.loader)
        );
    }
    s
}

/// `nbg vendor agreement`: nbg's verdict and the loader's on each file of a corpus.
#[derive(Serialize)]
pub struct Agreement<'a> {
    /// One per file.
    pub rows: &'a [AgreementRow],
    /// Files.
    pub files: usize,
    /// Files where one accepts and the other refuses.
    pub disagreements: usize,
    /// Files no configuration of the driver could load.
    pub not_loaded: usize,
}

/// The text of `nbg vendor agreement`.
pub fn agreement(a: &Agreement<'_>) -> String {
    let mut s = String::new();
    for r in a.rows {
        let loader = r.loader.as_ref().map_or_else(
            || "no configuration for its target".to_string(),
            batch_verdict,
        );
        let _ = writeln!(
            s,
            "{} {:<60} {} {} nbg {:<24} loader {}",
            if r.disagree { "!" } else { " " },
            r.file,
            r.version,
            r.target,
            r.nbg,
            loader
        );
    }
    let judged = a.files - a.not_loaded;
    let _ = writeln!(
        s,
        "{} files: {judged} judged by both, {} agree, {} disagree; {} not loaded (no configuration for their target)",
        a.files,
        judged - a.disagreements,
        a.disagreements,
        a.not_loaded
    );
    s
}

/// `nbg vendor compile`: what the driver wrote and nbg's verdict on it.
#[derive(Serialize)]
pub struct Compile<'a> {
    /// The compile's record.
    #[serde(flatten)]
    pub compiled: &'a Compiled,
    /// The driver's pin.
    pub driver: Value,
    /// The model, as given.
    pub model: String,
    /// Where the NBG was written.
    pub out: String,
    /// nbg's verdict on it.
    pub nbg_parse: ParseVerdict,
}

/// The line `nbg vendor compile` writes on stderr.
pub fn compile(c: &Compile<'_>) -> String {
    format!(
        "wrote {} ({} bytes, version {}, sha256 {}) for {} in {:.1} s\n",
        c.out,
        c.compiled.nbg_bytes,
        c.compiled.nbg_version,
        c.compiled.nbg_sha256,
        c.compiled.config.name,
        c.compiled.seconds
    )
}

/// `nbg vendor capture`: an A1/A2/B capture set the driver compiled.
#[derive(Serialize)]
pub struct Capture<'a> {
    /// The capture folder.
    pub out: String,
    /// The configuration.
    pub config: &'a Config,
    /// The quantity A and B differ in.
    pub quantity: &'a str,
    /// A1's SHA-256.
    pub a1_sha256: crate::digest::Hash256,
    /// A2's.
    pub a2_sha256: crate::digest::Hash256,
    /// B's.
    pub b_sha256: crate::digest::Hash256,
    /// Whether the two compiles of A are byte-identical.
    pub a1_equals_a2: bool,
}

/// The line `nbg vendor capture` writes on stderr.
pub fn capture(c: &Capture<'_>) -> String {
    format!(
        "wrote capture set {} ({}; A1 {} A2)\n",
        c.out,
        c.quantity,
        if c.a1_equals_a2 { "=" } else { "!=" }
    )
}

/// `nbg vendor run --json`: the run's record, the file, the driver and what was written.
#[derive(Serialize)]
pub struct Run<'a> {
    /// The run's record.
    #[serde(flatten)]
    pub report: &'a RunReport,
    /// The file, as given.
    pub file: String,
    /// The driver's pin.
    pub driver: Value,
    /// The outputs written (`null` when the graph did not run).
    pub out: Option<String>,
}

/// `nbg vendor sweep --json`: the sweep's report under its schema.
#[derive(Serialize)]
pub struct Sweep<'a> {
    /// `lab::sweep::VENDOR_SCHEMA`.
    pub schema: &'static str,
    /// The report.
    #[serde(flatten)]
    pub report: &'a crate::simulator::sweep::Report,
}

/// `nbg vendor controls` or `capture-sets` when every file recompiled identically.
pub fn recompiled(dir: &str, n: usize, what: &str, seconds: f64) -> String {
    format!("{dir}: {n} {what} recompiled byte-identically in {seconds:.0} s\n")
}

/// Each file that did not recompile identically, a line each.
pub fn problems(problems: &[String]) -> String {
    problems.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verdict's name in a line is the one its JSON carries.
    #[test]
    fn batch_verdict_names_are_the_serialized_ones() {
        for v in [
            BatchVerdict::Accepted,
            BatchVerdict::Refused {
                status: -1,
                status_name: "VX_FAILURE".into(),
            },
            BatchVerdict::Crashed {
                signal: 11,
                name: "SIGSEGV".into(),
            },
            BatchVerdict::Hung,
        ] {
            let j = serde_json::to_value(&v).unwrap();
            assert_eq!(j["verdict"], v.name());
            assert_eq!(j["status"].as_i64(), v.status().map(i64::from));
        }
    }

    /// A driver refusal is one type in a compile's, a load's and a run's answer: flat beside
    /// the verdict's tag in JSON, one line in text, and the child's answer reads back.
    #[test]
    fn a_driver_refusal_is_flat_in_every_answer() {
        use crate::simulator::driver::{DriverRefusal, Response};
        let r = DriverRefusal {
            step: "vxVerifyGraph".into(),
            status: -1,
            status_name: "VX_FAILURE".into(),
        };
        let flat = serde_json::json!({"verdict": "refused", "step": "vxVerifyGraph", "status": -1,
            "status_name": "VX_FAILURE"});
        assert_eq!(
            serde_json::to_value(LoadVerdict::Refused(r.clone())).unwrap(),
            flat
        );
        assert_eq!(
            serde_json::to_value(crate::simulator::run::RunVerdict::Refused(r.clone())).unwrap(),
            flat
        );
        let answer = serde_json::to_string(&Response::Refused(r.clone())).unwrap();
        assert!(answer.contains(r#""result":"refused""#), "{answer}");
        match serde_json::from_str::<Response>(&answer).unwrap() {
            Response::Refused(back) => assert_eq!(back, r),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            r.to_string(),
            "refused at vxVerifyGraph: status -1 (VX_FAILURE)"
        );
    }

    /// nbg's verdict: `valid` or `{code, offset}` in JSON, a phrase in text.
    #[test]
    fn parse_verdicts_serialize_and_read() {
        let bad = ParseVerdict::Invalid {
            code: "bad-magic".into(),
            offset: 16,
        };
        assert_eq!(serde_json::to_value(ParseVerdict::Valid).unwrap(), "valid");
        assert_eq!(
            serde_json::to_value(&bad).unwrap(),
            serde_json::json!({"code": "bad-magic", "offset": 16})
        );
        assert_eq!(bad.to_string(), "bad-magic at 0x10");
    }
}
