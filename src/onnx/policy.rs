//! The fail-closed hybrid policy, bound by SHA-256 to a compiler-profile manifest.
//!
//! `policy/hybrid-policy.json`: `{"schema", "compiler_qualified", "approved_npu_signatures",
//! "compiler_profile": {"path", "sha256"}}`, the path relative to the policy's folder.
//! The strict loader refuses unknown and duplicate keys, absolute or escaping paths, a digest
//! mismatch, unsorted, non-lowercase or duplicate signatures, approved signatures while
//! `compiler_qualified` is false, and qualification while the manifest denies compiler
//! execution.

use super::refusal::{Refusal, RefusalCode};
use crate::nbg::fingerprint::Hash256;
use serde::Deserialize;
use std::path::Path;

/// Schema tag of a hybrid placement policy.
pub const POLICY_SCHEMA: &str = "nbg-onnx-hybrid-policy/1";
/// Schema tag of a compiler profile manifest.
pub const MANIFEST_SCHEMA: &str = "nbg-compiler-profile/1";
/// The committed policy, relative to the project root.
pub const DEFAULT_POLICY: &str = "policy/hybrid-policy.json";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    schema: String,
    compiler_qualified: bool,
    approved_npu_signatures: Vec<String>,
    compiler_profile: ProfileRef,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileRef {
    path: String,
    sha256: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    schema: String,
    #[allow(dead_code)] // recorded for humans; only the authorization drives the loader
    decision: String,
    authorization: Authorization,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Authorization {
    compiler_execution: bool,
}

/// A loaded, checked policy.
#[derive(Clone, Debug)]
pub struct Policy {
    /// SHA-256 of the policy file.
    pub sha256: Hash256,
    /// Whether the compiler profile is qualified (the manifest says so).
    pub compiler_qualified: bool,
    /// Model signatures approved for the NPU.
    pub approved_npu_signatures: Vec<String>,
    /// SHA-256 of the compiler manifest.
    pub manifest_sha256: Hash256,
    /// Whether the policy lets the audit execute the compiler.
    pub compiler_execution: bool,
}

fn invalid(m: impl Into<String>) -> Refusal {
    Refusal::new(RefusalCode::PolicyInvalid, m)
}

/// The committed policy and manifest, compiled into the binary: the default when `--policy` is
/// not given, so the audit never depends on the working directory.
const EMBEDDED_POLICY: &[u8] = include_bytes!("../../policy/hybrid-policy.json");
const EMBEDDED_MANIFEST: &[u8] = include_bytes!("../../policy/compiler-profile.manifest.json");

/// The compiled-in policy, checked exactly like a policy file (its manifest path must name the
/// compiled-in manifest).
pub fn embedded() -> Result<Policy, Refusal> {
    check(EMBEDDED_POLICY, |path| {
        if path == "compiler-profile.manifest.json" {
            Ok(EMBEDDED_MANIFEST.to_vec())
        } else {
            Err(invalid(format!(
                "the compiled-in policy names manifest {path:?}, not the compiled-in one"
            )))
        }
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
    let bytes = crate::nbg::files::read_regular(path).map_err(|e| invalid(e.to_string()))?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    from_bytes(&bytes, dir)
}

/// Check policy text whose manifest path is relative to `dir`.
pub fn from_bytes(bytes: &[u8], dir: &Path) -> Result<Policy, Refusal> {
    check(bytes, |path| {
        let manifest_path = crate::nbg::files::resolve(dir, path)
            .map_err(|m| invalid(format!("compiler_profile.path {path:?}: {m}")))?;
        crate::nbg::files::read_regular(&manifest_path).map_err(|e| invalid(e.to_string()))
    })
}

/// Check policy text, reading its manifest through `manifest`.
fn check(
    bytes: &[u8],
    manifest: impl FnOnce(&str) -> Result<Vec<u8>, Refusal>,
) -> Result<Policy, Refusal> {
    let p: PolicyFile =
        serde_json::from_slice(bytes).map_err(|e| invalid(format!("policy: {e}")))?;
    if p.schema != POLICY_SCHEMA {
        return Err(invalid(format!(
            "policy schema {:?}, expected {POLICY_SCHEMA:?}",
            p.schema
        )));
    }
    let manifest_bytes = manifest(&p.compiler_profile.path)?;
    let manifest_sha256 = Hash256::of(&manifest_bytes);
    if manifest_sha256.hex() != p.compiler_profile.sha256 {
        return Err(invalid(format!(
            "compiler profile digest is {manifest_sha256}, the policy pins {}",
            p.compiler_profile.sha256
        )));
    }
    let m: Manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| invalid(format!("compiler profile: {e}")))?;
    if m.schema != MANIFEST_SCHEMA {
        return Err(invalid(format!(
            "compiler profile schema {:?}, expected {MANIFEST_SCHEMA:?}",
            m.schema
        )));
    }
    let sigs = &p.approved_npu_signatures;
    for s in sigs {
        if s.len() != 64
            || !s
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        {
            return Err(invalid(format!(
                "signature {s:?} is not 64 lowercase hex digits"
            )));
        }
    }
    if sigs.windows(2).any(|w| w[0] >= w[1]) {
        return Err(invalid("approved_npu_signatures must be sorted and unique"));
    }
    if !sigs.is_empty() && !p.compiler_qualified {
        return Err(invalid(
            "signatures are approved while compiler_qualified is false",
        ));
    }
    if p.compiler_qualified && !m.authorization.compiler_execution {
        return Err(invalid(
            "compiler_qualified is true but the compiler profile denies compiler execution",
        ));
    }
    Ok(Policy {
        sha256: Hash256::of(bytes),
        compiler_qualified: p.compiler_qualified,
        approved_npu_signatures: p.approved_npu_signatures,
        manifest_sha256,
        compiler_execution: m.authorization.compiler_execution,
    })
}
