//! Field mappings as evidence (PoC 12B/12C): a finite, recorded registry of hypotheses that say
//! where a source quantity lands in an NBG and which values the producer derives from it.
//!
//! A mapping is data (`differentials/mappings.json`, schema `nbg-mappings/1`), never code: a
//! new kind of mapping is a new entry. A capture set (A1/A2/B, `differential.json`) either
//! proves a mapping (the substitution plus the derived values, replayed in memory on A,
//! reproduces B's SHA-256, so every changed byte is explained), refutes it (the first byte the
//! replay does not explain, with its owner and field), or does not apply to it. Only a mapping
//! proved by at least two capture sets with different source values, and refuted by none, is
//! promoted; the registry never broadens silently.
//!
//! Nothing here writes an NBG; `promote` writes only the mappings file, atomically.

pub mod captures;
pub mod computed;
pub mod numeric;

use super::Exit;
use crate::lab::differential::CaptureSet;
use crate::nbg::failure::Failure;
use crate::nbg::family::NbgFamily;
use crate::nbg::files::InputError;
use crate::nbg::fingerprint::Hash256;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::{Graph, parse};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Schema tag of a mappings registry file.
pub const SCHEMA: &str = "nbg-mappings/1";
/// Schema tag of `nbg mapping check --json`.
pub const CHECK_SCHEMA: &str = "nbg-mapping-check/1";
/// The committed registry, relative to the project root.
pub const COMMITTED: &str = "differentials/mappings.json";
/// Largest mappings file read.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Most mappings a registry may hold.
pub const MAX_MAPPINGS: usize = 256;
/// Most evidence entries one mapping may carry.
pub const MAX_EVIDENCE: usize = 64;
/// Most capture sets one `check` or `promote` reads.
pub const MAX_CAPTURE_SETS: usize = 256;
/// Longest encoded source value (a raw constant or a section range).
pub const MAX_VALUE_BYTES: usize = 1 << 16;
/// Most quantities one `differential.json` names.
pub const MAX_QUANTITIES: usize = 64;
/// Most DYNAIO entries tried when the target entry is found by the A value.
pub const MAX_CANDIDATES: usize = 16;
/// The source key that names `a_source`/`b_source` of `differential.json`.
pub const SOURCE_KEY: &str = "source";

pub use crate::nbg::family::Family;

/// How the source value is written at the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// One byte.
    U8,
    /// Little-endian 16-bit integer.
    Le16,
    /// Little-endian 32-bit integer.
    Le32,
    /// Little-endian 64-bit integer.
    Le64,
    /// IEEE 754 half precision, little-endian (the value must be exactly a half).
    F16,
    /// A number rounded to the nearest IEEE half (ties to even), little-endian: how the
    /// serializer stores a float32 weight of a float graph.
    F16Nearest,
    /// bfloat16 (the high half of an f32; the value must be exactly one), little-endian.
    Bf16,
    /// IEEE 754 single precision, little-endian.
    F32,
    /// The source bytes as they are.
    Raw,
    /// The source bytes, then NULs to the end of the field (a name in a fixed-size field).
    Text,
}

/// A value the producer recomputes after the substitution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Derived {
    /// The family's header CRC: v2 `v2-directory-order`, v1 `whole-file-field-zeroed` (left
    /// zero when A's field is zero: the producer wrote none).
    FileCrc,
    /// v2 section-40 values of every section the substitution touches.
    SectionChecksums,
}

/// How far a mapping has been established.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Written down, not yet checked.
    Hypothesis,
    /// Checked on capture sets, not yet promoted.
    Proved,
    /// Promoted on the evidence it carries (at least two capture sets); `recheck` re-proves it.
    Promoted,
}

/// A check's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The replay rebuilt B exactly.
    Proved,
    /// The capture set contradicts the mapping.
    Refuted,
    /// The capture set cannot test the mapping (another family, no source key, ...); `reason` says why.
    Inapplicable,
}

crate::canonical::names! {
    Outcome {
        Proved => "proved",
        Refuted => "refuted",
        Inapplicable => "inapplicable",
    }
}

/// Why a check ended as it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Proved: the replay is B.
    ReplayReproducesB,
    /// The capture set is of another family than the mapping.
    FamilyDiffers,
    /// The capture set's target word is not the mapping's `pid`.
    TargetDiffers,
    /// `differential.json` lacks the mapping's source key.
    SourceKeyAbsent,
    /// A1 and A2 differ: the serializer is not deterministic.
    A1DiffersFromA2,
    /// A and B differ in size.
    SizeDiffers,
    /// The source value cannot be written in the mapping's encoding.
    SourceNotEncodable,
    /// The target is not in A.
    TargetNotFound,
    /// The target names more than one place.
    TargetAmbiguous,
    /// A's bytes at the target do not hold the encoded A value.
    TargetHoldsOtherValue,
    /// The replayed image differs from B.
    ReplayDiffersFromB,
}

/// A source value in `differential.json` (`quantities.<key>.a` / `.b`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Signed(i64),
    /// A number with a fraction.
    Float(f64),
    /// A byte array.
    Bytes(Vec<u8>),
}

/// JSON has no NaN: equality of values read from JSON is an equivalence.
impl Eq for Value {}

/// A controlled quantity of a capture set: its value in A and in B.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quantity {
    /// The value in A.
    pub a: Value,
    /// The value in B.
    pub b: Value,
}

/// What value a mapping writes: a described quantity of the capture set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// What the quantity is, in words.
    pub text: String,
    /// `source` (the `a_source`/`b_source` bytes) or a key of `quantities`; a key ending in
    /// `[*]` (`initializer:w_q[*]`) is an element map: it matches `initializer:w_q[37]`, and
    /// element `i` lands `i` encoded widths after the target.
    pub key: String,
}

/// The suffix of an element-map source key.
pub const ELEMENT_KEY: &str = "[*]";

/// A further place the source value is written, `repeat` times in a row (a zero point filling
/// a table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// Where.
    pub target: Target,
    /// How the value is written.
    pub encoding: Encoding,
    /// How many copies, back to back; 1 when absent.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: u32,
}

fn one() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

/// Most copies one placement writes.
pub const MAX_REPEAT: u32 = 4096;
/// Most further placements and computed values of one mapping.
pub const MAX_PLACEMENTS: usize = 32;

/// Where the encoded value lands in A and B.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Target {
    /// A field as `nbg diff` names it (`diff::field_range`), at `offset` bytes into it.
    Field {
        /// The field name.
        field: String,
        /// Bytes into the field.
        #[serde(default)]
        offset: u64,
    },
    /// A DYNAIO entry at `offset`: entry `entry`, or when absent every entry whose bytes at
    /// `offset` hold the A value (at most `MAX_CANDIDATES`, the first that reproduces B wins).
    DynaioEntry {
        /// The DYNAIO entry index, or every entry holding the A value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        entry: Option<u32>,
        /// Bytes into the entry.
        #[serde(default)]
        offset: u64,
    },
    /// Payload bytes `[start, end)` of a section (v2 type name) or table (v1 name).
    SectionRange {
        /// The v2 section type name or v1 table name.
        section: String,
        /// First payload byte of the range.
        start: u64,
        /// One past the last payload byte of the range.
        end: u64,
    },
}

/// A capture set that proved a mapping: its three NBGs by SHA-256, and the source values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// The capture directory, relative to the mappings file's folder.
    pub capture: String,
    /// SHA-256 of A1 (hex).
    pub a1_sha256: String,
    /// SHA-256 of A2 (hex).
    pub a2_sha256: String,
    /// SHA-256 of B (hex).
    pub b_sha256: String,
    /// The source value in A.
    pub a: Value,
    /// The source value in B.
    pub b: Value,
}

/// A hypothesis: the source quantity, encoded so, lands at the target; derived checksums follow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    /// Unique name in the registry.
    pub name: String,
    /// The family it is written for.
    pub family: Family,
    /// The target word (`0x1000000e`) of the graphs it is about: its places are one compiled
    /// graph's, so a capture set of another target is outside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<String>,
    /// The quantity written.
    pub source: Source,
    /// Where it lands (absent when it lands only through `computed` values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// How it is encoded there (with `target`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// Further places the same value is written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Placement>,
    /// Values computed from this quantity and others (`computed::Computed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub computed: Vec<computed::Computed>,
    /// Checksums recomputed after the write.
    pub derived: Vec<Derived>,
    /// How far it has been established.
    pub status: Status,
    /// The capture sets it was promoted on.
    pub evidence: Vec<Evidence>,
}

/// A mappings file: the lab's recovered facts of where source quantities land.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registry {
    /// `SCHEMA`.
    pub schema: String,
    /// The mappings, names unique.
    pub mappings: Vec<Mapping>,
}

impl Registry {
    /// The mapping called `name`.
    pub fn get(&self, name: &str) -> Option<&Mapping> {
        self.mappings.iter().find(|m| m.name == name)
    }

    /// Canonical JSON text (sorted keys, two-space indent, trailing newline).
    pub fn canonical(&self) -> String {
        // Invariant: a registry has string keys, strings, integers and finite numbers only,
        // so it always serializes.
        crate::canonical::canonical(&serde_json::to_value(self).expect("registry serializes"))
    }
}

/// Why a mappings file, a capture set or an evidence folder was refused: a usage or I/O
/// problem.
#[derive(Debug, thiserror::Error)]
pub enum MappingError {
    /// A file could not be read or written (the mappings file, the rewritten registry).
    #[error(transparent)]
    File(#[from] InputError),
    /// The mappings file is larger than `MAX_FILE_BYTES`.
    #[error("{}: at most {MAX_FILE_BYTES} bytes", .0.display())]
    TooLarge(PathBuf),
    /// The mappings file is not a JSON object.
    #[error("{}: a mappings file is a JSON object", .0.display())]
    NotObject(PathBuf),
    /// The mappings file does not match the registry's fields.
    #[error("{}: {source}", .path.display())]
    Fields {
        /// The mappings file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// The registry breaks a rule of `validate`.
    #[error("{}: {problem}", .path.display())]
    Invalid {
        /// The mappings file.
        path: PathBuf,
        /// The rule it breaks.
        problem: RegistryProblem,
    },
    /// A capture set could not be loaded.
    #[error(transparent)]
    Capture(#[from] crate::lab::differential::LoadError),
    /// `check` was given more than `MAX_CAPTURE_SETS` capture sets; how many.
    #[error("{0} capture sets; at most {MAX_CAPTURE_SETS}")]
    TooManyCaptures(usize),
    /// `promote` was given more than `MAX_CAPTURE_SETS` capture sets.
    #[error("at most {MAX_CAPTURE_SETS} capture sets")]
    TooManyEvidence,
    /// A path could not be made canonical.
    #[error("{}: {source}", .path.display())]
    Canonical {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An evidence capture set lies outside the mappings file's folder.
    #[error(
        "{}: evidence must lie inside the mappings file's folder {}",
        .dir.display(),
        .base.display()
    )]
    Outside {
        /// The capture directory.
        dir: PathBuf,
        /// The mappings file's folder.
        base: PathBuf,
    },
}

impl MappingError {
    /// Every refused input of `nbg mapping` is a usage or I/O problem.
    pub fn exit_status(&self) -> Exit {
        match self {
            MappingError::File(_)
            | MappingError::TooLarge(_)
            | MappingError::NotObject(_)
            | MappingError::Fields { .. }
            | MappingError::Invalid { .. }
            | MappingError::Capture(_)
            | MappingError::TooManyCaptures(_)
            | MappingError::TooManyEvidence
            | MappingError::Canonical { .. }
            | MappingError::Outside { .. } => Exit::Usage,
        }
    }
}

/// The rule of a mappings registry that a file breaks (`validate`).
#[derive(Debug, thiserror::Error)]
pub enum RegistryProblem {
    /// The schema tag is not `SCHEMA`; the tag found.
    #[error("schema {0:?}, expected {SCHEMA:?}")]
    Schema(String),
    /// More than `MAX_MAPPINGS` mappings; how many.
    #[error("{0} mappings, at most {MAX_MAPPINGS}")]
    TooMany(usize),
    /// A name is empty, too long or not of a-z, 0-9 and `-`; the name.
    #[error("mapping name {0:?}: 1 to 128 characters of a-z, 0-9 and -")]
    Name(String),
    /// Two mappings share a name; the name.
    #[error("mapping {0:?} appears twice")]
    Duplicate(String),
    /// A source key or text is out of bounds; the mapping's name.
    #[error("{0}: source key 1 to 128 bytes, text at most 4096")]
    Source(String),
    /// More than `MAX_EVIDENCE` evidence entries; the mapping's name.
    #[error("{0}: at most {MAX_EVIDENCE} evidence entries")]
    EvidenceCount(String),
    /// An evidence digest is not 64 lowercase hex digits.
    #[error("{name}: evidence {capture:?}: digests are 64 lowercase hex digits")]
    Digest {
        /// The mapping's name.
        name: String,
        /// The evidence entry's capture set.
        capture: String,
    },
    /// An evidence capture path leaves the mappings folder.
    #[error(
        "{name}: evidence capture {capture:?} must be a relative path inside the mappings folder"
    )]
    CapturePath {
        /// The mapping's name.
        name: String,
        /// The evidence entry's capture set.
        capture: String,
    },
    /// An evidence value does not fit the mapping's encoding.
    #[error("{name}: evidence value: {source}")]
    Value {
        /// The mapping's name.
        name: String,
        /// Why the value does not encode.
        source: EncodeError,
    },
    /// A promoted mapping has fewer than two evidence entries.
    #[error("{name}: promoted with {count} evidence entries; promotion needs at least 2")]
    TooFewEvidence {
        /// The mapping's name.
        name: String,
        /// Its evidence entries.
        count: usize,
    },
    /// A v1 mapping derives section checksums; the mapping's name.
    #[error("{0}: v1 has no section-40 checksums")]
    V1Checksums(String),
    /// A derived value is listed twice; the mapping's name.
    #[error("{0}: a derived value is listed twice")]
    DerivedTwice(String),
    /// A section range is empty or longer than `MAX_VALUE_BYTES`.
    #[error("{name}: section range [{start}, {end}) must be 1 to {MAX_VALUE_BYTES} bytes")]
    SectionRange {
        /// The mapping's name.
        name: String,
        /// First byte of the range in the section.
        start: u64,
        /// One past its last byte.
        end: u64,
    },
    /// A field target has no name or an offset past 1 MiB; the mapping's name.
    #[error("{0}: field target needs a name and a small offset")]
    FieldTarget(String),
    /// The `pid` is not `0x` and eight hex digits; the mapping's name.
    #[error("{0}: pid is 0x and eight hex digits")]
    Pid(String),
    /// The placements are out of bounds; the mapping's name.
    #[error(
        "{0}: a mapping needs a target with its encoding, further placements or computed values (at most {MAX_PLACEMENTS} of each, each repeated 1 to {MAX_REPEAT} times)"
    )]
    Placements(String),
    /// A computed value is out of bounds; the mapping's name.
    #[error(
        "{0}: a computed value reads 1 to {inputs} inputs with 1 to {candidates} candidates, the kept one among them, and lands at a target or in 1 to 8 bit fields of 32-bit words",
        inputs = computed::MAX_INPUTS,
        candidates = computed::MAX_CANDIDATES
    )]
    Computed(String),
}

/// Why a value has no bytes under an encoding (`encode`).
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The value is not an integer of the encoding's width.
    #[error("{value:?} is not a {width}-bit integer")]
    NotInteger {
        /// The value.
        value: Value,
        /// The encoding's width in bits.
        width: u32,
    },
    /// The value is not a number a float encoding can hold.
    #[error("{0:?} is not a number")]
    NotNumber(Value),
    /// The number has no exact f32.
    #[error("{0} is not exactly an f32")]
    NotF32(f64),
    /// The number has no exact f16.
    #[error("{0} is not exactly an f16")]
    NotF16(f32),
    /// The number has no exact bfloat16.
    #[error("{0} is not exactly a bfloat16")]
    NotBf16(f32),
    /// A raw value is empty, longer than `MAX_VALUE_BYTES` or not bytes.
    #[error("raw values are 1 to {MAX_VALUE_BYTES} bytes, not {0:?}")]
    Raw(Value),
}

/// Read and validate a mappings file: at most `MAX_FILE_BYTES`, unknown keys refused, names
/// unique, counts bounded, digests well formed, every value within its encoding.
pub fn load(path: &Path) -> Result<Registry, MappingError> {
    let mut bytes = Vec::new();
    crate::nbg::files::read_regular_limited(path, &mut bytes, MAX_FILE_BYTES + 1)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(MappingError::TooLarge(path.to_path_buf()));
    }
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(MappingError::NotObject(path.to_path_buf()));
    }
    let registry: Registry =
        serde_json::from_slice(&bytes).map_err(|source| MappingError::Fields {
            path: path.to_path_buf(),
            source,
        })?;
    validate(&registry).map_err(|problem| MappingError::Invalid {
        path: path.to_path_buf(),
        problem,
    })?;
    Ok(registry)
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn validate(r: &Registry) -> Result<(), RegistryProblem> {
    if r.schema != SCHEMA {
        return Err(RegistryProblem::Schema(r.schema.clone()));
    }
    if r.mappings.len() > MAX_MAPPINGS {
        return Err(RegistryProblem::TooMany(r.mappings.len()));
    }
    let mut names = std::collections::BTreeSet::new();
    for m in &r.mappings {
        let n = &m.name;
        if n.is_empty()
            || n.len() > 128
            || !n
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(RegistryProblem::Name(n.clone()));
        }
        if !names.insert(n.as_str()) {
            return Err(RegistryProblem::Duplicate(n.clone()));
        }
        if m.source.key.is_empty() || m.source.key.len() > 128 || m.source.text.len() > 4096 {
            return Err(RegistryProblem::Source(n.clone()));
        }
        if m.evidence.len() > MAX_EVIDENCE {
            return Err(RegistryProblem::EvidenceCount(n.clone()));
        }
        for e in &m.evidence {
            if ![&e.a1_sha256, &e.a2_sha256, &e.b_sha256]
                .iter()
                .all(|d| is_hex64(d))
            {
                return Err(RegistryProblem::Digest {
                    name: n.clone(),
                    capture: e.capture.clone(),
                });
            }
            if e.capture.is_empty() || e.capture.split('/').any(|c| c == ".." || c.is_empty()) {
                return Err(RegistryProblem::CapturePath {
                    name: n.clone(),
                    capture: e.capture.clone(),
                });
            }
            if let Some(encoding) = m.value_encoding() {
                for v in [&e.a, &e.b] {
                    encode(encoding, v).map_err(|source| RegistryProblem::Value {
                        name: n.clone(),
                        source,
                    })?;
                }
            }
        }
        if m.status == Status::Promoted && m.evidence.len() < 2 {
            return Err(RegistryProblem::TooFewEvidence {
                name: n.clone(),
                count: m.evidence.len(),
            });
        }
        if m.family == Family::V1 && m.derived.contains(&Derived::SectionChecksums) {
            return Err(RegistryProblem::V1Checksums(n.clone()));
        }
        let mut d = m.derived.clone();
        d.sort();
        d.dedup();
        if d.len() != m.derived.len() {
            return Err(RegistryProblem::DerivedTwice(n.clone()));
        }
        if m.pid.as_deref().is_some_and(|p| parse_pid(p).is_none()) {
            return Err(RegistryProblem::Pid(n.clone()));
        }
        if m.target.is_some() != m.encoding.is_some()
            || (m.target.is_none() && m.also.is_empty() && m.computed.is_empty())
            || m.also.len() > MAX_PLACEMENTS
            || m.computed.len() > MAX_PLACEMENTS
            || m.also
                .iter()
                .any(|p| p.repeat == 0 || p.repeat > MAX_REPEAT)
        {
            return Err(RegistryProblem::Placements(n.clone()));
        }
        for c in &m.computed {
            if c.inputs.is_empty()
                || c.inputs.len() > computed::MAX_INPUTS
                || c.inputs.iter().any(|k| k.is_empty() || k.len() > 128)
                || c.candidates.is_empty()
                || c.candidates.len() > computed::MAX_CANDIDATES
                || c.kept.is_some_and(|k| !c.candidates.contains(&k))
                || c.target.is_some() != c.bits.is_empty()
                || c.bits.len() > computed::MAX_BITS
                || c.bits.iter().any(|b| !b.is_valid())
            {
                return Err(RegistryProblem::Computed(n.clone()));
            }
        }
        for t in m.targets() {
            match t {
                Target::SectionRange { start, end, .. }
                    if end <= start || end - start > MAX_VALUE_BYTES as u64 =>
                {
                    return Err(RegistryProblem::SectionRange {
                        name: n.clone(),
                        start: *start,
                        end: *end,
                    });
                }
                Target::Field { field, offset } if field.is_empty() || *offset > 1 << 20 => {
                    return Err(RegistryProblem::FieldTarget(n.clone()));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A target word written `0x` and eight hex digits.
fn parse_pid(p: &str) -> Option<u32> {
    let hex = p.strip_prefix("0x").filter(|h| h.len() == 8)?;
    u32::from_str_radix(hex, 16).ok()
}

impl Mapping {
    /// Every target: the primary one, the further placements, the computed values.
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        self.target
            .iter()
            .chain(self.also.iter().map(|p| &p.target))
            .chain(
                self.computed
                    .iter()
                    .flat_map(|c| c.target.iter().chain(c.bits.iter().map(|b| &b.target))),
            )
    }

    /// The encoding the source value itself is written in (the primary's, else the first
    /// placement's); none when it lands only through computed values.
    pub fn value_encoding(&self) -> Option<Encoding> {
        self.encoding.or(self.also.first().map(|p| p.encoding))
    }

    /// An element map: the source key ends in `[*]`.
    pub fn is_element_map(&self) -> bool {
        self.source.key.ends_with(ELEMENT_KEY)
    }
}

/// The bytes of `value` under `encoding`; integers must fit, floats must be exact.
pub fn encode(encoding: Encoding, value: &Value) -> Result<Vec<u8>, EncodeError> {
    let int = |width: u32| -> Result<Vec<u8>, EncodeError> {
        let v: u64 = match value {
            Value::Unsigned(u) if width == 64 || *u < 1u64 << width => *u,
            Value::Signed(i) if width == 64 || (*i >= -(1i64 << (width - 1))) => {
                (*i as u64)
                    & if width == 64 {
                        u64::MAX
                    } else {
                        (1 << width) - 1
                    }
            }
            _ => {
                return Err(EncodeError::NotInteger {
                    value: value.clone(),
                    width,
                });
            }
        };
        Ok(v.to_le_bytes()[..width as usize / 8].to_vec())
    };
    let float = || -> Result<f32, EncodeError> {
        let f = match value {
            Value::Float(f) => *f,
            Value::Unsigned(u) if *u < 1 << 24 => *u as f64,
            Value::Signed(i) if i.unsigned_abs() < 1 << 24 => *i as f64,
            _ => return Err(EncodeError::NotNumber(value.clone())),
        };
        let x = f as f32;
        if f64::from(x) == f && x.is_finite() {
            Ok(x)
        } else {
            Err(EncodeError::NotF32(f))
        }
    };
    match encoding {
        Encoding::U8 => int(8),
        Encoding::Le16 => int(16),
        Encoding::Le32 => int(32),
        Encoding::Le64 => int(64),
        Encoding::F32 => Ok(float()?.to_le_bytes().to_vec()),
        Encoding::Bf16 => {
            let x = float()?;
            if x.to_bits() & 0xffff == 0 {
                Ok(((x.to_bits() >> 16) as u16).to_le_bytes().to_vec())
            } else {
                Err(EncodeError::NotBf16(x))
            }
        }
        Encoding::F16Nearest => match value {
            Value::Float(f) if f.is_finite() => {
                Ok(numeric::f32_to_f16(*f as f32).to_le_bytes().to_vec())
            }
            Value::Unsigned(_) | Value::Signed(_) => {
                Ok(numeric::f32_to_f16(float()?).to_le_bytes().to_vec())
            }
            _ => Err(EncodeError::NotNumber(value.clone())),
        },
        Encoding::F16 => {
            let x = float()?;
            let h = numeric::f32_to_f16(x);
            if numeric::f16_to_f32(h) == x {
                Ok(h.to_le_bytes().to_vec())
            } else {
                Err(EncodeError::NotF16(x))
            }
        }
        Encoding::Raw | Encoding::Text => match value {
            Value::Bytes(b) if !b.is_empty() && b.len() <= MAX_VALUE_BYTES => Ok(b.clone()),
            _ => Err(EncodeError::Raw(value.clone())),
        },
    }
}

/// The first byte the replay does not explain.
#[derive(Clone, Debug, Serialize)]
pub struct Unexplained {
    /// File offset.
    pub offset: u64,
    /// The owner's pairing key (`diff::owner_key`).
    pub owner: String,
    /// The owner's ledger class.
    pub class: crate::nbg::image::OwnerClass,
    /// The field name at the offset (`diff::locate`).
    pub field: String,
    /// A's byte.
    pub a: u8,
    /// B's byte.
    pub b: u8,
    /// The replay's byte there.
    pub replayed: u8,
}

/// Why the replay wrote a byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WriteRole {
    /// The mapping's target or a further placement: B's source value, encoded.
    Target,
    /// A value computed from several quantities (`computed::Computed`).
    Computed,
    /// A v2 section-40 value recomputed over a section the target touches.
    SectionChecksum,
    /// The header's file CRC, recomputed.
    FileCrc,
}

crate::canonical::names! {
    WriteRole {
        Target => "target",
        Computed => "computed",
        SectionChecksum => "section-checksum",
        FileCrc => "file-crc",
    }
}

/// A byte range the replay wrote, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Written {
    /// First byte written.
    pub start: u64,
    /// One past the last byte written.
    pub end: u64,
    /// Why it was written.
    pub role: WriteRole,
}

/// One mapping against one capture set.
#[derive(Clone, Debug, Serialize)]
pub struct CheckRow {
    /// The mapping's name.
    pub mapping: String,
    /// The capture set's name.
    pub capture: String,
    /// The verdict.
    pub outcome: Outcome,
    /// Why (`none` when proved).
    pub reason: Reason,
    /// The source quantity, when the capture set has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Quantity>,
    /// An element map's element index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<u64>,
    /// Each computed value's candidates: kept or refuted by this capture set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<computed::CandidateRow>,
    /// Bytes of A that differ in B.
    pub changed_bytes: u64,
    /// Bytes where the replay differs from B.
    pub unexplained_bytes: u64,
    /// The byte ranges the replay wrote.
    pub written: Vec<Written>,
    /// The first byte the replay does not explain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_unexplained: Option<Unexplained>,
    /// SHA-256 of the replayed image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_sha256: Option<Hash256>,
    /// SHA-256 of B.
    pub b_sha256: Hash256,
}

/// A capture set loaded for checking, named as the user gave it.
pub struct Capture {
    /// The capture directory as given.
    pub name: String,
    /// Its four files.
    pub set: CaptureSet,
}

impl Capture {
    /// Load the capture set in `dir` under the name the user gave.
    pub fn load(dir: &Path, name: String) -> Result<Self, crate::lab::differential::LoadError> {
        Ok(Capture {
            name,
            set: crate::lab::differential::load(dir)?,
        })
    }

    /// SHA-256 of A1, A2 and B.
    pub fn digests(&self) -> [Hash256; 3] {
        [&self.set.a1, &self.set.a2, &self.set.b].map(|b| Hash256::of(b))
    }
}

/// The controlled quantity `key` of a capture set: `source` is `a_source`/`b_source`.
fn quantity(set: &CaptureSet, key: &str) -> Option<Quantity> {
    if key == SOURCE_KEY {
        return Some(Quantity {
            a: Value::Bytes(set.spec.a_source.clone()),
            b: Value::Bytes(set.spec.b_source.clone()),
        });
    }
    set.spec.quantities.get(key).cloned()
}

/// A quantity a computed value reads: a controlled one, or one the capture set held fixed
/// (`context`, A = B). A mapping's own source is never read from the context: a set that does
/// not change it cannot test it.
fn input_quantity(set: &CaptureSet, key: &str) -> Option<Quantity> {
    quantity(set, key).or_else(|| {
        set.spec.context.get(key).map(|v| Quantity {
            a: v.clone(),
            b: v.clone(),
        })
    })
}

/// The mapping's source quantity in a capture set, with the element index of an element map
/// (the one quantity whose key is the pattern with an index in place of `*`).
fn source_quantity(m: &Mapping, set: &CaptureSet) -> Option<(Quantity, u64)> {
    let Some(prefix) = m.source.key.strip_suffix("*]") else {
        return quantity(set, &m.source.key).map(|q| (q, 0));
    };
    let mut found = set.spec.quantities.iter().filter_map(|(k, q)| {
        let index = k.strip_prefix(prefix)?.strip_suffix(']')?;
        let i: u64 = index.parse().ok()?;
        (i.to_string() == index).then(|| (q.clone(), i))
    });
    let first = found.next()?;
    // Two elements of the same tensor changed: not one element's capture.
    found.next().is_none().then_some(first)
}

/// The registry compiled into the binary: the committed `differentials/mappings.json` (the
/// differential engine's default). A copy that does not load is an empty registry, which the
/// tests refuse.
pub fn builtin() -> &'static Registry {
    static BUILTIN: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    BUILTIN.get_or_init(|| {
        serde_json::from_str::<Registry>(include_str!("../../../differentials/mappings.json"))
            .ok()
            .filter(|r| validate(r).is_ok())
            .unwrap_or(Registry {
                schema: SCHEMA.into(),
                mappings: Vec::new(),
            })
    })
}

/// The width in bytes of one encoded value (none for raw bytes).
fn width(encoding: Encoding) -> Option<u64> {
    match encoding {
        Encoding::U8 => Some(1),
        Encoding::Le16 | Encoding::F16 | Encoding::F16Nearest | Encoding::Bf16 => Some(2),
        Encoding::Le32 | Encoding::F32 => Some(4),
        Encoding::Le64 => Some(8),
        Encoding::Raw | Encoding::Text => None,
    }
}

/// Where a mapping may write in A, whatever the source value: (target, start, end) file
/// ranges in `Mapping::targets` order. The DYNAIO kind without an entry index covers
/// every entry, as does an element map's primary target; a field target runs from its offset
/// for the encoding's width times the repeat count (a raw value to the field's end).
pub fn places<'m>(
    m: &'m Mapping,
    g: &Graph<'_>,
    image: &NbgImage<'_>,
) -> Vec<(&'m Target, u64, u64)> {
    let word = crate::nbg::read::le32_at(g.bytes(), crate::nbg::format::OFF_TARGET_WORD);
    if g.family() != m.family || m.pid.as_deref().is_some_and(|p| parse_pid(p) != word) {
        return Vec::new();
    }
    let mut spans: Vec<(&Target, Option<u64>)> = Vec::new();
    if let (Some(t), Some(e)) = (&m.target, m.encoding) {
        spans.push((t, width(e).filter(|_| !m.is_element_map())));
    }
    for p in &m.also {
        spans.push((
            &p.target,
            width(p.encoding).map(|w| w * u64::from(p.repeat)),
        ));
    }
    for c in &m.computed {
        spans.extend(c.target.iter().map(|t| (t, width(c.encoding))));
        spans.extend(c.bits.iter().map(|b| (&b.target, Some(4))));
    }
    let mut out = Vec::new();
    for (target, width) in spans {
        match target {
            Target::Field { field, offset } => out.extend(
                crate::lab::diff::field_range(g, image, field)
                    .map(|(s, e)| {
                        let start = s + offset;
                        (target, start, width.map_or(e, |w| (start + w).min(e)))
                    })
                    .filter(|(_, s, e)| s < e),
            ),
            Target::SectionRange {
                section,
                start,
                end,
            } => out.extend(
                payload_of(g, section)
                    .filter(|(_, size)| end <= size)
                    .map(|(o, _)| (target, o + start, o + end)),
            ),
            Target::DynaioEntry { entry, .. } => {
                let entries = g.dynaio_ranges();
                let all = entries.iter().map(|&(s, e)| (target, s, e));
                match entry {
                    Some(i) => out.extend(all.skip(*i as usize).take(1)),
                    None => out.extend(all),
                }
            }
        }
    }
    out
}

/// A capture set whose NBG does not parse: which file, and the failure.
#[derive(Debug, thiserror::Error)]
#[error("{capture}/{file}: {failure}")]
pub struct CaptureFailure {
    /// The capture set's name.
    pub capture: String,
    /// The file that does not parse.
    pub file: &'static str,
    /// Why.
    #[source]
    pub failure: Failure,
}

impl CaptureFailure {
    /// A capture that does not parse is an invalid NBG, a failed check.
    pub fn exit_status(&self) -> Exit {
        Exit::Failure
    }
}

/// Check every mapping against every capture set (rows ordered by capture, then mapping).
pub fn check_all(
    mappings: &[&Mapping],
    captures: &[Capture],
) -> Result<Vec<CheckRow>, CaptureFailure> {
    let mut rows = Vec::new();
    for c in captures {
        let fail = |file, failure| CaptureFailure {
            capture: c.name.clone(),
            file,
            failure,
        };
        let ga = parse(&c.set.a1).map_err(|f| fail("A1.nb", f))?;
        parse(&c.set.a2).map_err(|f| fail("A2.nb", f))?;
        let gb = parse(&c.set.b).map_err(|f| fail("B.nb", f))?;
        let ia = NbgImage::new(&ga).map_err(|f| fail("A1.nb", f))?;
        for m in mappings {
            rows.push(check_one(m, &c.name, &c.set, &ga, &ia, &gb));
        }
    }
    Ok(rows)
}

/// One write of a replay before it is made: where, the bytes A must hold there, the bytes
/// written, and why.
#[derive(Clone)]
struct Planned {
    at: u64,
    a: Vec<u8>,
    b: Vec<u8>,
    role: WriteRole,
}

/// Check one mapping against one parsed capture set (A1 parsed as `ga` with ledger `ia`).
pub fn check_one(
    m: &Mapping,
    name: &str,
    set: &CaptureSet,
    ga: &Graph<'_>,
    ia: &NbgImage<'_>,
    gb: &Graph<'_>,
) -> CheckRow {
    let (a, b) = (&set.a1, &set.b);
    let mut row = CheckRow {
        mapping: m.name.clone(),
        capture: name.to_string(),
        outcome: Outcome::Inapplicable,
        reason: Reason::FamilyDiffers,
        source: None,
        element: None,
        candidates: Vec::new(),
        changed_bytes: a.iter().zip(b.iter()).filter(|(x, y)| x != y).count() as u64
            + a.len().abs_diff(b.len()) as u64,
        unexplained_bytes: 0,
        written: Vec::new(),
        first_unexplained: None,
        replay_sha256: None,
        b_sha256: gb.file().sha256,
    };
    if ga.family() != m.family || gb.family() != m.family {
        return row;
    }
    let word = |x: &[u8]| crate::nbg::read::le32_at(x, crate::nbg::format::OFF_TARGET_WORD);
    if let Some(pid) = m.pid.as_deref().and_then(parse_pid) {
        if word(a) != Some(pid) || word(b) != Some(pid) {
            row.reason = Reason::TargetDiffers;
            return row;
        }
    }
    let Some((q, index)) = source_quantity(m, set) else {
        row.reason = Reason::SourceKeyAbsent;
        return row;
    };
    row.source = Some(q.clone());
    row.element = m.is_element_map().then_some(index);
    if set.a1 != set.a2 {
        row.reason = Reason::A1DiffersFromA2;
        return row;
    }
    row.outcome = Outcome::Refuted;
    if a.len() != b.len() {
        row.reason = Reason::SizeDiffers;
        return row;
    }
    let stop = |mut row: CheckRow, reason: Reason| {
        // A graph without the target place is outside the mapping, not against it.
        if matches!(reason, Reason::TargetNotFound | Reason::SourceKeyAbsent) {
            row.outcome = Outcome::Inapplicable;
        }
        row.reason = reason;
        row
    };
    let encoded = |encoding: Encoding, repeat: u32| -> Option<(Vec<u8>, Vec<u8>)> {
        let (x, y) = (encode(encoding, &q.a).ok()?, encode(encoding, &q.b).ok()?);
        (x.len() == y.len()).then(|| (x.repeat(repeat as usize), y.repeat(repeat as usize)))
    };
    // The further placements and the computed values: one place each.
    let mut fixed: Vec<Planned> = Vec::new();
    for p in &m.also {
        let Some((x, y)) = encoded(p.encoding, p.repeat) else {
            return stop(row, Reason::SourceNotEncodable);
        };
        match resolve(&p.target, ga, ia, a, &x, 0) {
            Ok(at) => fixed.push(Planned {
                at: at[0],
                a: x,
                b: y,
                role: WriteRole::Target,
            }),
            Err(reason) => return stop(row, reason),
        }
    }
    for (k, c) in m.computed.iter().enumerate() {
        let Some((xa, xb)) = computed::inputs(&c.inputs, |key| input_quantity(set, key)) else {
            return stop(row, Reason::SourceKeyAbsent);
        };
        let tried: Vec<computed::Candidate> = match c.kept {
            Some(kept) => vec![kept],
            None => c.candidates.clone(),
        };
        // The first kept candidate's writes; else the first candidate's, whose account then
        // shows where it fails.
        let mut chosen: Option<(Vec<Planned>, bool)> = None;
        for cand in tried {
            let w = candidate_writes(c, &cand, &xa, &xb, ga, ia, a, b);
            let kept = w.as_ref().is_some_and(|(_, k)| *k);
            row.candidates.push(computed::CandidateRow {
                computed: k,
                formula: cand.text(c.inputs.len()),
                candidate: cand,
                kept,
            });
            if w.is_some() && (chosen.is_none() || (kept && !chosen.as_ref().is_some_and(|x| x.1)))
            {
                chosen = w;
            }
        }
        match chosen {
            Some((writes, _)) => fixed.extend(writes),
            None => return stop(row, Reason::SourceNotEncodable),
        }
    }
    // The primary target: every candidate place, the first that reproduces B wins.
    let primary: Vec<Option<Planned>> = match (&m.target, m.encoding) {
        (Some(Target::Field { field, offset }), Some(Encoding::Text)) => {
            // Both names, NUL-padded to the field's end.
            let Some((s, e)) = crate::lab::diff::field_range(ga, ia, field) else {
                return stop(row, Reason::TargetNotFound);
            };
            let width = e.saturating_sub(s + offset) as usize;
            let pad = |v: &Value| match encode(Encoding::Text, v) {
                Ok(mut b) if b.len() <= width => {
                    b.resize(width, 0);
                    Some(b)
                }
                _ => None,
            };
            let (Some(x), Some(y)) = (pad(&q.a), pad(&q.b)) else {
                return stop(row, Reason::SourceNotEncodable);
            };
            vec![Some(Planned {
                at: s + offset,
                a: x,
                b: y,
                role: WriteRole::Target,
            })]
        }
        (Some(t), Some(e)) => {
            let Some((x, y)) = encoded(e, 1) else {
                return stop(row, Reason::SourceNotEncodable);
            };
            let shift = index * x.len() as u64;
            match resolve(t, ga, ia, a, &x, shift) {
                Ok(places) => places
                    .into_iter()
                    .map(|at| {
                        Some(Planned {
                            at,
                            a: x.clone(),
                            b: y.clone(),
                            role: WriteRole::Target,
                        })
                    })
                    .collect(),
                Err(reason) => return stop(row, reason),
            }
        }
        _ => vec![None],
    };
    let mut first: Option<CheckRow> = None;
    for p in primary {
        let mut r = row.clone();
        let writes: Vec<Planned> = p.into_iter().chain(fixed.iter().cloned()).collect();
        replay_at(m, ga, ia, a, b, &writes, &mut r);
        if r.outcome == Outcome::Proved {
            return r;
        }
        first.get_or_insert(r);
    }
    first.unwrap_or(row)
}

/// The writes of one candidate of computed value `c` (A's bytes where it lands, the bytes it
/// writes for B), and whether it is kept: its A value is A's bytes and its B value B's bytes.
#[allow(clippy::too_many_arguments)]
fn candidate_writes(
    c: &computed::Computed,
    cand: &computed::Candidate,
    xa: &[f64],
    xb: &[f64],
    ga: &Graph<'_>,
    ia: &NbgImage<'_>,
    a: &[u8],
    b: &[u8],
) -> Option<(Vec<Planned>, bool)> {
    let planned = |at: u64, x: Vec<u8>, y: Vec<u8>| Planned {
        at,
        a: x,
        b: y,
        role: WriteRole::Computed,
    };
    let range = |at: u64, n: usize| at as usize..at as usize + n;
    if let Some(target) = &c.target {
        let x = computed::encoded(cand, c.encoding, xa)?;
        let y = computed::encoded(cand, c.encoding, xb)?;
        let at = resolve(target, ga, ia, a, &x, 0).ok()?[0];
        let kept =
            x.len() == y.len() && a[range(at, x.len())] == x[..] && b[range(at, y.len())] == y[..];
        return (x.len() == y.len()).then(|| (vec![planned(at, x, y)], kept));
    }
    let (va, vb) = (computed::integer(cand, xa)?, computed::integer(cand, xb)?);
    let mut writes = Vec::new();
    let mut kept = true;
    for f in &c.bits {
        let at = resolve(&f.target, ga, ia, a, &[0; 4], 0).ok()?[0];
        let word =
            |bytes: &[u8]| u32::from_le_bytes(bytes[range(at, 4)].try_into().unwrap_or([0; 4]));
        let (wa, wb) = (word(a), word(b));
        let replayed = f.set(wa, vb);
        kept &= f.holds(wa, va) && replayed == wb;
        // A's word as A holds it (the field's A bits are checked through `kept`), B's from it.
        writes.push(planned(
            at,
            wa.to_le_bytes().to_vec(),
            replayed.to_le_bytes().to_vec(),
        ));
    }
    Some((writes, kept))
}

/// File offsets where the encoded value may start, `shift` bytes past the target's start (an
/// element map's element).
fn resolve(
    target: &Target,
    g: &Graph<'_>,
    image: &NbgImage<'_>,
    a: &[u8],
    enc_a: &[u8],
    shift: u64,
) -> Result<Vec<u64>, Reason> {
    let len = enc_a.len() as u64;
    match target {
        Target::Field { field, offset } => {
            let (s, e) =
                crate::lab::diff::field_range(g, image, field).ok_or(Reason::TargetNotFound)?;
            let at = s + offset + shift;
            if at + len > e {
                return Err(Reason::TargetNotFound);
            }
            Ok(vec![at])
        }
        Target::SectionRange {
            section,
            start,
            end,
        } => {
            let payload = payload_of(g, section);
            let (offset, size) = payload.ok_or(Reason::TargetNotFound)?;
            if *end > size {
                return Err(Reason::TargetNotFound);
            }
            if shift == 0 && end - start != len {
                return Err(Reason::SourceNotEncodable);
            }
            if start + shift + len > *end {
                return Err(Reason::TargetNotFound);
            }
            Ok(vec![offset + start + shift])
        }
        Target::DynaioEntry { entry, offset } => {
            let entries = g.dynaio_ranges();
            let fits = |&(s, e): &(u64, u64)| s + offset + shift + len <= e;
            match entry {
                Some(i) => {
                    let r = entries.get(*i as usize).filter(|r| fits(r));
                    r.map(|(s, _)| vec![s + offset + shift])
                        .ok_or(Reason::TargetNotFound)
                }
                None => {
                    let found: Vec<u64> = entries
                        .iter()
                        .filter(|r| fits(r))
                        .map(|(s, _)| s + offset + shift)
                        .filter(|&at| a[at as usize..(at + len) as usize] == *enc_a)
                        .take(MAX_CANDIDATES + 1)
                        .collect();
                    match found.len() {
                        0 => Err(Reason::TargetNotFound),
                        n if n > MAX_CANDIDATES => Err(Reason::TargetAmbiguous),
                        _ => Ok(found),
                    }
                }
            }
        }
    }
}

/// Replay the planned writes plus the derived values on A in memory, then account for every
/// byte against B.
#[allow(clippy::too_many_arguments)]
fn replay_at(
    m: &Mapping,
    g: &Graph<'_>,
    image: &NbgImage<'_>,
    a: &[u8],
    b: &[u8],
    planned: &[Planned],
    row: &mut CheckRow,
) {
    for p in planned {
        let at = p.at as usize;
        if let Some(i) = (0..p.a.len()).find(|&i| a[at + i] != p.a[i]) {
            row.reason = Reason::TargetHoldsOtherValue;
            row.first_unexplained = Some(unexplained(g, image, a, b, p.at + i as u64, p.a[i]));
            return;
        }
    }
    let mut changed = image.change(format!("mapping {}: replay", m.name));
    // `writes` mirrors every byte written, so the account below needs no copy of the image.
    let mut writes: Vec<(u64, Vec<u8>, WriteRole)> = Vec::new();
    let write = |changed: &mut crate::nbg::image::ChangedImage,
                 writes: &mut Vec<(u64, Vec<u8>, WriteRole)>,
                 offset: u64,
                 bytes: Vec<u8>,
                 role: WriteRole| {
        if changed.write(offset, &bytes, role.as_str()).is_ok() {
            writes.push((offset, bytes, role));
        }
    };
    for p in planned {
        write(&mut changed, &mut writes, p.at, p.b.clone(), p.role);
    }
    let touched: Vec<(u64, u64)> = planned
        .iter()
        .map(|p| (p.at, p.at + p.b.len() as u64))
        .collect();
    if m.derived.contains(&Derived::SectionChecksums) {
        for c in g.derived_checksums() {
            let (start, end) = c.target;
            if touched.iter().any(|&(s, e)| start < e && s < end) {
                let v = changed.crc32_range(start, end);
                write(
                    &mut changed,
                    &mut writes,
                    c.value_at,
                    v.to_le_bytes().to_vec(),
                    WriteRole::SectionChecksum,
                );
            }
        }
    }
    if m.derived.contains(&Derived::FileCrc) {
        if let Some(crc) = g.file_crc(changed.bytes()) {
            write(
                &mut changed,
                &mut writes,
                g.crc_rule().field,
                crc.to_le_bytes().to_vec(),
                WriteRole::FileCrc,
            );
        }
    }
    // Later writes win, as in the image.
    let replayed = |offset: u64| -> u8 {
        writes
            .iter()
            .rev()
            .find(|(s, bytes, _)| *s <= offset && offset < s + bytes.len() as u64)
            .map_or(a[offset as usize], |(s, bytes, _)| {
                bytes[(offset - s) as usize]
            })
    };
    // The first unexplained byte reported is the first outside the derived values (a wrong
    // CRC is a consequence, not a cause), unless only derived values are wrong.
    let derived_at = |offset: u64| {
        writes.iter().any(|(s, bytes, role)| {
            *role != WriteRole::Target && *s <= offset && offset < s + bytes.len() as u64
        })
    };
    let mut count = 0u64;
    let (mut first, mut first_derived) = (None::<u64>, None::<u64>);
    let mut check = |offset: u64| {
        if replayed(offset) != b[offset as usize] {
            count += 1;
            let slot = if derived_at(offset) {
                &mut first_derived
            } else {
                &mut first
            };
            *slot = Some(slot.map_or(offset, |f| f.min(offset)));
        }
    };
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            check(i as u64);
        }
    }
    // Written bytes A and B agree on are wrong only if the replay changed them.
    for (s, bytes, _) in &writes {
        for i in 0..bytes.len() as u64 {
            let o = s + i;
            if a[o as usize] == b[o as usize] {
                check(o);
            }
        }
    }
    row.written = writes
        .iter()
        .map(|(s, bytes, role)| Written {
            start: *s,
            end: s + bytes.len() as u64,
            role: *role,
        })
        .collect();
    let sha = changed.sha256();
    row.replay_sha256 = Some(sha);
    row.unexplained_bytes = count;
    match first.or(first_derived) {
        None if sha == row.b_sha256 && changed.first_difference(b).is_none() => {
            row.outcome = Outcome::Proved;
            row.reason = Reason::ReplayReproducesB;
        }
        _ => {
            row.reason = Reason::ReplayDiffersFromB;
            let at = first
                .or(first_derived)
                .unwrap_or_else(|| changed.first_difference(b).unwrap_or(0));
            row.first_unexplained = Some(unexplained(g, image, a, b, at, replayed(at)));
        }
    }
}

fn unexplained(
    g: &Graph<'_>,
    image: &NbgImage<'_>,
    a: &[u8],
    b: &[u8],
    offset: u64,
    replayed: u8,
) -> Unexplained {
    let owner = image.owner_of(offset);
    Unexplained {
        offset,
        owner: crate::lab::diff::owner_key(g, owner),
        class: owner.class,
        field: crate::lab::diff::locate(g, owner, offset).0,
        a: a[offset as usize],
        b: b[offset as usize],
        replayed,
    }
}

/// Counts of each outcome.
pub fn summary(rows: &[CheckRow]) -> BTreeMap<&'static str, usize> {
    let mut s = BTreeMap::from([("proved", 0), ("refuted", 0), ("inapplicable", 0)]);
    for r in rows {
        *s.entry(r.outcome.as_str()).or_insert(0) += 1;
    }
    s
}

/// The check document: schema, the registry's SHA-256, rows and summary.
pub fn check_document(registry_sha256: &Hash256, rows: &[CheckRow]) -> serde_json::Value {
    serde_json::json!({
        "schema": CHECK_SCHEMA,
        "mappings_sha256": registry_sha256,
        "rows": rows,
        "summary": summary(rows),
    })
}

/// What a CLI run prints, and how it ended.
pub struct Rendered {
    /// Text for stdout.
    pub stdout: String,
    /// Text for stderr.
    pub stderr: String,
    /// How the run ended; the exit status follows from it.
    pub exit: Exit,
}

impl Rendered {
    /// A run that stopped on `message`, said on stderr after `nbg: `.
    pub fn stopped(message: impl std::fmt::Display, exit: Exit) -> Self {
        Rendered {
            stdout: String::new(),
            stderr: format!("nbg: {message}\n"),
            exit,
        }
    }

    /// A run stopped by a refused input.
    fn refused(e: MappingError) -> Self {
        let exit = e.exit_status();
        Rendered::stopped(e, exit)
    }
}

fn load_captures(dirs: &[PathBuf]) -> Result<Vec<Capture>, MappingError> {
    if dirs.len() > MAX_CAPTURE_SETS {
        return Err(MappingError::TooManyCaptures(dirs.len()));
    }
    dirs.iter()
        .map(|d| Capture::load(d, d.display().to_string()).map_err(MappingError::from))
        .collect()
}

fn text_row(r: &CheckRow) -> String {
    let mut s = format!(
        "{:<28} {:<40} {:<12} {}",
        r.mapping,
        r.capture,
        r.outcome.as_str(),
        serde_json::to_value(r.reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    );
    if let Some(u) = &r.first_unexplained {
        s.push_str(&format!(
            "\n    first unexplained byte 0x{:x} in {} ({}): A 0x{:02x} B 0x{:02x} replay 0x{:02x}; {} unexplained of {} changed",
            u.offset, u.field, u.class.as_str(), u.a, u.b, u.replayed, r.unexplained_bytes, r.changed_bytes
        ));
    }
    let computed: std::collections::BTreeSet<usize> =
        r.candidates.iter().map(|c| c.computed).collect();
    for k in computed {
        let of = |kept: bool| -> Vec<&str> {
            r.candidates
                .iter()
                .filter(|c| c.computed == k && c.kept == kept)
                .map(|c| c.formula.as_str())
                .collect()
        };
        s.push_str(&format!(
            "\n    computed {k}: kept [{}], refuted [{}]",
            of(true).join(", "),
            of(false).join(", ")
        ));
    }
    if let (Outcome::Proved, Some(sha)) = (r.outcome, &r.replay_sha256) {
        s.push_str(&format!("\n    replay sha256 {sha} = B"));
    }
    s.push('\n');
    s
}

/// `nbg mapping check`: exit 0 when no pair is refuted, 1 when one is or a capture set is an
/// invalid NBG, 2 on a bad mappings file or an unreadable capture set. Writes nothing.
pub fn cli_check(mappings: &Path, dirs: &[PathBuf], json: bool) -> Rendered {
    let registry = match load(mappings) {
        Ok(r) => r,
        Err(e) => return Rendered::refused(e),
    };
    let captures = match load_captures(dirs) {
        Ok(c) => c,
        Err(e) => return Rendered::refused(e),
    };
    let all: Vec<&Mapping> = registry.mappings.iter().collect();
    let rows = match check_all(&all, &captures) {
        Ok(r) => r,
        Err(e) => return Rendered::stopped(&e, e.exit_status()),
    };
    let refuted = rows.iter().any(|r| r.outcome == Outcome::Refuted);
    let stdout = if json {
        let sha = Hash256::of(registry.canonical().as_bytes());
        crate::canonical::canonical(&check_document(&sha, &rows))
    } else {
        let mut s: String = rows.iter().map(text_row).collect();
        let sum = summary(&rows);
        s.push_str(&format!(
            "{} checks: {} proved, {} refuted, {} inapplicable\n",
            rows.len(),
            sum["proved"],
            sum["refuted"],
            sum["inapplicable"]
        ));
        s
    };
    Rendered {
        stdout,
        stderr: String::new(),
        exit: if refuted {
            Exit::Failure
        } else {
            Exit::Success
        },
    }
}

/// Why a promotion was refused.
#[derive(Debug)]
pub struct Refusal {
    /// Why, in words.
    pub message: String,
    /// The checks the refusal rests on.
    pub rows: Vec<CheckRow>,
}

/// The registry with `name` promoted on the evidence of `captures`, whose `name`s are the
/// capture directories relative to the mappings file's folder. Refused unless at least two
/// capture sets with different B values prove it and none refutes it; inapplicable sets are
/// not evidence and are left out.
pub fn promote(
    registry: &Registry,
    name: &str,
    captures: &[Capture],
) -> Result<(Registry, Vec<CheckRow>), Refusal> {
    let refuse = |message: String, rows: Vec<CheckRow>| Err(Refusal { message, rows });
    let Some(m) = registry.get(name) else {
        return refuse(format!("no mapping named {name:?}"), Vec::new());
    };
    let rows = match check_all(&[m], captures) {
        Ok(r) => r,
        Err(e) => return refuse(e.to_string(), Vec::new()),
    };
    if let Some(r) = rows.iter().find(|r| r.outcome == Outcome::Refuted) {
        let at = r
            .first_unexplained
            .as_ref()
            .map(|u| format!(" at 0x{:x} ({})", u.offset, u.field))
            .unwrap_or_default();
        return refuse(format!("{} refutes {name}{at}", r.capture), rows.clone());
    }
    let mut evidence: Vec<Evidence> = Vec::new();
    for (r, c) in rows.iter().zip(captures) {
        // A row is proved only once its source quantity was found, so every proved row has one.
        let (Outcome::Proved, Some(q)) = (r.outcome, r.source.clone()) else {
            continue;
        };
        let [a1, a2, b] = c.digests();
        evidence.push(Evidence {
            capture: c.name.clone(),
            a1_sha256: a1.hex(),
            a2_sha256: a2.hex(),
            b_sha256: b.hex(),
            a: q.a,
            b: q.b,
        });
    }
    evidence.sort_by(|x, y| x.capture.cmp(&y.capture));
    evidence.dedup_by(|x, y| (&x.a1_sha256, &x.b_sha256) == (&y.a1_sha256, &y.b_sha256));
    let distinct: Vec<String> = evidence
        .iter()
        // Invariant: a JSON `Value` has string keys only, so it always serializes.
        .map(|e| serde_json::to_string(&e.b).expect("value serializes"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if evidence.len() < 2 || distinct.len() < 2 {
        return refuse(
            format!(
                "{name}: {} capture sets prove it with {} distinct B values; promotion needs at least 2 of each",
                evidence.len(),
                distinct.len()
            ),
            rows,
        );
    }
    if evidence.len() > MAX_EVIDENCE {
        return refuse(format!("at most {MAX_EVIDENCE} evidence entries"), rows);
    }
    let proving: Vec<&CheckRow> = rows
        .iter()
        .filter(|r| r.outcome == Outcome::Proved)
        .collect();
    if m.is_element_map() {
        let indices: std::collections::BTreeSet<u64> =
            proving.iter().filter_map(|r| r.element).collect();
        if indices.len() < 2 {
            return refuse(
                format!(
                    "{name}: an element map needs proving capture sets of at least 2 different elements, not {}",
                    indices.len()
                ),
                rows,
            );
        }
    }
    // Each computed value keeps the one candidate every proving set keeps.
    let mut kept = Vec::new();
    for (k, c) in m.computed.iter().enumerate() {
        let survivors: Vec<computed::Candidate> = c
            .candidates
            .iter()
            .filter(|cand| {
                proving.iter().all(|r| {
                    r.candidates
                        .iter()
                        .any(|x| x.computed == k && x.candidate == **cand && x.kept)
                })
            })
            .copied()
            .collect();
        match survivors.as_slice() {
            [one] => kept.push(*one),
            [] => {
                return refuse(
                    format!(
                        "{name}: computed value {k}: no candidate reproduces every proving set"
                    ),
                    rows,
                );
            }
            many => {
                let texts: Vec<String> = many.iter().map(|x| x.text(c.inputs.len())).collect();
                return refuse(
                    format!(
                        "{name}: computed value {k}: {} all reproduce every proving set; a capture set that separates them is needed",
                        texts.join(", ")
                    ),
                    rows,
                );
            }
        }
    }
    let mut out = registry.clone();
    let Some(target) = out.mappings.iter_mut().find(|x| x.name == name) else {
        return refuse(format!("no mapping {name} in the registry"), rows);
    };
    target.status = Status::Promoted;
    target.evidence = evidence;
    for (c, k) in target.computed.iter_mut().zip(kept) {
        c.kept = Some(k);
    }
    Ok((out, rows))
}

/// Capture directory names relative to `base` (the mappings file's folder) when they lie
/// inside it, else as given.
fn relative_name(base: &Path, dir: &Path) -> Result<String, MappingError> {
    let canon = |p: &Path| {
        std::fs::canonicalize(p).map_err(|source| MappingError::Canonical {
            path: p.to_path_buf(),
            source,
        })
    };
    let (b, d) = (canon(base)?, canon(dir)?);
    d.strip_prefix(&b)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .map(|r| r.to_string_lossy().into_owned())
        .ok_or_else(|| MappingError::Outside {
            dir: dir.to_path_buf(),
            base: base.to_path_buf(),
        })
}

fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `nbg mapping promote`: exit 0 promoted and written, 1 refused (nothing written), 2 on a bad
/// mappings file, capture set or output.
pub fn cli_promote(mappings: &Path, name: &str, dirs: &[PathBuf]) -> Rendered {
    let registry = match load(mappings) {
        Ok(r) => r,
        Err(e) => return Rendered::refused(e),
    };
    let base = folder(mappings);
    let mut captures = Vec::new();
    if dirs.len() > MAX_CAPTURE_SETS {
        return Rendered::refused(MappingError::TooManyEvidence);
    }
    for d in dirs {
        match relative_name(base, d).and_then(|n| Capture::load(d, n).map_err(MappingError::from)) {
            Ok(c) => captures.push(c),
            Err(e) => return Rendered::refused(e),
        }
    }
    let (promoted, rows) = match promote(&registry, name, &captures) {
        Ok(x) => x,
        Err(r) => {
            let mut stderr = format!("nbg: refused: {}\n", r.message);
            for row in &r.rows {
                stderr.push_str(&text_row(row));
            }
            return Rendered {
                stdout: String::new(),
                stderr,
                exit: Exit::Failure,
            };
        }
    };
    let inputs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    let mut outputs = crate::output::Outputs::new(&inputs, true);
    if let Err(e) = outputs
        .stage(mappings, promoted.canonical().as_bytes())
        .and_then(|_| outputs.commit())
    {
        return Rendered::refused(MappingError::from(e));
    }
    let mut stdout: String = rows.iter().map(text_row).collect();
    // Invariant: `promote` returned Ok, which it does only after finding `name` in the registry.
    let m = promoted.get(name).expect("promoted");
    stdout.push_str(&format!(
        "promoted {name} on {} capture sets; wrote {}\n",
        m.evidence.len(),
        mappings.display()
    ));
    Rendered {
        stdout,
        stderr: String::new(),
        exit: Exit::Success,
    }
}

/// One promoted mapping re-checked on one capture set of its evidence.
#[derive(Clone, Debug)]
pub struct Recheck {
    /// The mapping.
    pub mapping: String,
    /// The capture set.
    pub capture: String,
    /// Whether the set still hashes as recorded and still proves the mapping.
    pub passed: bool,
    /// What was found.
    pub detail: String,
}

/// Re-check every promoted mapping of the registry at `root/COMMITTED` against its evidence:
/// each capture set must still hash to its recorded digests and still prove the mapping.
pub fn recheck_promoted(root: &Path) -> Result<Vec<Recheck>, MappingError> {
    let path = root.join(COMMITTED);
    let registry = load(&path)?;
    let base = folder(&path);
    let mut rows = Vec::new();
    for m in registry
        .mappings
        .iter()
        .filter(|m| m.status == Status::Promoted)
    {
        for e in &m.evidence {
            let detail = match Capture::load(&base.join(&e.capture), e.capture.clone()) {
                Err(err) => Err(err.to_string()),
                Ok(c) => {
                    let [a1, a2, b] = c.digests();
                    if [a1.hex(), a2.hex(), b.hex()]
                        != [e.a1_sha256.clone(), e.a2_sha256.clone(), e.b_sha256.clone()]
                    {
                        Err("capture files no longer match the recorded SHA-256".to_string())
                    } else {
                        match check_all(&[m], std::slice::from_ref(&c)) {
                            Err(f) => Err(f.to_string()),
                            Ok(r) if r[0].outcome == Outcome::Proved => {
                                Ok("proved (replay sha256 = B)".to_string())
                            }
                            Ok(r) => Err(format!("{:?}: {:?}", r[0].outcome, r[0].reason)),
                        }
                    }
                }
            };
            rows.push(Recheck {
                mapping: m.name.clone(),
                capture: e.capture.clone(),
                passed: detail.is_ok(),
                detail: detail.unwrap_or_else(|x| x),
            });
        }
    }
    Ok(rows)
}

/// The (file offset, size) of a v2 section or v1 table named `section`, when the graph has it.
fn payload_of(g: &Graph<'_>, section: &str) -> Option<(u64, u64)> {
    g.payload(section).map(|p| (p.offset, p.size))
}
