//! Why a mappings file, a capture set or a value was refused.

use super::*;

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
    Capture(#[from] crate::lab::capture::LoadError),
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
    /// A decoded-coefficient target that is not an element map's primary target; the
    /// mapping's name.
    #[error("{0}: a coefficient target is only an element map's primary target")]
    CoefficientTarget(String),
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
    /// An element map's primary target is found by value (its elements need a fixed place), or
    /// a primary target is every place holding the value (only further placements and computed
    /// values may be).
    #[error(
        "{0}: a primary target cannot be a section-value of an element map, nor one with every"
    )]
    ElementByValue(String),
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
