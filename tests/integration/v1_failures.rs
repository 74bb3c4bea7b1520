//! v1 failure codes on mutated public files (in memory), the CRC classification, and the
//! registry finding a coverage rule that no code names.

use crate::common;

use common::{le32, put32};
use nbg_lab::nbg::crc_rules::CrcClass;
use nbg_lab::nbg::parse::Graph;
use nbg_lab::{Code, parse};

fn timvx() -> Vec<u8> {
    common::public_control("timvx-conv2d_relu_maxpool2d_fp32-001e.nb")
}

/// Entry k's (offset, size) file offset in a 0x0001001e file.
fn entry(k: usize) -> usize {
    0x178 + 8 * k
}

fn code(bytes: &[u8]) -> Code {
    parse(bytes).expect_err("mutation must be refused").code
}

#[test]
fn v1_failure_codes() {
    let base = timvx();
    let m = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = base.clone();
        f(&mut b);
        code(&b)
    };
    assert_eq!(m(&|b| put32(b, 4, 0x0001_0002)), Code::UnsupportedVersion);
    // A newer version whose public entries reference no table cannot be bounded.
    assert_eq!(
        m(&|b| {
            put32(b, 4, 0x0001_0021);
            for k in 0..16 {
                put32(b, entry(k) + 4, 0);
            }
        }),
        Code::UnsupportedVersion
    );
    // Nor one whose first table lies inside the public fixed part.
    assert_eq!(
        m(&|b| {
            put32(b, 4, 0x0001_0021);
            put32(b, entry(0), 0x1f0);
        }),
        Code::UnsupportedVersion
    );
    assert_eq!(m(&|b| b.truncate(0x200)), Code::Truncated);
    assert_eq!(m(&|b| b[0x0c..0x4c].fill(b'x')), Code::InvalidName);
    // Input table pushed past EOF.
    assert_eq!(m(&|b| put32(b, entry(0), 0x2380)), Code::SectionOutOfBounds);
    assert_eq!(
        m(&|b| put32(b, entry(0) + 4, 0xffff_0000)),
        Code::SectionOutOfBounds
    );
    // Output table moved onto the input table; input moved into the fixed part.
    assert_eq!(
        m(&|b| {
            let i = le32(b, entry(0));
            put32(b, entry(1), i + 4)
        }),
        Code::SectionOverlap
    );
    assert_eq!(m(&|b| put32(b, entry(0), 0x100)), Code::SectionOverlap);
    // A 115-byte input table; a layer table that is not whole records.
    assert_eq!(m(&|b| put32(b, entry(0) + 4, 115)), Code::IoRecordSize);
    assert_eq!(
        m(&|b| {
            let s = le32(b, entry(2) + 4);
            put32(b, entry(2) + 4, s - 4)
        }),
        Code::TableRecordSize
    );
    // Header counts that disagree with the tables.
    assert_eq!(m(&|b| put32(b, 0x54, 2)), Code::MetadataCountMismatch);
    assert_eq!(m(&|b| put32(b, 0x50, 6)), Code::MetadataCountMismatch);
    // I/O record fields.
    assert_eq!(
        m(&|b| {
            let at = le32(b, entry(0)) as usize;
            put32(b, at, 7)
        }),
        Code::DimensionCount
    );
    assert_eq!(
        m(&|b| {
            let at = le32(b, entry(0)) as usize;
            put32(b, at + 4, 0)
        }),
        Code::DimensionZero
    );
    assert_eq!(
        m(&|b| {
            let at = le32(b, entry(0)) as usize + 52;
            b[at..at + 64].fill(b'n')
        }),
        Code::InvalidName
    );
    // A nested load-state entry that leaves the load-state data.
    assert_eq!(
        m(&|b| {
            let at = le32(b, entry(26)) as usize;
            put32(b, at, 0xffff)
        }),
        Code::SectionOutOfBounds
    );
}

#[test]
fn crc_field_is_classified_never_fatal() {
    let mut b = timvx();
    let g = parse(&b).unwrap();
    let Graph::V1(g) = g else { panic!("v1") };
    assert_eq!(g.crc.classification, CrcClass::Matches);
    // A changed payload byte leaves the stored CRC unexplained, and the parse still succeeds.
    let last = b.len() - 1;
    b[last] ^= 0x55;
    let Graph::V1(g) = parse(&b).unwrap() else {
        panic!("v1")
    };
    assert_eq!(g.crc.classification, CrcClass::Unexplained);
    assert_ne!(g.crc.stored, g.crc.computed_whole_file_zeroed);
    // Stored zero reads as absent.
    put32(&mut b, 0x6c, 0);
    let Graph::V1(g) = parse(&b).unwrap() else {
        panic!("v1")
    };
    assert_eq!(g.crc.classification, CrcClass::Absent);
}

/// A producer that covered only [0, end of fixed part) is explained by the registry with no
/// code naming that rule.
#[test]
fn a_new_coverage_rule_is_discovered_by_the_registry() {
    let mut b = timvx();
    let fixed_end = 0x250;
    let mut prefix = b[..fixed_end].to_vec();
    prefix[0x6c..0x70].fill(0);
    put32(&mut b, 0x6c, crc32fast::hash(&prefix));
    let graph = parse(&b).unwrap();
    let Graph::V1(g) = &graph else { panic!("v1") };
    assert_eq!(g.crc.classification, CrcClass::Matches);
    let e = nbg_lab::nbg::crc_explain::explain(&graph);
    let rules: Vec<&str> = e.matches.iter().map(|h| h.rule.as_str()).collect();
    assert!(
        rules.contains(&"prefix-field-zeroed@end-of-fixed-part"),
        "{rules:?}"
    );
    let h = e
        .matches
        .iter()
        .find(|h| h.rule == "prefix-field-zeroed@end-of-fixed-part")
        .unwrap();
    assert_eq!(h.ranges, vec![[0, 0x6c], [0x70, fixed_end as u64]]);
    assert_eq!(h.zeroed, vec![[0x6c, 0x70]]);
    assert_eq!(g.crc.rule.as_deref(), Some(e.matches[0].rule.as_str()));
}

#[test]
fn v1_byte_flips_and_truncations_never_panic() {
    let original = timvx();
    let mut b = original.clone();
    for i in 0..b.len() {
        for pattern in [0x01u8, 0x80, 0xff] {
            b[i] ^= pattern;
            let _ = parse(&b);
            b[i] = original[i];
        }
    }
    for len in 0..0x300.min(b.len()) {
        assert!(parse(&b[..len]).is_err());
    }
}

/// A known version no public file proves reads the entries the vendor reader gates on it: the
/// 0x00010014 file relabelled 0x00010015 has the same 18 entries, no opaque extension, and says
/// its layout rests on the vendor reader; relabelled past the newest known version it keeps
/// the bytes after the public layout opaque.
#[test]
fn a_version_without_a_public_file_reads_the_vendor_gated_entries() {
    use nbg_lab::nbg::format::v1::LayoutEvidence;
    let original = common::public_control("ameba-fer2013_cnn-0014.nb");
    let mut b = original.clone();
    put32(&mut b, 4, 0x0001_0015);
    let Graph::V1(g) = parse(&b).unwrap() else {
        panic!("v1")
    };
    assert_eq!(g.fixed_part.entry_count, 18);
    assert_eq!(g.fixed_part.extension_entries, ["op_sync", "dma_sbi_info"]);
    assert_eq!(g.fixed_part.evidence, LayoutEvidence::VendorReader);
    assert_eq!(g.opaque_fixed_extension.size, 0);
    assert!(g.records.layers.is_some());
    let mut b = original;
    put32(&mut b, 4, 0x0001_0021);
    let Graph::V1(g) = parse(&b).unwrap() else {
        panic!("v1")
    };
    assert_eq!(g.fixed_part.entry_count, 16);
    assert!(g.fixed_part.extension_entries.is_empty());
    assert_eq!(g.fixed_part.evidence, LayoutEvidence::BoundedUnknown);
    assert_eq!(g.opaque_fixed_extension.offset, 0x1f8);
    assert_eq!(g.opaque_fixed_extension.size, 16);
    assert_eq!(
        g.opaque_fixed_extension.fingerprint.sha256,
        nbg_lab::digest::Hash256::of(&b[0x1f8..0x208])
    );
    assert!(g.records.layers.is_none());
}
