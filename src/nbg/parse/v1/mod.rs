//! NBG v1 (`version >> 16 == 1`), the family of every public real file.
//!
//! The fixed part follows the public TIM-VX / VIPLite v1 layout; the (offset, size) entries that
//! newer versions append are decoded from the version the vendor's reader gates each on
//! (`format::v1::ENTRIES`), each labelled `public`, `proved` or `vendor-reader`. Bytes
//! between the decoded fixed part and the first referenced table are an
//! `opaque_fixed_extension`: fingerprinted, never named. A version newer than any with evidence
//! (`layout: bounded-unknown`) reads only the public entries and is bounded by the lowest
//! table they reference; it is refused only when that bound does not exist. Check order: envelope and header,
//! entry bounds and overlap, records, count cross-checks, nested tables. The CRC field is
//! classified and reported, never fatal.
//!
//! The structural signature covers the version, target, file size, header counts, feature
//! word, memory and SRAM fields, every entry's (offset, size), the decoded I/O metadata and the
//! nested-table geometry; it leaves out payload bytes, the CRC field and the reserved areas.

mod model;
mod signature;
mod tables;

pub use model::*;
pub use signature::*;
pub use tables::*;

use super::command_tables::{self, CommandStreams, NnCommand, TpCommand};
use super::{ConnectionRegion, FileFacts, IoLayout, IoRecord, Options, QuantSlots, decode_io};
use crate::digest::Hash256;
use crate::nbg::crc_rules::{self, CrcClass};
use crate::nbg::failure::{Code, Failure, collect_records, fail};
use crate::nbg::fieldmap::{self as fm, v1_fixed as fx};
use crate::nbg::fingerprint::Fingerprint;
use crate::nbg::format::v1 as f;
use crate::nbg::format::v2::IO_MAX_RECORDS;
use crate::nbg::read::{Data, fixed_name, le32};
use serde::Serialize;
use serde_json::json;

const FIXED_HEADER_END: u64 = 0x5c;

pub(super) fn parse(data: Data<'_>, version: u32, opts: Options) -> Result<NbgV1<'_>, Failure> {
    let file_size = data.len();
    if version < f::MIN_VERSION {
        return fail(
            Code::UnsupportedVersion,
            4,
            format!(
                "v1 version 0x{version:08x} is older than 0x{:08x}, the first with the feature database",
                f::MIN_VERSION
            ),
        );
    }
    let layout = f::Layout::of(version);

    // Envelope and header.
    let entries_offset = f::entries_offset(version) as u64;
    let entry_count = f::entry_count(version);
    let fixed_end = entries_offset + 8 * entry_count as u64;
    let fixed = &*data.slice(0, fixed_end, "the v1 fixed part")?;
    let v = super::view(
        &fx::RECORD,
        fixed
            .get(..crate::nbg::read::index(entries_offset))
            .unwrap_or_default(),
        0,
    )?;
    let Some((network_name, network_name_trailing_bytes)) = fixed_name(v.bytes(&fx::network_name))
    else {
        return fail(
            Code::InvalidName,
            f::OFF_NETWORK_NAME as u64,
            "network name is not NUL-terminated strict UTF-8 within 64 bytes",
        );
    };
    let target = v.u32(&fx::target);
    let header = Header {
        magic: "VPMN",
        version,
        target,
        product: target,
        network_name: network_name.to_string(),
        network_name_trailing_bytes,
        layer_count: v.u32(&fx::layer_count),
        operation_count: v.u32(&fx::operation_count),
        input_count: v.u32(&fx::input_count),
        output_count: v.u32(&fx::output_count),
    };
    let feature_database = feature_database(&v);
    let [size, alignment, base] = [0, 1, 2].map(|i| v.word(&fx::memory_pool, i));
    let memory_pool = MemoryPool {
        size,
        alignment,
        base,
    };
    let axi_sram = Sram {
        base: v.word(&fx::axi_sram, 0),
        size: v.word(&fx::axi_sram, 1),
    };
    let vip_sram = v.has(&fx::vip_sram).then(|| Sram {
        base: v.word(&fx::vip_sram, 0),
        size: v.word(&fx::vip_sram, 1),
    });

    // Entries: bounds, then overlap with each other and the fixed part.
    let nn_code = feature_database.bit(fx::feature_bits::nn_command_size);
    let tp_code = feature_database.bit(fx::feature_bits::tp_command_size);
    let mut tables: Vec<Table> = (0..entry_count)
        .map(|k| {
            let spec = f::ENTRIES[k];
            let at = crate::nbg::read::index(entries_offset) + fm::v1_entry::SIZE * k;
            let e = super::view(
                &fm::v1_entry::RECORD,
                &fixed[at..at + fm::v1_entry::SIZE],
                at as u64,
            )?;
            let record_size =
                crate::nbg::holds::v1_record_size(spec.name, version, nn_code, tp_code);
            Ok(Table {
                index: k,
                name: spec.name,
                section_type: u32::try_from(k + 1).unwrap_or(u32::MAX),
                evidence: spec.evidence.as_str(),
                entry_offset: at as u64,
                offset: u64::from(e.u32(&fm::v1_entry::offset)),
                size: u64::from(e.u32(&fm::v1_entry::size)),
                record_size,
                record_count: None,
                decoded: matches!(spec.name, "input" | "output")
                    || spec.nests_into.is_some()
                    || super::records::v1_decodes(spec.name, version),
                fingerprint: None,
            })
        })
        .collect::<Result<_, Failure>>()?;
    if layout == f::Layout::BoundedUnknown {
        bound_unknown_layout(&tables, version, fixed_end, file_size)?;
    }
    for t in &tables {
        if t.end() > file_size {
            return fail(
                Code::SectionOutOfBounds,
                t.entry_offset,
                format!(
                    "{} table [0x{:x}, +0x{:x}) leaves the {file_size}-byte file",
                    t.name, t.offset, t.size
                ),
            );
        }
    }
    let mut placed: Vec<&Table> = tables.iter().filter(|t| t.size > 0).collect();
    placed.sort_by_key(|t| (t.offset, t.size));
    if let Some(first) = placed.first().filter(|t| t.offset < fixed_end) {
        return fail(
            Code::SectionOverlap,
            first.entry_offset,
            format!(
                "{} table at 0x{:x} overlaps the fixed part, which ends at 0x{fixed_end:x}",
                first.name, first.offset
            ),
        );
    }
    for pair in placed.windows(2) {
        if pair[1].offset < pair[0].end() {
            return fail(
                Code::SectionOverlap,
                pair[1].entry_offset,
                format!(
                    "{} table [0x{:x}, 0x{:x}) overlaps {} table [0x{:x}, 0x{:x})",
                    pair[1].name,
                    pair[1].offset,
                    pair[1].end(),
                    pair[0].name,
                    pair[0].offset,
                    pair[0].end()
                ),
            );
        }
    }
    let extension_end = placed.first().map_or(fixed_end, |t| t.offset);

    // Records: sizes, then the decoded I/O tables.
    for t in &mut tables {
        if let Some(r) = t.record_size {
            if t.size % r != 0 {
                let code = if matches!(t.name, "input" | "output") {
                    Code::IoRecordSize
                } else {
                    Code::TableRecordSize
                };
                return fail(
                    code,
                    t.entry_offset + fm::v1_entry::size.offset as u64,
                    format!(
                        "{} table is {} bytes, not a multiple of its {r}-byte records",
                        t.name, t.size
                    ),
                );
            }
            t.record_count = Some(t.size / r);
        }
    }
    let io = io_layout(version);
    let table = |name| {
        // Invariant: `table` is asked only for input, output, layer and operation, the first
        // four `ENTRIES`, whose `since` is 0, so `entry_count` is at least 4 for every version
        // and `tables` (one per entry, in order) holds all four.
        tables
            .iter()
            .find(|t| t.name == name)
            .expect("input/output always present")
    };
    let inputs = decode_io_table(&data, table("input"), &io)?;
    let outputs = decode_io_table(&data, table("output"), &io)?;

    // Cross-checks against the header counts.
    for (name, declared, at) in [
        ("input", header.input_count, f::OFF_INPUT_COUNT),
        ("output", header.output_count, f::OFF_OUTPUT_COUNT),
        ("layer", header.layer_count, f::OFF_LAYER_COUNT),
        ("operation", header.operation_count, f::OFF_OPERATION_COUNT),
    ] {
        // A bounded-unknown layout has no proved layer/operation record size: not checked.
        let Some(records) = table(name).record_count else {
            continue;
        };
        if records != u64::from(declared) {
            return fail(
                Code::MetadataCountMismatch,
                at as u64,
                format!(
                    "header declares {declared} {name}s but the {name} table holds {records} records"
                ),
            );
        }
    }

    // Nested tables, then the command tables and state buffers they index.
    let nested_tables = nested_tables(&data, &tables)?;
    // No rule reads the decoded commands (a stream that does not decode is reported, never
    // refused): check-only mode (the sweep) skips them.
    let commands = if opts.fingerprints {
        command_tables(&data, &mut tables, &nested_tables)
    } else {
        Commands::default()
    };
    let records = records(
        &data,
        version,
        &tables,
        feature_database.bit(fx::feature_bits::change_ppu_param) == 1,
        (
            feature_database.nn_command_bytes,
            feature_database.tp_command_bytes,
        ),
        opts,
    )?;

    // Only the patch targets read them, never a rule: check-only mode (the sweep) skips them.
    let (lcd_streams, icd_streams) = if opts.fingerprints {
        named_streams(&data, &tables, &nested_tables, &records)
    } else {
        (None, None)
    };

    // One pass: every placed table, the opaque extension (last), and the whole file around the
    // CRC field for the field-zeroed rule.
    let mut full: Vec<(u64, u64)> = tables
        .iter()
        .filter(|t| t.size > 0)
        .map(|t| (t.offset, t.end()))
        .collect();
    full.push((fixed_end, extension_end));
    let field = f::OFF_CRC as u64;
    let around_field = [(0, field), (field + 4, file_size)];
    let fingerprints = super::fingerprint_ranges(&data, &full, &around_field, opts);
    let mut computed = fingerprints.ranges.into_iter();
    for t in tables.iter_mut().filter(|t| t.size > 0) {
        t.fingerprint = computed.next();
    }
    // Invariant: `fingerprint_ranges` returns one fingerprint per `full` range, and `full` is
    // the non-empty tables (taken above) followed by the extension.
    let extension_fingerprint = computed.next().expect("the extension is the last range");
    let zeroed = crc_rules::field_zeroed_from_parts(
        fingerprints.crcs[0],
        fingerprints.crcs[1],
        file_size - field - 4,
    );
    let crc = crc_field(
        &data,
        (fingerprints.crcs[0], fingerprints.crcs[1]),
        zeroed,
        &feature_database,
        &tables,
        fixed_end,
        extension_end,
    );
    let ranges = std::iter::once((0, extension_end, "fixed part")).chain(
        tables
            .iter()
            .filter(|t| t.size > 0)
            .map(|t| (t.offset, t.end(), t.name)),
    );
    let connection_region = ConnectionRegion::new(&data, ranges, opts);
    let mut graph = NbgV1 {
        bytes: data.held().unwrap_or(&[]),
        format: "nbg-v1",
        layout,
        file: FileFacts {
            size: file_size,
            sha256: fingerprints.file_sha256,
        },
        header,
        memory_pool_bytes: u64::from(memory_pool.size),
        memory_pool,
        axi_sram_bytes: axi_sram.size,
        axi_sram,
        vip_sram_bytes: vip_sram.as_ref().map(|s| s.size),
        vip_sram,
        feature_database,
        fixed_part: FixedPart {
            size: fixed_end,
            entries_offset,
            entry_count,
            public_entry_count: entry_count.min(f::PUBLIC_ENTRIES),
            extension_entries: f::ENTRIES[f::PUBLIC_ENTRIES.min(entry_count)..entry_count]
                .iter()
                .map(|e| e.name)
                .collect(),
            evidence: f::layout_evidence(version),
        },
        opaque_fixed_extension: Extension {
            offset: fixed_end,
            size: extension_end - fixed_end,
            fingerprint: extension_fingerprint,
        },
        tables,
        nested_tables,
        load_states: commands.load_states,
        lcd_streams,
        icd_streams,
        lcd_regions: None,
        icd_regions: None,
        coeff_regions: None,
        load_states_regions: None,
        ppu_instr_regions: None,
        nn_commands: commands.nn,
        tp_commands: commands.tp,
        inputs,
        outputs,
        records,
        crc,
        connection_region,
        structural_signature: Hash256::default(),
        corpus_invariants: Vec::new(),
    };
    let mut invariants = crate::nbg::parse::invariants::Invariants::default();
    invariants.records(&graph.records);
    graph.corpus_invariants = invariants.0;
    // What each `lcd`, `icd`, `coeff_data`, `load_states` and `ppu_instr` entry holds: no rule reads it, so check-only
    // mode skips it.
    if opts.fingerprints {
        [
            graph.lcd_regions,
            graph.icd_regions,
            graph.coeff_regions,
            graph.load_states_regions,
            graph.ppu_instr_regions,
        ] = regions(&graph, &data);
    }
    // No rule reads the signature: check-only mode (the sweep) leaves it zero.
    if opts.fingerprints {
        graph.structural_signature = structural_signature(&graph);
    }
    Ok(graph)
}

impl NbgV1<'_> {
    /// The check-only parse's records stage again, over `data`: this file with bytes changed
    /// that no other stage reads, so every other stage's result is this graph's.
    pub fn recheck_records(&self, data: Data<'_>) -> Result<(), Failure> {
        let db = &self.feature_database;
        records(
            &data,
            self.header.version,
            &self.tables,
            db.bit(fx::feature_bits::change_ppu_param) == 1,
            (db.nn_command_bytes, db.tp_command_bytes),
            Options {
                fingerprints: false,
            },
        )
        .map(drop)
    }
}

/// A version newer than any with evidence parses only when its fixed part can be bounded: the
/// public entries must reference at least one non-empty table, all inside the file and none
/// inside the fixed part. Otherwise the layout cannot be bounded and the version is refused.
fn bound_unknown_layout(
    tables: &[Table],
    version: u32,
    fixed_end: u64,
    file_size: u64,
) -> Result<(), Failure> {
    let refuse = |why: String| {
        fail(
            Code::UnsupportedVersion,
            4,
            format!(
                "v1 version 0x{version:08x} is newer than any with evidence and its fixed part cannot be bounded: {why}"
            ),
        )
    };
    let placed: Vec<&Table> = tables.iter().filter(|t| t.size > 0).collect();
    if let Some(t) = placed.iter().find(|t| t.end() > file_size) {
        return refuse(format!(
            "the {} table [0x{:x}, +0x{:x}) leaves the {file_size}-byte file",
            t.name, t.offset, t.size
        ));
    }
    match placed.iter().min_by_key(|t| t.offset) {
        None => refuse("no public entry references a table".into()),
        Some(t) if t.offset < fixed_end => refuse(format!(
            "the {} table at 0x{:x} lies inside the fixed part, which ends at 0x{fixed_end:x}",
            t.name, t.offset
        )),
        Some(_) => Ok(()),
    }
}
