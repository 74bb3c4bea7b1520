//! "Will it load on my board?" (`nbg check --target --runtime`): the file's target word and
//! version word against the device's PID and the newest format version its runtime reads.
//!
//! The target verdict models the board runtime's check (the `nbglk_valid_nbg_check` refusal
//! users report: "binary target=0x15, actually target=0x1000003B"): the file is refused unless
//! its target word is the device's PID. Beside it, each check says what the vendor's simulator
//! loader does with the same file, as measured (`notebooks/vendor-loader.md` §2): it refuses a
//! v1 file under any other PID and ignores a v2 file's target word. The version verdict needs
//! the runtime's newest version; a runtime of a newer family reading an older one is unknown.

use crate::nbg::parse::Graph;
use serde::Serialize;

/// The outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The file passes.
    Compatible,
    /// The file's target word is not the device's PID.
    TargetMismatch,
    /// The file's format version is newer than the newest the runtime reads.
    VersionNewerThanRuntime,
    /// Whether the runtime reads the file cannot be told from the versions.
    Unknown,
}

crate::canonical::names! {
    Outcome {
        Compatible => "compatible",
        TargetMismatch => "target-mismatch",
        VersionNewerThanRuntime => "version-newer-than-runtime",
        Unknown => "unknown",
    }
}

/// What the vendor's simulator loader does with the file under the asked PID, as measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simulator {
    /// It imports the file.
    Accepts,
    /// It refuses the file (status -7).
    Refuses,
}

crate::canonical::names! {
    Simulator {
        Accepts => "accepts",
        Refuses => "refuses",
    }
}

/// One check.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// `target` or `version`.
    pub check: &'static str,
    /// The file's value (`0x00000015`).
    pub file: String,
    /// The device's or runtime's value.
    pub expected: String,
    /// The outcome.
    pub outcome: Outcome,
    /// The target check only: what the vendor's simulator loader does under that PID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor_simulator: Option<Simulator>,
    /// What to do about it, when it does not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The verdict on one file.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The file as given.
    pub file: String,
    /// `nbg-v1` or `nbg-v2`.
    pub format: &'static str,
    /// The first check that does not pass, else `compatible`.
    pub verdict: Outcome,
    /// Every check asked for, target first.
    pub checks: Vec<Check>,
}

/// What the device and runtime are.
#[derive(Clone, Copy, Debug, Default)]
pub struct Expect {
    /// The device's PID.
    pub target: Option<u32>,
    /// The newest format version the runtime reads.
    pub runtime: Option<u32>,
}

fn hex(v: u32) -> String {
    format!("0x{v:08x}")
}

/// (file target, device PID) pairs the simulator's v1 check accepts although they differ: read
/// from its `readBinHeader`, measured with `nbg vendor compat` (`notebooks/board-questions.md`).
pub const SIMULATOR_V1_ALIASES: [(u32, u32); 1] = [(0xae, 0xd1)];

/// The simulator's v1 target check, as measured: only the file's own PID (and the aliases).
fn simulator(v1: bool, target: u32, device: u32) -> Simulator {
    if !v1 || target == device || SIMULATOR_V1_ALIASES.contains(&(target, device)) {
        Simulator::Accepts
    } else {
        Simulator::Refuses
    }
}

/// The verdict on `graph` (a valid NBG at `file`).
pub fn verdict(file: &str, graph: &Graph<'_>, expect: Expect) -> Verdict {
    use crate::nbg::family::NbgFamily as _;
    let (version, target) = (graph.version(), graph.target());
    let v1 = graph.family() == crate::nbg::family::Family::V1;
    let mut checks = Vec::new();
    if let Some(device) = expect.target {
        let outcome = if target == device {
            Outcome::Compatible
        } else {
            Outcome::TargetMismatch
        };
        checks.push(Check {
            check: "target",
            file: hex(target),
            expected: hex(device),
            outcome,
            vendor_simulator: Some(simulator(v1, target, device)),
            hint: (outcome != Outcome::Compatible).then(|| {
                format!(
                    "re-export the model for target {}: the command streams are built for the NPU the target word names, so patching the four target bytes does not make them run on another",
                    hex(device)
                )
            }),
        });
    }
    if let Some(runtime) = expect.runtime {
        let (major, runtime_major) = (version >> 16, runtime >> 16);
        let outcome = if major > runtime_major || (major == runtime_major && version > runtime) {
            Outcome::VersionNewerThanRuntime
        } else if major < runtime_major {
            Outcome::Unknown
        } else {
            Outcome::Compatible
        };
        let hint = match outcome {
            Outcome::VersionNewerThanRuntime => Some(format!(
                "the runtime reads formats up to {}: re-export with the toolkit release that matches the runtime, or update the runtime (a driver name such as \"v2.0\" is not a format version)",
                hex(runtime)
            )),
            Outcome::Unknown => Some(format!(
                "a runtime of format family {runtime_major} reading a family-{major} file depends on the runtime (the vendor's simulator, which writes 0x00020005, imports v1 files up to 0x00010021); try it on the board"
            )),
            _ => None,
        };
        checks.push(Check {
            check: "version",
            file: hex(version),
            expected: hex(runtime),
            outcome,
            vendor_simulator: None,
            hint,
        });
    }
    let verdict = checks
        .iter()
        .map(|c| c.outcome)
        .find(|o| *o != Outcome::Compatible)
        .unwrap_or(Outcome::Compatible);
    Verdict {
        file: file.to_string(),
        format: graph.format(),
        verdict,
        checks,
    }
}

/// What `nbg check` says of one file: its verdict against a device, that it parses, or the
/// first rule it breaks.
#[derive(Clone, Debug)]
pub enum Judgement {
    /// The file parses and was judged against a device (`--target`, `--runtime`).
    Verdict(Verdict),
    /// The file parses; no device was named.
    Parses {
        /// A v1 CRC field matches no known rule (a failure under `--strict`).
        crc_unexplained: bool,
    },
    /// The file is not a valid NBG (or could not be read: an `unreadable` failure).
    Failed(crate::nbg::failure::Failure),
}

impl Judgement {
    /// Whether the file passes.
    pub fn passes(&self) -> bool {
        match self {
            Judgement::Verdict(v) => v.verdict == Outcome::Compatible,
            Judgement::Parses { .. } => true,
            Judgement::Failed(_) => false,
        }
    }
}

/// Judge the file `shown` from its parse: with `strict`, a v1 CRC field that no known rule
/// explains fails it.
pub fn judge(
    shown: &str,
    parsed: Result<Graph<'_>, crate::nbg::failure::Failure>,
    expect: Expect,
    strict: bool,
) -> Judgement {
    use crate::nbg::family::NbgFamily as _;
    let graph = match parsed {
        Ok(g) => g,
        Err(f) => return Judgement::Failed(f),
    };
    let unexplained = graph.crc_summary().unexplained();
    match unexplained {
        Some(f) if strict => Judgement::Failed(f),
        _ if expect.target.is_some() || expect.runtime.is_some() => {
            Judgement::Verdict(verdict(shown, &graph, expect))
        }
        u => Judgement::Parses {
            crc_unexplained: u.is_some(),
        },
    }
}
