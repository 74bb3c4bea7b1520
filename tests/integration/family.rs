//! The per-family trait (`nbg_lab::nbg::family`): its answers agree with the stored bytes, the parse
//! model and the ledger, on the committed controls and public files of both families.

use crate::common;
use nbg_lab::NbgFamily;
use nbg_lab::nbg::crc_rules::WHOLE_FILE_FIELD_ZEROED;
use nbg_lab::nbg::family::OwnerClass;
use nbg_lab::nbg::family::{Family, Place};
use nbg_lab::nbg::image::NbgImage;

/// Every committed NBG: the controls and the public files (v1 and v2).
fn files() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = common::control_names()
        .into_iter()
        .map(|n| {
            let b = common::control(&n);
            (n, b)
        })
        .collect();
    out.extend(
        common::public_controls()
            .into_iter()
            .map(|(n, b, _)| (n, b)),
    );
    out
}

#[test]
fn the_file_crc_rule_reproduces_the_stored_field() {
    let mut checked = [0usize; 2];
    for (name, bytes) in files() {
        // Every control is valid: one that does not parse is a failure, not a skip.
        let g = nbg_lab::parse(&bytes).unwrap_or_else(|f| panic!("{name}: {f}"));
        let rule = g.crc_rule();
        let stored = common::le32(&bytes, rule.field as usize);
        let doc = g.to_json();
        match g.family() {
            Family::V2 => {
                assert_eq!(g.crc_class(), None, "{name}");
                assert_eq!(g.file_crc(&bytes), Some(stored), "{name}");
                checked[1] += 1;
            }
            Family::V1 if stored == 0 => assert_eq!(g.file_crc(&bytes), None, "{name}"),
            Family::V1 => {
                if doc["crc"]["rule"] == WHOLE_FILE_FIELD_ZEROED {
                    assert_eq!(g.file_crc(&bytes), Some(stored), "{name}");
                    checked[0] += 1;
                }
            }
        }
        // A buffer of another length is not this graph's file.
        assert_eq!(g.file_crc(&bytes[..bytes.len() - 1]), None, "{name}");
        assert_eq!(g.format(), doc["format"], "{name}");
    }
    assert!(
        checked[0] > 0 && checked[1] > 0,
        "both families checked: {checked:?}"
    );
}

#[test]
fn payloads_coverage_and_gaps_agree_with_the_ledger() {
    for (name, bytes) in files() {
        // Every control is valid: one that does not parse is a failure, not a skip.
        let g = nbg_lab::parse(&bytes).unwrap_or_else(|f| panic!("{name}: {f}"));
        let image = NbgImage::new(&g).expect("a parsed control has a ledger");
        let size = bytes.len() as u64;
        for p in g.payloads().iter().filter(|p| p.size > 0) {
            assert!(p.end() <= size, "{name}: {}", p.name);
            assert_eq!(
                g.payload(p.name).map(|q| q.offset),
                Some(p.offset),
                "{name}"
            );
            match g.family() {
                // Every v2 payload byte is covered by a section or the file checksum.
                Family::V2 => assert!(g.coverage_code(p.offset).is_some(), "{name}"),
                Family::V1 => assert_eq!(
                    g.coverage_code(p.offset).is_some(),
                    g.crc_class() == Some(nbg_lab::nbg::crc_rules::CrcClass::Matches),
                    "{name}"
                ),
            }
        }
        for o in image.owners() {
            assert_eq!(image.owner_of(o.start).start, o.start, "{name}");
            if g.family() == Family::V2
                && matches!(o.class, OwnerClass::Padding | OwnerClass::Alignment)
            {
                assert_eq!(g.coverage_code(o.start), None, "{name}: gap at {}", o.start);
                assert!(g.unchecked_reason(o.start, Place::Gap).is_some(), "{name}");
            }
        }
        if let Some((start, end)) = g.checksum_table() {
            for c in g.derived_checksums() {
                assert!(start < c.value_at && c.value_at + 4 <= end, "{name}");
                assert!(c.target.1 <= size, "{name}");
            }
        } else {
            assert!(g.derived_checksums().is_empty(), "{name}");
        }
        let entries = g.dynaio_ranges();
        if let Some(&(first, _)) = entries.first() {
            let region = g.dynaio_region().expect("entries lie in a DYNAIO region");
            assert!(region <= first, "{name}");
        }
        assert!(entries.iter().all(|&(s, e)| s <= e && e <= size), "{name}");
        assert!(!g.descriptors().is_empty(), "{name}");
    }
}
