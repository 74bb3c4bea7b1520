//! Per-family behaviour behind one trait, dispatched once.
//!
//! `NbgFamily` holds what differs between the v1 and v2 families and what the lab, the
//! ledger and the renderers ask of a parsed graph: identity, the JSON document, layout
//! descriptors, named payloads (v2 sections, v1 tables), the file CRC field and its recovered
//! rule, the section-40 checksums, which bytes no rule checks, DYNAIO, the ledger's claims and
//! views, the re-encoding of decoded records, the name of any byte and the CRC explanation.
//! `NbgV1` and `NbgV2`
//! implement it; `Graph` implements it by forwarding every call through `with_family!`, the
//! one place that matches on the family (the pattern of gimli-rs/object's `read::Object` and
//! `read::File`).
//!
//! This module sits just above `parse` (it imports the parsed types, the format constants, the
//! CRC rules and the coefficient decoder) and below the ledger, the lab and the renderers. Each
//! family's halves of what those ask live here, one file per concern: the ledger's vocabulary
//! and claims (`ledger`, `claims`), the encoders of decoded records (`pieces`), the names of
//! bytes (`naming`) and the CRC registry's boundaries (`crc`).

mod claims;
mod crc;
mod graph;
mod ledger;
mod naming;
mod pieces;
mod v1;
mod v2;

#[cfg(test)]
pub(crate) use ledger::claim;
pub use ledger::{Claim, Origin, Owner, OwnerClass, Undecoded, UndecodedReason, View, ViewClass};
pub use naming::{Located, Word};
pub use pieces::Piece;

use crate::digest::Hash256;
use crate::nbg::crc_rules::{self, CrcClass, Explanation};
use crate::nbg::fieldmap as fm;
use crate::nbg::fingerprint::crc32;
use crate::nbg::format::{HeaderCrc, section, v1 as f1, v2 as f2};
use crate::nbg::parse::{FileFacts, Graph, NbgV1, NbgV2};
use serde::Serialize;

/// Coefficient parts written again, by (payload, entry, part) as `Origin::Coefficient` names
/// them.
pub type CoefficientPieces =
    std::collections::BTreeMap<(usize, usize, crate::nbg::coefficients::Part), Piece>;

/// Reads `len` bytes at a file offset (`None` outside the file): how the ledger's claims and the
/// re-encoding reach the bytes of a coefficient entry, from memory or from a file.
pub type Read<'a> = dyn Fn(u64, u64) -> Option<std::borrow::Cow<'a, [u8]>> + 'a;

pub use crate::nbg::fieldmap::Family;

/// A named payload: a v2 section or a v1 table, by its public name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Payload {
    /// `NBG_SECTION_*` for v2, the entry-table name for v1.
    pub name: &'static str,
    /// File offset of the first byte.
    pub offset: u64,
    /// Bytes, possibly zero.
    pub size: u64,
}

impl Payload {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.offset + self.size
    }
}

/// Where the file CRC is stored and by which recovered rule it is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrcRule {
    /// File offset of the 4-byte little-endian field.
    pub field: u64,
    /// The rule's stable name (`v2-directory-order`, `whole-file-field-zeroed`).
    pub rule: &'static str,
    /// The field's name in the family's header, used as the marker of a rewrite.
    pub field_name: &'static str,
}

/// A derived checksum value (a v2 section-40 record) and the payload it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DerivedChecksum {
    /// File offset of the 4-byte value.
    pub value_at: u64,
    /// The covered payload, `[start, end)`.
    pub target: (u64, u64),
    /// The covered section's type.
    pub section_type: u32,
}

/// The kind of ledger owner a byte belongs to, as far as the checking rules care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Padding or alignment between claimed ranges.
    Gap,
    /// The connection region where no section or table owns it.
    ConnectionTail,
    /// A decoded structure record (header, sub-header, directory, fixed part).
    Structure,
    /// Anything else (payloads, decoded records inside sections).
    Other,
}

/// What differs between the NBG families, asked of a parsed graph.
pub trait NbgFamily<'data> {
    /// Which family this graph belongs to.
    fn family(&self) -> Family;

    /// The file bytes the graph borrows.
    fn bytes(&self) -> &'data [u8];

    /// The stable format name (`nbg-v1`, `nbg-v2`).
    fn format(&self) -> &'static str;

    /// The version word (offset 4).
    fn version(&self) -> u32;

    /// The target word (offset 8): the NPU's PID.
    fn target(&self) -> u32;

    /// Whole-file size and SHA-256.
    fn file(&self) -> &FileFacts;

    /// The input records, in table order.
    fn inputs(&self) -> &[crate::nbg::parse::IoRecord];

    /// The output records, in table order.
    fn outputs(&self) -> &[crate::nbg::parse::IoRecord];

    /// The network as the file names and counts it (v1 header, v2 network-info section; `None`
    /// without one).
    fn network(&self) -> Option<Network<'_>>;

    /// The network's name (empty without one).
    fn network_name(&self) -> String {
        self.network()
            .map(|n| n.name.to_string())
            .unwrap_or_default()
    }

    /// Relations a corpus showed, checked on this file and reported, never enforced.
    fn corpus_invariants(&self) -> &[crate::nbg::parse::invariants::Invariant];

    /// The decoded graph records (layers, operations, patches, ...).
    fn records(&self) -> &crate::nbg::parse::records::Records;

    /// The working memory the file declares: pool, AXI SRAM, VIP SRAM (`None` where the family
    /// or the file does not say).
    fn memory(&self) -> DeclaredMemory;

    /// Where the version's record layouts come from (v1: `proved` or the reasoning); `None`
    /// where the family has one layout.
    fn layout_evidence(&self) -> Option<crate::nbg::format::v1::LayoutEvidence>;

    /// The stored file CRC and the rule that reproduces it, when one does.
    fn crc_summary(&self) -> CrcSummary;

    /// The payloads as the family lays them out (v2 directory sections, v1 entry tables), for
    /// renderers that show each with its own columns.
    fn layout(&self) -> Layout<'_>;

    /// The integrity checks the family's format carries (v2 file and section checksums and
    /// DYNAIO, the v1 CRC field and nested tables).
    fn integrity(&self) -> Integrity<'_>;

    /// The final 512 bytes that the vendor's loader reads as its connection region.
    fn connection_region(&self) -> &crate::nbg::parse::ConnectionRegion;

    /// Every range the family's structures, payloads and buffer entries claim, for the ledger
    /// to fill the gaps and prove (`nbg::image`); `read` gives the bytes of a coefficient entry,
    /// which is cut into its decoded parts.
    fn claims<'a>(&self, read: &Read<'a>) -> Vec<Claim>;

    /// The non-owning views: table entries that point into another table's data (v1 nested
    /// tables, v2 DYNAIO entries).
    fn views(&self) -> Vec<View>;

    /// The decoded-record owner `o` of this graph's ledger encoded again from the parsed values,
    /// one piece per record (a coefficient part decoded anew from `read`); `None` when the field
    /// map has no encoder for it.
    fn pieces<'a>(&self, o: &Owner, read: &Read<'a>) -> Option<Vec<Piece>>;

    /// Every coefficient part the ledger owns (`Origin::Coefficient`), each entry decoded once
    /// anew from `read` and written again, by payload, entry and part: what `pieces` gives
    /// owner by owner, for the whole ledger at once.
    fn coefficient_pieces<'a>(&self, read: &Read<'a>) -> CoefficientPieces;

    /// The section type or table name of a payload owner of `origin` (`None` for any other
    /// origin).
    fn payload_name(&self, origin: Origin) -> Option<&str>;

    /// The field (or opaque unit) holding the byte at `offset` of the owner `o`.
    fn located(&self, o: &Owner, offset: u64) -> Located;

    /// What the bytes of a payload owner of `origin` hold.
    fn owner_content(&self, origin: &Origin) -> crate::nbg::format::Content;

    /// Hash of the layout with payload bytes left out: equal for two captures of one network
    /// that differ only in weights.
    fn structural_signature(&self) -> Hash256;

    /// The `--json` document: sorted keys, integers as numbers, hashes as lowercase hex.
    fn to_json(&self) -> serde_json::Value;

    /// Layout descriptors, one line each: two captures with equal descriptors share a layout.
    fn descriptors(&self) -> Vec<String>;

    /// The named payloads (v2 sections, v1 tables) in directory order, empty ones included.
    fn payloads(&self) -> Vec<Payload>;

    /// The first payload called `name`, when the graph has one.
    fn payload(&self, name: &str) -> Option<Payload> {
        self.payloads().into_iter().find(|p| p.name == name)
    }

    /// Where the file CRC is stored and which rule computes it.
    fn crc_rule(&self) -> CrcRule;

    /// How the stored v1 CRC relates to the rules; `None` for v2, whose checksums the parser
    /// enforces.
    fn crc_class(&self) -> Option<CrcClass>;

    /// The file CRC of `bytes` (a changed copy of this graph's file, same length and layout)
    /// by the family's recovered rule; `None` when the file stores no CRC (a v1 zero field)
    /// or `bytes` does not have the file's length.
    fn file_crc(&self, bytes: &[u8]) -> Option<u32>;

    /// Section-40 checksum values and the payloads they cover (empty for v1).
    fn derived_checksums(&self) -> Vec<DerivedChecksum>;

    /// The file range of the checksum table, whose 8-byte records are (type, value) words.
    fn checksum_table(&self) -> Option<(u64, u64)>;

    /// The failure code a change to the payload or gap byte at `offset` must cause by checksum
    /// coverage alone, when coverage decides it.
    fn coverage_code(&self, offset: u64) -> Option<&'static str>;

    /// Why a change to the byte at `offset` (owned by a `place`) passes every rule, when a
    /// recorded reason covers it.
    fn unchecked_reason(&self, offset: u64, place: Place) -> Option<&'static str>;

    /// Bytes of decoded records that lie in fields the field map names unknown (v2 NN command
    /// words 34 to 47); zero where no decoded record has such a field.
    fn unknown_field_bytes(&self) -> u64;

    /// Every patch record resolved to the field it relocates and the memory its address
    /// points to (`nbg::parse::patch_targets`); `None` where the graph's patch table is not decoded.
    fn patch_targets(&self) -> Option<crate::nbg::parse::patch_targets::PatchTargets>;

    /// What the coefficient reader needs of this graph (`nbg::coefficients::of`).
    fn coefficient_view(&self) -> crate::nbg::parse::patch_targets::CoefficientView<'_>;

    /// File offset of the DYNAIO region, when the graph has a non-empty one.
    fn dynaio_region(&self) -> Option<u64>;

    /// DYNAIO entries as file ranges `[start, end)`, in table order (v2 sections 20/26, or the
    /// v1 `dyna_io_table` into `dyna_io`); empty when the graph has none.
    fn dynaio_ranges(&self) -> Vec<(u64, u64)>;

    /// What each one-byte flip by one of `patterns` does to the checksums, for a flip of a byte
    /// the check-only parse does not read (it changes nothing else), given the CRC-32 of any
    /// `[start, end)` of the file: the v1 field's class, or the v2 check that fails first;
    /// `None` where the registry cannot say.
    fn crc_flips(
        &self,
        crc_of: &mut dyn FnMut(u64, u64) -> u32,
        patterns: &[u8],
    ) -> Option<crate::nbg::crc_rules::CrcFlips>;

    /// The check-only parse's records stage (`read::Stage::Records`) run again over `data`,
    /// this file with bytes changed that no other stage reads.
    fn recheck_records(
        &self,
        data: crate::nbg::read::Data<'_>,
    ) -> Result<(), crate::nbg::failure::Failure>;

    /// The CRC hypothesis registry (plus the recovered v2 rule for v2) evaluated against this
    /// graph's structural boundaries, given the CRC-32 of any `[start, end)` of the file.
    fn crc_explanation(&self, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation;
}

/// The network a file names, with its counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Network<'a> {
    /// The network's name.
    pub name: &'a str,
    /// Layers.
    pub layers: u32,
    /// Operations.
    pub operations: u32,
    /// NPU cores, where the family records them (v2).
    pub cores: Option<u32>,
}

/// The working memory a file declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeclaredMemory {
    /// The memory pool (intermediate tensors).
    pub pool_bytes: Option<u64>,
    /// AXI SRAM.
    pub axi_sram_bytes: Option<u32>,
    /// VIP SRAM.
    pub vip_sram_bytes: Option<u32>,
}

/// A family's payload layout.
#[derive(Clone, Copy, Debug)]
pub enum Layout<'a> {
    /// v2: the section directory's entries.
    Sections(&'a [crate::nbg::parse::v2::Section]),
    /// v1: the fixed part, its opaque extension and the entry table's tables.
    Tables {
        /// The fixed part (header, feature database, memory fields, table entries).
        fixed: &'a crate::nbg::parse::v1::FixedPart,
        /// The bytes between the fixed part and the first table.
        extension: &'a crate::nbg::parse::v1::Extension,
        /// The tables.
        tables: &'a [crate::nbg::parse::v1::Table],
    },
}

/// A family's integrity checks, as the parse found them.
#[derive(Clone, Copy, Debug)]
pub enum Integrity<'a> {
    /// v2: the file CRC over the directory's payloads, the section-40 checksums and DYNAIO.
    Directory {
        /// The header's CRC and how it was computed.
        file: &'a crate::nbg::parse::v2::FileChecksum,
        /// One per covered section.
        sections: &'a [crate::nbg::parse::v2::SectionChecksum],
        /// The DYNAIO region, when the file has one.
        dynamic_io: Option<&'a crate::nbg::parse::v2::DynamicIo>,
    },
    /// v1: the header's CRC field against the recovered rules, and the nested tables.
    CrcField {
        /// The field and its classification.
        crc: &'a crate::nbg::parse::v1::CrcField,
        /// Tables whose entries point into another table.
        nested: &'a [crate::nbg::parse::v1::NestedTable],
    },
}

/// A file's CRC as its family holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrcSummary {
    /// How the stored value relates to the rules (v2: `matches`, the parser enforces it).
    pub status: CrcClass,
    /// The rule that reproduces it, when one does.
    pub rule: Option<String>,
    /// The stored value.
    pub stored: u32,
    /// Its file offset.
    pub offset: u64,
}

impl CrcSummary {
    /// The one verdict every command gives a v1 CRC field no known rule reproduces over the
    /// bytes (`check` says it, `check --strict` and `carve` refuse with it, a sweep counts a
    /// flip that causes it): `crc-field-unexplained` at the field. Not a format refusal: no
    /// source says the vendor's loader checks the field.
    pub fn unexplained(&self) -> Option<crate::nbg::failure::Failure> {
        (self.status == CrcClass::Unexplained).then(|| {
            crate::nbg::failure::Failure::new(
                crate::nbg::failure::Code::CrcFieldUnexplained,
                self.offset,
                format!(
                    "the CRC field holds 0x{:08x}, which no known rule reproduces over these bytes",
                    self.stored
                ),
            )
        })
    }
}

/// The parse model as JSON.
fn model_json(model: &impl Serialize, target: u32) -> serde_json::Value {
    // Invariant: the parse models derive `Serialize` over strings, integers, booleans,
    // options, vectors, structs and hashes (hex strings), with no map keyed by a non-string
    // and no fallible custom impl, so `serde_json::to_value` cannot fail.
    let mut v = serde_json::to_value(model).expect("parse model serializes");
    // The target as every other command names it (hex); the header record keeps its word.
    if let Some(doc) = v.as_object_mut() {
        doc.insert(
            "target".into(),
            crate::nbg::format::target_hex(target).into(),
        );
    }
    v
}
