//! Every v2 failure code, pinned with a mutated control or an invalid builder layout.

use crate::common;

use common::{control, le32, put32};
use nbg_lab::lab::synth::{self, Layout, SectionSpec};
use nbg_lab::nbg::format::section;
use nbg_lab::{Code, NbgFamily, parse};

const DIR: usize = 60; // directory offset in every control (48 + 12)

fn entry(bytes: &[u8], kind: u32) -> usize {
    let count = le32(bytes, 56) as usize;
    (0..count)
        .map(|i| DIR + 44 * i)
        .find(|&at| le32(bytes, at) == kind)
        .expect("section present")
}

fn section_offset(bytes: &[u8], kind: u32) -> usize {
    le32(bytes, entry(bytes, kind) + 4) as usize
}

fn code_of(bytes: &[u8]) -> Code {
    match parse(bytes) {
        Ok(_) => panic!("mutated image parsed successfully"),
        Err(f) => f.code,
    }
}

fn mutate(name: &str, f: impl FnOnce(&mut Vec<u8>)) -> Code {
    let mut b = control(name);
    f(&mut b);
    code_of(&b)
}

fn layout(profile: &str) -> Layout {
    synth::profile(profile, 12).expect("profile")
}

fn with_layout(profile: &str, f: impl FnOnce(&mut Layout)) -> Code {
    let mut l = layout(profile);
    f(&mut l);
    code_of(&l.emit().unwrap())
}

fn spec(l: &mut Layout, kind: u32) -> &mut SectionSpec {
    l.sections
        .iter_mut()
        .find(|s| s.kind == kind)
        .expect("section in layout")
}

/// Set word `at` of operation record `op` (erf-u8: INIT, NN 0, NN 1, TP 0, SH 0 over 4 layers;
/// 9 patches, 5 load-state entries, 2 NN commands, 2 PPU instruction entries).
fn op_word(l: &mut Layout, op: usize, at: usize, v: u32) {
    put32(&mut spec(l, section::OPERATIONS).payload, op * 32 + at, v);
}

/// One mutation per code; `every_v2_code_is_pinned` checks the list is complete.
fn cases() -> Vec<(Code, Code)> {
    let erf = "erf-u8.nb";
    vec![
        (Code::BadMagic, mutate(erf, |b| b[0] = b'X')),
        (
            Code::UnsupportedVersion,
            mutate(erf, |b| put32(b, 4, 0x0003_0000)),
        ),
        (
            Code::UnsupportedVersion,
            mutate(erf, |b| put32(b, 4, 0x0002_0001)),
        ),
        (Code::Truncated, mutate(erf, |b| b.truncate(40))),
        (Code::Truncated, mutate(erf, |b| b.truncate(6))),
        (Code::DeclaredSizeMismatch, mutate(erf, |b| b.push(0))),
        (
            Code::DeclaredSizeMismatch,
            mutate(erf, |b| put32(b, 0x14, 1)),
        ),
        (Code::SubHeaderCount, mutate(erf, |b| put32(b, 0x20, 2))),
        (Code::SubHeaderCount, mutate(erf, |b| put32(b, 0x20, 0))),
        (Code::SubHeaderGeometry, mutate(erf, |b| put32(b, 0x1c, 16))),
        (Code::SubHeaderGeometry, mutate(erf, |b| put32(b, 0x18, 8))),
        (Code::SubHeaderGeometry, mutate(erf, |b| put32(b, 48, 40))),
        (Code::SectionHeaderSize, mutate(erf, |b| put32(b, 52, 40))),
        (Code::SectionCountLimit, mutate(erf, |b| put32(b, 56, 257))),
        (Code::Truncated, mutate(erf, |b| put32(b, 56, 256))),
        (
            Code::UnknownSectionType,
            mutate(erf, |b| put32(b, DIR + 44 * 3, 41)),
        ),
        (
            Code::SectionOutOfBounds,
            mutate(erf, |b| put32(b, DIR + 12, 0xffff_ff00)),
        ),
        (
            Code::SectionOutOfBounds,
            mutate(erf, |b| put32(b, DIR + 8, 1)),
        ),
        (
            Code::SectionOverlap,
            mutate(erf, |b| {
                let first = le32(b, DIR + 4);
                put32(b, DIR + 44 + 4, first + 8);
            }),
        ),
        (Code::SectionOverlap, mutate(erf, |b| put32(b, DIR + 4, 4))),
        (
            Code::DuplicateSection,
            mutate(erf, |b| put32(b, DIR + 44 * 2, section::OPERATIONS)),
        ),
        // Zero sections: nothing a network needs (image, diff and sweep used to fail later
        // with ownership-conflict on such a file).
        (
            Code::SectionMissing,
            with_layout("erf-u8", |l| {
                l.sections.clear();
                l.file_order.clear();
                l.extra_gap.clear();
            }),
        ),
        (
            Code::SectionMissing,
            with_layout("erf-u8", |l| {
                let i = l
                    .sections
                    .iter()
                    .position(|s| s.kind == section::NETWORK_INFO)
                    .unwrap();
                l.sections.remove(i);
                l.file_order.retain(|&k| k != i);
                for k in &mut l.file_order {
                    if *k > i {
                        *k -= 1;
                    }
                }
                l.extra_gap.truncate(l.file_order.len());
            }),
        ),
        (
            Code::IoRecordSize,
            mutate(erf, |b| {
                let e = entry(b, section::INPUT);
                put32(b, e + 12, 111);
            }),
        ),
        (
            Code::IoRecordSize,
            mutate(erf, |b| {
                let e = entry(b, section::OUTPUT);
                put32(b, e + 0x20, 116);
            }),
        ),
        (
            Code::IoCountLimit,
            with_layout("erf-u8", |l| {
                let one = spec(l, section::INPUT).payload.clone();
                spec(l, section::INPUT).payload = one.repeat(257);
            }),
        ),
        (
            Code::DimensionCount,
            mutate(erf, |b| {
                let at = section_offset(b, section::INPUT);
                put32(b, at, 7);
            }),
        ),
        (
            Code::DimensionCount,
            mutate(erf, |b| {
                let at = section_offset(b, section::OUTPUT);
                put32(b, at, 0);
            }),
        ),
        (
            Code::DimensionZero,
            mutate(erf, |b| {
                let at = section_offset(b, section::INPUT);
                put32(b, at + 4, 0);
            }),
        ),
        (
            Code::TensorStorageLimit,
            mutate(erf, |b| {
                let at = section_offset(b, section::INPUT);
                put32(b, at, 3);
                for i in 0..3 {
                    put32(b, at + 4 + 4 * i, 1 << 20);
                }
            }),
        ),
        (
            Code::InvalidName,
            mutate(erf, |b| {
                let at = section_offset(b, section::INPUT) + 0x30;
                b[at..at + 64].fill(b'A');
            }),
        ),
        (
            Code::InvalidName,
            mutate(erf, |b| {
                let at = section_offset(b, section::OUTPUT) + 0x30;
                b[at] = 0xff;
            }),
        ),
        (
            Code::InvalidName,
            mutate(erf, |b| {
                let at = section_offset(b, section::NETWORK_INFO);
                b[at..at + 64].fill(b'n');
            }),
        ),
        (
            Code::NetworkInfoSize,
            mutate(erf, |b| {
                let e = entry(b, section::NETWORK_INFO);
                put32(b, e + 12, 216);
            }),
        ),
        (
            Code::MemoryRecordSize,
            mutate(erf, |b| {
                let e = entry(b, section::MEMORY_POOL);
                put32(b, e + 12, 4);
            }),
        ),
        (
            Code::MemoryRecordSize,
            mutate(erf, |b| {
                let e = entry(b, section::VIP_SRAM);
                put32(b, e + 12, 0);
            }),
        ),
        (
            Code::MetadataCountMismatch,
            mutate(erf, |b| {
                let at = section_offset(b, section::NETWORK_INFO);
                put32(b, at + 0x40, 2);
            }),
        ),
        (
            Code::MetadataCountMismatch,
            mutate(erf, |b| {
                let at = section_offset(b, section::NETWORK_INFO);
                put32(b, at + 0x44, 0);
            }),
        ),
        (
            Code::ChecksumRecordSize,
            mutate(erf, |b| {
                let e = entry(b, section::CHECKSUM);
                put32(b, e + 12, 36);
            }),
        ),
        (
            Code::SectionChecksumDuplicate,
            with_layout("erf-u8", |l| {
                let p = &mut spec(l, section::CHECKSUM).payload;
                p[8..12].copy_from_slice(&section::NN.to_le_bytes());
            }),
        ),
        (
            Code::SectionChecksumMissing,
            with_layout("erf-u8", |l| {
                let p = &mut spec(l, section::CHECKSUM).payload;
                p[0..4].copy_from_slice(&12u32.to_le_bytes());
            }),
        ),
        (
            Code::SectionChecksumMismatch,
            mutate(erf, |b| {
                let at = section_offset(b, section::NN);
                b[at] ^= 1;
            }),
        ),
        (
            Code::FileChecksumMismatch,
            mutate(erf, |b| {
                // A layer's uid is decoded but constrained by nothing but the file CRC.
                let at = section_offset(b, section::LAYER) + 0x48;
                b[at] ^= 0x80;
            }),
        ),
        (Code::FileChecksumMismatch, mutate(erf, |b| b[0x0c] ^= 1)),
        (
            Code::TableRecordSize,
            with_layout("erf-u8", |l| spec(l, section::OPERATIONS).entry_size = 28),
        ),
        (
            Code::InvalidName,
            with_layout("erf-u8", |l| {
                spec(l, section::LAYER).payload[76..140].fill(b'a')
            }),
        ),
        (
            Code::OperationLayerOutOfRange,
            with_layout("erf-u8", |l| op_word(l, 1, 0x08, 4)),
        ),
        (
            Code::OperationPatchOutOfRange,
            with_layout("erf-u8", |l| op_word(l, 1, 0x14, 9)),
        ),
        (
            Code::OperationIndexOutOfRange,
            with_layout("erf-u8", |l| op_word(l, 1, 0x04, 2)),
        ),
        (
            Code::OperationStateOutOfRange,
            with_layout("erf-u8", |l| op_word(l, 1, 0x0c, 5)),
        ),
        (
            Code::ShInstructionOutOfRange,
            with_layout("erf-u8", |l| put32(&mut spec(l, section::SH).payload, 0, 2)),
        ),
        (
            Code::IndexEntryOutOfRange,
            with_layout("erf-u8", |l| {
                put32(&mut spec(l, section::LOADSTATE_TABLE).payload, 4, 0x10_0000)
            }),
        ),
        (
            Code::DynaioUnpaired,
            with_layout("ctc-like", |l| {
                l.sections.retain(|s| s.kind != section::DYNAIO_TABLE);
                let n = l.sections.len();
                l.file_order = (0..n).collect();
                l.extra_gap = vec![0; n];
            }),
        ),
        (
            Code::DynaioUnpaired,
            with_layout("ctc-like", |l| {
                l.sections.retain(|s| s.kind != section::DYNAIO);
                let n = l.sections.len();
                l.file_order = (0..n).collect();
                l.extra_gap = vec![0; n];
            }),
        ),
        (
            Code::DynaioTableSize,
            with_layout("ctc-like", |l| {
                spec(l, section::DYNAIO_TABLE).payload.truncate(12);
            }),
        ),
        (
            Code::DynaioEntryInvalid,
            with_layout("ctc-like", |l| {
                spec(l, section::DYNAIO_TABLE).payload[8..12].copy_from_slice(&1u32.to_le_bytes());
            }),
        ),
        (
            Code::DynaioEntryInvalid,
            with_layout("ctc-like", |l| {
                let t = &mut spec(l, section::DYNAIO_TABLE).payload;
                t[8..12].copy_from_slice(&0u32.to_le_bytes());
            }),
        ),
        (
            Code::DynaioEntryInvalid,
            with_layout("ctc-like", |l| {
                let t = &mut spec(l, section::DYNAIO_TABLE).payload;
                t[4..8].copy_from_slice(&0x10_0000u32.to_le_bytes());
            }),
        ),
    ]
}

#[test]
fn every_case_fails_with_its_code() {
    for (i, (expected, got)) in cases().into_iter().enumerate() {
        assert_eq!(got, expected, "case {i}: expected {expected}, got {got}");
    }
}

#[test]
fn every_v2_code_is_pinned() {
    let pinned: std::collections::BTreeSet<Code> = cases().into_iter().map(|c| c.0).collect();
    // v1-only and image-only codes are pinned in their own tests.
    let v1_only = [
        Code::TableRecordSize,
        Code::OwnershipConflict,
        // v1 record cross-checks, pinned in tests/integration/v1_tables.rs.
        Code::ShPpuParamOutOfRange,
        Code::HwInitPatchOutOfRange,
        Code::HwInitStateOutOfRange,
        // Lab verdicts, not parse refusals: pinned in tests/integration/verdicts.rs (a v1 CRC
        // field no rule reproduces) and cli.rs (an input `check` cannot read).
        Code::CrcFieldUnexplained,
        Code::Unreadable,
    ];
    for code in Code::ALL.iter().filter(|c| !v1_only.contains(c)) {
        assert!(pinned.contains(code), "no test pins {code}");
    }
}

#[test]
fn failure_offsets_point_at_the_field() {
    let mut b = control("erf-u8.nb");
    put32(&mut b, 0x20, 2);
    assert_eq!(parse(&b).unwrap_err().offset, 0x20);

    // An overlapping DYNAIO entry is refused at its own table record.
    let mut l = layout("ctc-like");
    spec(&mut l, section::DYNAIO_TABLE).payload[8..12].copy_from_slice(&0u32.to_le_bytes());
    let built = l.emit().unwrap();
    let f = parse(&built).unwrap_err();
    assert_eq!(f.code, Code::DynaioEntryInvalid, "{f}");
    assert_eq!(
        f.offset as usize,
        section_offset(&built, section::DYNAIO_TABLE) + 8
    );
}

/// What only the spec's corpus showed: each mutation parses, and the named corpus invariant is
/// reported as not holding (`docs/failure-codes.md`, basis `corpus`).
fn corpus_cases() -> Vec<(&'static str, Vec<u8>)> {
    let built = |f: &dyn Fn(&mut Layout)| {
        let mut l = layout("ctc-like");
        f(&mut l);
        l.emit().unwrap()
    };
    let erf = |f: &dyn Fn(&mut Layout)| {
        let mut l = layout("erf-u8");
        f(&mut l);
        l.emit().unwrap()
    };
    vec![
        (
            "layers-declare-at-most-attached-operations",
            erf(&|l| put32(&mut spec(l, section::LAYER).payload, 0x44, 2)),
        ),
        ("no-layer-id", erf(&|l| op_word(l, 0, 0x08, 0xffff_ffff))),
        (
            "dynaio-layout",
            built(&|l| spec(l, section::DYNAIO).payload.push(0)),
        ),
        (
            "dynaio-layout",
            built(&|l| {
                spec(l, section::DYNAIO_TABLE).payload[4..8].copy_from_slice(&0u32.to_le_bytes())
            }),
        ),
        (
            "dynaio-padding-zero",
            // Entry 0 is four bytes at offset 0, so region byte 4 is padding.
            built(&|l| spec(l, section::DYNAIO).payload[4] = 1),
        ),
        (
            "dynaio-padding-zero",
            built(&|l| {
                let region = &mut spec(l, section::DYNAIO).payload;
                let last = region.len() - 1;
                region[last] = 0x80;
            }),
        ),
        (
            "dynaio-padding-zero",
            built(&|l| spec(l, section::DYNAIO_TABLE).payload.clear()),
        ),
    ]
}

#[test]
fn corpus_values_are_reported_never_refused() {
    for (i, (name, bytes)) in corpus_cases().into_iter().enumerate() {
        let g = parse(&bytes).unwrap_or_else(|f| panic!("case {i} ({name}) refused: {f}"));
        let doc = g.to_json();
        let inv = doc["corpus_invariants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("case {i}: no invariant {name}"));
        assert_eq!(inv["holds"], false, "case {i}: {inv}");
    }
    // The unmutated control holds every one of them.
    let doc = parse(&control("ctc-like.nb")).unwrap().to_json();
    for inv in doc["corpus_invariants"].as_array().unwrap() {
        if [
            "no-layer-id",
            "layers-declare-at-most-attached-operations",
            "dynaio-layout",
            "dynaio-padding-zero",
        ]
        .contains(&inv["name"].as_str().unwrap())
        {
            assert_eq!(inv["holds"], true, "{inv}");
        }
    }
}

#[test]
fn failure_renders_code_offset_and_message() {
    let mut b = control("erf-u8.nb");
    b[0] = 0;
    let f = parse(&b).unwrap_err();
    let text = f.to_string();
    assert!(text.starts_with("error[bad-magic] at 0x0: "), "{text}");
    let json = f.to_json();
    assert_eq!(json["error"]["code"], "bad-magic");
    assert_eq!(json["error"]["offset"], 0);
}

/// An empty index entry points at no byte, wherever its offset lies: the file parses (the
/// mutation sweep found a panic here once, `streaming::mutations_fail_identically`).
#[test]
fn an_empty_index_entry_may_point_anywhere() {
    let built = with_layout_bytes("erf-u8", |l| {
        let t = &mut spec(l, section::LOADSTATE_TABLE).payload;
        put32(t, 0, 0x0100_0000);
        put32(t, 4, 0);
    });
    let g = parse(&built).unwrap_or_else(|f| panic!("{f}"));
    assert!(g.to_json()["load_states"]["covers_section"] == false);
}

fn with_layout_bytes(profile: &str, f: impl FnOnce(&mut Layout)) -> Vec<u8> {
    let mut l = layout(profile);
    f(&mut l);
    l.emit().unwrap()
}
