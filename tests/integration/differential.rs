//! The differential engine: committed capture sets, replay, refusals, and no writes.

use crate::common;

use nbg_lab::evidence;
use nbg_lab::lab::differential::{self, CaptureSpec, RangeRole, Verdict};
use nbg_lab::lab::synth;
use std::path::{Path, PathBuf};
use std::process::Command;

fn capture(name: &str) -> PathBuf {
    common::root().join("differentials").join(name)
}

fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<_> = walk(dir);
    v.sort();
    v
}

fn walk(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push((p.display().to_string(), e.metadata().unwrap().len()));
        }
    }
    out
}

#[test]
fn committed_trios_regenerate_byte_for_byte() {
    for name in synth::TRIOS {
        let t = synth::trio(name).unwrap();
        let dir = capture(name);
        assert_eq!(std::fs::read(dir.join("A1.nb")).unwrap(), t.a, "{name} A1");
        assert_eq!(std::fs::read(dir.join("A2.nb")).unwrap(), t.a, "{name} A2");
        assert_eq!(std::fs::read(dir.join("B.nb")).unwrap(), t.b, "{name} B");
        let set = differential::load(&dir).unwrap();
        assert_eq!(set.spec.a_source, t.a_source);
        assert_eq!(set.spec.b_source, t.b_source);
    }
}

#[test]
fn canonical_trio_is_reproduced_like_the_spec() {
    let set = differential::load(&capture("dynaio-constant")).unwrap();
    assert_eq!(set.spec.a_source, vec![0, 1, 2, 3]);
    assert_eq!(set.spec.b_source, vec![0, 1, 2, 4]);
    let r = differential::run(&set).unwrap();
    assert!(r.a1_equals_a2);
    assert_eq!(r.same_layout, Some(true));
    assert_eq!(r.result, Verdict::Reproduced);
    // One changed DYNAIO byte at region offset 3, plus the header CRC.
    assert_eq!(r.changed_ranges.len(), 2);
    assert_eq!(r.changed_ranges[0].owner, "header.crc_sum");
    assert_eq!(
        (r.changed_ranges[0].start, r.changed_ranges[0].end),
        (0x0c, 0x10)
    );
    let d = &r.changed_ranges[1];
    assert_eq!(
        (d.dynaio_entry, d.entry_offset, d.section_offset),
        (Some(0), Some(3), Some(3))
    );
    assert_eq!(d.end - d.start, 1);
    let replay = r.replay.as_ref().unwrap();
    assert!(replay.matches_b);
    assert_eq!(replay.recorded_crc32, replay.recomputed_crc32);
    assert_eq!(
        replay.sha256.hex(),
        nbg_lab::digest::Hash256::of(&set.b).hex()
    );
    assert_eq!(replay.substitutions.len(), 1);
}

#[test]
fn later_entry_and_multi_byte_trios_are_reproduced() {
    for (name, entry, offsets) in [
        ("dynaio-later-entry", 17, vec![5]),
        ("dynaio-multi-byte", 3, vec![0, 2, 7]),
    ] {
        let r = differential::run(&differential::load(&capture(name)).unwrap()).unwrap();
        assert_eq!(r.result, Verdict::Reproduced, "{name}");
        let s = r.source.unwrap();
        assert_eq!(s.dynaio_entry, entry);
        assert_eq!(s.differing_source_indices, offsets);
        assert_eq!(s.localized_entry_offsets, offsets);
    }
}

#[test]
fn negative_trio_ends_unresolved() {
    let r = differential::run(&differential::load(&capture("negative-outside-dynaio")).unwrap())
        .unwrap();
    assert_eq!(r.result, Verdict::MultiRegionUnresolved);
    let other: Vec<_> = r
        .changed_ranges
        .iter()
        .filter(|c| c.role == RangeRole::Other)
        .collect();
    assert_eq!(other.len(), 1);
    assert_eq!(
        other[0].owner,
        "NBG_SECTION_NN[0].word0.layer_type+no_z_offset+kernel_xy_size+kernel_z_size"
    );
    assert!(r.replay.is_none());
}

fn scratch(name: &str, f: impl FnOnce(&Path)) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("set");
    std::fs::create_dir(&dir).unwrap();
    for file in ["A1.nb", "A2.nb", "B.nb", "differential.json"] {
        std::fs::copy(capture(name).join(file), dir.join(file)).unwrap();
    }
    f(&dir);
    (tmp, dir)
}

#[test]
fn refusals_name_what_failed() {
    // A1 differs from A2.
    let (_t, dir) = scratch("dynaio-constant", |d| {
        std::fs::copy(d.join("B.nb"), d.join("A2.nb")).unwrap();
    });
    let r = differential::run(&differential::load(&dir).unwrap()).unwrap();
    assert!(!r.a1_equals_a2);
    assert_eq!(r.result, Verdict::A1DiffersFromA2);

    // B with another layout.
    let (_t, dir) = scratch("dynaio-constant", |d| {
        std::fs::copy(common::root().join("controls/erf-u8.nb"), d.join("B.nb")).unwrap();
    });
    let r = differential::run(&differential::load(&dir).unwrap()).unwrap();
    assert_eq!(r.result, Verdict::LayoutDiffers);
    assert!(r.layout_differences[0].starts_with("size A"));

    // A source that is not in A.
    let write_spec = |d: &Path, a: Vec<u8>, b: Vec<u8>| {
        let spec = CaptureSpec {
            a_source: a,
            b_source: b,
            provenance: None,
            ..Default::default()
        };
        std::fs::write(
            d.join("differential.json"),
            serde_json::to_vec(&spec).unwrap(),
        )
        .unwrap();
    };
    let (_t, dir) = scratch("dynaio-constant", |d| {
        write_spec(d, vec![9, 9, 9, 9], vec![9, 9, 9, 8])
    });
    let r = differential::run(&differential::load(&dir).unwrap()).unwrap();
    assert_eq!(r.result, Verdict::SourceNotFound);

    // The right source, but the claimed change is at another index.
    let (_t, dir) = scratch("dynaio-constant", |d| {
        write_spec(d, vec![0, 1, 2, 3], vec![0, 1, 5, 3])
    });
    let r = differential::run(&differential::load(&dir).unwrap()).unwrap();
    assert_eq!(r.result, Verdict::SourceMismatch);

    // Strict differential.json.
    for text in [
        r#"{"a_source": [0], "b_source": [1], "extra": 1}"#,
        r#"{"a_source": [0], "a_source": [0], "b_source": [1]}"#,
        r#"{"a_source": [0, 1], "b_source": [1]}"#,
        r#"{"a_source": [256], "b_source": [1]}"#,
    ] {
        let (_t, dir) = scratch("dynaio-constant", |d| {
            std::fs::write(d.join("differential.json"), text).unwrap()
        });
        assert!(differential::load(&dir).is_err(), "{text}");
    }
}

#[test]
fn cli_writes_nothing_but_the_evidence_file() {
    let (tmp, dir) = scratch("dynaio-constant", |_| {});
    let before = listing(tmp.path());
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_nbg"))
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["differential", dir.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["differential", "--json", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in ["a1_equals_a2", "changed_ranges", "replay", "result"] {
        assert!(v.get(key).is_some(), "{key}");
    }
    for key in [
        "substitutions",
        "recorded_crc32",
        "recomputed_crc32",
        "sha256",
        "matches_b",
    ] {
        assert!(v["replay"].get(key).is_some(), "replay.{key}");
    }
    assert_eq!(v["changed_ranges"][1]["dynaio_entry"], 0);
    assert_eq!(v["changed_ranges"][1]["entry_offset"], 3);
    assert_eq!(listing(tmp.path()), before, "differential wrote a file");

    let ev = tmp.path().join("evidence.json");
    let o = run(&[
        "differential",
        dir.to_str().unwrap(),
        "--evidence",
        ev.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let mut after = listing(tmp.path());
    after.retain(|(p, _)| !p.ends_with("evidence.json"));
    assert_eq!(after, before);
    let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&ev).unwrap()).unwrap();
    assert_eq!(written, v);

    let o = run(&[
        "differential",
        capture("negative-outside-dynaio").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["differential", "/no/such/dir"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn differential_evidence_regenerates_byte_for_byte() {
    let root = common::root();
    let generated = evidence::differential_evidence(&root).unwrap();
    // The synthetic sets, and the vendor serializer's listed in their manifest.
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("differentials/serializer/serializer.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        generated.len(),
        synth::TRIOS.len()
            + nbg_lab::lab::mapping::captures::NAMES.len()
            + manifest["sets"].as_array().unwrap().len()
    );
    common::check_generated(generated);
}

/// A B that differs in every other coefficient byte: the report lists at most
/// `MAX_CHANGED_RANGES` runs, counts the rest, and the experiment ends unresolved; memory is
/// bounded by the cap, not by the number of changed bytes.
#[test]
fn changed_ranges_are_capped_and_counted() {
    let a = synth::bulk(3, 60_000).unwrap();
    let mut b = synth::bulk(3, 60_000).unwrap();
    let coef = b
        .sections
        .iter_mut()
        .find(|s| s.kind == nbg_lab::nbg::format::section::COEF_DATA)
        .unwrap();
    for byte in coef.payload.iter_mut().step_by(2) {
        *byte ^= 0xff;
    }
    let runs = coef.payload.len().div_ceil(2) as u64;
    let (a, b) = (a.emit().unwrap(), b.emit().unwrap());
    let set = differential::CaptureSet {
        a1: a.clone(),
        a2: a,
        b,
        spec: CaptureSpec {
            a_source: vec![0, 1, 2, 3],
            b_source: vec![0, 1, 2, 4],
            provenance: None,
            ..Default::default()
        },
    };
    let r = differential::run(&set).unwrap();
    assert_eq!(r.changed_ranges.len(), differential::MAX_CHANGED_RANGES);
    // Every coefficient run, plus the header CRC and section-40 values outside the list.
    assert!(r.changed_ranges_omitted + r.changed_ranges.len() as u64 >= runs);
    assert_eq!(r.result, Verdict::MultiRegionUnresolved);
    let json = serde_json::to_value(&r).unwrap();
    assert!(json["changed_ranges_omitted"].as_u64().unwrap() > 0);
}

#[test]
fn verdicts_and_roles_serialize_as_their_names() {
    // The names are a contract: pinned here, not read back from the enum.
    use Verdict::*;
    for (v, name) in [
        (Reproduced, "reproduced"),
        (A1DiffersFromA2, "a1-differs-from-a2"),
        (LayoutDiffers, "layout-differs"),
        (NoChange, "no-change"),
        (MultiRegionUnresolved, "multi-region-unresolved"),
        (SourceNotFound, "source-not-found"),
        (SourceMismatch, "source-mismatch"),
        (ReplayMismatch, "replay-mismatch"),
    ] {
        assert_eq!(serde_json::to_value(v).unwrap(), name);
        assert_eq!(format!("{v}"), name);
    }
    use RangeRole::*;
    for (r, name) in [
        (CrcField, "crc-field"),
        (DynaioEntry, "dynaio-entry"),
        (MappedField, "mapped-field"),
        (MappedRange, "mapped-range"),
        (DerivedChecksum, "derived-checksum"),
        (Other, "other"),
    ] {
        assert_eq!(serde_json::to_value(r).unwrap(), name);
        assert_eq!(format!("{r}"), name);
    }
}
