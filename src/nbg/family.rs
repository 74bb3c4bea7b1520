//! Per-family behaviour behind one trait, dispatched once.
//!
//! `NbgFamily` holds what differs between the v1 and v2 families and what the lab, the
//! ledger and the renderers ask of a parsed graph: identity, the JSON document, layout
//! descriptors, named payloads (v2 sections, v1 tables), the file CRC field and its recovered
//! rule, the section-40 checksums, which bytes no rule checks, DYNAIO, the re-encoding of
//! decoded records and the CRC explanation. `NbgV1` and `NbgV2`
//! implement it; `Graph` implements it by forwarding every call through `with_family!`, the
//! one place that matches on the family (the pattern of gimli-rs/object's `read::Object` and
//! `read::File`).
//!
//! This module sits just above `parse` (it imports the parsed types, the format constants and
//! the CRC rules) and below the lab and the renderers. The per-family halves of the
//! re-encoding (`reencode`, which needs the ledger's owners) and of the CRC explanation
//! (`crc_explain`) stay in their modules; the trait only dispatches them.

use crate::nbg::crc_explain;
use crate::nbg::crc_rules::{self, CrcClass, Explanation};
use crate::nbg::fieldmap as fm;
use crate::nbg::fingerprint::{Hash256, crc32};
use crate::nbg::format::{HeaderCrc, section, v1 as f1, v2 as f2};
use crate::nbg::image::Owner;
use crate::nbg::parse::{FileFacts, Graph, NbgV1, NbgV2};
use crate::nbg::reencode::{self, Piece};
use serde::{Deserialize, Serialize};

/// The NBG family of a graph (or the family a mapping of the registry is written for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Version 0x0001xxxx: a fixed part and an entry table of 8-byte (offset, size) pairs.
    V1,
    /// Version 0x00020000: a header, a sub-header and a section directory.
    V2,
}

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

    /// Whole-file size and SHA-256.
    fn file(&self) -> &FileFacts;

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

    /// File offset of the DYNAIO region, when the graph has a non-empty one.
    fn dynaio_region(&self) -> Option<u64>;

    /// DYNAIO entries as file ranges `[start, end)`, in table order (v2 sections 20/26, or the
    /// v1 `dyna_io_table` into `dyna_io`); empty when the graph has none.
    fn dynaio_ranges(&self) -> Vec<(u64, u64)>;

    /// The decoded-record `owner` (a ledger owner of this graph's image) encoded again from the
    /// parsed values, one piece per record; `None` when the field map has no encoder for it.
    fn reencode_owner(&self, owner: &Owner) -> Option<Vec<Piece>>;

    /// The CRC hypothesis registry (plus the recovered v2 rule for v2) evaluated against this
    /// graph's structural boundaries, given the CRC-32 of any `[start, end)` of the file.
    fn crc_explanation(&self, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation;
}

/// The parse model as JSON.
fn model_json(model: &impl Serialize) -> serde_json::Value {
    // Invariant: the parse models derive `Serialize` over strings, integers, booleans,
    // options, vectors, structs and hashes (hex strings), with no map keyed by a non-string
    // and no fallible custom impl, so `serde_json::to_value` cannot fail.
    serde_json::to_value(model).expect("parse model serializes")
}

impl<'data> NbgFamily<'data> for NbgV1<'data> {
    fn family(&self) -> Family {
        Family::V1
    }

    fn bytes(&self) -> &'data [u8] {
        self.bytes
    }

    fn format(&self) -> &'static str {
        self.format
    }

    fn file(&self) -> &FileFacts {
        &self.file
    }

    fn structural_signature(&self) -> Hash256 {
        self.structural_signature
    }

    fn to_json(&self) -> serde_json::Value {
        model_json(self)
    }

    fn descriptors(&self) -> Vec<String> {
        self.tables
            .iter()
            .map(|t| {
                format!(
                    "table {} {} offset {} size {}",
                    t.index, t.name, t.offset, t.size
                )
            })
            .collect()
    }

    fn payloads(&self) -> Vec<Payload> {
        self.tables
            .iter()
            .map(|t| Payload {
                name: t.name,
                offset: t.offset,
                size: t.size,
            })
            .collect()
    }

    fn crc_rule(&self) -> CrcRule {
        CrcRule {
            field: f1::OFF_CRC as u64,
            rule: crc_rules::WHOLE_FILE_FIELD_ZEROED,
            field_name: "nbg_crc_sum",
        }
    }

    fn crc_class(&self) -> Option<CrcClass> {
        Some(self.crc.classification)
    }

    fn file_crc(&self, bytes: &[u8]) -> Option<u32> {
        if self.crc.stored == 0 || bytes.len() as u64 != self.file.size {
            return None;
        }
        Some(crc_rules::whole_file_field_zeroed(
            bytes,
            f1::OFF_CRC as u64,
        ))
    }

    fn derived_checksums(&self) -> Vec<DerivedChecksum> {
        Vec::new()
    }

    fn checksum_table(&self) -> Option<(u64, u64)> {
        None
    }

    fn coverage_code(&self, _offset: u64) -> Option<&'static str> {
        // A matching whole-file CRC covers every byte; the parser reports a mismatch as a
        // classification, not a failure, so the sweep names the code itself.
        (self.crc.classification == CrcClass::Matches).then_some("crc-field-unexplained")
    }

    fn unchecked_reason(&self, _offset: u64, _place: Place) -> Option<&'static str> {
        match self.crc.classification {
            CrcClass::Absent => Some("v1 file without a CRC: the byte is not checked"),
            CrcClass::Unexplained => {
                Some("v1 CRC field unexplained by every rule: the byte is not checked")
            }
            _ => None,
        }
    }

    fn dynaio_region(&self) -> Option<u64> {
        self.table("dyna_io")
            .filter(|t| t.size > 0)
            .map(|t| t.offset)
    }

    fn dynaio_ranges(&self) -> Vec<(u64, u64)> {
        let region = self.table("dyna_io").map_or(0, |t| t.offset);
        self.nested_tables
            .iter()
            .find(|n| n.table == "dyna_io_table")
            .map_or_else(Vec::new, |n| {
                n.entries
                    .iter()
                    .map(|e| (region + e[0], region + e[0] + e[1]))
                    .collect()
            })
    }

    fn reencode_owner(&self, owner: &Owner) -> Option<Vec<Piece>> {
        reencode::pieces_v1(self, owner)
    }

    fn crc_explanation(&self, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation {
        crc_explain::explain_v1(self, crc_of)
    }
}

impl NbgV2<'_> {
    /// The header CRC rule of this file's version (the spec's rule for a version nbg does not
    /// list, which the parser refuses before a graph exists).
    fn header_crc(&self) -> HeaderCrc {
        crate::nbg::format::v2_rules(self.header.version)
            .map_or(HeaderCrc::SectionPayloads, |r| r.header_crc)
    }
}

impl<'data> NbgFamily<'data> for NbgV2<'data> {
    fn family(&self) -> Family {
        Family::V2
    }

    fn bytes(&self) -> &'data [u8] {
        self.bytes
    }

    fn format(&self) -> &'static str {
        self.format
    }

    fn file(&self) -> &FileFacts {
        &self.file
    }

    fn structural_signature(&self) -> Hash256 {
        self.structural_signature
    }

    fn to_json(&self) -> serde_json::Value {
        model_json(self)
    }

    fn descriptors(&self) -> Vec<String> {
        let mut d = vec![format!(
            "sub-header {} {} {}",
            self.sub_header.section_headers_offset,
            self.sub_header.section_header_size,
            self.sub_header.section_header_count
        )];
        d.extend(self.sections.iter().map(|s| {
            format!(
                "section {} type {} offset {} size {} align {} entry {} load {} reserved {:?}",
                s.index,
                s.kind,
                s.offset,
                s.size,
                s.alignment,
                s.entry_size,
                s.load_address,
                s.reserved_words
            )
        }));
        d
    }

    fn payloads(&self) -> Vec<Payload> {
        self.sections
            .iter()
            .map(|s| Payload {
                name: s.type_name,
                offset: s.offset,
                size: s.size,
            })
            .collect()
    }

    fn crc_rule(&self) -> CrcRule {
        CrcRule {
            field: f2::OFF_CRC_SUM as u64,
            rule: match self.header_crc() {
                HeaderCrc::SectionPayloads => "v2-directory-order",
                HeaderCrc::WholeFileFieldZeroed => crc_rules::WHOLE_FILE_FIELD_ZEROED,
            },
            field_name: "header crc_sum",
        }
    }

    fn crc_class(&self) -> Option<CrcClass> {
        None
    }

    fn file_crc(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() as u64 != self.file.size {
            return None;
        }
        if self.header_crc() == HeaderCrc::WholeFileFieldZeroed {
            return Some(crc_rules::whole_file_field_zeroed(
                bytes,
                f2::OFF_CRC_SUM as u64,
            ));
        }
        // The parser bounded every section inside the file, which has `bytes`' length.
        let listing = self
            .sections
            .iter()
            .map(|s| {
                let payload = bytes.get(s.offset as usize..s.end() as usize)?;
                Some((s.kind, s.offset, s.size, crc32(payload)))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(crc_rules::v2_file_crc(bytes, &listing))
    }

    fn derived_checksums(&self) -> Vec<DerivedChecksum> {
        // The parser rejects a checksum record whose target section is absent, so none is
        // skipped here in a parsed graph.
        self.section_checksums
            .iter()
            .filter_map(|c| {
                let t = self.section(c.section_type)?;
                Some(DerivedChecksum {
                    value_at: c.offset + 4,
                    target: (t.offset, t.end()),
                    section_type: c.section_type,
                })
            })
            .collect()
    }

    fn checksum_table(&self) -> Option<(u64, u64)> {
        self.section(section::CHECKSUM).map(|s| (s.offset, s.end()))
    }

    fn coverage_code(&self, offset: u64) -> Option<&'static str> {
        // Sections do not overlap (the parser rejects overlaps), so at most one holds `offset`.
        let s = self
            .sections
            .iter()
            .find(|s| s.offset <= offset && offset < s.end())?;
        if self
            .section_checksums
            .iter()
            .any(|c| c.section_type == s.kind)
        {
            Some("section-checksum-mismatch")
        } else {
            Some("file-checksum-mismatch")
        }
    }

    fn unchecked_reason(&self, offset: u64, place: Place) -> Option<&'static str> {
        match place {
            Place::Gap => Some("gap byte: excluded from every checksum by the recovered rule"),
            Place::ConnectionTail => {
                Some("connection region with no section owner: no checksum covers it")
            }
            Place::Structure => self.structure_reason(offset),
            Place::Other => None,
        }
    }

    fn dynaio_region(&self) -> Option<u64> {
        self.section(section::DYNAIO).map(|s| s.offset)
    }

    fn dynaio_ranges(&self) -> Vec<(u64, u64)> {
        self.dynamic_io.as_ref().map_or_else(Vec::new, |d| {
            d.entries
                .iter()
                .map(|e| {
                    (
                        d.region_offset + e.offset,
                        d.region_offset + e.offset + e.size,
                    )
                })
                .collect()
        })
    }

    fn reencode_owner(&self, owner: &Owner) -> Option<Vec<Piece>> {
        reencode::pieces_v2(self, owner)
    }

    fn crc_explanation(&self, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation {
        crc_explain::explain_v2(self, crc_of)
    }
}

impl NbgV2<'_> {
    /// Header and directory words the parser records without enforcing them.
    fn structure_reason(&self, o: u64) -> Option<&'static str> {
        let dir = u64::from(self.sub_header.section_headers_offset);
        let entry = u64::from(f2::SECTION_HEADER_SIZE);
        let dir_end = dir + self.sections.len() as u64 * entry;
        if o < f2::HEADER_SIZE as u64 {
            return match fm::v2_header::RECORD.field_at(o).map(|f| f.name) {
                Some("target") => Some("header target: recorded, not validated (a later gate)"),
                Some("class_word" | "reserved2" | "reserved3") => {
                    Some("reserved header word: reported as a corpus invariant, not enforced")
                }
                _ => None,
            };
        }
        if !(dir <= o && o < dir_end) {
            return None;
        }
        let rel = (o - dir) % entry;
        let index = ((o - dir) / entry) as usize;
        let io = self
            .sections
            .get(index)
            .is_some_and(|s| matches!(s.kind, section::INPUT | section::OUTPUT));
        match fm::v2_section_header::RECORD.field_at(rel).map(|f| f.name) {
            Some("type") => Some(
                "section type word: the CRC rule excludes the directory; the renamed section is still bounded and valid",
            ),
            Some("load_address" | "alignment" | "reserved_words") => {
                Some("directory descriptor word: reported, not enforced")
            }
            Some("entry_size") if !io => {
                Some("entry size of a section without decoded records: reported")
            }
            _ => None,
        }
    }
}

/// Forward a call to the graph's family: the one match on `Graph` variants.
macro_rules! with_family {
    ($graph:expr, $g:ident => $body:expr) => {
        match $graph {
            Graph::V1($g) => $body,
            Graph::V2($g) => $body,
        }
    };
}

impl<'data> NbgFamily<'data> for Graph<'data> {
    fn family(&self) -> Family {
        with_family!(self, g => g.family())
    }

    fn bytes(&self) -> &'data [u8] {
        with_family!(self, g => g.bytes())
    }

    fn format(&self) -> &'static str {
        with_family!(self, g => g.format())
    }

    fn file(&self) -> &FileFacts {
        with_family!(self, g => g.file())
    }

    fn structural_signature(&self) -> Hash256 {
        with_family!(self, g => g.structural_signature())
    }

    fn to_json(&self) -> serde_json::Value {
        with_family!(self, g => g.to_json())
    }

    fn descriptors(&self) -> Vec<String> {
        with_family!(self, g => g.descriptors())
    }

    fn payloads(&self) -> Vec<Payload> {
        with_family!(self, g => g.payloads())
    }

    fn crc_rule(&self) -> CrcRule {
        with_family!(self, g => g.crc_rule())
    }

    fn crc_class(&self) -> Option<CrcClass> {
        with_family!(self, g => g.crc_class())
    }

    fn file_crc(&self, bytes: &[u8]) -> Option<u32> {
        with_family!(self, g => g.file_crc(bytes))
    }

    fn derived_checksums(&self) -> Vec<DerivedChecksum> {
        with_family!(self, g => g.derived_checksums())
    }

    fn checksum_table(&self) -> Option<(u64, u64)> {
        with_family!(self, g => g.checksum_table())
    }

    fn coverage_code(&self, offset: u64) -> Option<&'static str> {
        with_family!(self, g => g.coverage_code(offset))
    }

    fn unchecked_reason(&self, offset: u64, place: Place) -> Option<&'static str> {
        with_family!(self, g => g.unchecked_reason(offset, place))
    }

    fn dynaio_region(&self) -> Option<u64> {
        with_family!(self, g => g.dynaio_region())
    }

    fn dynaio_ranges(&self) -> Vec<(u64, u64)> {
        with_family!(self, g => g.dynaio_ranges())
    }

    fn reencode_owner(&self, owner: &Owner) -> Option<Vec<Piece>> {
        with_family!(self, g => g.reencode_owner(owner))
    }

    fn crc_explanation(&self, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation {
        with_family!(self, g => g.crc_explanation(crc_of))
    }
}
