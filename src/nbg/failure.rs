//! Failures are values: a stable kebab-case code, the file offset and a message.

use std::fmt;

/// Why a rule may refuse a file (`docs/failure-codes.md` lists every rule with its basis). A
/// value only a corpus showed is never a basis: such relations are reported under
/// `corpus_invariants` instead (`parse::invariants`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Basis {
    /// Bounds, overlap, a CRC, a record size the layout fixes, or a cross-reference that would
    /// leave the graph unreadable.
    Format,
    /// A resource bound of the parser, reviewed and documented (never a format claim).
    Limit,
    /// Not a file rule: the ledger's own guard, or a lab outcome.
    Lab,
}

impl Basis {
    /// The kebab-case name used in the docs.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Format => "format",
            Basis::Limit => "limit",
            Basis::Lab => "lab",
        }
    }
}

macro_rules! codes {
    ($($variant:ident => $text:literal, $basis:ident,)*) => {
        /// Every stable failure code. The kebab-case text is a contract other tools rely on.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $(#[doc = concat!("`", $text, "`")] $variant,)* }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];
            /// The stable kebab-case text.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $text,)* }
            }
            /// What the refusal rests on.
            pub fn basis(self) -> Basis {
                match self { $(Code::$variant => Basis::$basis,)* }
            }
        }
    };
}

codes! {
    BadMagic => "bad-magic", Format,
    UnsupportedVersion => "unsupported-version", Format,
    Truncated => "truncated", Format,
    DeclaredSizeMismatch => "declared-size-mismatch", Format,
    SubHeaderCount => "sub-header-count", Limit,
    SubHeaderGeometry => "sub-header-geometry", Format,
    SectionHeaderSize => "section-header-size", Format,
    SectionCountLimit => "section-count-limit", Limit,
    UnknownSectionType => "unknown-section-type", Format,
    SectionOutOfBounds => "section-out-of-bounds", Format,
    SectionOverlap => "section-overlap", Format,
    DuplicateSection => "duplicate-section", Format,
    SectionMissing => "section-missing", Format,
    IoRecordSize => "io-record-size", Format,
    IoCountLimit => "io-count-limit", Limit,
    DimensionCount => "dimension-count", Format,
    DimensionZero => "dimension-zero", Format,
    TensorStorageLimit => "tensor-storage-limit", Limit,
    InvalidName => "invalid-name", Format,
    NetworkInfoSize => "network-info-size", Format,
    MemoryRecordSize => "memory-record-size", Format,
    MetadataCountMismatch => "metadata-count-mismatch", Format,
    ChecksumRecordSize => "checksum-record-size", Format,
    SectionChecksumDuplicate => "section-checksum-duplicate", Format,
    SectionChecksumMissing => "section-checksum-missing", Format,
    SectionChecksumMismatch => "section-checksum-mismatch", Format,
    FileChecksumMismatch => "file-checksum-mismatch", Format,
    DynaioUnpaired => "dynaio-unpaired", Format,
    DynaioTableSize => "dynaio-table-size", Format,
    DynaioEntryInvalid => "dynaio-entry-invalid", Format,
    IndexEntryOutOfRange => "index-entry-out-of-range", Format,
    TableRecordSize => "table-record-size", Format,
    OwnershipConflict => "ownership-conflict", Lab,
    CrcFieldUnexplained => "crc-field-unexplained", Lab,
    Unreadable => "unreadable", Lab,
    OperationLayerOutOfRange => "operation-layer-out-of-range", Format,
    OperationPatchOutOfRange => "operation-patch-out-of-range", Format,
    OperationIndexOutOfRange => "operation-index-out-of-range", Format,
    OperationStateOutOfRange => "operation-state-out-of-range", Format,
    ShInstructionOutOfRange => "sh-instruction-out-of-range", Format,
    ShPpuParamOutOfRange => "sh-ppu-param-out-of-range", Format,
    HwInitPatchOutOfRange => "hw-init-patch-out-of-range", Format,
    HwInitStateOutOfRange => "hw-init-state-out-of-range", Format,
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a parse failed: the first rule broken, in the documented check order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The broken rule's stable code.
    pub code: Code,
    /// File offset of the offending field or byte.
    pub offset: u64,
    /// What was found, in words, naming the values involved.
    pub message: String,
}

impl Failure {
    /// A failure of `code` at file offset `offset`.
    pub fn new(code: Code, offset: u64, message: impl Into<String>) -> Self {
        Failure {
            code,
            offset,
            message: message.into(),
        }
    }

    /// `{"error": {"code", "offset", "message"}}` for `--json` output.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "error": self })
    }
}

/// `{code, offset, message}`: how every JSON document names a failure.
impl serde::Serialize for Failure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut m = s.serialize_struct("Failure", 3)?;
        m.serialize_field("code", self.code.as_str())?;
        m.serialize_field("offset", &self.offset)?;
        m.serialize_field("message", &self.message)?;
        m.end()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error[{}] at 0x{:x}: {}",
            self.code, self.offset, self.message
        )
    }
}

impl std::error::Error for Failure {}

/// Shorthand for building an `Err(Failure)`.
pub fn fail<T>(code: Code, offset: u64, message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure::new(code, offset, message))
}

/// Collect decoded records, stopping at the first failure, into a vector sized once from the
/// iterator's exact length (a table's record count, already bounded by its bytes): a
/// `collect::<Result<Vec<_>, _>>()` loses that length and grows by reallocation.
pub fn collect_records<T>(
    records: impl ExactSizeIterator<Item = Result<T, Failure>>,
) -> Result<Vec<T>, Failure> {
    let mut out = Vec::with_capacity(records.len());
    for r in records {
        out.push(r?);
    }
    Ok(out)
}
