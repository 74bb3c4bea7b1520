//! The ledger's vocabulary: who owns a byte (`Owner`, `OwnerClass`), what structure it stands for
//! (`Origin`), the non-owning views, and the claims each family makes before `nbg::image` fills
//! the gaps and proves the ledger. It sits here, below the ledger, so that each family's claims,
//! encoders and names are methods of `NbgFamily`.

use serde::Serialize;

/// What structure an owner stands for, so diffs can name fields and align owners.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// v2 header, sub-header or directory; v1 fixed-part group (by its start offset).
    Structure,
    /// v2 section by directory index.
    Section(usize),
    /// v1 table by entry index.
    Table(usize),
    /// One entry of a v2 section its index table cuts into buffers (the ICD): directory
    /// index, table entry.
    SectionEntry(usize, usize),
    /// One entry of a v1 table its index table cuts into buffers (`lcd`, `icd`): table
    /// index, table entry.
    TableEntry(usize, usize),
    /// One part of a decoded coefficient entry: the payload's directory index (v2) or table
    /// index (v1), table entry, part.
    Coefficient(usize, usize, crate::nbg::coefficients::Part),
    /// v1 bytes between the decoded fixed part and the first table.
    Extension,
    /// Alignment or padding before the owner that follows, or before EOF.
    Gap,
    /// The final 512 bytes with no other owner.
    Tail,
}

/// Who owns a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OwnerClass {
    /// A record the parser decoded field by field (header, directory, I/O, tables).
    DecodedRecord,
    /// Gap bytes a declared section alignment requires.
    Alignment,
    /// Any other gap byte (before a section, before the connection tail, before EOF).
    Padding,
    /// A payload kept verbatim: hashed and bounded, not decoded.
    PreservedOpaque,
    /// The final 512 bytes when no other owner holds any of them.
    ConnectionTail,
}

impl OwnerClass {
    /// Every class, in the order reports list them.
    pub const ALL: [OwnerClass; 5] = [
        OwnerClass::DecodedRecord,
        OwnerClass::Alignment,
        OwnerClass::Padding,
        OwnerClass::PreservedOpaque,
        OwnerClass::ConnectionTail,
    ];

    /// The class's kebab-case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            OwnerClass::DecodedRecord => "decoded-record",
            OwnerClass::Alignment => "alignment",
            OwnerClass::Padding => "padding",
            OwnerClass::PreservedOpaque => "preserved-opaque",
            OwnerClass::ConnectionTail => "connection-tail",
        }
    }
}

/// A non-owning view; views never take part in reconstruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ViewClass {
    /// The connection region (final 512 bytes) over owners that already hold it.
    SectionCoveredView,
    /// A table entry's range inside another table's data (v1 nested tables, v2 DYNAIO).
    NestedReference,
}

/// Why a preserved-opaque owner is not decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UndecodedReason {
    /// A decoder read it and stopped: its code says where and why.
    DecoderRefused,
    /// Decoded, but its bytes are not what the decoded values encode to (non-zero padding).
    NotReencoded,
    /// The operations that read it pass its address alone: the file gives no layout.
    NoLayout,
    /// No record or patch points at it.
    Unreferenced,
    /// A run's data (DYNAIO): inputs, outputs and scalars the runtime fills.
    RunData,
    /// No public layout of this payload is known.
    FormatUnknown,
}

impl UndecodedReason {
    /// The reason's kebab-case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            UndecodedReason::DecoderRefused => "decoder-refused",
            UndecodedReason::NotReencoded => "not-reencoded",
            UndecodedReason::NoLayout => "no-layout",
            UndecodedReason::Unreferenced => "unreferenced",
            UndecodedReason::RunData => "run-data",
            UndecodedReason::FormatUnknown => "format-unknown",
        }
    }
}

/// Why an owner's bytes are kept opaque: the reason, the decoder's code where one tried
/// (`coef-zero-run`, `coef-element-count`) and where it stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Undecoded {
    /// The reason.
    pub reason: UndecodedReason,
    /// The decoder's stable code, or the payload's role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Where, in words (`at +0xc0`, `stream 6 at bit 6: ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Undecoded {
    /// A reason with no code.
    pub fn of(reason: UndecodedReason) -> Undecoded {
        Undecoded {
            reason,
            code: None,
            detail: None,
        }
    }

    /// A reason with a code and where.
    pub fn coded(reason: UndecodedReason, code: &str, detail: String) -> Undecoded {
        Undecoded {
            reason,
            code: Some(code.to_string()),
            detail: Some(detail),
        }
    }
}

/// One entry of the ledger: the byte range `[start, end)` and who owns it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Owner {
    /// First file offset owned.
    pub start: u64,
    /// One past the last file offset owned.
    pub end: u64,
    /// What kind of bytes these are.
    pub class: OwnerClass,
    /// A human-readable name (`section 3 type 20 ...`, `padding before ...`).
    pub label: String,
    /// The structure behind the owner (not serialized).
    #[serde(skip)]
    pub origin: Origin,
    /// For padding: whether every byte is zero.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_zero: Option<bool>,
    /// For a preserved-opaque owner: why it is not decoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecoded: Option<Undecoded>,
}

impl Owner {
    /// Bytes owned.
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    /// Whether the range is empty (never true in a proved ledger).
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// Whether `offset` lies in `[start, end)`.
    pub fn contains(&self, offset: u64) -> bool {
        self.start <= offset && offset < self.end
    }
}

/// A non-owning view of `[start, end)`: a second name for bytes an owner already holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct View {
    /// First file offset viewed.
    pub start: u64,
    /// One past the last file offset viewed.
    pub end: u64,
    /// What kind of view.
    pub class: ViewClass,
    /// A human-readable name (`dynaio_table[2] -> ...`).
    pub label: String,
}

/// A claimed (non-gap) range before gaps are filled.
pub struct Claim {
    /// First file offset claimed.
    pub(crate) start: u64,
    /// One past the last file offset claimed.
    pub(crate) end: u64,
    /// The owner class the range gets.
    pub(crate) class: OwnerClass,
    /// The owner's label.
    pub(crate) label: String,
    /// The structure behind the range.
    pub(crate) origin: Origin,
    /// Declared alignment of the section that starts here (v2), for the gap before it.
    pub(crate) alignment: u64,
    /// For an opaque claim: why.
    pub(crate) undecoded: Option<Undecoded>,
}

/// A claim of a structure (origin `Structure`, no alignment before it).
pub(crate) fn claim(start: u64, end: u64, class: OwnerClass, label: String) -> Claim {
    Claim {
        start,
        end,
        class,
        label,
        origin: Origin::Structure,
        alignment: 0,
        undecoded: None,
    }
}
