//! A small deterministic v1 builder, for versions the public corpus has no sample of.
//!
//! It writes a complete v1 graph of any version: the public fixed part (header, feature
//! database, memory fields, the version's entries), `extension` further fixed bytes (what a newer
//! version appends before its tables), one input, one output, one layer and one operation
//! record, a command payload, and the CRC field at 0x6C under a chosen coverage. The parser must
//! then find the layout bound and the CRC rule on its own: nothing here is shared with it but
//! the public offsets in `format::v1`.

use crate::nbg::fieldmap::{self as fm, Overflow, Writer};
use crate::nbg::format::v1 as f;

/// Coverage of the CRC field the builder writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum V1Crc {
    /// Field left zero (what every file before 0x00010018 does).
    Absent,
    /// CRC-32 of the whole file with the field read as zero (the 0x0001001e rule).
    WholeFileFieldZeroed,
    /// CRC-32 of the bytes from the end of the public fixed part to EOF.
    SuffixFromFixedEnd,
}

/// Profiles of `nbg synth` served by this builder: (name, version, extension bytes, CRC).
pub const PROFILES: [(&str, u32, usize, V1Crc); 4] = [
    (
        "v1-0020-suffix-crc",
        0x0001_0020,
        0,
        V1Crc::SuffixFromFixedEnd,
    ),
    (
        "v1-0030-whole-file-crc",
        0x0001_0030,
        24,
        V1Crc::WholeFileFieldZeroed,
    ),
    ("v1-0009-no-crc", 0x0001_0009, 0, V1Crc::Absent),
    (
        "v1-001e-whole-file-crc",
        0x0001_001e,
        0,
        V1Crc::WholeFileFieldZeroed,
    ),
];

/// The graph of a named profile; `None` for an unknown name.
pub fn profile(name: &str) -> Option<Result<Vec<u8>, Overflow>> {
    PROFILES
        .iter()
        .find(|p| p.0 == name)
        .map(|&(_, version, extension, crc)| V1Spec::new(version, extension, crc).build())
}

const COMMAND_BYTES: usize = 192;

/// Bytes of the state payload operation 0's state id points at.
const STATE_BYTES: usize = 16;

/// The target word: a PID the vendor's simulator driver carries a configuration for (its
/// loader imports a v1 file only under the file's own PID).
pub const TARGET: u32 = 0x1000_000e;

/// One I/O record of the version's layout (108 or 116 bytes): four dimensions, UINT8, affine
/// quantization (fixed point, scale, zero point), a name.
fn io_record(version: u32, name: &str, dims: [u32; 4], scale: f32) -> Result<Vec<u8>, Overflow> {
    let l = crate::nbg::parse::v1::io_layout(version);
    let mut w = Writer::new(l.size());
    w.put_u32(&l.dim_count, 4)
        .put_words(&l.dims, &dims)
        .put_u32(&l.data_format, 2) // UINT8
        .put_u32(&l.data_type, 0) // tensor
        .put_u32(&l.quant_format, 2); // affine asymmetric
    if let [_, scale_field, zero_point] = l.quant_fields {
        w.put_u32(scale_field, scale.to_bits())
            .put_u32(zero_point, 128);
    }
    if let Some(n) = &l.name {
        w.put_str(n, name);
    }
    w.finish()
}

/// A v1 graph of `version` with `extension` bytes between the public entries and the tables.
pub fn graph(version: u32, extension: usize, crc: V1Crc) -> Result<Vec<u8>, Overflow> {
    V1Spec::new(version, extension, crc).build()
}

/// What the v1 builder writes; `V1Spec::new` gives the defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct V1Spec {
    /// The version word.
    pub version: u32,
    /// Bytes between the public entries and the tables.
    pub extension: usize,
    /// Coverage of the CRC field.
    pub crc: V1Crc,
    /// The input and output quantization scales (capture sets of the mapping registry change
    /// them).
    pub scales: [f32; 2],
    /// The header's network name.
    pub network_name: String,
    /// The target word.
    pub target: u32,
    /// Further tables appended after the command payload, each (entry name, payload): the v1
    /// tables the builder does not fill (SW operation, hardware-init and PPU parameter
    /// records), for tests that build them through the field map.
    pub extra: Vec<(&'static str, Vec<u8>)>,
}

impl V1Spec {
    /// Scales 0.5, the name `synthetic-v1-<version>`, target `TARGET`, no further tables.
    pub fn new(version: u32, extension: usize, crc: V1Crc) -> Self {
        V1Spec {
            version,
            extension,
            crc,
            scales: [0.5, 0.5],
            network_name: format!("synthetic-v1-{version:08x}"),
            target: TARGET,
            extra: Vec::new(),
        }
    }

    /// The graph's bytes, or the first field whose value did not fit.
    ///
    /// # Panics
    ///
    /// When an `extra` name is not an entry name of `format::v1::ENTRIES`.
    pub fn build(&self) -> Result<Vec<u8>, Overflow> {
        build(self)
    }
}

fn build(spec: &V1Spec) -> Result<Vec<u8>, Overflow> {
    let V1Spec {
        version,
        extension,
        crc,
        scales,
        ..
    } = *spec;
    let entries = f::entries_offset(version);
    // Every entry the version's layout has (public, plus the proved extensions of a known
    // version); the ones the builder does not fill stay (0, 0).
    let fixed_end = entries + 8 * f::entry_count(version);
    let fixed = {
        use fm::v1_fixed as fx;
        let mut w = Writer::new(entries);
        w.put_bytes(&fx::magic, b"VPMN")
            .put_u32(&fx::version, version)
            .put_u32(&fx::target, spec.target)
            .put_str(&fx::network_name, &spec.network_name)
            .put_u32(&fx::layer_count, 1)
            .put_u32(&fx::operation_count, 1)
            .put_u32(&fx::input_count, 1)
            .put_u32(&fx::output_count, 1)
            // Feature database: NN and TP command size code 1 (192 bytes).
            .put_u32(&fx::feature_bits, (1 << 2) | (1 << 5))
            .put_uint(&fx::core_fields, 1) // core_count
            .put_words(&fx::memory_pool, &[0x4000, 64]);
        if version >= f::VIP_SRAM_SINCE {
            w.put_words(&fx::vip_sram, &[0, 0x4_0000]);
        }
        w.finish()?
    };
    let mut b = fixed;
    b.resize(fixed_end + extension, 0);
    // The extension: what a version newer than any known appends; the parser only bounds it
    // and keeps it opaque.
    // A newer version has no proved operation record size: the newest known one is written.
    // Invariant: `record_size` answers `None` for "operation" only under a bounded-unknown
    // layout, and `MAX_KNOWN_VERSION` is a known one.
    let operation_record = crate::nbg::holds::v1_record_size("operation", version, 1, 1)
        .or(crate::nbg::holds::v1_record_size(
            "operation",
            f::MAX_KNOWN_VERSION,
            1,
            1,
        ))
        .expect("the newest known operation record size") as usize;
    let tables: [(&str, Vec<u8>); 5] = [
        (
            "input",
            io_record(version, "input_0", [16, 16, 3, 1], scales[0])?,
        ),
        (
            "output",
            io_record(version, "output_0", [10, 1, 1, 1], scales[1])?,
        ),
        ("layer", {
            let mut w = Writer::new(fm::layer::RECORD.size_at(version));
            w.put_str(&fm::layer::name, "layer_0");
            w.finish()?
        }),
        // An INIT operation attached to no layer: consistent with every cross-check whatever
        // tables the version has.
        ("operation", {
            let mut w = Writer::new(operation_record);
            w.put_u32(&fm::operation::kind, 0xffff)
                .put_u32(&fm::operation::layer_id, 0xffff);
            w.finish()?
        }),
        ("nn", (0..COMMAND_BYTES).map(|i| (i as u8) ^ 0x5a).collect()),
    ];
    // What the vendor's reader and loader require (measured, `notebooks/v1-public-corpus.md`):
    // operation 0's state id 0 indexes a non-empty state table (`load_states_table` into the
    // load states where the version has them, else `lcd_table` into `lcd`), and the `lcd`
    // payload lies after every table (the loader reads the tables from the first `lcd.offset`
    // bytes), with the load states after it.
    let has = |name: &str| {
        f::ENTRIES[..f::entry_count(version)]
            .iter()
            .any(|e| e.name == name)
    };
    let states: Vec<u8> = (0..STATE_BYTES).map(|i| i as u8).collect();
    let in_load_states = has("load_states_table") && has("load_states");
    let mut tables: Vec<(&str, Vec<u8>)> = tables.into();
    let mut entry = Writer::new(fm::v1_entry::SIZE);
    entry
        .put_u32(&fm::v1_entry::offset, 0)
        .put_u32(&fm::v1_entry::size, STATE_BYTES as u32);
    let entry = entry.finish()?;
    tables.push((
        if in_load_states {
            "load_states_table"
        } else {
            "lcd_table"
        },
        entry,
    ));
    tables.extend(spec.extra.iter().cloned());
    if in_load_states {
        tables.push(("lcd", Vec::new()));
        tables.push(("load_states", states));
    } else {
        tables.push(("lcd", states));
    }
    for (name, payload) in tables {
        // Invariant: the tables above are entries of the version; an `extra` name outside
        // `format::v1::ENTRIES` breaks this function's documented contract.
        let index = f::ENTRIES
            .iter()
            .position(|e| e.name == name)
            .expect("an entry name");
        let at = entries + fm::v1_entry::SIZE * index;
        let mut w = Writer::new(fm::v1_entry::SIZE);
        w.put_u32(&fm::v1_entry::offset, b.len() as u32)
            .put_u32(&fm::v1_entry::size, payload.len() as u32);
        b[at..at + fm::v1_entry::SIZE].copy_from_slice(&w.finish()?);
        b.extend_from_slice(&payload);
    }
    let field = f::OFF_CRC;
    let value = match crc {
        V1Crc::Absent => 0,
        V1Crc::WholeFileFieldZeroed => {
            crate::nbg::crc_rules::whole_file_field_zeroed(&b, field as u64)
        }
        V1Crc::SuffixFromFixedEnd => crc32fast::hash(&b[fixed_end..]),
    };
    b[field..field + 4].copy_from_slice(&value.to_le_bytes());
    Ok(b)
}
