//! Strict parsers for the NBG families. `parse` dispatches on magic and version; each family
//! borrows the file bytes and returns a complete description or the first `Failure`.

// Every value read from a file is converted with a check: no narrowing `as` here.
#![deny(clippy::cast_possible_truncation)]

pub mod command_tables;
pub mod invariants;
pub mod patch_targets;
pub mod records;
pub mod v1;
pub mod v2;

use crate::digest::Hash256;
use crate::nbg::failure::{Code, Failure, fail};
use crate::nbg::format::{self, MAX_TENSOR_STORAGE, buffer_format, data_type, quantization};
use crate::nbg::read::{Data, Source, fixed_name};
use serde::Serialize;

pub use v1::NbgV1;
pub use v2::NbgV2;

/// A successfully parsed graph of either family. One lives per parsed file and none is kept
/// in a collection, so the size difference of the variants costs nothing worth a box.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Graph<'data> {
    /// A v1 graph (version 0x0001xxxx).
    V1(NbgV1<'data>),
    /// A v2 graph (version 0x00020000).
    V2(NbgV2<'data>),
}

/// What a parse computes beyond the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// SHA-256, entropy and edge hashes of every section and of the file, the structural
    /// signature and the decoded records and commands. Every rule is checked either way;
    /// without fingerprints those fields are zero or absent (check-only mode: a verdict, for
    /// mutation sweeps).
    pub fingerprints: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { fingerprints: true }
    }
}

impl Options {
    /// SHA-256 of `bytes`, or zero in check-only mode.
    pub fn hash(&self, bytes: &[u8]) -> Hash256 {
        if self.fingerprints {
            Hash256::of(bytes)
        } else {
            Hash256::default()
        }
    }
}

/// Parse any supported NBG: magic, then version, then the family's own rules.
pub fn parse(bytes: &[u8]) -> Result<Graph<'_>, Failure> {
    parse_with(bytes, Options::default())
}

/// `parse` with explicit options.
pub fn parse_with(bytes: &[u8], opts: Options) -> Result<Graph<'_>, Failure> {
    parse_data(Data::new(bytes), opts)
}

/// `parse_with` over bytes in memory or a file (`open::parse_file`): the same checks in the
/// same order, reading only the bytes each check needs.
pub fn parse_data(data: Data<'_>, opts: Options) -> Result<Graph<'_>, Failure> {
    let magic = data.slice(0, 4, "magic")?;
    if *magic != format::MAGIC {
        return fail(
            Code::BadMagic,
            0,
            format!("magic is {:02x?}, expected ASCII VPMN", magic),
        );
    }
    let version = data.u32(4, "version")?;
    if let Some(rules) = format::v2_rules(version) {
        return v2::parse(data, rules, opts).map(Graph::V2);
    }
    if version >> 16 == format::V1_MAJOR {
        return v1::parse(data, version, opts).map(Graph::V1);
    }
    fail(
        Code::UnsupportedVersion,
        4,
        format!("version 0x{version:08x} is not a supported NBG version"),
    )
}

/// A field-map view of a record at file offset `at`; a slice of the wrong length (which a
/// caller's bounds checks rule out) is a `truncated` failure, never a panic.
pub(crate) fn view<'a>(
    record: &crate::nbg::fieldmap::Record,
    bytes: &'a [u8],
    at: u64,
) -> Result<crate::nbg::fieldmap::View<'a>, Failure> {
    crate::nbg::fieldmap::View::new(record, bytes).ok_or_else(|| truncated(record, bytes, at))
}

/// The `truncated` failure of `bytes` at file offset `at`, which no layout of `record` fits.
pub(crate) fn truncated(record: &crate::nbg::fieldmap::Record, bytes: &[u8], at: u64) -> Failure {
    Failure::new(
        Code::Truncated,
        at,
        format!(
            "{} bytes cannot hold a {}-byte {} record",
            bytes.len(),
            record.size,
            record.id
        ),
    )
}

/// Whole-file identity.
#[derive(Clone, Debug, Serialize)]
pub struct FileFacts {
    /// File size in bytes.
    pub size: u64,
    /// SHA-256 of the whole file (zero in check-only mode).
    pub sha256: Hash256,
}

/// The final 512 bytes that the runtime copies into its model object.
#[derive(Clone, Debug, Serialize)]
pub struct ConnectionRegion {
    /// File offset of the region (the last 512 bytes, or the whole file when shorter).
    pub offset: u64,
    /// Region size in bytes.
    pub size: u64,
    /// SHA-256 of the region (zero in check-only mode).
    pub sha256: Hash256,
    /// Whether declared sections or tables already own every byte of the region.
    pub covered_by_section: bool,
    /// Labels of the declared ranges that overlap the region, in file order.
    pub overlapping_sections: Vec<String>,
}

impl ConnectionRegion {
    /// `ranges` are the (start, end, label) ranges the family's parser has bounded; they do
    /// not overlap each other.
    pub fn new<'a>(
        data: &Data<'_>,
        ranges: impl IntoIterator<Item = (u64, u64, &'a str)>,
        opts: Options,
    ) -> Self {
        let size = format::CONNECTION_REGION_SIZE.min(data.len());
        let offset = data.len() - size;
        let end = offset + size;
        let mut overlapping: Vec<(u64, u64, &str)> = ranges
            .into_iter()
            .filter(|&(s, e, _)| s < end && e > offset)
            .collect();
        overlapping.sort_unstable();
        let covered_bytes: u64 = overlapping
            .iter()
            .map(|&(s, e, _)| e.min(end) - s.max(offset))
            .sum();
        ConnectionRegion {
            offset,
            size,
            sha256: opts.hash(&data.range(offset, end)),
            covered_by_section: size > 0 && covered_bytes == size,
            overlapping_sections: overlapping.iter().map(|r| r.2.to_string()).collect(),
        }
    }
}

/// Quantization words, kept raw and interpreted only as the public format says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Quantization {
    /// The quantization format word.
    pub format: u32,
    /// Its public name, when known.
    pub format_name: Option<&'static str>,
    /// The record's quantization words in on-disk order (v2: a two-word union; v1: the
    /// fixed-point position, scale and zero-point slots).
    pub raw_words: Vec<u32>,
    /// Format 1 (dynamic fixed point): the signed fixed-point position.
    pub fixed_point_position: Option<i32>,
    /// Format 2 (affine asymmetric): the IEEE-754 scale.
    pub scale: Option<f32>,
    /// Format 2 (affine asymmetric): the signed zero point.
    pub zero_point: Option<i32>,
}

/// Which raw word holds which quantity, per record layout.
#[derive(Clone, Copy, Debug)]
pub struct QuantSlots {
    /// Words the record reserves for quantization.
    pub words: usize,
    /// Word index of the fixed-point position.
    pub fixed_point: usize,
    /// Word index of the scale.
    pub scale: usize,
    /// Word index of the zero point.
    pub zero_point: usize,
}

impl Quantization {
    /// Decode the quantization words by `format` (`slots` says which word is which).
    pub fn new(format: u32, raw_words: Vec<u32>, slots: QuantSlots) -> Self {
        let word = |i: usize| raw_words[i];
        let (fixed_point_position, scale, zero_point) = match format {
            quantization::DYNAMIC_FIXED_POINT => (Some(word(slots.fixed_point) as i32), None, None),
            quantization::AFFINE_ASYMMETRIC => (
                None,
                Some(f32::from_bits(word(slots.scale))),
                Some(word(slots.zero_point) as i32),
            ),
            _ => (None, None, None),
        };
        Quantization {
            format,
            format_name: quantization::name(format),
            raw_words,
            fixed_point_position,
            scale,
            zero_point,
        }
    }
}

/// One input or output tensor description, under the field map's parser keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IoRecord {
    /// Position in its table.
    pub index: usize,
    /// File offset of the record.
    pub offset: u64,
    /// `None` for record layouts without a name field (v1 before 0x00010004).
    pub name: Option<String>,
    /// Bytes after the name's NUL, re-encoded exactly (JSON hex, only when non-zero).
    #[serde(skip_serializing_if = "crate::nbg::read::NameTail::is_zero")]
    pub name_trailing_bytes: crate::nbg::read::NameTail,
    /// Dimension count as stored.
    pub dimension_count: u32,
    /// The dimensions (the first `dimension_count` words).
    pub dimensions: Vec<u32>,
    /// The dimension slots after `dimension_count` (public v1 files hold 1 there, v2 zero):
    /// not part of the document, kept so the record re-encodes exactly.
    #[serde(skip)]
    pub unused_dimension_slots: Vec<u32>,
    /// Buffer format word.
    pub data_format: u32,
    /// Its public name, when known.
    pub data_format_name: Option<&'static str>,
    /// Data type word.
    pub data_type: u32,
    /// Its public name, when known.
    pub data_type_name: Option<&'static str>,
    /// Quantization parameters.
    pub quantization: Quantization,
    /// Product of the dimensions.
    pub element_count: u64,
    /// Derived storage; `None` for a format without a public element width.
    pub storage_bytes: Option<u64>,
}

/// The I/O records as the parse document gives them: each record's fields, and beside them
/// the names `info` and `vendor run` use for the same things: `shape` (the file's order,
/// innermost first), `npz_shape` (outermost first, the order an NPZ input holds),
/// `element_type`, `quantization_format` and the quantization's `scale`, `zero_point` and
/// `fixed_point_position`. `dimensions` and `data_format_name` stay for one release; the
/// `quantization` record stays as the field map decodes it.
pub fn serialize_io<S: serde::Serializer>(records: &[IoRecord], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Doc<'a> {
        #[serde(flatten)]
        record: &'a IoRecord,
        shape: &'a [u32],
        npz_shape: Vec<u32>,
        element_type: Option<&'static str>,
        quantization_format: Option<&'static str>,
        scale: Option<f32>,
        zero_point: Option<i32>,
        fixed_point_position: Option<i32>,
    }
    s.collect_seq(records.iter().map(|r| Doc {
        record: r,
        shape: &r.dimensions,
        npz_shape: r.dimensions.iter().rev().copied().collect(),
        element_type: r.data_format_name,
        quantization_format: r.quantization.format_name,
        scale: r.quantization.scale,
        zero_point: r.quantization.zero_point,
        fixed_point_position: r.quantization.fixed_point_position,
    }))
}

/// The field-map fields of one I/O record layout (per family and v1 version).
pub struct IoLayout {
    /// The field-map record.
    pub record: crate::nbg::fieldmap::Record,
    /// The dimension-count field.
    pub dim_count: crate::nbg::fieldmap::Field,
    /// The dimension words.
    pub dims: crate::nbg::fieldmap::Field,
    /// The data-format field.
    pub data_format: crate::nbg::fieldmap::Field,
    /// The data-type field.
    pub data_type: crate::nbg::fieldmap::Field,
    /// The quantization-format field.
    pub quant_format: crate::nbg::fieldmap::Field,
    /// The fields holding the raw quantization words, in order.
    pub quant_fields: &'static [crate::nbg::fieldmap::Field],
    /// Where the quantization words lie.
    pub quant: QuantSlots,
    /// The NUL-terminated name, if the layout has one.
    pub name: Option<crate::nbg::fieldmap::Field>,
}

impl IoLayout {
    /// Record size in bytes.
    pub fn size(&self) -> usize {
        self.record.size
    }

    /// Most dimensions the record holds.
    pub fn max_dims(&self) -> u32 {
        u32::try_from(self.dims.width / 4).unwrap_or(u32::MAX)
    }
}

/// Decode one I/O record at `offset` (already bounds-checked to `layout.size` bytes).
pub fn decode_io(
    record: &[u8],
    index: usize,
    offset: u64,
    layout: &IoLayout,
) -> Result<IoRecord, Failure> {
    let v = view(&layout.record, record, offset)?;
    let dimension_count = v.u32(&layout.dim_count);
    if dimension_count == 0 || dimension_count > layout.max_dims() {
        return fail(
            Code::DimensionCount,
            offset + layout.dim_count.offset as u64,
            format!(
                "I/O record {index} has {dimension_count} dimensions; 1 to {} are allowed",
                layout.max_dims()
            ),
        );
    }
    let mut dimensions = Vec::with_capacity(dimension_count as usize);
    let mut element_count: u128 = 1;
    for i in 0..dimension_count as usize {
        let at = layout.dims.offset + 4 * i;
        let d = v.word(&layout.dims, i);
        if d == 0 {
            return fail(
                Code::DimensionZero,
                offset + at as u64,
                format!("I/O record {index} dimension {i} is zero"),
            );
        }
        // Saturating: six u32 dimensions can exceed even u128; the bound below catches it.
        element_count = element_count.saturating_mul(u128::from(d));
        dimensions.push(d);
    }
    let data_format = v.u32(&layout.data_format);
    let data_type = v.u32(&layout.data_type);
    let quant_format = v.u32(&layout.quant_format);
    let raw: Vec<u32> = layout
        .quant_fields
        .iter()
        .flat_map(|f| v.words(f))
        .collect();
    let format_info = buffer_format::lookup(data_format);
    let storage =
        format_info.map(|(_, bits)| element_count.saturating_mul(u128::from(bits)).div_ceil(8));
    // The element count alone can exceed the bound even when the format is unknown.
    let bound_check = storage.unwrap_or(element_count);
    if bound_check > u128::from(MAX_TENSOR_STORAGE) {
        return fail(
            Code::TensorStorageLimit,
            offset,
            format!(
                "I/O record {index} derives {bound_check} bytes of storage; at most {MAX_TENSOR_STORAGE} are allowed"
            ),
        );
    }
    let (name, name_trailing_bytes) = match &layout.name {
        Some(f) => match fixed_name(v.bytes(f)) {
            Some((n, tail)) => (Some(n.to_string()), tail),
            None => {
                return fail(
                    Code::InvalidName,
                    offset + f.offset as u64,
                    format!(
                        "I/O record {index} name is not NUL-terminated strict UTF-8 within {} bytes",
                        f.width
                    ),
                );
            }
        },
        None => (None, Default::default()),
    };
    Ok(IoRecord {
        index,
        offset,
        name_trailing_bytes,
        name,
        dimension_count,
        dimensions,
        unused_dimension_slots: (dimension_count as usize..layout.max_dims() as usize)
            .map(|i| v.word(&layout.dims, i))
            .collect(),
        data_format,
        data_format_name: format_info.map(|(n, _)| n),
        data_type,
        data_type_name: data_type::name(data_type),
        quantization: Quantization::new(quant_format, raw, layout.quant),
        // Both are at most MAX_TENSOR_STORAGE (checked above).
        element_count: u64::try_from(element_count).unwrap_or(u64::MAX),
        storage_bytes: storage.map(|s| u64::try_from(s).unwrap_or(u64::MAX)),
    })
}

/// The layout-relevant facts of I/O records, for structural signatures (no payload bytes).
pub(crate) fn io_signature(records: &[IoRecord]) -> Vec<serde_json::Value> {
    records
        .iter()
        .map(|r| {
            serde_json::json!([
                r.name,
                r.dimensions,
                r.data_format,
                r.data_type,
                r.quantization.format,
                r.quantization.raw_words
            ])
        })
        .collect()
}

/// Files at least this large hash their ranges and the whole file on all cores.
const PARALLEL_BYTES: usize = 4 << 20;

pub(crate) struct Fingerprints {
    /// SHA-256 of the whole file (zero when fingerprints are off).
    pub file_sha256: Hash256,
    /// One per `full` range.
    pub ranges: Vec<crate::nbg::fingerprint::Fingerprint>,
    /// One CRC-32 per `crc_only` range.
    pub crcs: Vec<u32>,
}

/// Fingerprint each `full` range `[start, end)`, CRC each `crc_only` range and hash the file:
/// in memory in parallel for large files, from a file in one streamed pass.
pub(crate) fn fingerprint_ranges(
    data: &Data<'_>,
    full: &[(u64, u64)],
    crc_only: &[(u64, u64)],
    opts: Options,
) -> Fingerprints {
    use rayon::prelude::*;
    let bytes = match data.source() {
        Source::Memory(bytes) => *bytes,
        Source::File(file) => {
            let plan = crate::nbg::stream::Plan {
                full,
                crc_only,
                fingerprints: opts.fingerprints,
            };
            let out = crate::nbg::stream::run(file, &plan);
            return Fingerprints {
                file_sha256: out.file_sha256,
                ranges: out.full,
                crcs: out.crc_only,
            };
        }
    };
    use crate::nbg::read::index;
    let slice = |&(s, e): &(u64, u64)| bytes.get(index(s)..index(e)).unwrap_or_default();
    if !opts.fingerprints {
        return crc_fingerprints(data.flip(), bytes, full, crc_only);
    }
    let one =
        |r: &(u64, u64)| crate::nbg::fingerprint::Fingerprint::compute(slice(r), opts.fingerprints);
    let crcs = crc_only
        .iter()
        .map(|r| crate::nbg::fingerprint::crc32(slice(r)))
        .collect();
    if bytes.len() < PARALLEL_BYTES {
        return Fingerprints {
            file_sha256: opts.hash(bytes),
            ranges: full.iter().map(one).collect(),
            crcs,
        };
    }
    let (file_sha256, ranges) =
        rayon::join(|| opts.hash(bytes), || full.par_iter().map(one).collect());
    Fingerprints {
        file_sha256,
        ranges,
        crcs,
    }
}

/// The check-only fingerprints: every range's CRC and no SHA-256. A one-byte flip of an indexed
/// base gets each range's CRC without a pass; otherwise one pass over the segments between every
/// range's ends, each range's CRC combined from them (ranges overlap: tables inside the file
/// around a field).
fn crc_fingerprints(
    flip: Option<&crate::nbg::crc_index::Flip<'_>>,
    bytes: &[u8],
    full: &[(u64, u64)],
    crc_only: &[(u64, u64)],
) -> Fingerprints {
    let with = |crc: &dyn Fn(&(u64, u64)) -> u32| Fingerprints {
        file_sha256: Hash256::default(),
        ranges: full
            .iter()
            .map(|r| crate::nbg::fingerprint::Fingerprint::crc_only(crc(r)))
            .collect(),
        crcs: crc_only.iter().map(crc).collect(),
    };
    if let Some(flip) = flip {
        return with(&|&(s, e)| flip.range(s, e));
    }
    use crate::nbg::read::index;
    let direct = |&(s, e): &(u64, u64)| {
        crate::nbg::fingerprint::crc32(bytes.get(index(s)..index(e)).unwrap_or_default())
    };
    let cuts = full
        .iter()
        .chain(crc_only)
        .flat_map(|&(s, e)| [s, e])
        .collect();
    let eval = crate::nbg::crc_rules::Evaluator::over_cuts(cuts, |s, e| direct(&(s, e)));
    with(&|r| eval.range(r.0, r.1).unwrap_or_else(|| direct(r)))
}
