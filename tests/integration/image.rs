//! NbgImage: one owner per byte, exact re-emission, refusal after a change, pinned ledgers.

use crate::common;
use nbg_lab::NbgFamily;

use nbg_lab::evidence;
use nbg_lab::lab::synth::{Rng, shuffle};
use nbg_lab::nbg::family::OwnerClass;
use nbg_lab::nbg::image::{EmitError, NbgImage};
use nbg_lab::parse;
use proptest::prelude::*;
use serde_json::{Value, json};

fn check_invariants(image: &NbgImage<'_>, bytes: &[u8]) {
    let owners = image.owners();
    assert_eq!(owners.first().unwrap().start, 0);
    assert_eq!(owners.last().unwrap().end, bytes.len() as u64);
    for w in owners.windows(2) {
        assert_eq!(w[0].end, w[1].start, "gap or overlap at 0x{:x}", w[0].end);
    }
    assert!(owners.iter().all(|o| o.end > o.start));
    let total: u64 = image.totals().values().sum();
    assert_eq!(total, bytes.len() as u64);
    for o in owners.iter().filter(|o| o.class == OwnerClass::Padding) {
        let zero = bytes[o.start as usize..o.end as usize]
            .iter()
            .all(|&b| b == 0);
        assert_eq!(o.all_zero, Some(zero));
    }
    assert_eq!(image.emit().unwrap(), bytes);
}

#[test]
fn every_control_and_public_file_round_trips_exactly() {
    let mut inputs: Vec<(String, Vec<u8>)> = common::control_names()
        .into_iter()
        .map(|n| {
            let b = common::control(&n);
            (n, b)
        })
        .collect();
    let public = common::corpus_files().unwrap_or_else(common::public_controls);
    let expected = 5 + public.len();
    inputs.extend(public.into_iter().map(|(n, b, _)| (n, b)));
    assert_eq!(inputs.len(), expected);
    for (name, bytes) in inputs {
        let graph = parse(&bytes).unwrap_or_else(|f| panic!("{name}: {f}"));
        let image = NbgImage::new(&graph).unwrap_or_else(|f| panic!("{name}: {f}"));
        check_invariants(&image, &bytes);
        let r = image.reconstruction().unwrap();
        assert!(r.identical);
        assert_eq!(r.sha256, graph.file().sha256, "{name}");
    }
}

#[test]
fn connection_region_is_a_view_unless_unowned() {
    let b = common::control("tail-gap.nb");
    let image = NbgImage::new(&parse(&b).unwrap()).unwrap();
    let tail = image.owners().last().unwrap();
    assert_eq!(tail.class, OwnerClass::ConnectionTail);
    assert_eq!(
        (tail.start, tail.end),
        (b.len() as u64 - 512, b.len() as u64)
    );
    assert!(
        image
            .views()
            .iter()
            .all(|v| !v.label.starts_with("connection"))
    );

    let b = common::control("ctc-like.nb");
    let image = NbgImage::new(&parse(&b).unwrap()).unwrap();
    assert!(
        image
            .owners()
            .iter()
            .all(|o| o.class != OwnerClass::ConnectionTail)
    );
    let view = image
        .views()
        .iter()
        .find(|v| v.label.starts_with("connection"))
        .unwrap();
    assert_eq!(
        (view.start, view.end),
        (b.len() as u64 - 512, b.len() as u64)
    );
    // DYNAIO entries are nested views over the data region, never owners.
    let nested = image
        .views()
        .iter()
        .filter(|v| v.label.starts_with("dynaio_table"))
        .count();
    assert_eq!(nested, 50);
}

#[test]
fn emission_after_a_semantic_change_is_refused() {
    let b = common::control("erf-u8.nb");
    let graph = parse(&b).unwrap();
    let image = NbgImage::new(&graph).unwrap();
    let mut changed = image.change("test: flip one NN byte");
    let nn = match &graph {
        nbg_lab::Graph::V2(g) => g.section(7).unwrap().offset,
        _ => unreachable!(),
    };
    changed.write(nn, &[b[nn as usize] ^ 1], "flip").unwrap();
    match changed.emit() {
        Err(EmitError::SemanticChange { changes }) => assert_eq!(changes.len(), 2),
        other => panic!("changed image emitted: {other:?}"),
    }
    // It can still be hashed and compared.
    assert_ne!(changed.sha256(), graph.file().sha256);
    assert_eq!(changed.first_difference(&b), Some(nn));
    // Even an unchanged-looking marker refuses.
    let marked = image.change("marker only");
    assert!(matches!(
        marked.emit(),
        Err(EmitError::SemanticChange { .. })
    ));
    assert_eq!(marked.first_difference(&b), None);
    // The original image still emits.
    assert_eq!(image.emit().unwrap(), b);
}

#[test]
fn image_evidence_regenerates_byte_for_byte() {
    let root = common::root();
    let generated = evidence::image_evidence(&root).unwrap();
    assert_eq!(generated.len(), 5);
    common::check_generated(generated);
}

#[test]
fn public_ledgers_match_their_snapshot() {
    let mut all = serde_json::Map::new();
    let Some(files) = common::corpus_files() else {
        return;
    };
    for (name, bytes, _) in files {
        let image = NbgImage::new(&parse(&bytes).unwrap()).unwrap();
        let owners: Value = image
            .owners()
            .iter()
            .map(|o| json!([o.start, o.end, o.class, o.label, o.all_zero]))
            .collect();
        all.insert(
            name,
            json!({ "owners": owners, "totals": image.totals(), "views": image.views().len() }),
        );
    }
    common::snapshot_per_file(
        common::snapshot_file!("v1_images.json"),
        "v1_images.json",
        all,
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_layouts_keep_the_ownership_invariants(
        seed in any::<u64>(),
        alignments in prop::collection::vec(prop::sample::select(vec![0u32, 1, 8, 64, 256]), 20),
        gaps in prop::collection::vec(0u64..100, 20),
        empty in prop::collection::vec(any::<bool>(), 20),
        tail in prop::sample::select(vec![0usize, 1, 100, 511, 512, 513, 2000]),
        shuffled in any::<bool>(),
        dynaio in any::<bool>(),
    ) {
        let mut rng = Rng::new(seed);
        let profile = if dynaio { "ctc-like" } else { "erf-u8" };
        let mut layout = nbg_lab::lab::synth::profile(profile, seed).unwrap();
        let n = layout.sections.len();
        for (i, s) in layout.sections.iter_mut().enumerate() {
            s.alignment = alignments[i];
            // Empty opaque sections (never the decoded ones, whose sizes are rules, nor the
            // NN/TP commands operations index, nor the coefficient, PPU-instruction and
            // load-state data the index tables point into).
            let indexed = matches!(s.kind, 7 | 8 | 19 | 21 | 24);
            if empty[i] && nbg_lab::nbg::holds::v2(s.kind).is_none() && !indexed && s.kind != 20 {
                s.payload.clear();
            }
        }
        if shuffled {
            shuffle(&mut rng, &mut layout.file_order);
        }
        layout.extra_gap = gaps[..n].to_vec();
        layout.tail = rng.bytes(tail);
        let bytes = layout.emit().unwrap();
        let graph = parse(&bytes).map_err(|f| TestCaseError::fail(f.to_string()))?;
        let image = NbgImage::new(&graph).map_err(|f| TestCaseError::fail(f.to_string()))?;
        check_invariants(&image, &bytes);
        for o in image.owners() {
            if o.class == OwnerClass::Alignment {
                prop_assert!(o.end - o.start < 256);
            }
        }
        let last_owned = image.owners().iter().rev().find(|o| o.class != OwnerClass::Padding && o.class != OwnerClass::ConnectionTail).unwrap().end;
        let has_tail = image.owners().iter().any(|o| o.class == OwnerClass::ConnectionTail);
        prop_assert_eq!(has_tail, bytes.len() as u64 - last_owned >= 512);
    }
}

#[test]
fn image_fields_list_every_decoded_field_with_its_value() {
    let bytes = common::public_control("a733-lenet-v2-0016.nb");
    let g = parse(&bytes).unwrap();
    let image = NbgImage::new(&g).unwrap();
    let fields = nbg_lab::lab::fields::fields(&g, &image);
    let value = |name: &str| {
        fields
            .iter()
            .find(|f| f.field == name)
            .unwrap_or_else(|| panic!("no field {name}"))
            .value
            .clone()
    };
    use nbg_lab::lab::fields::Value as V;
    assert_eq!(value("header.magic"), Some(V::Text("VPMN".into())));
    assert_eq!(
        value("header.input_count"),
        Some(V::Unsigned(g.inputs().len() as u64))
    );
    // Fields tile the decoded-record owners exactly, in file order.
    let decoded: u64 = image
        .owners()
        .iter()
        .filter(|o| o.class == OwnerClass::DecodedRecord)
        .map(|o| o.len())
        .sum();
    assert_eq!(fields.iter().map(|f| f.size).sum::<u64>(), decoded);
    assert!(
        fields
            .windows(2)
            .all(|w| w[0].offset + w[0].size <= w[1].offset)
    );
    // The command prints them, in text and in JSON.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lenet.nb");
    std::fs::write(&path, &bytes).unwrap();
    let out = common::nbg(dir.path(), &["image", "--json", "--fields", "lenet.nb"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["fields"].as_array().unwrap().len(), fields.len());
    let out = common::nbg(dir.path(), &["image", "--fields", "lenet.nb"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("header.magic = \"VPMN\""), "{text}");
}

/// The drill-down of `info`'s "fields named unknown" (issue 68): `image --unknown` groups the
/// unknown fields by name, and their bytes add up to `info`'s figure on every public file.
#[test]
fn unknown_fields_add_up_to_infos_figure() {
    let mut files: Vec<(String, Vec<u8>)> = common::public_controls()
        .into_iter()
        .map(|(n, b, _)| (n, b))
        .collect();
    if let Some(more) = common::corpus_files() {
        files.extend(more.into_iter().map(|(n, b, _)| (n, b)));
    }
    let mut with_unknown = 0;
    for (name, bytes) in &files {
        let g = parse(bytes).unwrap();
        let image = NbgImage::new(&g).unwrap();
        let fields = nbg_lab::lab::fields::fields(&g, &image);
        let groups = nbg_lab::lab::fields::unknown_summary(&fields);
        let total: u64 = groups.iter().map(|g| g.2).sum();
        assert_eq!(total, g.unknown_field_bytes(), "{name}");
        with_unknown += usize::from(total > 0);
    }
    assert!(
        with_unknown > 0,
        "some public file has fields named unknown"
    );
}
