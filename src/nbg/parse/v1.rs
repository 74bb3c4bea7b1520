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

use super::{ConnectionRegion, FileFacts, IoLayout, IoRecord, Options, QuantSlots, decode_io};
use crate::nbg::crc_rules::{self, CrcClass};
use crate::nbg::failure::{Code, Failure, fail};
use crate::nbg::fieldmap::{self as fm, v1_fixed as fx};
use crate::nbg::fingerprint::{Fingerprint, Hash256};
use crate::nbg::format::v1 as f;
use crate::nbg::format::v2::IO_MAX_RECORDS;
use crate::nbg::read::{Data, fixed_name, le32};
use serde::Serialize;
use serde_json::json;

/// A parsed v1 graph: the `--json` document, plus the file bytes it borrows.
#[derive(Debug, Serialize)]
pub struct NbgV1<'data> {
    /// The file bytes (empty when parsed from a file with positioned reads).
    #[serde(skip)]
    pub bytes: &'data [u8],
    /// `nbg-v1`.
    pub format: &'static str,
    /// `known` for versions with evidence, `bounded-unknown` for newer ones.
    pub layout: f::Layout,
    /// Whole-file size and SHA-256.
    pub file: FileFacts,
    /// The fixed part's header fields.
    pub header: Header,
    /// The 256-byte feature database that follows the header.
    pub feature_database: FeatureDatabase,
    /// The memory pool fields after the feature database.
    pub memory_pool: MemoryPool,
    /// Memory pool size in bytes, as v2 reports it (section 37).
    pub memory_pool_bytes: u64,
    /// The AXI SRAM fields after the memory pool.
    pub axi_sram: Sram,
    /// AXI SRAM size in bytes, as v2 reports it (section 39).
    pub axi_sram_bytes: u32,
    /// The VIP SRAM fields, from 0x00010008.
    pub vip_sram: Option<Sram>,
    /// VIP SRAM size in bytes, as v2 reports it (section 38).
    pub vip_sram_bytes: Option<u32>,
    /// Where the fixed part ends and its entries lie.
    pub fixed_part: FixedPart,
    /// Bytes between the decoded fixed part and the first referenced table.
    pub opaque_fixed_extension: Extension,
    /// Every (offset, size) entry in on-disk order.
    pub tables: Vec<Table>,
    /// Tables whose entries point into another table's data: views, not owners.
    pub nested_tables: Vec<NestedTable>,
    /// The input table's records.
    pub inputs: Vec<IoRecord>,
    /// The output table's records.
    pub outputs: Vec<IoRecord>,
    /// `layers`, `operations`, `sh_operations`, `patches` (see `parse::records`).
    #[serde(flatten)]
    pub records: super::records::Records,
    /// The `nbg_crc_sum` field and how it relates to the rules.
    pub crc: CrcField,
    /// The final 512 bytes the runtime copies.
    pub connection_region: ConnectionRegion,
    /// Hash of the layout with payload bytes left out (see the module note).
    pub structural_signature: Hash256,
}

/// The header at the start of the fixed part.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    /// `VPMN`.
    pub magic: &'static str,
    /// The version word (`0x0001xxxx`).
    pub version: u32,
    /// The target (product) word; recorded, not validated.
    pub target: u32,
    /// Compatibility alias of `target`.
    pub product: u32,
    /// The NUL-terminated network name.
    pub network_name: String,
    /// Bytes after the name's NUL, re-encoded exactly (JSON hex, only when non-zero).
    #[serde(skip_serializing_if = "crate::nbg::read::NameTail::is_zero")]
    pub network_name_trailing_bytes: crate::nbg::read::NameTail,
    /// Declared layers, checked against the layer table.
    pub layer_count: u32,
    /// Declared operations, checked against the operation table.
    pub operation_count: u32,
    /// Declared inputs, checked against the input table.
    pub input_count: u32,
    /// Declared outputs, checked against the output table.
    pub output_count: u32,
}

/// The 256-byte feature database: the bitfield word decoded, byte fields named as the public
/// headers name them, reserved areas counted and hashed.
#[derive(Clone, Debug, Serialize)]
pub struct FeatureDatabase {
    /// File offset of the feature database.
    pub offset: u64,
    /// The feature bitfield word as stored.
    pub raw_bits: u32,
    /// The feature bitfield's parts by name.
    pub bits: std::collections::BTreeMap<&'static str, u32>,
    /// NN command size in bytes by its feature code; null for an unknown code.
    pub nn_command_bytes: Option<u64>,
    /// TP command size in bytes by its feature code; null for an unknown code.
    pub tp_command_bytes: Option<u64>,
    /// The `num_pixel_pipes` word.
    pub num_pixel_pipes: u32,
    /// The `core_count` byte.
    pub core_count: u8,
    /// The `device_index` byte.
    pub device_index: u8,
    /// The `axi_bus_width_index` byte.
    pub axi_bus_width_index: u8,
    /// The `cluster_id_width` byte.
    pub cluster_id_width: u8,
    /// NN cores (`nn_core_count`).
    pub nn_core_count: u8,
    /// TP cores (`tp_core_count`).
    pub tp_core_count: u8,
    /// The two bytes after `tp_core_count` (reserved; kept for the round trip).
    #[serde(skip)]
    pub core_reserved: u16,
    /// The stored file CRC (`nbg_crc_sum`); zero in files without one.
    pub nbg_crc_sum: u32,
    /// The `vip_sram_width` word.
    pub vip_sram_width: u32,
    /// The vendor-reserved area.
    pub vsi_reserved: Reserved,
    /// The customer-reserved area.
    pub customer_reserved: Reserved,
}

/// A reserved area: counted and hashed, never interpreted.
#[derive(Clone, Debug, Serialize)]
pub struct Reserved {
    /// Size in bytes.
    pub bytes: usize,
    /// Bytes that are not zero.
    pub nonzero_bytes: usize,
    /// SHA-256 of the area.
    pub sha256: Hash256,
    /// The bytes themselves, for the round trip (not part of the document).
    #[serde(skip)]
    pub raw: Vec<u8>,
}

impl Reserved {
    fn of(bytes: &[u8]) -> Self {
        Reserved {
            bytes: bytes.len(),
            nonzero_bytes: bytes.iter().filter(|&&b| b != 0).count(),
            sha256: Hash256::of(bytes),
            raw: bytes.to_vec(),
        }
    }
}

/// The memory pool fields of the fixed part.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryPool {
    /// Pool size in bytes.
    pub size: u32,
    /// Pool alignment in bytes.
    pub alignment: u32,
    /// Pool base address.
    pub base: u32,
}

/// An SRAM's fields in the fixed part.
#[derive(Clone, Debug, Serialize)]
pub struct Sram {
    /// Base address.
    pub base: u32,
    /// Size in bytes.
    pub size: u32,
}

/// The fixed part: header, feature database, memory fields and entries.
#[derive(Clone, Debug, Serialize)]
pub struct FixedPart {
    /// End of the decoded fixed part (header, feature database, memory fields, entries).
    pub size: u64,
    /// File offset of entry 0.
    pub entries_offset: u64,
    /// Entries the parser decodes for the version.
    pub entry_count: usize,
    /// How many of them the public layout has.
    pub public_entry_count: usize,
    /// Entries beyond the public layout that the version has (the vendor reader's gates).
    pub extension_entries: Vec<&'static str>,
    /// Where the version's layout comes from (`format::v1::layout_evidence`): `proved`,
    /// `vendor-reader` or `bounded-unknown`.
    pub evidence: f::LayoutEvidence,
}

/// The opaque fixed extension: fingerprinted, never named.
#[derive(Clone, Debug, Serialize)]
pub struct Extension {
    /// File offset of its first byte.
    pub offset: u64,
    /// Bytes, possibly zero.
    pub size: u64,
    /// Fingerprint of its bytes.
    pub fingerprint: Fingerprint,
}

/// One (offset, size) entry of the fixed part and the table it places.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    /// Position in the entry list.
    pub index: usize,
    /// The entry's name (`format::v1::ENTRIES`).
    pub name: &'static str,
    /// The v2 section type with the same role (entry k is type k + 1).
    pub section_type: u32,
    /// How far the entry is established: `public`, `proved` or `vendor-reader`.
    pub evidence: &'static str,
    /// File offset of the 8-byte (offset, size) entry.
    pub entry_offset: u64,
    /// File offset of the table.
    pub offset: u64,
    /// Table size in bytes.
    pub size: u64,
    /// Bytes per record, where the public sources or the corpus establish it.
    pub record_size: Option<u64>,
    /// `size / record_size`, where the record size is known.
    pub record_count: Option<u64>,
    /// Whether the parser decodes this table's records (I/O and nested index tables).
    pub decoded: bool,
    /// Fingerprint of a non-empty table's bytes.
    pub fingerprint: Option<Fingerprint>,
}

impl Table {
    /// One past the table's last byte.
    pub fn end(&self) -> u64 {
        self.offset + self.size
    }
}

/// A table of (offset, size) entries into another table's data: a view, not an owner.
#[derive(Clone, Debug, Serialize)]
pub struct NestedTable {
    /// The entry table's name.
    pub table: &'static str,
    /// The table its entries point into.
    pub target: &'static str,
    /// Number of entries.
    pub entry_count: usize,
    /// (offset, size) relative to the target table's data.
    pub entries: Vec<[u64; 2]>,
}

/// The v1 CRC field and how it relates to the rules.
#[derive(Clone, Debug, Serialize)]
pub struct CrcField {
    /// File offset of `nbg_crc_sum`.
    pub offset: u64,
    /// The stored value.
    pub stored: u32,
    /// CRC-32 of the whole file with the four field bytes zeroed (the corroborated rule).
    pub computed_whole_file_zeroed: u32,
    /// How the stored value relates to the rules.
    pub classification: CrcClass,
    /// The registry rule that reproduces `stored`, when one does.
    pub rule: Option<String>,
}

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
    let v = super::view(&fx::RECORD, &fixed[..entries_offset as usize], 0)?;
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
    let nn_code = feature_database.bits["nn_command_size"];
    let tp_code = feature_database.bits["tp_command_size"];
    let mut tables: Vec<Table> = (0..entry_count)
        .map(|k| {
            let spec = f::ENTRIES[k];
            let at = entries_offset as usize + fm::v1_entry::SIZE * k;
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
                section_type: k as u32 + 1,
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

    // Nested tables.
    let nested_tables = nested_tables(&data, &tables)?;
    let records = records(
        &data,
        version,
        &tables,
        feature_database.bits["change_ppu_param"] == 1,
    )?;

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
        bytes: data.memory().unwrap_or(&[]),
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
        inputs,
        outputs,
        records,
        crc,
        connection_region,
        structural_signature: Hash256::default(),
    };
    // No rule reads the signature: check-only mode (the sweep) leaves it zero.
    if opts.fingerprints {
        graph.structural_signature = structural_signature(&graph);
    }
    Ok(graph)
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

impl<'data> NbgV1<'data> {
    /// The table called `name`, when the version has it.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}

fn feature_database(v: &fm::View<'_>) -> FeatureDatabase {
    let raw = v.u32(&fx::feature_bits);
    let bits: std::collections::BTreeMap<&'static str, u32> = fx::feature_bits
        .parts
        .iter()
        .map(|p| (p.name, p.get(u64::from(raw)) as u32))
        .collect();
    let core = v.uint(&fx::core_fields);
    let [
        core_count,
        device_index,
        axi_bus_width_index,
        cluster_id_width,
        nn_core_count,
        tp_core_count,
    ] = [0, 1, 2, 3, 4, 5].map(|i| fx::core_fields.parts[i].get(core) as u8);
    FeatureDatabase {
        offset: f::FEATURE_DB as u64,
        raw_bits: raw,
        nn_command_bytes: f::command_bytes(bits["nn_command_size"]),
        tp_command_bytes: f::command_bytes(bits["tp_command_size"]),
        bits,
        num_pixel_pipes: v.u32(&fx::num_pixel_pipes),
        core_count,
        device_index,
        axi_bus_width_index,
        cluster_id_width,
        nn_core_count,
        tp_core_count,
        core_reserved: fx::core_fields.parts[6].get(core) as u16,
        nbg_crc_sum: v.u32(&fx::nbg_crc_sum),
        vip_sram_width: v.u32(&fx::vip_sram_width),
        vsi_reserved: Reserved::of(v.bytes(&fx::vsi_reserved)),
        customer_reserved: Reserved::of(v.bytes(&fx::customer_reserved)),
    }
}

/// v1 I/O layouts: the three quantization slots (fixed_pos, scale, zero point) follow the type.
pub fn io_layout(version: u32) -> IoLayout {
    macro_rules! layout {
        ($m:ident, $name:expr) => {
            IoLayout {
                record: fm::$m::RECORD,
                dim_count: fm::$m::dimension_count,
                dims: fm::$m::dimensions,
                data_format: fm::$m::data_format,
                data_type: fm::$m::data_type,
                quant_format: fm::$m::quant_format,
                quant_fields: &[fm::$m::fixed_point, fm::$m::scale, fm::$m::zero_point],
                quant: QuantSlots {
                    words: 3,
                    fixed_point: 0,
                    scale: 1,
                    zero_point: 2,
                },
                name: $name,
            }
        };
    }
    let record = f::io_record(version);
    if record == fm::v1_io_record::RECORD {
        layout!(v1_io_record, Some(fm::v1_io_record::name))
    } else if record == fm::v1_io_record_108::RECORD {
        layout!(v1_io_record_108, Some(fm::v1_io_record_108::name))
    } else {
        layout!(v1_io_record_44, None)
    }
}

fn decode_io_table(
    data: &Data<'_>,
    t: &Table,
    layout: &IoLayout,
) -> Result<Vec<IoRecord>, Failure> {
    // Invariant: `holds::v1_record_size` is `Some` for input and output at every version, so
    // the record loop above set `record_count` of both (or returned a failure).
    let count = t.record_count.expect("I/O record size is always known");
    if count > IO_MAX_RECORDS {
        return fail(
            Code::IoCountLimit,
            t.entry_offset + fm::v1_entry::size.offset as u64,
            format!(
                "{} table holds {count} records; at most {IO_MAX_RECORDS} are allowed",
                t.name
            ),
        );
    }
    // At most 256 records: read only now that the count is bounded.
    data.range(t.offset, t.end())
        .chunks_exact(layout.size())
        .enumerate()
        .map(|(i, r)| decode_io(r, i, t.offset + (i * layout.size()) as u64, layout))
        .collect()
}

/// Nested (offset, size) entries must land inside their target table's data.
fn nested_tables(data: &Data<'_>, tables: &[Table]) -> Result<Vec<NestedTable>, Failure> {
    let mut out = Vec::new();
    for t in tables {
        let Some(target_name) = f::ENTRIES[t.index].nests_into else {
            continue;
        };
        let Some(target) = tables.iter().find(|x| x.name == target_name) else {
            continue;
        };
        // Bounded by the table's in-file size; read in pieces.
        let mut entries = Vec::new();
        data.visit(t.offset, t.end(), 8, |at, records| {
            for (j, r) in records.chunks_exact(8).enumerate() {
                let i = (at - t.offset) / 8 + j as u64;
                let (offset, size) = (u64::from(le32(r, 0)), u64::from(le32(r, 4)));
                if offset + size > target.size {
                    return fail(
                        Code::SectionOutOfBounds,
                        t.offset + 8 * i,
                        format!(
                            "{} entry {i} (offset 0x{offset:x}, size {size}) leaves the {}-byte {} table",
                            t.name, target.size, target.name
                        ),
                    );
                }
                entries.push([offset, size]);
            }
            Ok(())
        })?;
        out.push(NestedTable {
            table: t.name,
            target: target.name,
            entry_count: entries.len(),
            entries,
        });
    }
    Ok(out)
}

/// The CRC field's class. `around` is the CRC-32 of the bytes before and after the field, and
/// with the tables' CRCs it spares the hypothesis registry a pass over the file.
fn crc_field(
    data: &Data<'_>,
    around: (u32, u32),
    computed: u32,
    db: &FeatureDatabase,
    tables: &[Table],
    fixed_end: u64,
    extension_end: u64,
) -> CrcField {
    let stored = db.nbg_crc_sum;
    let (classification, rule) = if stored == 0 {
        (CrcClass::Absent, None)
    } else if stored == computed {
        (
            CrcClass::Matches,
            Some(crc_rules::WHOLE_FILE_FIELD_ZEROED.to_string()),
        )
    } else {
        let field = f::OFF_CRC as u64;
        let known: Vec<((u64, u64), u32)> = tables
            .iter()
            .filter_map(|t| Some(((t.offset, t.end()), t.fingerprint.as_ref()?.crc32)))
            .chain([((0, field), around.0), ((field + 4, data.len()), around.1)])
            .collect();
        let mut crc_of = |s, e| match known.iter().find(|k| k.0 == (s, e)) {
            Some(&(_, crc)) => crc,
            None => data.crc32(s, e),
        };
        // Whether any hypothesis matches, without building the registry (the common answer
        // in a mutation sweep is no); its first match is named only when there is one.
        let offsets: Vec<u64> = boundary_points(tables, fixed_end, extension_end)
            .map(|(offset, _)| offset)
            .collect();
        let any = crc_rules::registry_matches(data.len(), field, &offsets, stored, &mut crc_of);
        let found = match any {
            Some(false) => Vec::new(),
            _ => {
                let boundaries = boundaries(tables, fixed_end, extension_end);
                crc_rules::explain_v1_with(data.len(), field, stored, &boundaries, crc_of)
            }
        };
        match found.first() {
            Some(h) => (CrcClass::Matches, Some(h.rule.clone())),
            None => (CrcClass::Unexplained, None),
        }
    };
    CrcField {
        offset: f::OFF_CRC as u64,
        stored,
        computed_whole_file_zeroed: computed,
        classification,
        rule,
    }
}

/// Every structural boundary the parser knows, for the CRC hypothesis registry.
pub fn boundaries(tables: &[Table], fixed_end: u64, extension_end: u64) -> Vec<(u64, String)> {
    boundary_points(tables, fixed_end, extension_end)
        .map(|(offset, label)| {
            let label = match label {
                Label::Named(name) => name.to_string(),
                Label::Start(table) => format!("start of {table} table"),
                Label::End(table) => format!("end of {table} table"),
            };
            (offset, label)
        })
        .collect()
}

/// How a boundary is named, built only when a hypothesis is reported.
enum Label {
    Named(&'static str),
    Start(&'static str),
    End(&'static str),
}

/// The offsets of `boundaries`, with the labels still unbuilt.
fn boundary_points(
    tables: &[Table],
    fixed_end: u64,
    extension_end: u64,
) -> impl Iterator<Item = (u64, Label)> + '_ {
    [
        (FIXED_HEADER_END, Label::Named("end of header counts")),
        (
            f::OFF_MEMORY_POOL as u64,
            Label::Named("end of feature database"),
        ),
        (fixed_end, Label::Named("end of fixed part")),
        (extension_end, Label::Named("end of opaque fixed extension")),
    ]
    .into_iter()
    .chain(tables.iter().filter(|t| t.size > 0).flat_map(|t| {
        [
            (t.offset, Label::Start(t.name)),
            (t.end(), Label::End(t.name)),
        ]
    }))
}

fn structural_signature(g: &NbgV1<'_>) -> Hash256 {
    let io = super::io_signature;
    let h = &g.header;
    let doc = json!({
        "format": g.format,
        "version": h.version,
        "target": h.target,
        "file_size": g.file.size,
        "network_name": h.network_name,
        "counts": [h.layer_count, h.operation_count, h.input_count, h.output_count],
        "feature_bits": g.feature_database.raw_bits,
        "memory_pool": [g.memory_pool.size, g.memory_pool.alignment, g.memory_pool.base],
        "axi_sram": [g.axi_sram.base, g.axi_sram.size],
        "vip_sram": g.vip_sram.as_ref().map(|s| [s.base, s.size]),
        "entries": g.tables.iter().map(|t| [t.offset, t.size]).collect::<Vec<_>>(),
        "extension_size": g.opaque_fixed_extension.size,
        "inputs": io(&g.inputs),
        "outputs": io(&g.outputs),
        "nested": g.nested_tables.iter().map(|n| json!([n.table, n.entries])).collect::<Vec<_>>(),
    });
    Hash256::of(doc.to_string().as_bytes())
}

/// The v1 glue: tables by name, record sizes and counts already checked by the v1 parser.
/// Operation state ids index `load_states_table` where the version has it, else `lcd_table`;
/// hardware-init state ids index `icd_table`.
fn records(
    data: &crate::nbg::read::Data<'_>,
    version: u32,
    tables: &[Table],
    ppu_params_referenced: bool,
) -> Result<super::records::Records, Failure> {
    use super::records::{Tables, as_slice, decode, v1_decodes};
    if !v1_decodes("layer", version) {
        return Ok(super::records::Records::default());
    }
    let find = |name: &str| tables.iter().find(|t| t.name == name);
    // Record sizes and counts were checked by the v1 parser; each table is read once.
    let read = |name: &str| {
        find(name)
            .filter(|t| v1_decodes(t.name, version))
            .and_then(|t| {
                t.record_size
                    .map(|record_size| (t.offset, record_size, data.range(t.offset, t.end())))
            })
    };
    let (layer, operation, sh, patch) =
        (read("layer"), read("operation"), read("sh"), read("patch"));
    let (sw, hw_init, ppu_param) = (read("sw"), read("hw_init"), read("ppu_param"));
    let count = |name: &str| find(name).and_then(|t| t.record_count);
    let state_table = match find("load_states_table") {
        Some(t) => Some(("load_states table", t.size / 8)),
        None => find("lcd_table").map(|t| ("lcd table", t.size / 8)),
    };
    decode(&Tables {
        layer: as_slice(&layer),
        operation: as_slice(&operation),
        sh: as_slice(&sh),
        patch: as_slice(&patch),
        nn_records: count("nn"),
        tp_records: count("tp"),
        state_table,
        ppu_instr_entries: find("ppu_instr_table").map(|t| t.size / 8),
        sw: as_slice(&sw),
        hw_init: as_slice(&hw_init),
        ppu_param: as_slice(&ppu_param),
        icd_entries: find("icd_table").map(|t| t.size / 8),
        ppu_params_referenced,
        no_layer: crate::nbg::format::records::NO_LAYER,
        layer_operations_unbounded: false,
    })
}
