//! A small deterministic v1 builder, for versions the public corpus has no sample of.
//!
//! It writes a complete v1 graph of any version: the public fixed part (header, feature
//! database, memory fields, the version's entries), `extension` further fixed bytes (what a newer
//! version appends before its tables), one input, one output, one layer and one operation
//! record, a command payload, and the CRC field at 0x6C under a chosen coverage. The parser must
//! then find the layout bound and the CRC rule on its own: nothing here is shared with it but
//! the public offsets in `format::v1`.

use crate::format::v1 as f;

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
pub const PROFILES: [(&str, u32, usize, V1Crc); 3] = [
    (
        "v1-0020-suffix-crc",
        0x0001_0020,
        144,
        V1Crc::SuffixFromFixedEnd,
    ),
    (
        "v1-0030-whole-file-crc",
        0x0001_0030,
        24,
        V1Crc::WholeFileFieldZeroed,
    ),
    ("v1-0009-no-crc", 0x0001_0009, 0, V1Crc::Absent),
];

/// The graph of a named profile.
pub fn profile(name: &str) -> Option<Vec<u8>> {
    PROFILES
        .iter()
        .find(|p| p.0 == name)
        .map(|&(_, version, extension, crc)| graph(version, extension, crc))
}

const LAYER_RECORD: usize = 76;
const COMMAND_BYTES: usize = 192;

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// One I/O record of the version's width (108 or 116 bytes): four dimensions, UINT8, affine
/// quantization (fixed point, scale, zero point), a name.
fn io_record(version: u32, name: &str, dims: [u32; 4]) -> Vec<u8> {
    let size = f::io_record_size(version) as usize;
    let slots = if size == 116 { 6 } else { 4 };
    let after_dims = 4 + 4 * slots;
    let mut r = vec![0u8; size];
    put32(&mut r, 0, 4);
    for (i, d) in dims.iter().enumerate() {
        put32(&mut r, 4 + 4 * i, *d);
    }
    put32(&mut r, after_dims, 2); // data format UINT8
    put32(&mut r, after_dims + 4, 0); // tensor
    put32(&mut r, after_dims + 8, 2); // affine asymmetric
    put32(&mut r, after_dims + 16, 0.5f32.to_bits());
    put32(&mut r, after_dims + 20, 128);
    r[after_dims + 24..][..name.len()].copy_from_slice(name.as_bytes());
    r
}

/// A v1 graph of `version` with `extension` bytes between the public entries and the tables.
pub fn graph(version: u32, extension: usize, crc: V1Crc) -> Vec<u8> {
    let entries = f::entries_offset(version);
    // Every entry the version's layout has (public, plus the proved extensions of a known
    // version); the ones the builder does not fill stay (0, 0).
    let fixed_end = entries + 8 * f::entry_count(version);
    let mut b = vec![0u8; fixed_end + extension];
    b[..4].copy_from_slice(b"VPMN");
    put32(&mut b, 4, version);
    put32(&mut b, f::OFF_TARGET, 0x1000_0099);
    let name = format!("synthetic-v1-{version:08x}");
    b[f::OFF_NETWORK_NAME..][..name.len()].copy_from_slice(name.as_bytes());
    for at in [
        f::OFF_LAYER_COUNT,
        f::OFF_OPERATION_COUNT,
        f::OFF_INPUT_COUNT,
        f::OFF_OUTPUT_COUNT,
    ] {
        put32(&mut b, at, 1);
    }
    // Feature database: NN and TP command size code 1 (192 bytes).
    put32(&mut b, f::FEATURE_DB, (1 << 2) | (1 << 5));
    b[f::OFF_CORE_COUNT] = 1;
    put32(&mut b, f::OFF_MEMORY_POOL, 0x4000);
    put32(&mut b, f::OFF_MEMORY_POOL + 4, 64);
    if version >= f::VIP_SRAM_SINCE {
        put32(&mut b, f::OFF_VIP_SRAM + 4, 0x4_0000);
    }
    // The extension: what a newer version appends. The vendor's reader takes 0x00010020's as
    // 18 further (offset, size) entries (144 bytes, 34 in all), so it is written as empty
    // entries; the parser still only bounds it and keeps it opaque.
    // A newer version has no proved operation record size: the newest known one is written.
    let operation_record = f::record_size("operation", version, 1, 1)
        .or(f::record_size("operation", f::MAX_KNOWN_VERSION, 1, 1))
        .expect("the newest known operation record size") as usize;
    let tables: [(&str, Vec<u8>); 5] = [
        ("input", io_record(version, "input_0", [16, 16, 3, 1])),
        ("output", io_record(version, "output_0", [10, 1, 1, 1])),
        ("layer", {
            let mut r = vec![0u8; LAYER_RECORD];
            r[..7].copy_from_slice(b"layer_0");
            r
        }),
        // An INIT operation attached to no layer: consistent with every cross-check whatever
        // tables the version has.
        ("operation", {
            let mut r = vec![0u8; operation_record];
            put32(&mut r, 0x00, 0xffff);
            put32(&mut r, 0x08, 0xffff);
            r
        }),
        ("nn", (0..COMMAND_BYTES).map(|i| (i as u8) ^ 0x5a).collect()),
    ];
    for (name, payload) in tables {
        let index = f::ENTRIES
            .iter()
            .position(|e| e.name == name)
            .expect("a public entry name");
        let at = entries + 8 * index;
        let start = b.len() as u32;
        put32(&mut b, at, start);
        put32(&mut b, at + 4, payload.len() as u32);
        b.extend_from_slice(&payload);
    }
    let field = f::OFF_CRC;
    let value = match crc {
        V1Crc::Absent => 0,
        V1Crc::WholeFileFieldZeroed => crate::crc_rules::whole_file_field_zeroed(&b, field as u64),
        V1Crc::SuffixFromFixedEnd => crc32fast::hash(&b[fixed_end..]),
    };
    put32(&mut b, field, value);
    b
}
