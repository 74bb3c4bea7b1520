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

mod model;
mod sections;
mod signature;

pub use model::*;
pub use sections::*;
use signature::*;

use super::command_tables::{self, CommandStreams, NnCommand, TpCommand};
use super::{ConnectionRegion, FileFacts, IoLayout, IoRecord, Options, QuantSlots, decode_io};
use crate::nbg::crc_rules;
use crate::nbg::failure::{Code, Failure, collect_records, fail};
use crate::nbg::fieldmap as fm;

/// Field offsets inside a directory entry and the sub-header, from the field map: where a
/// failure about one of those words points.
const ENTRY_OFFSET: u64 = fm::v2_section_header::offset.offset as u64;
const ENTRY_SIZE_WORD: u64 = fm::v2_section_header::size.offset as u64;
const ENTRY_RECORD_SIZE: u64 = fm::v2_section_header::entry_size.offset as u64;
use crate::digest::Hash256;
use crate::nbg::fingerprint::Fingerprint;
use crate::nbg::format::HeaderCrc;
use crate::nbg::format::{attribute, section, v2 as f};
use crate::nbg::read::{Data, compose64, le32};
use serde::Serialize;
use serde_json::json;

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
    if header.declared_file_size() != file_size {
        return fail(
            Code::DeclaredSizeMismatch,
            f::OFF_TOTAL_SIZE_LOW as u64,
            format!(
                "header declares {} bytes but the file has {file_size}",
                header.declared_file_size()
            ),
        );
    }

    // Sub-header.
    if header.sub_header_count() != f::SUB_HEADER_COUNT {
        return fail(
            Code::SubHeaderCount,
            f::OFF_SUB_HEADER_COUNT as u64,
            format!(
                "sub-header count is {}; exactly one graph is supported",
                header.sub_header_count()
            ),
        );
    }
    if header.sub_header_size() != f::SUB_HEADER_SIZE {
        return fail(
            Code::SubHeaderGeometry,
            f::OFF_SUB_HEADER_SIZE as u64,
            format!(
                "sub-header size is {}; the v2 sub-header is {} bytes",
                header.sub_header_size(),
                f::SUB_HEADER_SIZE
            ),
        );
    }
    let sub_offset = u64::from(header.sub_header_offset());
    if sub_offset < HEADER_END {
        return fail(
            Code::SubHeaderGeometry,
            f::OFF_SUB_HEADER_OFFSET as u64,
            format!("sub-header offset 0x{sub_offset:x} lies inside the 48-byte header"),
        );
    }
    let sub = data.slice(sub_offset, u64::from(f::SUB_HEADER_SIZE), "the sub-header")?;
    // The slice is the whole 12-byte sub-header and the record has no string field.
    let sub_header = crate::nbg::decoded::Decoded::read(fm::v2_sub_header::RECORD, &sub)
        .map(|fields| SubHeader {
            offset: sub_offset,
            fields,
        })
        .map_err(|_| super::truncated(&fm::v2_sub_header::RECORD, &sub, sub_offset))?;
    let sub_end = sub_offset + u64::from(f::SUB_HEADER_SIZE);

    // Directory: size, count limit, then the table's own placement.
    if sub_header.section_header_size() != f::SECTION_HEADER_SIZE {
        return fail(
            Code::SectionHeaderSize,
            sub_offset + fm::v2_sub_header::section_header_size.offset as u64,
            format!(
                "section header size is {}; v2 section headers are {} bytes",
                sub_header.section_header_size(),
                f::SECTION_HEADER_SIZE
            ),
        );
    }
    let count = sub_header.section_header_count();
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
    let dir_offset = u64::from(sub_header.section_headers_offset());
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
                n.input_count(),
                inputs.len(),
                fm::v2_network_info::input_count.offset,
                "input",
            ),
            (
                n.output_count(),
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

    // Index tables, then layers, operations, SH operations, patches and their references.
    let index_tables = decode_index_tables(&data, &sections)?;
    // No rule reads the decoded commands (a stream that does not decode is reported, never
    // refused): check-only mode (the sweep) skips them, like the ICD streams below.
    let load_states = opts
        .fingerprints
        .then(|| decode_load_states(&data, &sections, &index_tables))
        .flatten();
    let nn_commands = opts
        .fingerprints
        .then(|| decode_nn_commands(&data, &sections))
        .flatten();
    let tp_commands = opts
        .fingerprints
        .then(|| decode_tp_commands(&data, &sections))
        .flatten();
    let records = records(&data, &sections, network_info.as_ref(), opts)?;
    // Only the patch targets read them, never a rule: check-only mode (the sweep) skips them.
    let icd_streams = opts
        .fingerprints
        .then(|| decode_icd_streams(&data, &sections, &index_tables, &records))
        .flatten();

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
        bytes: data.held().unwrap_or(&[]),
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
        index_tables,
        load_states,
        icd_streams,
        icd_regions: None,
        coef_regions: None,
        ppu_instr_regions: None,
        nn_commands,
        tp_commands,
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
    // What each ICD, COEF_DATA and PPU_INSTR entry holds: no rule reads it, so check-only mode skips it.
    if opts.fingerprints {
        graph.icd_regions = regions(&graph, &data, section::ICD, section::ICDT);
        graph.coef_regions = regions(&graph, &data, section::COEF_DATA, section::COEF_DATA_TABLE);
        graph.ppu_instr_regions =
            regions(&graph, &data, section::PPU_INSTR, section::PPU_INSTR_TABLE);
    }
    // The payload decoders may leave a section opaque (a stream that does not decode).
    let decoded: Vec<bool> = graph.sections.iter().map(|s| graph.decodes(s)).collect();
    for (s, d) in graph.sections.iter_mut().zip(decoded) {
        s.decoded = d;
    }
    Ok(graph)
}

impl NbgV2<'_> {
    /// The check-only parse's records stage again, over `data`: this file with bytes changed
    /// that no other stage reads, so every other stage's result is this graph's.
    pub fn recheck_records(&self, data: Data<'_>) -> Result<(), Failure> {
        let opts = Options {
            fingerprints: false,
        };
        records(&data, &self.sections, self.network_info.as_ref(), opts).map(drop)
    }
}

fn decode_header(h: &[u8]) -> Result<Header, Failure> {
    use crate::nbg::fieldmap::v2_header as fh;
    // The slice is the whole 48-byte header and the record has no string field.
    crate::nbg::decoded::Decoded::read(fh::RECORD, h)
        .map(|fields| Header { fields })
        .map_err(|_| crate::nbg::parse::truncated(&fh::RECORD, h, 0))
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
