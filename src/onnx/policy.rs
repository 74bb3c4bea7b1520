//! The fail-closed hybrid policy, bound by SHA-256 to a compiler-profile manifest and, for each
//! approved graph signature, to the qualification record that earned it.
//!
//! `policy/hybrid-policy.json` (`nbg-onnx-hybrid-policy/2`): `{"schema", "compiler_profile":
//! {"path", "sha256"}, "approved": [{"signature", "target", "qualification": {"path",
//! "sha256"}}]}`, paths relative to the policy's folder. The manifest
//! (`nbg-compiler-profile/2`): `{"schema", "decision", "driver_pin_sha256", "authorization":
//! {"compiler_execution"}}`.
//!
//! `compiler_qualified` is derived, never written: the manifest authorizes compiler execution
//! and pins the very driver this build is pinned to (`pins::DRIVER_PIN`). An approval holds only
//! beside a `qualified` record (`nbg onnx qualify`) of the same signature, driver pin and target.
//! The strict loader refuses (`POLICY_INVALID`) unknown and duplicate keys, absolute or escaping
//! paths, a digest mismatch, a manifest pinning another driver, approvals while the compiler is
//! not qualified, signatures that are not 64 lowercase hex digits, approvals not sorted and
//! unique by (signature, target); and (`QUALIFICATION_INVALID`) a record that does not parse, is
//! not qualified, or names another signature, driver pin or target than its approval.

use super::refusal::{Refusal, RefusalCode};
use crate::digest::Hash256;
use serde::Deserialize;
use std::path::Path;

/// Schema tag of a hybrid placement policy.
pub const POLICY_SCHEMA: &str = "nbg-onnx-hybrid-policy/2";
/// Schema tag of a compiler profile manifest.
pub const MANIFEST_SCHEMA: &str = "nbg-compiler-profile/2";
/// Schema tag of a qualification record (written by `simulator::qualify`).
pub const QUALIFICATION_SCHEMA: &str = "nbg-qualification/1";
/// The committed policy, relative to the project root.
pub const DEFAULT_POLICY: &str = "policy/hybrid-policy.json";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    schema: String,
    compiler_profile: FileRef,
    approved: Vec<ApprovalFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRef {
    path: String,
    sha256: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalFile {
    signature: String,
    target: String,
    qualification: FileRef,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    schema: String,
    #[allow(dead_code)] // recorded for humans; the pin and the authorization drive the loader
    decision: String,
    driver_pin_sha256: String,
    authorization: Authorization,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Authorization {
    compiler_execution: bool,
}

/// What the loader reads of a qualification record: what binds it to its approval.
#[derive(Deserialize)]
struct RecordBinding {
    schema: String,
    signature: String,
    driver: DriverBinding,
    target: TargetBinding,
    verdict: String,
}

#[derive(Deserialize)]
struct DriverBinding {
    pin_sha256: String,
}

#[derive(Deserialize)]
struct TargetBinding {
    name: String,
}

/// One approved graph signature on one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    /// The graph signature.
    pub signature: String,
    /// The driver configuration it was qualified on.
    pub target: String,
    /// SHA-256 of its qualification record.
    pub qualification_sha256: Hash256,
}

/// A loaded, checked policy.
#[derive(Clone, Debug)]
pub struct Policy {
    /// SHA-256 of the policy file.
    pub sha256: Hash256,
    /// Whether the compiler is qualified: the manifest authorizes it and pins this build's
    /// driver.
    pub compiler_qualified: bool,
    /// The approvals, each beside a passing qualification record.
    pub approved: Vec<Approval>,
    /// SHA-256 of the compiler manifest.
    pub manifest_sha256: Hash256,
    /// Whether the manifest lets the compiler run.
    pub compiler_execution: bool,
}

impl Policy {
    /// Whether `signature` is approved on `target` (a configuration name); with no target, on
    /// any.
    pub fn approves(&self, signature: &Hash256, target: Option<&str>) -> bool {
        self.compiler_qualified
            && self
                .approved
                .iter()
                .any(|a| a.signature == signature.hex() && target.is_none_or(|t| a.target == t))
    }
}

fn invalid(m: impl Into<String>) -> Refusal {
    Refusal::new(RefusalCode::PolicyInvalid, m)
}

fn unqualified(m: impl Into<String>) -> Refusal {
    Refusal::new(RefusalCode::QualificationInvalid, m)
}

/// The committed policy, manifest and qualification records, compiled into the binary: the
/// default when `--policy` is not given, so the audit never depends on the working directory.
const EMBEDDED_POLICY: &[u8] = include_bytes!("../../policy/hybrid-policy.json");
/// Every file the committed policy names, by its path relative to `policy/` (a test holds this
/// table to the policy's approvals).
pub const EMBEDDED_FILES: &[(&str, &[u8])] = &[
    (
        "compiler-profile.manifest.json",
        include_bytes!("../../policy/compiler-profile.manifest.json"),
    ),
    (
        "qualifications/conv-fp16-1000000e.json",
        include_bytes!("../../policy/qualifications/conv-fp16-1000000e.json"),
    ),
    (
        "qualifications/conv-fp16-88.json",
        include_bytes!("../../policy/qualifications/conv-fp16-88.json"),
    ),
    (
        "qualifications/gemm-relu-qdq-u8-1000001e.json",
        include_bytes!("../../policy/qualifications/gemm-relu-qdq-u8-1000001e.json"),
    ),
    (
        "qualifications/mtcnn-onet-1000000e.json",
        include_bytes!("../../policy/qualifications/mtcnn-onet-1000000e.json"),
    ),
    (
        "qualifications/mtcnn-onet-88.json",
        include_bytes!("../../policy/qualifications/mtcnn-onet-88.json"),
    ),
    (
        "qualifications/mtcnn-pnet-1000000e.json",
        include_bytes!("../../policy/qualifications/mtcnn-pnet-1000000e.json"),
    ),
    (
        "qualifications/mtcnn-pnet-88.json",
        include_bytes!("../../policy/qualifications/mtcnn-pnet-88.json"),
    ),
    (
        "qualifications/mtcnn-rnet-1000000e.json",
        include_bytes!("../../policy/qualifications/mtcnn-rnet-1000000e.json"),
    ),
    (
        "qualifications/mtcnn-rnet-88.json",
        include_bytes!("../../policy/qualifications/mtcnn-rnet-88.json"),
    ),
];

/// The compiled-in policy, checked exactly like a policy file (every path it names must be a
/// compiled-in file).
pub fn embedded() -> Result<Policy, Refusal> {
    check(EMBEDDED_POLICY, |path| {
        EMBEDDED_FILES
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, b)| b.to_vec())
            .ok_or_else(|| {
                invalid(format!(
                    "the compiled-in policy names {path:?}, which is not compiled in"
                ))
            })
    })
}

/// `path` or, without one, the compiled-in policy.
pub fn load_or_embedded(path: Option<&Path>) -> Result<Policy, Refusal> {
    match path {
        Some(p) => load(p),
        None => embedded(),
    }
}

/// Load and validate a policy file; a bad file is a refusal.
pub fn load(path: &Path) -> Result<Policy, Refusal> {
    let bytes = crate::files::read_regular(path).map_err(|e| invalid(e.to_string()))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    from_bytes(&bytes, dir)
}

/// Check policy text whose paths are relative to `dir`.
pub fn from_bytes(bytes: &[u8], dir: &Path) -> Result<Policy, Refusal> {
    check(bytes, |path| {
        let file =
            crate::files::resolve(dir, path).map_err(|m| invalid(format!("{path:?}: {m}")))?;
        crate::files::read_regular(&file).map_err(|e| invalid(e.to_string()))
    })
}

/// The file `r` names, read through `read`, with its digest checked.
fn pinned(
    r: &FileRef,
    what: &str,
    read: &impl Fn(&str) -> Result<Vec<u8>, Refusal>,
) -> Result<(Vec<u8>, Hash256), Refusal> {
    let bytes = read(&r.path)?;
    let sha = Hash256::of(&bytes);
    if sha.hex() != r.sha256 {
        return Err(invalid(format!(
            "{what} {:?} has digest {sha}, the policy pins {}",
            r.path, r.sha256
        )));
    }
    Ok((bytes, sha))
}

fn is_digest(s: &str) -> bool {
    s.len() == 64
        && s.chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

/// Check policy text, reading the files it names through `read`.
fn check(bytes: &[u8], read: impl Fn(&str) -> Result<Vec<u8>, Refusal>) -> Result<Policy, Refusal> {
    let p: PolicyFile =
        serde_json::from_slice(bytes).map_err(|e| invalid(format!("policy: {e}")))?;
    if p.schema != POLICY_SCHEMA {
        return Err(invalid(format!(
            "policy schema {:?}, expected {POLICY_SCHEMA:?}",
            p.schema
        )));
    }
    let (manifest_bytes, manifest_sha256) = pinned(&p.compiler_profile, "compiler profile", &read)?;
    let m: Manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| invalid(format!("compiler profile: {e}")))?;
    if m.schema != MANIFEST_SCHEMA {
        return Err(invalid(format!(
            "compiler profile schema {:?}, expected {MANIFEST_SCHEMA:?}",
            m.schema
        )));
    }
    let pin = super::pins::driver_pin_sha256().hex();
    if m.driver_pin_sha256 != pin {
        return Err(invalid(format!(
            "the compiler profile pins driver {}, this build is pinned to {pin} (simulator/sdk.json)",
            m.driver_pin_sha256
        )));
    }
    let compiler_qualified = m.authorization.compiler_execution;
    if !compiler_qualified && !p.approved.is_empty() {
        return Err(invalid(
            "signatures are approved while the compiler profile denies compiler execution",
        ));
    }
    if p.approved
        .windows(2)
        .any(|w| (&w[0].signature, &w[0].target) >= (&w[1].signature, &w[1].target))
    {
        return Err(invalid(
            "approvals must be sorted and unique by (signature, target)",
        ));
    }
    let mut approved = Vec::with_capacity(p.approved.len());
    for a in &p.approved {
        if !is_digest(&a.signature) {
            return Err(invalid(format!(
                "signature {:?} is not 64 lowercase hex digits",
                a.signature
            )));
        }
        let (record, qualification_sha256) = pinned(&a.qualification, "qualification", &read)?;
        let r: RecordBinding = serde_json::from_slice(&record)
            .map_err(|e| unqualified(format!("{:?}: {e}", a.qualification.path)))?;
        let fault = if r.schema != QUALIFICATION_SCHEMA {
            Some(format!("schema {:?}", r.schema))
        } else if r.verdict != "qualified" {
            Some(format!("verdict {:?}", r.verdict))
        } else if r.signature != a.signature {
            Some(format!("signature {}", r.signature))
        } else if r.driver.pin_sha256 != pin {
            Some(format!("driver pin {}", r.driver.pin_sha256))
        } else if r.target.name != a.target {
            Some(format!("target {:?}", r.target.name))
        } else {
            None
        };
        if let Some(f) = fault {
            return Err(unqualified(format!(
                "the approval of {} on {:?} rests on {:?}, whose record has {f}",
                a.signature, a.target, a.qualification.path
            )));
        }
        approved.push(Approval {
            signature: a.signature.clone(),
            target: a.target.clone(),
            qualification_sha256,
        });
    }
    Ok(Policy {
        sha256: Hash256::of(bytes),
        compiler_qualified,
        approved,
        manifest_sha256,
        compiler_execution: m.authorization.compiler_execution,
    })
}
