//! The parsed v2 graph: header, sub-header, sections, records, checksums and DYNAIO, as the
//! `--json` document holds them.

use super::*;

/// A parsed v2 graph. Borrows the file bytes it was parsed from.
#[derive(Debug, Serialize)]
pub struct NbgV2<'data> {
    /// The file bytes (empty when parsed from a file with positioned reads).
    #[serde(skip)]
    pub bytes: &'data [u8],
    /// `nbg-v2`.
    pub format: &'static str,
    /// Whole-file size and SHA-256.
    pub file: FileFacts,
    /// The 48-byte header at offset 0.
    pub header: Header,
    /// The sub-header that locates the section directory.
    pub sub_header: SubHeader,
    /// Every directory entry, in directory order.
    pub sections: Vec<Section>,
    /// The input section's records.
    #[serde(serialize_with = "crate::nbg::parse::serialize_io")]
    pub inputs: Vec<IoRecord>,
    /// The output section's records.
    #[serde(serialize_with = "crate::nbg::parse::serialize_io")]
    pub outputs: Vec<IoRecord>,
    /// The network-info section (35), when present.
    pub network_info: Option<NetworkInfo>,
    /// Used memory pool size in bytes (section 37), when present.
    pub memory_pool_bytes: Option<u64>,
    /// Used VIP SRAM size in bytes (section 38), when present.
    pub vip_sram_bytes: Option<u32>,
    /// Used AXI SRAM size in bytes (section 39), when present.
    pub axi_sram_bytes: Option<u32>,
    /// The section-40 records, each checked against its section.
    pub section_checksums: Vec<SectionChecksum>,
    /// The header's file CRC and the recovered rule that computes it.
    pub file_checksum: FileChecksum,
    /// The DYNAIO table (26) and region (20), when present.
    pub dynamic_io: Option<DynamicIo>,
    /// The index tables present (14, 23, 25, 27), in directory order.
    pub index_tables: Vec<IndexTable>,
    /// The LOADSTATE buffers as command streams, where LOADSTATE and its table are present.
    pub load_states: Option<CommandStreams>,
    /// The ICD buffers (section 15) the hardware-init records (13) name as their state
    /// buffers, as command streams; the other ICD entries hold the commands and data those
    /// streams point at (`nbg patches` names each).
    pub icd_streams: Option<CommandStreams>,
    /// Every ICD entry with what the records and patches pointing at it say it holds (state
    /// streams, NN or TP commands, coefficients, lookup tables, images, data); the ledger owns
    /// the ICD entry by entry when they are disjoint.
    pub icd_regions: Option<Vec<crate::nbg::parse::patch_targets::Region>>,
    /// Every COEF_DATA entry (by COEF_DATA_TABLE) with what points at it: coefficients, lookup
    /// tables (decoded as `tp_pwl_lut`), data; owned entry by entry like the ICD.
    pub coef_regions: Option<Vec<crate::nbg::parse::patch_targets::Region>>,
    /// Every PPU_INSTR entry (by PPU_INSTR_TABLE): the shader instructions an SH operation
    /// names, owned entry by entry like the ICD.
    pub ppu_instr_regions: Option<Vec<crate::nbg::parse::patch_targets::Region>>,
    /// The NN commands (section 7) through the field map's `nn_command` layout, where the
    /// section is whole records of its size; otherwise absent and the section opaque.
    pub nn_commands: Option<Vec<NnCommand>>,
    /// The TP commands (section 8) through the field map's `tp_command` layout, on the same
    /// terms.
    pub tp_commands: Option<Vec<TpCommand>>,
    /// `layers`, `operations`, `sh_operations`, `patches` (see `parse::records`).
    #[serde(flatten)]
    pub records: crate::nbg::parse::records::Records,
    /// The final 512 bytes the runtime copies.
    pub connection_region: ConnectionRegion,
    /// Hash of the layout with payload bytes left out (see the module note).
    pub structural_signature: Hash256,
    /// Relations observed across the proprietary corpus; reported, never enforced.
    pub corpus_invariants: Vec<crate::nbg::parse::invariants::Invariant>,
}

/// The 48-byte header at offset 0, read and written through its field-map table
/// (`fieldmap::v2_header`): a field added there is decoded, kept and re-encoded.
#[derive(Clone, Debug)]
pub struct Header {
    /// The header's values: what the accessors read and the re-encoding writes.
    pub fields: crate::nbg::decoded::Decoded,
}

use fm::v2_header as fh;

impl Header {
    crate::nbg::parse::records::accessors! { fh;
        /// The version word (offset 0x04), `0x00020000`.
        version: version -> u32;
        /// The target (product, CID) word (offset 0x08); recorded, not validated.
        target: target -> u32;
        /// Public name `crc_sum` (offset 0x0c).
        crc_sum: crc_sum -> u32;
        /// Declared file size, low word (offset 0x10).
        declared_file_size_low: total_size_low -> u32;
        /// Declared file size, high word (offset 0x14).
        declared_file_size_high: total_size_high -> u32;
        /// File offset of the sub-header (offset 0x18).
        sub_header_offset: sub_header_offset -> u32;
        /// Sub-header size in bytes (offset 0x1c).
        sub_header_size: sub_header_size -> u32;
        /// Number of sub-headers (offset 0x20); exactly one is accepted.
        sub_header_count: sub_header_count -> u32;
    }

    /// The magic (offset 0x00) as text, `VPMN` once parsed.
    pub fn magic(&self) -> String {
        let word = self.fields.u32(&fh::magic).to_le_bytes();
        String::from_utf8_lossy(&word).into_owned()
    }

    /// The two size words composed; must equal the file size.
    pub fn declared_file_size(&self) -> u64 {
        compose64(
            self.declared_file_size_low(),
            self.declared_file_size_high(),
        )
    }

    /// Bit 0 of the class word (offset 0x24).
    pub fn class(&self) -> u32 {
        self.fields.part(fh::class_word::class).unwrap_or(0)
    }

    /// The reserved header bits and words.
    pub fn reserved(&self) -> HeaderReserved {
        HeaderReserved {
            class_word_reserved_bits: self.fields.part(fh::class_word::reserved1).unwrap_or(0),
            reserved2: self.fields.u32(&fh::reserved2),
            reserved3: self.fields.u32(&fh::reserved3),
        }
    }
}

impl Serialize for Header {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut m = s.serialize_struct("Header", 14)?;
        m.serialize_field("magic", &self.magic())?;
        m.serialize_field("version", &self.version())?;
        m.serialize_field("target", &self.target())?;
        // `product` and `crc32`: compatibility aliases of `target` and `crc_sum`.
        m.serialize_field("product", &self.target())?;
        m.serialize_field("crc_sum", &self.crc_sum())?;
        m.serialize_field("crc32", &self.crc_sum())?;
        m.serialize_field("declared_file_size_low", &self.declared_file_size_low())?;
        m.serialize_field("declared_file_size_high", &self.declared_file_size_high())?;
        m.serialize_field("declared_file_size", &self.declared_file_size())?;
        m.serialize_field("sub_header_offset", &self.sub_header_offset())?;
        m.serialize_field("sub_header_size", &self.sub_header_size())?;
        m.serialize_field("sub_header_count", &self.sub_header_count())?;
        m.serialize_field("class", &self.class())?;
        m.serialize_field("reserved", &self.reserved())?;
        m.end()
    }
}

/// Reserved header bits and words: reported, kept for the round trip.
#[derive(Clone, Debug, Serialize)]
pub struct HeaderReserved {
    /// Bits 1..32 of the class word (offset 0x24).
    pub class_word_reserved_bits: u32,
    /// The word at offset 0x28.
    pub reserved2: u32,
    /// The word at offset 0x2c.
    pub reserved3: u32,
}

/// The 12-byte sub-header: where the section directory lies. Read and written through its
/// field-map table (`fieldmap::v2_sub_header`).
#[derive(Clone, Debug)]
pub struct SubHeader {
    /// File offset of the sub-header.
    pub offset: u64,
    /// The sub-header's values: what the accessors read and the re-encoding writes.
    pub fields: crate::nbg::decoded::Decoded,
}

use fm::v2_sub_header as fs;

impl SubHeader {
    crate::nbg::parse::records::accessors! { fs;
        /// File offset of the section directory.
        section_headers_offset: section_headers_offset -> u32;
        /// Bytes per directory entry (44).
        section_header_size: section_header_size -> u32;
        /// Number of directory entries.
        section_header_count: section_header_count -> u32;
    }
}

impl Serialize for SubHeader {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut m = s.serialize_struct("SubHeader", 4)?;
        m.serialize_field("offset", &self.offset)?;
        m.serialize_field("section_headers_offset", &self.section_headers_offset())?;
        m.serialize_field("section_header_size", &self.section_header_size())?;
        m.serialize_field("section_header_count", &self.section_header_count())?;
        m.end()
    }
}

/// One directory entry and the fingerprint of its payload.
#[derive(Clone, Debug, Serialize)]
pub struct Section {
    /// Position in the directory (the CRC order).
    pub index: usize,
    /// File offset of the 44-byte section header.
    pub header_offset: u64,
    /// The section type (`sd_type`, `NBG_SECTION_*` ID).
    #[serde(rename = "type")]
    pub kind: u32,
    /// Public name of the type (`NBG_SECTION_*`).
    pub type_name: &'static str,
    /// File offset of the payload (`sd_offset` low and high).
    pub offset: u64,
    /// Payload size in bytes (`sd_size` low and high).
    pub size: u64,
    /// Load address (`sd_addr` low and high); zero in serialized files.
    pub load_address: u64,
    /// Declared alignment in bytes (`sd_alignsize`).
    pub alignment: u32,
    /// Whether `offset` is a multiple of a nonzero `alignment` (reported, not enforced).
    pub aligned: bool,
    /// Bytes per record of the payload (`sd_entsize`).
    pub entry_size: u32,
    /// Compatibility alias of `entry_size`.
    pub stride: u32,
    /// The two reserved words at +0x24 and +0x28.
    pub reserved_words: [u32; 2],
    /// Whether the parser decodes the payload's records (the rest are bounded and opaque).
    pub decoded: bool,
    /// Fingerprint of the payload.
    pub fingerprint: Fingerprint,
}

impl Section {
    /// One past the payload's last byte.
    pub fn end(&self) -> u64 {
        self.offset + self.size
    }
}

use fm::v2_network_info as ni;

/// The 220-byte network-info section (35), read and written through its field-map table
/// (`fieldmap::v2_network_info`): a field added there is decoded, kept and re-encoded.
#[derive(Clone, Debug)]
pub struct NetworkInfo {
    /// File offset of the section.
    pub offset: u64,
    /// The record's values: what the accessors read and the re-encoding writes.
    pub fields: crate::nbg::decoded::Decoded,
}

impl NetworkInfo {
    crate::nbg::parse::records::accessors! { ni;
        /// Declared inputs (+0x40).
        input_count: input_count -> u32;
        /// Declared outputs (+0x44).
        output_count: output_count -> u32;
        /// Declared layers (+0x48).
        layer_count: layer_count -> u32;
        /// Declared absolute operations (`abs_op_count`, +0x4c).
        absolute_operation_count: absolute_operation_count -> u32;
        /// Declared operations (+0x50).
        operation_count: operation_count -> u32;
        /// Cores (+0x54).
        core_count: core_count -> u32;
        /// Address width in bits (+0x58).
        address_width: address_width -> u32;
    }

    /// The NUL-terminated network name (+0x00, 64 bytes).
    pub fn name(&self) -> &str {
        crate::nbg::parse::records::text(&self.fields, &ni::name)
            .0
            .unwrap_or_default()
    }

    /// The bytes after the name's NUL, re-encoded exactly.
    pub fn name_trailing_bytes(&self) -> &crate::nbg::read::NameTail {
        crate::nbg::parse::records::text(&self.fields, &ni::name).1
    }

    /// The attribute bitfield (+0x5c), decoded.
    pub fn attribute(&self) -> Attribute {
        Attribute::new(self.fields.u32(&ni::attribute))
    }

    /// The 31 vendor-reserved words (+0x60), counted and hashed.
    pub fn vsi_reserved(&self) -> VsiReserved {
        let words = self.fields.words(&ni::vsi_reserved);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        VsiReserved {
            words: words.len(),
            nonzero_words: words.iter().filter(|&&w| w != 0).count(),
            sha256: Hash256::of(&bytes),
        }
    }
}

impl Serialize for NetworkInfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut m = s.serialize_struct("NetworkInfo", 12)?;
        m.serialize_field("offset", &self.offset)?;
        m.serialize_field("name", self.name())?;
        crate::nbg::parse::records::name_tail(&mut m, self.name_trailing_bytes())?;
        m.serialize_field("input_count", &self.input_count())?;
        m.serialize_field("output_count", &self.output_count())?;
        m.serialize_field("layer_count", &self.layer_count())?;
        m.serialize_field("absolute_operation_count", &self.absolute_operation_count())?;
        m.serialize_field("operation_count", &self.operation_count())?;
        m.serialize_field("core_count", &self.core_count())?;
        m.serialize_field("address_width", &self.address_width())?;
        m.serialize_field("attribute", &self.attribute())?;
        m.serialize_field("vsi_reserved", &self.vsi_reserved())?;
        m.end()
    }
}

/// The network-info attribute bitfield.
#[derive(Clone, Debug, Serialize)]
pub struct Attribute {
    /// The word as stored.
    pub raw: u32,
    /// Bit 0: SH records reference the PPU parameter table.
    pub change_ppu_param: bool,
    /// Bits 1..3: NN command size code.
    pub nn_command_size_code: u32,
    /// NN command size in bytes by its code; null for an unknown code.
    pub nn_command_bytes: Option<u32>,
    /// Bits 3..5: TP command size code.
    pub tp_command_size_code: u32,
    /// TP command size in bytes by its code; null for an unknown code.
    pub tp_command_bytes: Option<u32>,
    /// Bits 5..7: DMA support code.
    pub dma_support_code: u32,
    /// Bits 7..32, reserved.
    pub reserved_bits: u32,
}

impl Attribute {
    pub(super) fn new(raw: u32) -> Self {
        let [ppu, nn, tp, dma, reserved] = ATTRIBUTE_PARTS.map(|p| p.get_as(u64::from(raw)));
        Attribute {
            raw,
            change_ppu_param: ppu != 0,
            nn_command_size_code: nn,
            nn_command_bytes: attribute::command_bytes(nn),
            tp_command_size_code: tp,
            tp_command_bytes: attribute::command_bytes(tp),
            dma_support_code: dma,
            reserved_bits: reserved,
        }
    }
}

/// The attribute word's parts in field-map order: change PPU parameter, NN and TP command size
/// codes, DMA support code, reserved bits (a wrong count does not build).
pub(super) const ATTRIBUTE_PARTS: [fm::Part; 5] = {
    let p = fm::v2_network_info::attribute.parts;
    [p[0], p[1], p[2], p[3], p[4]]
};

/// Vendor-reserved words: counted and hashed, never named.
#[derive(Clone, Debug, Serialize)]
pub struct VsiReserved {
    /// Number of words.
    pub words: usize,
    /// Words that are not zero.
    pub nonzero_words: usize,
    /// SHA-256 of the words' bytes.
    pub sha256: Hash256,
}

/// One section-40 record: a section type and the CRC-32 of that section's payload.
#[derive(Clone, Debug, Serialize)]
pub struct SectionChecksum {
    /// File offset of the 8-byte record.
    pub offset: u64,
    /// The covered section's type.
    pub section_type: u32,
    /// Public name of that type.
    pub section_type_name: &'static str,
    /// The stored CRC-32.
    pub stored: u32,
    /// CRC-32 of the covered payload.
    pub computed: u32,
    /// Whether the two agree.
    pub matches: bool,
}

/// The header's file CRC and the recovered rule that computes it.
#[derive(Clone, Debug, Serialize)]
pub struct FileChecksum {
    /// `crc32-ieee`.
    pub algorithm: &'static str,
    /// `zero`.
    pub initial_value: &'static str,
    /// What the CRC covers, by the version's rule: `section-payloads-in-directory-order`
    /// (0x00020000) or `whole-file-field-zeroed` (0x00020005).
    pub scope: &'static str,
    /// Bytes presented to the CRC, normalized section 40 included.
    pub covered_section_bytes: u64,
    /// Gap bytes between declared payload ranges, which the CRC leaves out.
    pub excluded_alignment_gap_bytes: u64,
    /// Section-40 value words read as zero.
    pub normalized_checksum_value_words: u64,
    /// The header's `crc_sum`.
    pub recorded_crc32: u32,
    /// The CRC-32 by the version's rule.
    pub computed_crc32: u32,
    /// The CRC-32 by the spec's directory-order rule, whatever the version's rule (what
    /// `crc-explain` compares).
    pub directory_order_crc32: u32,
    /// Whether the two agree (a parsed graph always has them equal).
    pub matches: bool,
}

/// One index table (23, 25 or 27) and the data section its entries point into.
#[derive(Clone, Debug, Serialize)]
pub struct IndexTable {
    /// The table's section type.
    pub section_type: u32,
    /// The data section's type (`format::section::indexed_by`).
    pub data_section_type: u32,
    /// Number of (offset, size) entries.
    pub entry_count: u64,
    /// The entries' sizes, summed.
    pub indexed_bytes: u64,
    /// The entries in table order, data-section-relative (`command_bytes` and friends of the
    /// operations name what they index; kept for the round trip).
    #[serde(skip)]
    pub entries: Vec<[u64; 2]>,
}

/// The DYNAIO table (26) and the region (20) it maps.
#[derive(Clone, Debug, Serialize)]
pub struct DynamicIo {
    /// File offset of the DYNAIO table.
    pub table_offset: u64,
    /// File offset of the DYNAIO region.
    pub region_offset: u64,
    /// Number of table entries.
    pub entry_count: u64,
    /// Region size in bytes.
    pub region_bytes: u64,
    /// Region bytes inside some entry.
    pub mapped_payload_bytes: u64,
    /// Region bytes outside every entry (alignment padding).
    pub padding_bytes: u64,
    /// The entries, in table order.
    pub entries: Vec<DynaioEntry>,
    /// How the table and region compare with the spec's corpus (reported under
    /// `corpus_invariants`, never enforced).
    #[serde(skip)]
    pub layout: DynaioLayout,
}

/// Counts of the DYNAIO relations the spec's corpus always showed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DynaioLayout {
    /// The region is whole 64-byte units.
    pub region_whole_units: bool,
    /// Entries of size zero.
    pub zero_size: u64,
    /// Entries whose offset is not 64-byte aligned.
    pub unaligned: u64,
    /// Entries that start before the end of an earlier one in table order.
    pub out_of_order: u64,
    /// Nonzero bytes outside every entry.
    pub nonzero_padding: u64,
}

/// One DYNAIO table entry: an (offset, size) range of the region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DynaioEntry {
    /// Region-relative offset.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
}

impl<'data> NbgV2<'data> {
    /// Whether a section's payload is decoded: its kind has a record layout (`holds`), or its
    /// decoder read it whole (NN commands of a known size, LOADSTATE command streams).
    pub fn decodes(&self, s: &Section) -> bool {
        match s.kind {
            section::NN => self.nn_commands.is_some(),
            section::TP => self.tp_commands.is_some(),
            section::LOADSTATE => self.load_states.as_ref().is_some_and(|l| l.complete()),
            k => crate::nbg::holds::v2(k).is_some(),
        }
    }

    /// The section of a type, if present (types are unique in a valid graph).
    pub fn section(&self, kind: u32) -> Option<&Section> {
        self.sections.iter().find(|s| s.kind == kind)
    }

    /// The payload bytes of `s` (a section of this graph parsed from memory).
    pub fn payload(&self, s: &Section) -> &'data [u8] {
        use crate::nbg::read::index;
        self.bytes
            .get(index(s.offset)..index(s.end()))
            .unwrap_or_default()
    }
}

impl NbgV2<'_> {
    /// The entries a section of buffers is cut into (ICD, COEF_DATA, PPU_INSTR), and the state streams
    /// among them.
    pub fn regions_of(
        &self,
        kind: u32,
    ) -> (
        Option<&[crate::nbg::parse::patch_targets::Region]>,
        Option<&CommandStreams>,
    ) {
        match kind {
            section::ICD => (self.icd_regions.as_deref(), self.icd_streams.as_ref()),
            section::COEF_DATA => (self.coef_regions.as_deref(), None),
            section::PPU_INSTR => (self.ppu_instr_regions.as_deref(), None),
            _ => (None, None),
        }
    }

    /// What the patch records refer to (`parse::patch_targets`); `None` without a decoded
    /// patch table.
    pub fn patch_context(&self) -> Option<crate::nbg::parse::patch_targets::Context<'_>> {
        use crate::nbg::parse::patch_targets::{Buffers, CommandTable, Context, Indexed};
        use std::borrow::Cow;
        let entries = |kind: u32| {
            self.index_tables
                .iter()
                .find(|t| t.section_type == kind)
                .map_or(&[][..], |t| &t.entries[..])
        };
        let indexed = |table: u32, data: u32| {
            self.section(table).map(|_| Indexed {
                label: section::name(data).unwrap_or("?"),
                entries: Cow::Borrowed(entries(table)),
            })
        };
        let commands = |kind: u32, count: Option<usize>| {
            let s = self.section(kind)?;
            Some(CommandTable {
                label: s.type_name,
                record: crate::nbg::holds::v2(kind)?.record(u64::from(s.entry_size))?,
                count: count?,
            })
        };
        let states = Buffers {
            label: "NBG_SECTION_LOADSTATE",
            entries: entries(section::LOADSTATE_TABLE),
            streams: self.load_states.as_ref(),
        };
        let icd = Buffers {
            label: "NBG_SECTION_ICD",
            entries: entries(section::ICDT),
            streams: self.icd_streams.as_ref(),
        };
        Some(Context {
            dynamic: indexed(section::COEF_DATA_TABLE, section::COEF_DATA),
            kernel_bitstreams: indexed(section::COEF_HEADER_TABLE, section::COEF_HEADER),
            dynamic_io: self.dynamic_io.as_ref().map(|d| Indexed {
                label: "NBG_SECTION_DYNAIO",
                entries: Cow::Owned(d.entries.iter().map(|e| [e.offset, e.size]).collect()),
            }),
            instructions: indexed(section::PPU_INSTR_TABLE, section::PPU_INSTR),
            nn: commands(section::NN, self.nn_commands.as_ref().map(Vec::len)),
            tp: commands(section::TP, self.tp_commands.as_ref().map(Vec::len)),
            inputs: self.inputs.len(),
            outputs: self.outputs.len(),
            ..Context::of(&self.records, states, icd)?
        })
    }
}
