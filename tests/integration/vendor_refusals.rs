//! Each refusal rule of the v2 parser beside the vendor's reader, measured: one in-memory
//! mutation of a real board file per rule (the bytes handed to `nbinfo -a` through a memfd,
//! never written to disk), nbg's code, and whether nbinfo reads the file, refuses it (exit 255,
//! "fail to initialize nbg_desc parser") or crashes on it (a signal). `docs/failure-codes.md`
//! shows nbinfo's column; this test holds the page to the measurement.

use crate::common;
use nbg_lab::{Code, parse};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::Path;

/// nbinfo's verdict on `bytes`, given as `/proc/self/fd/N` of an anonymous memory file.
fn nbinfo(peer: &Path, bytes: &[u8]) -> &'static str {
    // SAFETY: memfd_create takes a NUL-terminated name and flags; the descriptor it returns is
    // owned by the File below and closed when it drops. Without MFD_CLOEXEC the child inherits it.
    let fd = unsafe { libc::memfd_create(c"nbg-mutation".as_ptr(), 0) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: `fd` is a fresh descriptor nothing else owns.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(bytes).expect("write the memfd");
    let status = std::process::Command::new(peer)
        .arg("-a")
        .arg(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("nbinfo runs");
    match status.code() {
        Some(0) => "reads",
        Some(_) => "refuses",
        None => "crashes",
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    common::le32(b, at)
}

/// `(code, mutation)` per rule, on the face detector (17 sections, directory at 0x3c).
fn cases(b: &[u8]) -> Vec<(Code, Vec<u8>)> {
    let count = le32(b, 0x38) as usize;
    let entry = |kind: u32| {
        (0..count)
            .map(|i| 0x3c + 44 * i)
            .find(|&at| le32(b, at) == kind)
            .expect("section")
    };
    let payload = |kind: u32| le32(b, entry(kind) + 4) as usize;
    let m = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut x = b.to_vec();
        f(&mut x);
        x
    };
    let put = common::put32;
    let ops = payload(4);
    vec![
        (Code::BadMagic, m(&|x| x[0] = b'X')),
        (Code::UnsupportedVersion, m(&|x| put(x, 4, 0x0002_0001))),
        (
            Code::DeclaredSizeMismatch,
            m(&|x| put(x, 0x10, b.len() as u32 + 64)),
        ),
        (Code::SubHeaderCount, m(&|x| put(x, 0x20, 2))),
        (Code::SubHeaderGeometry, m(&|x| put(x, 0x1c, 16))),
        (Code::SectionHeaderSize, m(&|x| put(x, 0x34, 48))),
        (Code::SectionCountLimit, m(&|x| put(x, 0x38, 300))),
        (Code::UnknownSectionType, m(&|x| put(x, entry(38), 41))),
        (
            Code::SectionOutOfBounds,
            m(&|x| put(x, entry(21) + 12, 0x10_0000)),
        ),
        (
            Code::SectionOverlap,
            m(&|x| put(x, entry(21) + 4, payload(19) as u32)),
        ),
        (Code::DuplicateSection, m(&|x| put(x, entry(38), 37))),
        (Code::SectionMissing, m(&|x| put(x, entry(1), 36))),
        (Code::IoRecordSize, m(&|x| put(x, entry(2) + 32, 100))),
        (Code::DimensionCount, m(&|x| put(x, payload(1), 7))),
        (Code::DimensionZero, m(&|x| put(x, payload(1) + 4, 0))),
        (
            Code::InvalidName,
            m(&|x| x[payload(1) + 48..payload(1) + 112].fill(0xff)),
        ),
        (Code::NetworkInfoSize, m(&|x| put(x, entry(35) + 12, 216))),
        (Code::MemoryRecordSize, m(&|x| put(x, entry(37) + 12, 4))),
        (
            Code::MetadataCountMismatch,
            m(&|x| put(x, payload(35) + 0x40, 2)),
        ),
        (Code::TableRecordSize, m(&|x| put(x, entry(4) + 32, 28))),
        (
            Code::OperationLayerOutOfRange,
            m(&|x| put(x, ops + 32 + 8, 55)),
        ),
        (
            Code::OperationPatchOutOfRange,
            m(&|x| put(x, ops + 32 + 16, 10_000)),
        ),
        (
            Code::OperationIndexOutOfRange,
            m(&|x| put(x, ops + 32 + 4, 45)),
        ),
        (
            Code::OperationStateOutOfRange,
            m(&|x| put(x, ops + 32 + 12, 57)),
        ),
        (
            Code::ShInstructionOutOfRange,
            m(&|x| put(x, payload(9), 11)),
        ),
        (Code::SectionChecksumMissing, m(&|x| put(x, payload(40), 8))),
        (
            Code::SectionChecksumMismatch,
            m(&|x| put(x, payload(40) + 4, 0)),
        ),
        (Code::FileChecksumMismatch, m(&|x| put(x, 0xc, 0))),
    ]
}

/// The `nbinfo` column of the v2 table in `docs/failure-codes.md`: code -> verdict.
fn documented() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(common::root().join("docs/failure-codes.md")).unwrap();
    let mut out = BTreeMap::new();
    let mut in_v2 = false;
    for line in text.lines() {
        if line.starts_with("## ") {
            in_v2 = line.starts_with("## v2 rules");
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let (true, [_, code, _, nbinfo, _, _]) = (in_v2, &cells[..]) {
            if let Some(code) = code.strip_prefix('`').and_then(|c| c.strip_suffix('`')) {
                out.insert(code.to_string(), nbinfo.to_string());
            }
        }
    }
    out
}

#[test]
fn each_v2_refusal_beside_the_vendor_reader() {
    let Some(peer) = common::nbinfo() else { return };
    let (dir, _) = common::public_v2_paths();
    let b = std::fs::read(dir.join("a733-face_detector_int16-0000.nb")).unwrap();
    assert_eq!(nbinfo(&peer, &b), "reads");
    let doc = documented();
    let mut problems = Vec::new();
    for (code, bytes) in cases(&b) {
        match parse(&bytes) {
            Ok(_) => problems.push(format!("{code}: nbg accepts the mutation")),
            Err(f) if f.code != code => problems.push(format!("{code}: nbg says {f}")),
            Err(_) => {}
        }
        let theirs = nbinfo(&peer, &bytes);
        match doc.get(code.as_str()) {
            Some(d) if d == theirs => {}
            other => problems.push(format!(
                "{code}: nbinfo {theirs}, docs/failure-codes.md says {other:?}"
            )),
        }
    }
    // What only a corpus showed: nbg accepts it, and so does nbinfo.
    let ops = le32(&b, 0x3c + 44 * 7 + 4) as usize;
    assert_eq!(le32(&b, 0x3c + 44 * 7), 4, "OPERATIONS is the 8th section");
    let mut init = b.clone();
    common::put32(&mut init, ops + 8, 0xffff);
    common::reseal_v2(&mut init);
    for (what, bytes) in [("INIT layer 0xffff", &init), ("the file", &b)] {
        if let Err(f) = parse(bytes) {
            problems.push(format!("{what}: nbg refuses: {f}"));
        }
        assert_eq!(nbinfo(&peer, bytes), "reads", "{what}");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
