//! Proptest mutation tests: the CI stand-in for the long fuzz runs (`fuzz/`, documented in
//! `notebooks/hardening.md`). Structured mutations of the controls and small public files:
//! parse never panics, check-only mode agrees with the full parse, and every accepted input
//! has a proved ledger that re-emits byte for byte and diffs against its origin.

use crate::common;
use nbg_lab::NbgFamily;

use nbg_lab::nbg::image::NbgImage;
use nbg_lab::nbg::parse::{Options, parse_with};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Word(usize, u32),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let word = prop::sample::select(vec![
        0u32,
        1,
        2,
        0x30,
        0x3c,
        44,
        112,
        255,
        256,
        257,
        0x7fff_ffff,
        u32::MAX,
    ]);
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, x)| Mutation::Flip(at, x)),
        (any::<usize>(), word).prop_map(|(at, w)| Mutation::Word(at, w)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, b)| Mutation::Insert(at, b)),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Mutation::Delete(at, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    match m {
        Mutation::Flip(at, x) => bytes[at % len] ^= x,
        Mutation::Word(at, w) => {
            // Word-aligned, where the format keeps its fields.
            let at = (at % len) & !3;
            let end = (at + 4).min(len);
            bytes[at..end].copy_from_slice(&w.to_le_bytes()[..end - at]);
        }
        Mutation::Insert(at, b) => {
            let at = at % len;
            bytes.splice(at..at, b.iter().copied());
        }
        Mutation::Delete(at, n) => {
            let at = at % len;
            bytes.drain(at..(at + n).min(len));
        }
        Mutation::Truncate(at) => bytes.truncate(at % len),
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = common::control_names()
        .iter()
        .map(|n| common::control(n))
        .collect();
    out.extend(
        common::public_controls()
            .into_iter()
            .filter(|f| f.1.len() <= 128 * 1024)
            .map(|f| f.1),
    );
    out
}

fn check(original: &[u8], mutated: &[u8]) -> Result<(), TestCaseError> {
    let full = nbg_lab::parse(mutated);
    let quick = parse_with(
        mutated,
        Options {
            fingerprints: false,
        },
    );
    match (&full, &quick) {
        (Err(a), Err(b)) => prop_assert_eq!(a, b),
        (Ok(g), Ok(_)) => {
            let image = NbgImage::new(g).map_err(|f| TestCaseError::fail(f.to_string()))?;
            prop_assert_eq!(image.emit().unwrap(), mutated.to_vec());
            // Patch resolution and every decoded record, the entries of a cut table included.
            if let Some(t) = g.patch_targets() {
                prop_assert!(t.resolved + t.unused <= t.patches);
            }
            let r = nbg_lab::nbg::reencode::reencode(g, &image);
            prop_assert!(r.exact(), "{:?}", r.first_mismatch);
            let _ = g.to_json();
            if let Ok(go) = nbg_lab::parse(original) {
                let io = NbgImage::new(&go).unwrap();
                if let Ok(r) = nbg_lab::lab::diff::diff(&go, &io, g, &image) {
                    prop_assert_eq!(r.identical, original == mutated);
                }
            }
        }
        _ => prop_assert!(false, "check-only and full parse disagree"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn mutated_graphs_never_panic(seed in any::<prop::sample::Index>(), ms in prop::collection::vec(mutation(), 1..6)) {
        let seeds = seeds();
        let original = &seeds[seed.index(seeds.len())];
        let mut bytes = original.clone();
        for m in &ms {
            apply(&mut bytes, m);
        }
        check(original, &bytes)?;
    }

    #[test]
    fn mutated_corpus_configs_never_panic(ms in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8), cut in any::<usize>()) {
        let mut text = std::fs::read(common::root().join("controls/corpus.json")).unwrap();
        for (at, b) in ms {
            let n = text.len();
            text[at % n] = b;
        }
        text.truncate(cut % (text.len() + 1));
        let config = common::root().join("controls/corpus.json");
        if let Ok(c) = nbg_lab::lab::corpus::from_bytes(&text, &config) {
            for e in &c.entries {
                prop_assert!(e.full_path.starts_with(common::root().join("controls")));
            }
        }
    }
}

/// The sweep's speed, held by a count that cannot drift with the machine: for every public
/// file (v1, and v2 as `v2/NAME`), the flips parsed again (whole, or their records stage alone)
/// and the bytes those check-only parses read (`work`), with the outcome counts, against
/// `tests/snapshots/sweep_work.json`. A decoder put back on the check-only reparse, or a stage
/// that reads the records' bytes again, reads more bytes and fails it; a file the snapshot does
/// not hold yet is named on stderr.
#[test]
fn sweep_work_is_held_per_public_file() {
    let (v1, names) = common::public_paths();
    let (v2, names_v2) = common::public_v2_paths();
    let files = names.into_iter().map(|n| (v1.join(&n), n)).chain(
        names_v2
            .into_iter()
            .map(|n| (v2.join(&n), format!("v2/{n}"))),
    );
    let mut map = serde_json::Map::new();
    for (path, name) in files {
        let bytes = std::fs::read(path).unwrap();
        let (r, _) = nbg_lab::lab::sweep::sweep(&bytes, nbg_lab::lab::sweep::EXHAUSTIVE_LIMIT)
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        map.insert(
            name,
            serde_json::json!({
                "reparses": r.work.reparses,
                "bytes_read": r.work.bytes_read,
                "detected": r.detected,
                "tolerated": r.tolerated,
                "undetected": r.undetected,
            }),
        );
    }
    common::snapshot_per_file(
        common::snapshot_file!("sweep_work.json"),
        "sweep_work.json",
        map,
    );
}
