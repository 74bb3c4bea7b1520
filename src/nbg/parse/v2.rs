//! NBG v2 (VIPLite 2.x, version 0x00020000): every rule of the field map, checked in the
//! documented order: envelope and header, sub-header, directory (size, count limit, type range,
//! bounds, overlap, duplicates), records, cross-checks, section checksums, file checksum, DYNAIO.
//!
//! The structural signature is SHA-256 over a canonical JSON description of the layout that
//! ignores payload bytes: version, target, class word, sub-header geometry, every directory
//! descriptor (type, offset, size, load address, alignment, entry size, reserved words), the
//! declared file size, the decoded I/O metadata (names, dimensions, format, type, quantization
//! words), the network name, counts and attribute, memory sizes and the DYNAIO entry geometry. It leaves out the header
//! CRC, every payload byte, checksum values, `vsi_reserved` and the connection region.

use super::{ConnectionRegion, FileFacts, IoLayout, IoRecord, Options, QuantSlots, decode_io};
use crate::nbg::crc_rules;
use crate::nbg::failure::{Code, Failure, fail};
use crate::nbg::fieldmap as fm;

/// Field offsets inside a directory entry and the sub-header, from the field map: where a
/// failure about one of those words points.
const ENTRY_OFFSET: u64 = fm::v2_section_header::offset.offset as u64;
const ENTRY_SIZE_WORD: u64 = fm::v2_section_header::size.offset as u64;
const ENTRY_RECORD_SIZE: u64 = fm::v2_section_header::entry_size.offset as u64;
use crate::nbg::fingerprint::{Fingerprint, Hash256};
use crate::nbg::format::HeaderCrc;
use crate::nbg::format::{attribute, section, v2 as f};
use crate::nbg::read::{Data, compose64, fixed_name, le32};
use serde::Serialize;
use serde_json::json;

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
    pub inputs: Vec<IoRecord>,
    /// The output section's records.
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
    /// `layers`, `operations`, `sh_operations`, `patches` (see `parse::records`).
    #[serde(flatten)]
    pub records: super::records::Records,
    /// The final 512 bytes the runtime copies.
    pub connection_region: ConnectionRegion,
    /// Hash of the layout with payload bytes left out (see the module note).
    pub structural_signature: Hash256,
    /// Relations observed across the proprietary corpus; reported, never enforced.
    pub corpus_invariants: Vec<Invariant>,
}

/// The 48-byte v2 header at file offset 0.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    /// `VPMN` (offset 0x00).
    pub magic: &'static str,
    /// The version word (offset 0x04), `0x00020000`.
    pub version: u32,
    /// The target (product, CID) word (offset 0x08); recorded, not validated.
    pub target: u32,
    /// Compatibility alias of `target` used by runtime diagnostics.
    pub product: u32,
    /// Public name `crc_sum`; `crc32` is the parser key.
    pub crc_sum: u32,
    /// The same value as `crc_sum`.
    pub crc32: u32,
    /// Declared file size, low word (offset 0x10).
    pub declared_file_size_low: u32,
    /// Declared file size, high word (offset 0x14).
    pub declared_file_size_high: u32,
    /// The two words composed; must equal the file size.
    pub declared_file_size: u64,
    /// File offset of the sub-header (offset 0x18).
    pub sub_header_offset: u32,
    /// Sub-header size in bytes (offset 0x1c).
    pub sub_header_size: u32,
    /// Number of sub-headers (offset 0x20); exactly one is accepted.
    pub sub_header_count: u32,
    /// Bit 0 of the class word (offset 0x24).
    pub class: u32,
    /// The reserved header bits and words.
    pub reserved: HeaderReserved,
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

/// The 12-byte sub-header: where the section directory lies.
#[derive(Clone, Debug, Serialize)]
pub struct SubHeader {
    /// File offset of the sub-header.
    pub offset: u64,
    /// File offset of the section directory.
    pub section_headers_offset: u32,
    /// Bytes per directory entry (44).
    pub section_header_size: u32,
    /// Number of directory entries.
    pub section_header_count: u32,
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

/// The 220-byte network-info section (35).
#[derive(Clone, Debug, Serialize)]
pub struct NetworkInfo {
    /// File offset of the section.
    pub offset: u64,
    /// The NUL-terminated network name (+0x00, 64 bytes).
    pub name: String,
    /// Bytes after the name's NUL, re-encoded exactly (JSON hex, only when non-zero).
    #[serde(skip_serializing_if = "crate::nbg::read::NameTail::is_zero")]
    pub name_trailing_bytes: crate::nbg::read::NameTail,
    /// Declared inputs (+0x40).
    pub input_count: u32,
    /// Declared outputs (+0x44).
    pub output_count: u32,
    /// Declared layers (+0x48).
    pub layer_count: u32,
    /// Declared absolute operations (`abs_op_count`, +0x4c).
    pub absolute_operation_count: u32,
    /// Declared operations (+0x50).
    pub operation_count: u32,
    /// Cores (+0x54).
    pub core_count: u32,
    /// Address width in bits (+0x58).
    pub address_width: u32,
    /// The attribute bitfield (+0x5c), decoded.
    pub attribute: Attribute,
    /// The 31 vendor-reserved words (+0x60).
    pub vsi_reserved: VsiReserved,
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
    fn new(raw: u32) -> Self {
        let [ppu, nn, tp, dma, reserved] = ATTRIBUTE_PARTS.map(|p| p.get(u64::from(raw)) as u32);
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

    /// The raw word packed again from the decoded parts (the round trip's encoder).
    pub fn parts(&self) -> [u64; 5] {
        [
            u64::from(self.change_ppu_param),
            u64::from(self.nn_command_size_code),
            u64::from(self.tp_command_size_code),
            u64::from(self.dma_support_code),
            u64::from(self.reserved_bits),
        ]
    }
}

/// The attribute word's parts in field-map order: change PPU parameter, NN and TP command size
/// codes, DMA support code, reserved bits (a wrong count does not build).
const ATTRIBUTE_PARTS: [fm::Part; 5] = {
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
    /// The words themselves, for the round trip (not part of the document).
    #[serde(skip)]
    pub raw: Vec<u32>,
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
}

/// One DYNAIO table entry: an (offset, size) range of the region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DynaioEntry {
    /// Region-relative offset.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
}

/// A relation observed across the corpus, checked on this file: reported, never enforced.
#[derive(Clone, Debug, Serialize)]
pub struct Invariant {
    /// The relation's stable name.
    pub name: &'static str,
    /// What the corpus shows.
    pub expected: String,
    /// What this file has.
    pub observed: String,
    /// Whether this file agrees.
    pub holds: bool,
}

impl<'data> NbgV2<'data> {
    /// The section of a type, if present (types are unique in a valid graph).
    pub fn section(&self, kind: u32) -> Option<&Section> {
        self.sections.iter().find(|s| s.kind == kind)
    }

    /// The payload bytes of `s` (a section of this graph parsed from memory).
    pub fn payload(&self, s: &Section) -> &'data [u8] {
        &self.bytes[s.offset as usize..s.end() as usize]
    }
}

const HEADER_END: u64 = f::HEADER_SIZE as u64;

pub(super) fn parse<'d>(
    data: Data<'d>,
    rules: &'static crate::nbg::format::V2Rules,
    opts: Options,
) -> Result<NbgV2<'d>, Failure> {
    let file_size = data.len();

    // Envelope and header.
    let h = data.slice(0, HEADER_END, "the 48-byte v2 header")?;
    let header = decode_header(&h)?;
    if header.declared_file_size != file_size {
        return fail(
            Code::DeclaredSizeMismatch,
            f::OFF_TOTAL_SIZE_LOW as u64,
            format!(
                "header declares {} bytes but the file has {file_size}",
                header.declared_file_size
            ),
        );
    }

    // Sub-header.
    if header.sub_header_count != f::SUB_HEADER_COUNT {
        return fail(
            Code::SubHeaderCount,
            f::OFF_SUB_HEADER_COUNT as u64,
            format!(
                "sub-header count is {}; exactly one graph is supported",
                header.sub_header_count
            ),
        );
    }
    if header.sub_header_size != f::SUB_HEADER_SIZE {
        return fail(
            Code::SubHeaderGeometry,
            f::OFF_SUB_HEADER_SIZE as u64,
            format!(
                "sub-header size is {}; the v2 sub-header is {} bytes",
                header.sub_header_size,
                f::SUB_HEADER_SIZE
            ),
        );
    }
    let sub_offset = u64::from(header.sub_header_offset);
    if sub_offset < HEADER_END {
        return fail(
            Code::SubHeaderGeometry,
            f::OFF_SUB_HEADER_OFFSET as u64,
            format!("sub-header offset 0x{sub_offset:x} lies inside the 48-byte header"),
        );
    }
    let sub = data.slice(sub_offset, u64::from(f::SUB_HEADER_SIZE), "the sub-header")?;
    let sv = super::view(&fm::v2_sub_header::RECORD, &sub, sub_offset)?;
    let sub_header = SubHeader {
        offset: sub_offset,
        section_headers_offset: sv.u32(&fm::v2_sub_header::section_headers_offset),
        section_header_size: sv.u32(&fm::v2_sub_header::section_header_size),
        section_header_count: sv.u32(&fm::v2_sub_header::section_header_count),
    };
    let sub_end = sub_offset + u64::from(f::SUB_HEADER_SIZE);

    // Directory: size, count limit, then the table's own placement.
    if sub_header.section_header_size != f::SECTION_HEADER_SIZE {
        return fail(
            Code::SectionHeaderSize,
            sub_offset + fm::v2_sub_header::section_header_size.offset as u64,
            format!(
                "section header size is {}; v2 section headers are {} bytes",
                sub_header.section_header_size,
                f::SECTION_HEADER_SIZE
            ),
        );
    }
    let count = sub_header.section_header_count;
    if count > f::MAX_SECTIONS {
        return fail(
            Code::SectionCountLimit,
            sub_offset + fm::v2_sub_header::section_header_count.offset as u64,
            format!(
                "{count} section headers; at most {} are allowed",
                f::MAX_SECTIONS
            ),
        );
    }
    let dir_offset = u64::from(sub_header.section_headers_offset);
    let dir_len = u64::from(count) * u64::from(f::SECTION_HEADER_SIZE);
    let dir_end = dir_offset + dir_len;
    let structural = [
        (0, HEADER_END, "header"),
        (sub_offset, sub_end, "sub-header"),
    ];
    if dir_len > 0
        && structural
            .iter()
            .any(|&(s, e, _)| dir_offset < e && s < dir_end)
    {
        return fail(
            Code::SubHeaderGeometry,
            sub_offset,
            format!(
                "section directory [0x{dir_offset:x}, 0x{dir_end:x}) overlaps the header or sub-header"
            ),
        );
    }
    let dir = data.slice(dir_offset, dir_len, "the section directory")?;
    let raw = read_directory(&dir, dir_offset)?;

    // Directory bounds, overlap, duplicates.
    for s in &raw {
        if s.offset
            .checked_add(s.size)
            .is_none_or(|end| end > file_size)
        {
            return fail(
                Code::SectionOutOfBounds,
                s.header_offset + ENTRY_OFFSET,
                format!(
                    "section {} ({}) spans [0x{:x}, +0x{:x}) beyond the {file_size}-byte file",
                    s.index, s.type_name, s.offset, s.size
                ),
            );
        }
    }
    check_overlap(&raw, &structural, (dir_offset, dir_end))?;
    for (i, s) in raw.iter().enumerate() {
        if let Some(first) = raw[..i].iter().find(|p| p.kind == s.kind) {
            return fail(
                Code::DuplicateSection,
                s.header_offset,
                format!(
                    "section type {} ({}) appears at directory entries {} and {}",
                    s.kind, s.type_name, first.index, s.index
                ),
            );
        }
    }

    // A network needs its I/O tables and its network info: without them there is no graph to
    // describe, and every later tool (image, diff, sweep) would have to guess.
    for kind in [section::INPUT, section::OUTPUT, section::NETWORK_INFO] {
        if !raw.iter().any(|s| s.kind == kind) {
            return fail(
                Code::SectionMissing,
                dir_offset,
                format!(
                    "the directory has no {} section, which every network needs",
                    section::name(kind).unwrap_or("?")
                ),
            );
        }
    }

    // Payload fingerprints come after the records: they cannot fail, and a file whose records
    // are invalid is refused before its payload is read.
    let mut sections: Vec<Section> = raw
        .into_iter()
        .map(|s| s.finish(Fingerprint::crc_only(0)))
        .collect();
    let find = |sections: &[Section], kind| sections.iter().find(|s| s.kind == kind).cloned();

    // Records.
    let inputs = match find(&sections, section::INPUT) {
        Some(s) => decode_io_section(&s, &data)?,
        None => Vec::new(),
    };
    let outputs = match find(&sections, section::OUTPUT) {
        Some(s) => decode_io_section(&s, &data)?,
        None => Vec::new(),
    };
    let network_info = find(&sections, section::NETWORK_INFO)
        .map(|s| decode_network_info(&s, &data))
        .transpose()?;
    let memory_pool_bytes = find(&sections, section::MEMORY_POOL)
        .map(|s| {
            memory_record(&s, f::MEMORY_POOL_SIZE, &data)
                .map(|p| compose64(le32(&p, 0), le32(&p, 4)))
        })
        .transpose()?;
    let vip_sram_bytes = find(&sections, section::VIP_SRAM)
        .map(|s| memory_record(&s, f::VIP_SRAM_SIZE, &data).map(|p| le32(&p, 0)))
        .transpose()?;
    let axi_sram_bytes = find(&sections, section::AXI_SRAM)
        .map(|s| memory_record(&s, f::AXI_SRAM_SIZE, &data).map(|p| le32(&p, 0)))
        .transpose()?;
    let checksum_section = find(&sections, section::CHECKSUM);
    if let Some(s) = &checksum_section {
        if s.size % f::CHECKSUM_RECORD_SIZE != 0 {
            return fail(
                Code::ChecksumRecordSize,
                s.header_offset + ENTRY_SIZE_WORD,
                format!(
                    "checksum section is {} bytes, not a multiple of {}",
                    s.size,
                    f::CHECKSUM_RECORD_SIZE
                ),
            );
        }
    }

    // Cross-checks.
    if let Some(n) = &network_info {
        for (declared, actual, at, what) in [
            (
                n.input_count,
                inputs.len(),
                fm::v2_network_info::input_count.offset,
                "input",
            ),
            (
                n.output_count,
                outputs.len(),
                fm::v2_network_info::output_count.offset,
                "output",
            ),
        ] {
            if declared as usize != actual {
                return fail(
                    Code::MetadataCountMismatch,
                    n.offset + at as u64,
                    format!(
                        "network info declares {declared} {what}s but the {what} section holds {actual} records"
                    ),
                );
            }
        }
    }

    // Layers, operations, SH operations, patches and their references.
    let records = records(&data, &sections, network_info.as_ref(), rules)?;

    // Payload fingerprints, one pass over the file; their CRCs feed every checksum below
    // (with the bytes around the CRC field where the version's rule covers the whole file).
    let field = f::OFF_CRC_SUM as u64;
    let around_field: Vec<(u64, u64)> = match rules.header_crc {
        HeaderCrc::WholeFileFieldZeroed => vec![(0, field), (field + 4, file_size)],
        HeaderCrc::SectionPayloads => vec![],
    };
    let fingerprints = super::fingerprint_ranges(
        &data,
        &sections
            .iter()
            .map(|s| (s.offset, s.end()))
            .collect::<Vec<_>>(),
        &around_field,
        opts,
    );
    let whole_file = match fingerprints.crcs[..] {
        [before, after] => Some(crc_rules::field_zeroed_from_parts(
            before,
            after,
            file_size - field - 4,
        )),
        _ => None,
    };
    let file_sha256 = fingerprints.file_sha256;
    for (s, f) in sections.iter_mut().zip(fingerprints.ranges) {
        s.fingerprint = f;
    }

    // Section checksums.
    let section_checksums = match &checksum_section {
        Some(s) => verify_section_checksums(s, &data, &sections)?,
        None => Vec::new(),
    };

    // File checksum.
    let structure_bytes = HEADER_END + u64::from(f::SUB_HEADER_SIZE) + dir_len;
    let file_checksum = file_checksum(&data, &header, &sections, structure_bytes, whole_file)?;

    // DYNAIO.
    let dynamic_io = decode_dynaio(
        &data,
        find(&sections, section::DYNAIO).as_ref(),
        find(&sections, section::DYNAIO_TABLE).as_ref(),
    )?;

    let connection_region = ConnectionRegion::new(
        &data,
        sections.iter().map(|s| (s.offset, s.end(), s.type_name)),
        opts,
    );
    let mut graph = NbgV2 {
        bytes: data.memory().unwrap_or(&[]),
        format: "nbg-v2",
        file: FileFacts {
            size: file_size,
            sha256: file_sha256,
        },
        header,
        sub_header,
        sections,
        inputs,
        outputs,
        network_info,
        memory_pool_bytes,
        vip_sram_bytes,
        axi_sram_bytes,
        section_checksums,
        file_checksum,
        dynamic_io,
        records,
        connection_region,
        structural_signature: Hash256::default(),
        corpus_invariants: Vec::new(),
    };
    // No rule reads the signature: check-only mode (the sweep) leaves it zero.
    if opts.fingerprints {
        graph.structural_signature = structural_signature(&graph);
    }
    graph.corpus_invariants = corpus_invariants(&graph);
    Ok(graph)
}

fn decode_header(h: &[u8]) -> Result<Header, Failure> {
    use crate::nbg::fieldmap::v2_header as fh;
    let v = super::view(&fh::RECORD, h, 0)?;
    let low = v.u32(&fh::total_size_low);
    let high = v.u32(&fh::total_size_high);
    let class_word = v.uint(&fh::class_word);
    let [class, reserved1] = [0, 1].map(|i| fh::class_word.parts[i].get(class_word) as u32);
    let target = v.u32(&fh::target);
    let crc = v.u32(&fh::crc_sum);
    Ok(Header {
        magic: "VPMN",
        version: v.u32(&fh::version),
        target,
        product: target,
        crc_sum: crc,
        crc32: crc,
        declared_file_size_low: low,
        declared_file_size_high: high,
        declared_file_size: compose64(low, high),
        sub_header_offset: v.u32(&fh::sub_header_offset),
        sub_header_size: v.u32(&fh::sub_header_size),
        sub_header_count: v.u32(&fh::sub_header_count),
        class,
        reserved: HeaderReserved {
            class_word_reserved_bits: reserved1,
            reserved2: v.u32(&fh::reserved2),
            reserved3: v.u32(&fh::reserved3),
        },
    })
}

/// A directory entry before its payload has been fingerprinted.
struct RawSection {
    index: usize,
    header_offset: u64,
    kind: u32,
    type_name: &'static str,
    offset: u64,
    size: u64,
    load_address: u64,
    alignment: u32,
    entry_size: u32,
    reserved_words: [u32; 2],
}

impl RawSection {
    fn finish(self, fingerprint: Fingerprint) -> Section {
        Section {
            index: self.index,
            header_offset: self.header_offset,
            kind: self.kind,
            type_name: self.type_name,
            offset: self.offset,
            size: self.size,
            load_address: self.load_address,
            alignment: self.alignment,
            aligned: self.alignment == 0 || self.offset % u64::from(self.alignment) == 0,
            entry_size: self.entry_size,
            stride: self.entry_size,
            reserved_words: self.reserved_words,
            decoded: crate::nbg::holds::v2(self.kind).is_some(),
            fingerprint,
        }
    }
}

fn read_directory(dir: &[u8], dir_offset: u64) -> Result<Vec<RawSection>, Failure> {
    dir.chunks_exact(f::SECTION_HEADER_SIZE as usize)
        .enumerate()
        .map(|(index, e)| {
            use fm::v2_section_header as sh;
            let header_offset = dir_offset + index as u64 * u64::from(f::SECTION_HEADER_SIZE);
            let v = super::view(&sh::RECORD, e, header_offset)?;
            let kind = v.u32(&sh::kind);
            let Some(type_name) = section::name(kind) else {
                return fail(
                    Code::UnknownSectionType,
                    header_offset,
                    format!(
                        "directory entry {index} has section type {kind}; v2 defines 0 to {}",
                        section::MAX_ID
                    ),
                );
            };
            Ok(RawSection {
                index,
                header_offset,
                kind,
                type_name,
                offset: v.uint(&sh::offset),
                size: v.uint(&sh::size),
                load_address: v.uint(&sh::load_address),
                alignment: v.u32(&sh::alignment),
                entry_size: v.u32(&sh::entry_size),
                reserved_words: [
                    v.word(&sh::reserved_words, 0),
                    v.word(&sh::reserved_words, 1),
                ],
            })
        })
        .collect()
}

/// No section may overlap another, the header, the sub-header or the directory.
fn check_overlap(
    raw: &[RawSection],
    structural: &[(u64, u64, &str)],
    directory: (u64, u64),
) -> Result<(), Failure> {
    // (start, end, directory index or None for structure, label)
    let mut ranges: Vec<(u64, u64, Option<&RawSection>, &str)> = structural
        .iter()
        .map(|&(s, e, l)| (s, e, None, l))
        .chain(std::iter::once((
            directory.0,
            directory.1,
            None,
            "section directory",
        )))
        .chain(
            raw.iter()
                .map(|s| (s.offset, s.offset + s.size, Some(s), s.type_name)),
        )
        .filter(|r| r.1 > r.0)
        .collect();
    ranges.sort_by_key(|r| (r.0, r.1));
    for pair in ranges.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.0 < a.1 {
            // Report at the header of a section involved (the later one when both are); two
            // structural ranges, which the header checks keep apart, at the later one's start.
            let at = b.2.or(a.2).map_or(b.0, |s| s.header_offset + ENTRY_OFFSET);
            return fail(
                Code::SectionOverlap,
                at,
                format!(
                    "{} [0x{:x}, 0x{:x}) overlaps {} [0x{:x}, 0x{:x})",
                    b.3, b.0, b.1, a.3, a.0, a.1
                ),
            );
        }
    }
    Ok(())
}

const IO_LAYOUT: IoLayout = {
    use fm::v2_io_record as io;
    IoLayout {
        record: io::RECORD,
        dim_count: io::dimension_count,
        dims: io::dimensions,
        data_format: io::data_format,
        data_type: io::data_type,
        quant_format: io::quant_format,
        quant_fields: &[io::quant_words],
        quant: QuantSlots {
            words: 2,
            fixed_point: 0,
            scale: 0,
            zero_point: 1,
        },
        name: Some(io::name),
    }
};

/// The v2 I/O record layout (for the round trip's encoder).
pub fn io_layout() -> &'static IoLayout {
    &IO_LAYOUT
}

fn decode_io_section(s: &Section, data: &Data<'_>) -> Result<Vec<IoRecord>, Failure> {
    if s.size % f::IO_RECORD_SIZE != 0 || u64::from(s.entry_size) != f::IO_RECORD_SIZE {
        return fail(
            Code::IoRecordSize,
            s.header_offset + ENTRY_SIZE_WORD,
            format!(
                "{} is {} bytes with entry size {}; I/O records are {} bytes",
                s.type_name,
                s.size,
                s.entry_size,
                f::IO_RECORD_SIZE
            ),
        );
    }
    let count = s.size / f::IO_RECORD_SIZE;
    if count > f::IO_MAX_RECORDS {
        return fail(
            Code::IoCountLimit,
            s.header_offset + ENTRY_SIZE_WORD,
            format!(
                "{} holds {count} records; at most {} are allowed",
                s.type_name,
                f::IO_MAX_RECORDS
            ),
        );
    }
    // At most 256 records of 104 bytes: read only now that the count is bounded.
    data.range(s.offset, s.end())
        .chunks_exact(IO_LAYOUT.size())
        .enumerate()
        .map(|(i, r)| decode_io(r, i, s.offset + (i * IO_LAYOUT.size()) as u64, &IO_LAYOUT))
        .collect()
}

fn decode_network_info(s: &Section, data: &Data<'_>) -> Result<NetworkInfo, Failure> {
    if s.size != f::NETWORK_INFO_SIZE {
        return fail(
            Code::NetworkInfoSize,
            s.header_offset + ENTRY_SIZE_WORD,
            format!(
                "network info is {} bytes; it must be {}",
                s.size,
                f::NETWORK_INFO_SIZE
            ),
        );
    }
    use fm::v2_network_info as ni;
    let p = &*data.range(s.offset, s.end());
    let v = super::view(&ni::RECORD, p, s.offset)?;
    let Some((name, name_trailing_bytes)) = fixed_name(v.bytes(&ni::name)) else {
        return fail(
            Code::InvalidName,
            s.offset,
            "network name is not NUL-terminated strict UTF-8 within 64 bytes",
        );
    };
    let reserved = v.bytes(&ni::vsi_reserved);
    Ok(NetworkInfo {
        offset: s.offset,
        name: name.to_string(),
        name_trailing_bytes,
        input_count: v.u32(&ni::input_count),
        output_count: v.u32(&ni::output_count),
        layer_count: v.u32(&ni::layer_count),
        absolute_operation_count: v.u32(&ni::absolute_operation_count),
        operation_count: v.u32(&ni::operation_count),
        core_count: v.u32(&ni::core_count),
        address_width: v.u32(&ni::address_width),
        attribute: Attribute::new(v.u32(&ni::attribute)),
        vsi_reserved: VsiReserved {
            words: ni::vsi_reserved.width / 4,
            nonzero_words: reserved.chunks_exact(4).filter(|w| w != &[0; 4]).count(),
            sha256: Hash256::of(reserved),
            raw: v.words(&ni::vsi_reserved),
        },
    })
}

fn memory_record<'a>(
    s: &Section,
    expected: u64,
    data: &Data<'a>,
) -> Result<std::borrow::Cow<'a, [u8]>, Failure> {
    if s.size != expected {
        return fail(
            Code::MemoryRecordSize,
            s.header_offset + ENTRY_SIZE_WORD,
            format!("{} is {} bytes; it must be {expected}", s.type_name, s.size),
        );
    }
    Ok(data.range(s.offset, s.end()))
}

fn verify_section_checksums(
    s: &Section,
    data: &Data<'_>,
    sections: &[Section],
) -> Result<Vec<SectionChecksum>, Failure> {
    // Every record names a distinct present section, so a valid table has at most one record
    // per section; the walk stops at the first record beyond that.
    let mut out: Vec<SectionChecksum> = Vec::with_capacity(sections.len());
    data.visit(s.offset, s.end(), f::CHECKSUM_RECORD_SIZE, |at, piece| {
        for (j, r) in piece
            .chunks_exact(f::CHECKSUM_RECORD_SIZE as usize)
            .enumerate()
        {
            let offset = at + j as u64 * f::CHECKSUM_RECORD_SIZE;
            let i = (offset - s.offset) / f::CHECKSUM_RECORD_SIZE;
            check_record(offset, i, r, sections, &mut out)?;
        }
        Ok(())
    })?;
    Ok(out)
}

fn check_record(
    offset: u64,
    i: u64,
    r: &[u8],
    sections: &[Section],
    out: &mut Vec<SectionChecksum>,
) -> Result<(), Failure> {
    let (kind, stored) = (le32(r, 0), le32(r, 4));
    let Some(target) = sections.iter().find(|t| t.kind == kind) else {
        return fail(
            Code::SectionChecksumMissing,
            offset,
            format!("checksum record {i} names section type {kind}, which is not present"),
        );
    };
    if out.iter().any(|c| c.section_type == kind) {
        return fail(
            Code::SectionChecksumDuplicate,
            offset,
            format!(
                "checksum record {i} names section type {kind} ({}) again",
                target.type_name
            ),
        );
    }
    let computed = target.fingerprint.crc32;
    if computed != stored {
        return fail(
            Code::SectionChecksumMismatch,
            offset + fm::v2_checksum_record::checksum_value.offset as u64,
            format!(
                "checksum for {} is 0x{stored:08x} but the section's CRC-32 is 0x{computed:08x}",
                target.type_name
            ),
        );
    }
    out.push(SectionChecksum {
        offset,
        section_type: kind,
        section_type_name: target.type_name,
        stored,
        computed,
        matches: true,
    });
    Ok(())
}

/// The header CRC by the version's rule: `whole_file` is the whole-file-field-zeroed CRC where
/// the rule is that one.
fn file_checksum(
    data: &Data<'_>,
    header: &Header,
    sections: &[Section],
    structure_bytes: u64,
    whole_file: Option<u32>,
) -> Result<FileChecksum, Failure> {
    let listing: Vec<_> = sections
        .iter()
        .map(|s| (s.kind, s.offset, s.size, s.fingerprint.crc32))
        .collect();
    // Section checksums passed, so section 40 holds at most one record per section.
    let directory_order = crc_rules::combine_v2_file_crc(&listing, |offset, size| {
        crate::nbg::fingerprint::crc32(&crc_rules::v2_normalized_checksum_payload(
            &data.range(offset, offset + size),
        ))
    });
    let covered: u64 = sections.iter().map(|s| s.size).sum();
    let normalized = sections
        .iter()
        .find(|s| s.kind == section::CHECKSUM)
        .map_or(0, |s| s.size / f::CHECKSUM_RECORD_SIZE);
    let (computed, scope, what) = match whole_file {
        Some(c) => (
            c,
            crc_rules::WHOLE_FILE_FIELD_ZEROED,
            "whole-file CRC (field read as zero)",
        ),
        None => (
            directory_order,
            "section-payloads-in-directory-order",
            "directory-order section CRC",
        ),
    };
    if computed != header.crc_sum {
        return fail(
            Code::FileChecksumMismatch,
            f::OFF_CRC_SUM as u64,
            format!(
                "header crc_sum is 0x{:08x} but the {what} is 0x{computed:08x}",
                header.crc_sum
            ),
        );
    }
    let (covered, gaps, normalized) = match whole_file {
        Some(_) => (data.len() - 4, 0, 0),
        None => (covered, data.len() - covered - structure_bytes, normalized),
    };
    Ok(FileChecksum {
        algorithm: "crc32-ieee",
        initial_value: "zero",
        scope,
        covered_section_bytes: covered,
        excluded_alignment_gap_bytes: gaps,
        normalized_checksum_value_words: normalized,
        recorded_crc32: header.crc_sum,
        computed_crc32: computed,
        directory_order_crc32: directory_order,
        matches: true,
    })
}

fn decode_dynaio(
    data: &Data<'_>,
    region: Option<&Section>,
    table: Option<&Section>,
) -> Result<Option<DynamicIo>, Failure> {
    let (region, table) = match (region, table) {
        (None, None) => return Ok(None),
        (Some(r), Some(t)) => (r, t),
        (Some(one), None) | (None, Some(one)) => {
            return fail(
                Code::DynaioUnpaired,
                one.header_offset,
                format!(
                    "{} is present without its pair; sections 20 and 26 come together",
                    one.type_name
                ),
            );
        }
    };
    if table.size == 0 || table.size % f::DYNAIO_RECORD_SIZE != 0 {
        return fail(
            Code::DynaioTableSize,
            table.header_offset + ENTRY_SIZE_WORD,
            format!(
                "DYNAIO table is {} bytes; it must be a positive multiple of {}",
                table.size,
                f::DYNAIO_RECORD_SIZE
            ),
        );
    }
    if region.size % f::DYNAIO_ALIGN != 0 {
        return fail(
            Code::DynaioRegionSize,
            region.header_offset + ENTRY_SIZE_WORD,
            format!(
                "DYNAIO region is {} bytes, not a multiple of {}",
                region.size,
                f::DYNAIO_ALIGN
            ),
        );
    }
    // The count is bounded by the table's in-file size; the table is read in pieces.
    let mut entries = Vec::new();
    let mut cursor = 0u64;
    let mut padding = 0u64;
    data.visit(
        table.offset,
        table.end(),
        f::DYNAIO_RECORD_SIZE,
        |start, piece| {
            for (j, r) in piece
                .chunks_exact(f::DYNAIO_RECORD_SIZE as usize)
                .enumerate()
            {
                let at = start + j as u64 * f::DYNAIO_RECORD_SIZE;
                let i = (at - table.offset) / f::DYNAIO_RECORD_SIZE;
                let e = dynaio_entry(data, region, at, i, r, cursor)?;
                padding += e.offset - cursor;
                cursor = e.offset + e.size;
                entries.push(e);
            }
            Ok(())
        },
    )?;
    check_zero(data, region, cursor, region.size)?;
    padding += region.size - cursor;
    Ok(Some(DynamicIo {
        table_offset: table.offset,
        region_offset: region.offset,
        entry_count: entries.len() as u64,
        region_bytes: region.size,
        mapped_payload_bytes: region.size - padding,
        padding_bytes: padding,
        entries,
    }))
}

/// One DYNAIO record at `at` (entry `i`), checked, and the region bytes before it checked zero.
fn dynaio_entry(
    data: &Data<'_>,
    region: &Section,
    at: u64,
    i: u64,
    r: &[u8],
    cursor: u64,
) -> Result<DynaioEntry, Failure> {
    let e = DynaioEntry {
        offset: u64::from(le32(r, 0)),
        size: u64::from(le32(r, 4)),
    };
    let problem = if e.size == 0 {
        Some("has size zero")
    } else if e.offset % f::DYNAIO_ALIGN != 0 {
        Some("is not 64-byte aligned")
    } else if e.offset < cursor {
        Some("overlaps or precedes the previous entry")
    } else if e.offset + e.size > region.size {
        Some("leaves the DYNAIO region")
    } else {
        None
    };
    if let Some(problem) = problem {
        return fail(
            Code::DynaioEntryInvalid,
            at,
            format!(
                "DYNAIO entry {i} (offset 0x{:x}, size {}) {problem} (region {} bytes)",
                e.offset, e.size, region.size
            ),
        );
    }
    check_zero(data, region, cursor, e.offset)?;
    Ok(e)
}

/// Unmapped DYNAIO bytes (region-relative `[start, end)`) must be zero; the failure names the
/// first nonzero byte.
fn check_zero(data: &Data<'_>, region: &Section, start: u64, end: u64) -> Result<(), Failure> {
    data.visit(
        region.offset + start,
        region.offset + end,
        1,
        |at, gap| match gap.iter().position(|&b| b != 0) {
            None => Ok(()),
            Some(i) => {
                let at = at + i as u64;
                fail(
                    Code::DynaioPaddingNonzero,
                    at,
                    format!(
                        "unmapped DYNAIO byte at region offset 0x{:x} is 0x{:02x}, not zero",
                        at - region.offset,
                        gap[i]
                    ),
                )
            }
        },
    )
}

fn structural_signature(g: &NbgV2<'_>) -> Hash256 {
    let io = super::io_signature;
    let doc = json!({
        "format": g.format,
        "version": g.header.version,
        "target": g.header.target,
        "declared_file_size": g.header.declared_file_size,
        "class_word": [g.header.class, g.header.reserved.class_word_reserved_bits],
        "reserved": [g.header.reserved.reserved2, g.header.reserved.reserved3],
        "sub_header": [g.sub_header.offset, g.sub_header.section_headers_offset,
                       g.sub_header.section_header_size, g.sub_header.section_header_count],
        "sections": g.sections.iter().map(|s| json!([
            s.kind, s.offset, s.size, s.load_address, s.alignment, s.entry_size, s.reserved_words
        ])).collect::<Vec<_>>(),
        "inputs": io(&g.inputs),
        "outputs": io(&g.outputs),
        "network_info": g.network_info.as_ref().map(|n| json!([
            n.name, n.input_count, n.output_count, n.layer_count, n.absolute_operation_count,
            n.operation_count, n.core_count, n.address_width, n.attribute.raw
        ])),
        "memory": [g.memory_pool_bytes, g.vip_sram_bytes.map(u64::from), g.axi_sram_bytes.map(u64::from)],
        "dynamic_io": g.dynamic_io.as_ref().map(|d| d.entries.iter().map(|e| [e.offset, e.size]).collect::<Vec<_>>()),
    });
    Hash256::of(doc.to_string().as_bytes())
}

/// Relations that held across the proprietary Wave corpus. Not format rules.
fn corpus_invariants(g: &NbgV2<'_>) -> Vec<Invariant> {
    let mut out = Vec::new();
    let mut check = |name, expected: &str, observed: String, holds: bool| {
        out.push(Invariant {
            name,
            expected: expected.into(),
            observed,
            holds,
        });
    };
    let target = g.header.target;
    check(
        "target",
        "0x1000000e",
        format!("0x{target:08x}"),
        target == 0x1000_000e,
    );
    let n = g.sections.len();
    check(
        "section-count",
        "18 or 20",
        n.to_string(),
        n == 18 || n == 20,
    );
    let vip = opt(g.vip_sram_bytes);
    check("vip-sram-bytes", "262144", vip.clone(), vip == "262144");
    if let Some(info) = &g.network_info {
        let raw = info.attribute.raw;
        check(
            "network-attribute",
            "0x0000000a",
            format!("0x{raw:08x}"),
            raw == 0x0a,
        );
        check(
            "core-count",
            "1",
            info.core_count.to_string(),
            info.core_count == 1,
        );
        check(
            "address-width",
            "32",
            info.address_width.to_string(),
            info.address_width == 32,
        );
        if let Some(ops) = g.section(section::OPERATIONS).filter(|s| s.entry_size > 0) {
            let saved = (ops.size / u64::from(ops.entry_size)) as i64;
            let delta = i64::from(info.operation_count) - saved;
            check(
                "run-operations-minus-saved",
                "3",
                delta.to_string(),
                delta == 3,
            );
        }
    }
    let mut covered: Vec<u32> = g.section_checksums.iter().map(|c| c.section_type).collect();
    covered.sort_unstable();
    check(
        "checksummed-sections",
        "[7, 8, 19, 21, 24]",
        format!("{covered:?}"),
        covered == [7, 8, 19, 21, 24],
    );
    let r = &g.header.reserved;
    let zero = g.header.class == 0
        && r.class_word_reserved_bits == 0
        && r.reserved2 == 0
        && r.reserved3 == 0;
    check(
        "header-class-and-reserved-zero",
        "true",
        zero.to_string(),
        zero,
    );
    out
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "absent".into(), |v| v.to_string())
}

/// The v2 glue: sections 3, 4, 9 and 10 with their directory entry sizes, the NN/TP command
/// sizes of the network attribute, the load-state (27) and PPU instruction (25) tables.
/// A graph with neither LAYER nor OPERATIONS has no decoded records.
fn records(
    data: &crate::nbg::read::Data<'_>,
    sections: &[Section],
    info: Option<&NetworkInfo>,
    rules: &crate::nbg::format::V2Rules,
) -> Result<super::records::Records, Failure> {
    use super::records::{Tables, as_slice, decode};
    use crate::nbg::format::section;
    use fm::{layer as fl, operation as fo, patch_40bit as fp, sh_operation as fs};
    let find = |kind| sections.iter().find(|s| s.kind == kind);
    // Record sizes are checked before a byte of the section is read.
    let check = |kind, sizes: &[u64]| -> Result<Option<(u64, u64, u64)>, Failure> {
        let Some(s) = find(kind) else {
            return Ok(None);
        };
        let record_size = u64::from(s.entry_size);
        if !sizes.contains(&record_size) || s.size % record_size != 0 {
            return fail(
                Code::TableRecordSize,
                s.header_offset + ENTRY_RECORD_SIZE,
                format!(
                    "{} is {} bytes with entry size {}; its records are {sizes:?} bytes",
                    s.type_name, s.size, s.entry_size
                ),
            );
        }
        Ok(Some((s.offset, s.end(), record_size)))
    };
    let size = |r: &fm::Record| r.size as u64;
    let layer = check(section::LAYER, &[size(&fl::RECORD)])?;
    let operation = check(section::OPERATIONS, &[size(&fo::RECORD)])?;
    let sh = check(section::SH, &[size(&fs::RECORD)])?;
    let patch = check(
        section::PATCH,
        &[size(&fm::patch::RECORD), size(&fp::RECORD)],
    )?;
    if layer.is_none() && operation.is_none() {
        return Ok(super::records::Records::default());
    }
    // Borrowed from a graph in memory; read once, bounded by the section, from a file.
    let read =
        |x: Option<(u64, u64, u64)>| x.map(|(start, end, r)| (start, r, data.range(start, end)));
    let (layer, operation, sh, patch) = (read(layer), read(operation), read(sh), read(patch));
    let entries = |kind| find(kind).map(|s| s.size / 8);
    let commands = |kind, bytes: Option<u32>| {
        Option::zip(find(kind), bytes).map(|(s, b)| s.size / u64::from(b))
    };
    decode(&Tables {
        layer: as_slice(&layer),
        operation: as_slice(&operation),
        sh: as_slice(&sh),
        patch: as_slice(&patch),
        nn_records: commands(section::NN, info.and_then(|i| i.attribute.nn_command_bytes)),
        tp_records: commands(section::TP, info.and_then(|i| i.attribute.tp_command_bytes)),
        state_table: entries(section::LOADSTATE_TABLE).map(|n| ("load-state table", n)),
        ppu_instr_entries: entries(section::PPU_INSTR_TABLE),
        no_layer: rules.no_layer,
        layer_operations_unbounded: !rules.layer_operations_bounded,
        ..Tables::default()
    })
}
