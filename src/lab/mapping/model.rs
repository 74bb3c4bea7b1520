//! The registry model: mappings, their sources, targets, encodings and evidence, as the
//! mappings file holds them.

use super::*;

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
    /// `differential.json` lacks the mapping's source key: the capture set does not change that
    /// quantity (or its graph has no such role).
    SourceKeyAbsent,
    /// The mapping's key names a node kind without an index (`Conv.weight`) and the capture's
    /// model has several such nodes: which one is meant is not guessed.
    RoleAmbiguous,
    /// The source value is a float where the mapping stores an integer: a quantity of another
    /// data type under the same role (a float16 build's weight), which the mapping is not about.
    SourceTypeDiffers,
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
    /// A's coefficient buffer at the target is not decoded (`nbg coefficients` says why).
    CoefficientsNotDecoded,
    /// B's decoded coefficients are not A's with the target element set to the B value.
    DecodedDiffersFromB,
}

/// What value a mapping writes: a described quantity of the capture set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// What the quantity is, in words.
    pub text: String,
    /// `source` (the `a_source`/`b_source` bytes) or a key of `quantities`; a key ending in
    /// `[*]` (`initializer:Conv.weight[*]`) is an element map: it matches
    /// `initializer:Conv[0].weight[37]` or an alias of it, and
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

pub(super) fn one() -> u32 {
    1
}

pub(super) fn is_one(v: &u32) -> bool {
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
    /// Element `i` of the decoded coefficients of NN command `nn` (`nbg coefficients`), for
    /// an element map's primary target only: the stream's codes, symbol map and sizes change
    /// with the values, so the place is where the decoder puts the element, not a byte. The
    /// kernels are in their decoded shape order (channels, z, y, x: a convolution's OIHW, a
    /// fully connected layer's rows), each stored as the source value less `less` in its
    /// width; biases as their values.
    Coefficient {
        /// The NN command whose coefficient buffer holds it.
        nn: u32,
        /// The kernels or the biases.
        part: crate::nbg::coefficients::Tensor,
        /// A quantity of the capture set (controlled or context, `zero-point:layer.weight`) subtracted
        /// from the source value before it is stored: Mesa's `etnaviv_ml_nn_v8.c` writes a
        /// weight less its zero point.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        less: Option<String>,
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
    /// The one place in a section's payload (v2 type name or v1 table name), on a multiple of
    /// the value's width (at most a 32-bit word) from the payload's start, where A holds the
    /// encoded A value: found afresh in each graph, so that the mapping holds where the layers
    /// around it move the value (a shader uniform in LOADSTATE). Two such places are
    /// `target-ambiguous`, none `target-not-found`; with `every`, every such place (a zero
    /// point filling two tables). An element map's target and a bit field need a fixed place,
    /// and only a further placement or a computed value takes `every`.
    SectionValue {
        /// The v2 section type name or v1 table name.
        section: String,
        /// Every place holding the value, not exactly one.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        every: bool,
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
