//! Failures are values: a stable kebab-case code, the file offset and a message.

use std::fmt;

macro_rules! codes {
    ($($variant:ident => $text:literal,)*) => {
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
        }
    };
}

codes! {
    BadMagic => "bad-magic",
    UnsupportedVersion => "unsupported-version",
    Truncated => "truncated",
    DeclaredSizeMismatch => "declared-size-mismatch",
    SubHeaderCount => "sub-header-count",
    SubHeaderGeometry => "sub-header-geometry",
    SectionHeaderSize => "section-header-size",
    SectionCountLimit => "section-count-limit",
    UnknownSectionType => "unknown-section-type",
    SectionOutOfBounds => "section-out-of-bounds",
    SectionOverlap => "section-overlap",
    DuplicateSection => "duplicate-section",
    SectionMissing => "section-missing",
    IoRecordSize => "io-record-size",
    IoCountLimit => "io-count-limit",
    DimensionCount => "dimension-count",
    DimensionZero => "dimension-zero",
    TensorStorageLimit => "tensor-storage-limit",
    InvalidName => "invalid-name",
    NetworkInfoSize => "network-info-size",
    MemoryRecordSize => "memory-record-size",
    MetadataCountMismatch => "metadata-count-mismatch",
    ChecksumRecordSize => "checksum-record-size",
    SectionChecksumDuplicate => "section-checksum-duplicate",
    SectionChecksumMissing => "section-checksum-missing",
    SectionChecksumMismatch => "section-checksum-mismatch",
    FileChecksumMismatch => "file-checksum-mismatch",
    DynaioUnpaired => "dynaio-unpaired",
    DynaioTableSize => "dynaio-table-size",
    DynaioRegionSize => "dynaio-region-size",
    DynaioEntryInvalid => "dynaio-entry-invalid",
    DynaioPaddingNonzero => "dynaio-padding-nonzero",
    TableRecordSize => "table-record-size",
    OwnershipConflict => "ownership-conflict",
    OperationLayerOutOfRange => "operation-layer-out-of-range",
    OperationPatchOutOfRange => "operation-patch-out-of-range",
    OperationIndexOutOfRange => "operation-index-out-of-range",
    OperationStateOutOfRange => "operation-state-out-of-range",
    ShInstructionOutOfRange => "sh-instruction-out-of-range",
    ShPpuParamOutOfRange => "sh-ppu-param-out-of-range",
    HwInitPatchOutOfRange => "hw-init-patch-out-of-range",
    HwInitStateOutOfRange => "hw-init-state-out-of-range",
    LayerOperationCount => "layer-operation-count",
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
        serde_json::json!({
            "error": { "code": self.code.as_str(), "offset": self.offset, "message": self.message }
        })
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
