//! The mapping registry: loading, `nbg mapping check` / `promote`, the synthetic capture sets,
//! the lab's re-check, and the differential engine localizing through the registry.

use crate::common;

use nbg_lab::lab::differential::{self, RangeRole, Verdict};
use nbg_lab::lab::mapping::{self, Encoding, Outcome, Reason, Status, Value, WriteRole, captures};
use nbg_lab::nbg::image::NbgImage;
use std::path::{Path, PathBuf};

fn capture(name: &str) -> PathBuf {
    common::root().join("differentials").join(name)
}

fn committed() -> PathBuf {
    common::root().join(mapping::COMMITTED)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A temporary folder with the committed registry (or `registry`) and copies of `sets`.
fn workspace(registry: Option<&mapping::Registry>, sets: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text = match registry {
        Some(r) => r.canonical(),
        None => std::fs::read_to_string(committed()).unwrap(),
    };
    std::fs::write(dir.path().join("mappings.json"), text).unwrap();
    for s in sets {
        copy_dir(&capture(s), &dir.path().join(s));
    }
    dir
}

fn check(names: &[&str]) -> Vec<mapping::CheckRow> {
    let registry = mapping::load(&committed()).unwrap();
    let caps: Vec<_> = names
        .iter()
        .map(|n| mapping::Capture::load(&capture(n), n.to_string()).unwrap())
        .collect();
    let all: Vec<_> = registry.mappings.iter().collect();
    mapping::check_all(&all, &caps).unwrap()
}

fn row<'a>(rows: &'a [mapping::CheckRow], m: &str, c: &str) -> &'a mapping::CheckRow {
    rows.iter()
        .find(|r| r.mapping == m && r.capture == c)
        .unwrap()
}

#[test]
fn committed_registry_is_canonical_builtin_and_starts_with_the_dynaio_constant() {
    let r = mapping::load(&committed()).unwrap();
    assert_eq!(r.schema, mapping::SCHEMA);
    assert_eq!(r.mappings[0].name, "dynaio-constant");
    assert_eq!(
        mapping::builtin(),
        &r,
        "the compiled-in copy is the committed file"
    );
    assert_eq!(
        std::fs::read_to_string(committed()).unwrap(),
        r.canonical(),
        "canonical JSON"
    );
    // Every promoted mapping names at least two capture sets with different B values.
    for m in r.mappings.iter().filter(|m| m.status == Status::Promoted) {
        let bs: std::collections::BTreeSet<String> = m
            .evidence
            .iter()
            .map(|e| serde_json::to_string(&e.b).unwrap())
            .collect();
        assert!(bs.len() >= 2, "{}", m.name);
    }
}

#[test]
fn committed_capture_sets_regenerate_byte_for_byte() {
    for name in captures::NAMES {
        let built = captures::build(name).unwrap();
        let dir = capture(name);
        assert_eq!(std::fs::read(dir.join("A1.nb")).unwrap(), built.a, "{name}");
        assert_eq!(std::fs::read(dir.join("A2.nb")).unwrap(), built.a, "{name}");
        assert_eq!(std::fs::read(dir.join("B.nb")).unwrap(), built.b, "{name}");
        let spec = differential::load(&dir).unwrap().spec;
        assert_eq!(spec, built.spec, "{name}");
        assert_ne!(built.a, built.b, "{name}");
    }
}

#[test]
fn each_kind_is_proved_by_two_sets_and_refuted_by_one_with_the_byte() {
    let kinds: [(&str, [&str; 2], &str, &str); 4] = [
        (
            "dynaio-constant",
            ["dynaio-constant", "dynaio-later-entry"],
            "negative-outside-dynaio",
            "NBG_SECTION_NN[0].word0.layer_type+no_z_offset+kernel_xy_size+kernel_z_size",
        ),
        (
            "v2-output-quant-scale",
            ["v2-output-scale-64", "v2-output-scale-256"],
            "v2-output-scale-with-zero-point",
            // The zero point, the second word of the quantization array.
            "NBG_SECTION_OUTPUT[0].quantization.raw_words[1]",
        ),
        (
            "v1-input-quant-scale",
            ["v1-input-scale-quarter", "v1-input-scale-eighth"],
            "v1-input-scale-with-output",
            "output[0].quantization.scale",
        ),
        (
            "coef-word",
            ["coef-word-a", "coef-word-b"],
            "coef-word-and-tp",
            "NBG_SECTION_TP[0].word0.in_image_x_size",
        ),
    ];
    for (m, proving, refuting, field) in kinds {
        let rows = check(&[proving[0], proving[1], refuting]);
        for p in proving {
            let r = row(&rows, m, p);
            assert_eq!(r.outcome, Outcome::Proved, "{m} {p}");
            assert_eq!(r.reason, Reason::ReplayReproducesB);
            assert_eq!(r.unexplained_bytes, 0);
            assert_eq!(r.replay_sha256, Some(r.b_sha256));
            assert!(
                r.written.iter().any(|w| w.role == WriteRole::FileCrc),
                "{m}"
            );
        }
        let r = row(&rows, m, refuting);
        assert_eq!(r.outcome, Outcome::Refuted, "{m} {refuting}");
        assert_eq!(r.reason, Reason::ReplayDiffersFromB);
        let u = r.first_unexplained.as_ref().unwrap();
        assert_eq!(u.field, field, "{m}");
        assert_ne!(u.b, u.replayed);
        assert!(r.unexplained_bytes > 0);
        assert_ne!(r.replay_sha256, Some(r.b_sha256));
    }
}

#[test]
fn the_coefficient_kind_recomputes_its_section_40_value() {
    let rows = check(&["coef-word-a"]);
    let r = row(&rows, "coef-word", "coef-word-a");
    assert_eq!(r.outcome, Outcome::Proved);
    assert!(
        r.written
            .iter()
            .any(|w| w.role == WriteRole::SectionChecksum)
    );
    // Without the derived section-40 value the same replay is refuted at that value.
    let mut registry = mapping::load(&committed()).unwrap();
    let m = registry
        .mappings
        .iter_mut()
        .find(|m| m.name == "coef-word")
        .unwrap();
    m.derived
        .retain(|d| *d != mapping::Derived::SectionChecksums);
    let caps = [mapping::Capture::load(&capture("coef-word-a"), "c".into()).unwrap()];
    let rows = mapping::check_all(&[m], &caps).unwrap();
    assert_eq!(rows[0].outcome, Outcome::Refuted);
    let u = rows[0].first_unexplained.as_ref().unwrap();
    assert!(u.field.contains("checksum_value"), "{}", u.field);
}

#[test]
fn other_families_and_absent_keys_are_inapplicable() {
    let rows = check(&["v1-input-scale-quarter", "coef-word-a"]);
    let r = row(&rows, "dynaio-constant", "v1-input-scale-quarter");
    assert_eq!(
        (r.outcome, r.reason),
        (Outcome::Inapplicable, Reason::FamilyDiffers)
    );
    let r = row(&rows, "v2-output-quant-scale", "coef-word-a");
    assert_eq!(
        (r.outcome, r.reason),
        (Outcome::Inapplicable, Reason::SourceKeyAbsent)
    );
}

#[test]
fn check_cli_exit_codes_json_and_no_writes() {
    let m = committed();
    let before = std::fs::read(&m).unwrap();
    let ok = common::nbg(
        &common::root(),
        &[
            "mapping",
            "check",
            m.to_str().unwrap(),
            capture("dynaio-constant").to_str().unwrap(),
            capture("coef-word-b").to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(v["schema"], "nbg-mapping-check/1");
    assert_eq!(v["summary"]["proved"], 2);
    assert_eq!(v["summary"]["refuted"], 0);
    let refuted = common::nbg(
        &common::root(),
        &[
            "mapping",
            "check",
            m.to_str().unwrap(),
            capture("v2-output-scale-with-zero-point").to_str().unwrap(),
        ],
    );
    assert_eq!(refuted.status.code(), Some(1));
    let text = String::from_utf8_lossy(&refuted.stdout);
    assert!(
        text.contains(
            "first unexplained byte 0x3f0 in NBG_SECTION_OUTPUT[0].quantization.raw_words"
        ),
        "{text}"
    );
    assert_eq!(std::fs::read(&m).unwrap(), before, "check writes nothing");
    let missing = common::nbg(
        &common::root(),
        &[
            "mapping",
            "check",
            m.to_str().unwrap(),
            "/nonexistent-capture",
        ],
    );
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn bad_mappings_files_exit_2_with_a_message() {
    let good: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(committed()).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, serde_json::Value)> = vec![
        ("schema", {
            let mut v = good.clone();
            v["schema"] = "nbg-mappings/2".into();
            v
        }),
        ("unknown field", {
            let mut v = good.clone();
            v["mappings"][0]["colour"] = "red".into();
            v
        }),
        ("unknown variant", {
            let mut v = good.clone();
            v["mappings"][0]["encoding"] = "le24".into();
            v
        }),
        ("appears twice", {
            let mut v = good.clone();
            let first = v["mappings"][0].clone();
            v["mappings"].as_array_mut().unwrap().push(first);
            v
        }),
        ("promotion needs at least 2", {
            let mut v = good.clone();
            v["mappings"][0]["evidence"]
                .as_array_mut()
                .unwrap()
                .truncate(1);
            v
        }),
        ("digests", {
            let mut v = good.clone();
            v["mappings"][0]["evidence"][0]["b_sha256"] = "xyz".into();
            v
        }),
        ("v1 has no section-40", {
            let mut v = good.clone();
            let m = v["mappings"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|m| m["family"] == "v1")
                .unwrap();
            m["derived"] = serde_json::json!(["file-crc", "section-checksums"]);
            v
        }),
        ("JSON object", serde_json::json!([1, 2])),
    ];
    let capture = capture("dynaio-constant");
    for (needle, v) in cases {
        let path = dir.path().join("m.json");
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
        let out = common::nbg(
            &common::root(),
            &[
                "mapping",
                "check",
                path.to_str().unwrap(),
                capture.to_str().unwrap(),
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{needle}: {err}");
        assert!(err.contains(needle), "{needle}: {err}");
    }
    // Oversized: refused before parsing.
    let path = dir.path().join("big.json");
    let mut big = b"{\"schema\": \"".to_vec();
    big.resize(mapping::MAX_FILE_BYTES as usize + 10, b'a');
    std::fs::write(&path, big).unwrap();
    let out = common::nbg(
        &common::root(),
        &[
            "mapping",
            "check",
            path.to_str().unwrap(),
            capture.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at most"));
}

/// The committed registry with `name` back to a hypothesis without evidence.
fn as_hypothesis(name: &str) -> mapping::Registry {
    let mut r = mapping::load(&committed()).unwrap();
    let m = r.mappings.iter_mut().find(|m| m.name == name).unwrap();
    m.status = Status::Hypothesis;
    m.evidence.clear();
    r
}

#[test]
fn promote_from_data_alone_writes_the_evidence_digests() {
    let sets = ["coef-word-a", "coef-word-b", "coef-word-and-tp"];
    let ws = workspace(Some(&as_hypothesis("coef-word")), &sets);
    let m = ws.path().join("mappings.json");
    let arg = |s: &str| ws.path().join(s).to_str().unwrap().to_string();
    let promote = |extra: &[&str]| {
        let mut args = vec![
            "mapping".to_string(),
            "promote".into(),
            m.to_str().unwrap().into(),
            "coef-word".into(),
            "--evidence".into(),
        ];
        args.extend(extra.iter().map(|s| arg(s)));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        common::nbg(&common::root(), &refs)
    };
    let before = std::fs::read(&m).unwrap();
    // A refuting set refuses the promotion with the byte that breaks it; nothing is written.
    let out = promote(&["coef-word-a", "coef-word-b", "coef-word-and-tp"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "coef-word-and-tp refutes coef-word at 0x908 (NBG_SECTION_TP[0].word0.in_image_x_size)"
        ),
        "{err}"
    );
    assert_eq!(std::fs::read(&m).unwrap(), before);
    // One proving set is not enough.
    let out = promote(&["coef-word-a"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read(&m).unwrap(), before);
    // The same set twice has one B value.
    let out = promote(&["coef-word-a", "coef-word-a"]);
    assert_eq!(out.status.code(), Some(1));
    // Two sets with different B values promote it.
    let out = promote(&["coef-word-a", "coef-word-b"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = mapping::load(&m).unwrap();
    let promoted = after.get("coef-word").unwrap();
    assert_eq!(promoted.status, Status::Promoted);
    assert_eq!(promoted.evidence.len(), 2);
    let a = std::fs::read(ws.path().join("coef-word-b/B.nb")).unwrap();
    assert_eq!(
        promoted.evidence[1].b_sha256,
        nbg_lab::digest::Hash256::of(&a).hex()
    );
    assert_eq!(promoted.evidence[1].capture, "coef-word-b");
    assert_eq!(std::fs::read_to_string(&m).unwrap(), after.canonical());
    // The committed registry holds exactly what promotion from these sets writes.
    assert_eq!(
        promoted,
        mapping::load(&committed())
            .unwrap()
            .get("coef-word")
            .unwrap()
    );
    let leftovers: Vec<_> = std::fs::read_dir(ws.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".nbg-partial"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn evidence_outside_the_mappings_folder_is_refused() {
    let ws = workspace(Some(&as_hypothesis("coef-word")), &[]);
    let m = ws.path().join("mappings.json");
    let out = common::nbg(
        &common::root(),
        &[
            "mapping",
            "promote",
            m.to_str().unwrap(),
            "coef-word",
            "--evidence",
            capture("coef-word-a").to_str().unwrap(),
            capture("coef-word-b").to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inside the mappings file's folder"));
}

#[test]
fn lab_recheck_fails_when_evidence_no_longer_holds() {
    let sets: Vec<&str> = mapping::load(&committed())
        .unwrap()
        .mappings
        .iter()
        .flat_map(|m| m.evidence.iter().map(|e| e.capture.clone()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|s| Box::leak(s.into_boxed_str()) as &str)
        .collect();
    let root = tempfile::tempdir().unwrap();
    let ws = workspace(None, &sets);
    std::fs::rename(ws.path(), root.path().join("differentials")).unwrap();
    let rows = mapping::recheck_promoted(root.path()).unwrap();
    assert!(rows.len() >= 8 && rows.iter().all(|r| r.passed), "{rows:?}");
    // A changed capture file: its digest no longer matches.
    let b = root.path().join("differentials/coef-word-b/B.nb");
    let mut bytes = std::fs::read(&b).unwrap();
    bytes[0x908] ^= 1;
    std::fs::write(&b, &bytes).unwrap();
    // A changed mapping: the same evidence no longer proves it.
    let path = root.path().join(mapping::COMMITTED);
    let mut r = mapping::load(&path).unwrap();
    let m = r
        .mappings
        .iter_mut()
        .find(|m| m.name == "v2-output-quant-scale")
        .unwrap();
    m.encoding = Some(Encoding::Le32);
    // le32 of the recorded float values is not encodable: the registry refuses to load.
    assert!(std::fs::write(&path, r.canonical()).is_ok());
    assert!(mapping::recheck_promoted(root.path()).is_err());
    let mut r = mapping::load(&committed()).unwrap();
    let m = r
        .mappings
        .iter_mut()
        .find(|m| m.name == "v2-output-quant-scale")
        .unwrap();
    if let Some(mapping::Target::Field { offset, .. }) = &mut m.target {
        *offset = 4;
    }
    std::fs::write(&path, r.canonical()).unwrap();
    let rows = mapping::recheck_promoted(root.path()).unwrap();
    let failed: Vec<_> = rows.iter().filter(|r| !r.passed).collect();
    assert!(
        failed
            .iter()
            .any(|r| r.capture == "coef-word-b" && r.detail.contains("no longer match")),
        "{failed:?}"
    );
    assert!(
        failed.iter().any(|r| r.mapping == "v2-output-quant-scale"),
        "{failed:?}"
    );
}

#[test]
fn the_differential_engine_localizes_through_the_registry() {
    // New kinds are reproduced by `nbg differential` with no code of their own.
    for name in ["v2-output-scale-64", "v1-input-scale-eighth", "coef-word-b"] {
        let set = differential::load(&capture(name)).unwrap();
        let r = differential::run(&set).unwrap();
        assert_eq!(r.result, Verdict::Reproduced, "{name}");
        assert_eq!(r.mapping.as_ref().unwrap().outcome, Outcome::Proved);
        assert!(
            r.changed_ranges
                .iter()
                .any(|c| c.role == RangeRole::MappedField || c.role == RangeRole::MappedRange)
        );
    }
    // Without the DYNAIO-constant mapping its change is no longer localized.
    let set = differential::load(&capture("dynaio-constant")).unwrap();
    let mut r = mapping::builtin().clone();
    assert_eq!(
        differential::run_with(&set, &r).unwrap().result,
        Verdict::Reproduced
    );
    // (and without the serializer's element maps, whose places are DYNAIO entries too)
    r.mappings
        .retain(|m| !matches!(m.target, Some(mapping::Target::DynaioEntry { .. })));
    let report = differential::run_with(&set, &r).unwrap();
    assert_eq!(report.result, Verdict::MultiRegionUnresolved);
    assert!(
        report
            .changed_ranges
            .iter()
            .any(|c| c.role == RangeRole::Other)
    );
}

#[test]
fn field_range_inverts_the_naming() {
    for (name, file) in [
        ("v2", capture("v2-output-scale-64").join("A1.nb")),
        ("v1", capture("v1-input-scale-quarter").join("A1.nb")),
    ] {
        let bytes = std::fs::read(file).unwrap();
        let g = nbg_lab::parse(&bytes).unwrap();
        let image = NbgImage::new(&g).unwrap();
        let fields: &[&str] = if name == "v2" {
            &[
                "header.crc_sum",
                "NBG_SECTION_OUTPUT[0].quantization.raw_words",
                "NBG_SECTION_INPUT[0].name",
            ]
        } else {
            &[
                "header.nbg_crc_sum",
                "input[0].quantization.scale",
                "output[0].name",
            ]
        };
        // A whole word array (named without its element) spans its elements, each named
        // `<field>[i]`; an element inverts to its own four bytes.
        let of = |name: &str, f: &str| {
            name == f || name.starts_with(&format!("{f}[")) || name.starts_with(&format!("{f}."))
        };
        for f in fields {
            let (s, e) = nbg_lab::lab::diff::field_range(&g, &image, f).unwrap();
            for at in [s, e - 1] {
                let o = image.owner_of(at);
                assert!(of(&nbg_lab::lab::diff::locate(&g, o, at).0, f), "{f}");
            }
            let after = image.owner_of(e);
            assert!(!of(&nbg_lab::lab::diff::locate(&g, after, e).0, f), "{f}");
        }
        if name == "v2" {
            let whole = "NBG_SECTION_OUTPUT[0].quantization.raw_words";
            let (s, e) = nbg_lab::lab::diff::field_range(&g, &image, whole).unwrap();
            assert_eq!(e - s, 8);
            let element = format!("{whole}[1]");
            let (s1, e1) = nbg_lab::lab::diff::field_range(&g, &image, &element).unwrap();
            assert_eq!((s1, e1), (s + 4, e));
            let o = image.owner_of(s1);
            assert_eq!(nbg_lab::lab::diff::locate(&g, o, s1).0, element);
            assert!(nbg_lab::lab::diff::field_range(&g, &image, &format!("{whole}[2]")).is_none());
        }
        assert!(nbg_lab::lab::diff::field_range(&g, &image, "no_such.field").is_none());
    }
}

#[test]
fn encodings_are_exact() {
    assert_eq!(
        mapping::encode(Encoding::F16, &Value::Float(0.5)).unwrap(),
        vec![0, 0x38]
    );
    assert!(mapping::encode(Encoding::F16, &Value::Float(0.1)).is_err());
    assert!(mapping::encode(Encoding::F32, &Value::Float(0.1)).is_err());
    assert_eq!(
        mapping::encode(Encoding::Le16, &Value::Signed(-2)).unwrap(),
        vec![0xfe, 0xff]
    );
    assert!(mapping::encode(Encoding::U8, &Value::Unsigned(256)).is_err());
    assert!(mapping::encode(Encoding::Raw, &Value::Bytes(vec![])).is_err());
    assert_eq!(
        mapping::encode(Encoding::Le64, &Value::Unsigned(u64::MAX)).unwrap(),
        vec![0xff; 8]
    );
}

#[test]
fn outcomes_and_write_roles_serialize_as_their_names() {
    for o in [Outcome::Proved, Outcome::Refuted, Outcome::Inapplicable] {
        assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
    }
    for w in [
        WriteRole::Target,
        WriteRole::SectionChecksum,
        WriteRole::FileCrc,
    ] {
        assert_eq!(serde_json::to_value(w).unwrap(), w.as_str());
    }
}

/// Issue 66: a key matches a quantity under its stored key or any alias; several roles joined
/// by `&` must name the same quantity; a plain `Op.` key that an indexed key of the set reduces
/// to is ambiguous (the model has several such nodes), never a guess.
#[test]
fn keys_match_by_role_alias_and_refuse_ambiguity() {
    use nbg_lab::lab::capture::{CaptureSpec, KeyMatch, Quantity};
    use std::collections::BTreeMap;
    let spec = CaptureSpec {
        a_source: vec![5],
        b_source: vec![6],
        quantities: BTreeMap::from([(
            "zero-point:graph.output[0]".to_string(),
            Quantity {
                a: Value::Unsigned(5),
                b: Value::Unsigned(6),
            },
        )]),
        context: BTreeMap::from([("scale:Conv[1].weight".to_string(), Value::Float(0.25))]),
        aliases: BTreeMap::from([
            (
                "zero-point:graph.output[0]".to_string(),
                vec![
                    "zero-point:Conv[1].output".to_string(),
                    "zero-point:Conv[last].output".to_string(),
                ],
            ),
            (
                "scale:Conv[1].weight".to_string(),
                vec!["scale:Conv[last].weight".to_string()],
            ),
        ]),
        ..Default::default()
    };
    let found = KeyMatch::Found("zero-point:graph.output[0]");
    assert_eq!(spec.resolve("zero-point:graph.output[0]", false), found);
    assert_eq!(spec.resolve("zero-point:Conv[last].output", false), found);
    assert_eq!(
        spec.resolve(
            "zero-point:graph.output[0] & zero-point:Conv[last].output",
            false
        ),
        found
    );
    assert_eq!(
        spec.resolve(
            "zero-point:graph.output[0] & zero-point:Conv[0].output",
            false
        ),
        KeyMatch::Absent
    );
    // Two convolutions: "the" Conv is not guessed.
    assert_eq!(
        spec.resolve("zero-point:Conv.output", false),
        KeyMatch::Ambiguous
    );
    assert_eq!(spec.resolve("scale:Conv.weight", true), KeyMatch::Ambiguous);
    assert_eq!(
        spec.resolve("scale:Conv[last].weight", true),
        KeyMatch::Found("scale:Conv[1].weight")
    );
    // A held quantity is no controlled one.
    assert_eq!(
        spec.resolve("scale:Conv[last].weight", false),
        KeyMatch::Absent
    );
    assert_eq!(
        spec.resolve("zero-point:Relu.output", false),
        KeyMatch::Absent
    );
    assert_eq!(
        nbg_lab::lab::capture::unindexed("initializer:Conv[12].weight[3]"),
        "initializer:Conv.weight[3]"
    );
    assert_eq!(
        nbg_lab::lab::capture::unindexed("scale:graph.input[0]"),
        "scale:graph.input[0]"
    );
}
