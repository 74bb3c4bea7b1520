//! Field mappings on the vendor serializer's own capture sets (`differentials/serializer`):
//! every kind proved by its sets and promoted, every refuting set refused at the byte of its
//! undeclared change, computed values keeping one candidate, and the locator on real compiles.

use super::common;
use nbg_lab::lab::mapping::{self, Capture, Outcome, Reason, Status};
use nbg_lab::nbg::coefficients::Tensor;
use serde_json::Value;
use std::path::PathBuf;

fn dir() -> PathBuf {
    common::root().join("differentials/serializer")
}

/// The manifest's rows: (set, declared key, undeclared keys).
fn sets() -> Vec<(String, String, Vec<String>)> {
    let text = std::fs::read(dir().join("serializer.json")).expect("committed manifest");
    let doc: Value = serde_json::from_slice(&text).unwrap();
    doc["sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["set"].as_str().unwrap().to_string(),
                s["declared"].as_str().unwrap().to_string(),
                s["undeclared"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|u| u.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

fn serializer_mappings(r: &mapping::Registry) -> Vec<&mapping::Mapping> {
    r.mappings
        .iter()
        .filter(|m| m.name.starts_with("serializer-"))
        .collect()
}

fn registry() -> mapping::Registry {
    mapping::load(&common::root().join(mapping::COMMITTED)).unwrap()
}

#[test]
fn every_set_proves_one_mapping_or_is_refused_at_its_undeclared_byte() {
    let registry = registry();
    let mappings = serializer_mappings(&registry);
    assert!(mappings.len() >= 20, "{}", mappings.len());
    let all = sets();
    // Two NN-engine targets and a shader-only one, and the two parts whose convolutions run
    // on NN, each with proving and refuting sets.
    for pid in ["1000000e", "15", "1000001e", "1000003b", "9f"] {
        assert!(all.iter().any(|(s, _, u)| s.ends_with(pid) && u.is_empty()));
        assert!(
            all.iter()
                .any(|(s, _, u)| s.ends_with(pid) && !u.is_empty())
        );
    }
    for (set, declared, undeclared) in &all {
        let c = Capture::load(&dir().join(set), set.clone()).unwrap();
        assert_eq!(c.set.a1, c.set.a2, "{set}: the serializer is deterministic");
        let rows = mapping::check_all(&mappings, std::slice::from_ref(&c)).unwrap();
        let proved: Vec<&str> = rows
            .iter()
            .filter(|r| r.outcome == Outcome::Proved)
            .map(|r| r.mapping.as_str())
            .collect();
        let refuted: Vec<&mapping::CheckRow> = rows
            .iter()
            .filter(|r| r.outcome == Outcome::Refuted)
            .collect();
        if undeclared.is_empty() {
            assert_eq!(proved.len(), 1, "{set} ({declared}): proved by {proved:?}");
            assert!(refuted.is_empty(), "{set}: {:?}", refuted[0]);
            let r = rows.iter().find(|r| r.outcome == Outcome::Proved).unwrap();
            assert_eq!(r.replay_sha256, Some(r.b_sha256), "{set}");
        } else {
            assert!(proved.is_empty(), "{set}: {proved:?}");
            assert_eq!(refuted.len(), 1, "{set}");
            let r = refuted[0];
            if r.reason == Reason::DecodedDiffersFromB {
                // A coefficient element's mapping: B's decoded buffer differs elsewhere too.
                let d = r.decoded_mismatch.as_ref().unwrap();
                assert_ne!(d.replay, d.b, "{set}");
                continue;
            }
            assert_eq!(r.reason, Reason::ReplayDiffersFromB, "{set}");
            // Every undeclared change is a weight, bias or constant element: in DYNAIO.
            let u = r.first_unexplained.as_ref().unwrap();
            assert!(
                u.field.starts_with("NBG_SECTION_DYNAIO"),
                "{set}: {}",
                u.field
            );
            assert_ne!(u.b, u.replayed, "{set}");
        }
    }
}

#[test]
fn every_serializer_mapping_is_promoted_on_its_own_sets() {
    let registry = registry();
    for m in serializer_mappings(&registry) {
        assert_eq!(m.status, Status::Promoted, "{}", m.name);
        assert!(m.evidence.len() >= 2, "{}", m.name);
        let pid = m.pid.as_deref().unwrap().trim_start_matches("0x");
        let pid = pid.trim_start_matches('0');
        for e in &m.evidence {
            assert!(e.capture.starts_with("serializer/"), "{}", e.capture);
            assert!(e.capture.ends_with(&format!("-{pid}")), "{}", e.capture);
        }
        let distinct: std::collections::BTreeSet<String> = m
            .evidence
            .iter()
            .map(|e| serde_json::to_string(&e.b).unwrap())
            .collect();
        assert!(distinct.len() >= 2, "{}", m.name);
        for c in &m.computed {
            assert!(c.kept.is_some(), "{}: computed value not decided", m.name);
        }
    }
    // The requantization factor: input x weight / output is kept, the other formulas refuted.
    let m = registry
        .get("serializer-conv-weight-scale-1000000e")
        .unwrap();
    assert_eq!(m.computed[0].kept.unwrap().op, mapping::computed::Op::Ratio);
}

/// The model A and the tensor a capture set's quantity belongs to (`differential.json`).
fn model_and_tensor(set: &str) -> (String, String) {
    let text = std::fs::read(dir().join(set).join("differential.json")).unwrap();
    let spec: Value = serde_json::from_slice(&text).unwrap();
    let provenance = spec["provenance"].as_str().unwrap();
    let model = provenance
        .split("model A sha256 ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .to_string();
    let key = spec["quantities"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap();
    let tensor = spec["tensors"][key].as_str().unwrap_or("").to_string();
    (model, tensor)
}

/// Issue 66: a mapping keyed by a role holds for models it was not written for. Each promoted
/// serializer mapping is proved on captures of two models at least, whose tensors have other
/// names (the network name excepted: it is no tensor) and whose graphs differ around the
/// quantity.
#[test]
fn every_serializer_mapping_is_proved_on_two_models_in_different_names() {
    let registry = registry();
    for m in serializer_mappings(&registry) {
        let found: Vec<(String, String)> = m
            .evidence
            .iter()
            .map(|e| model_and_tensor(e.capture.trim_start_matches("serializer/")))
            .collect();
        let models: std::collections::BTreeSet<&String> = found.iter().map(|f| &f.0).collect();
        let tensors: std::collections::BTreeSet<&String> = found.iter().map(|f| &f.1).collect();
        assert!(models.len() >= 2, "{}: one model only", m.name);
        if m.source.key != "graph-name" {
            assert!(
                tensors.len() >= 2,
                "{}: one tensor name only {tensors:?}",
                m.name
            );
        }
        assert!(
            !m.source.key.contains("w_q") && !m.source.key.contains(":x"),
            "{}: keyed by a tensor name",
            m.name
        );
    }
}

/// A user's own capture: `nbg mapping check` proves the mapping of the quantity it changes and
/// says, for every other mapping, what the set lacks.
#[test]
fn a_user_capture_is_proved_by_role_and_says_what_is_missing() {
    let set = dir().join("user-output-zero-point-7-1000000e");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_nbg"))
        .args(["mapping", "check"])
        .arg(common::root().join(mapping::COMMITTED))
        .arg(&set)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let proved: Vec<&str> = text.lines().filter(|l| l.contains(" proved ")).collect();
    assert_eq!(proved.len(), 1, "{text}");
    assert!(proved[0].starts_with("serializer-conv-output-zero-point-1000000e"));
    for missing in [
        "missing: role absent: the mapping reads zero-point:Conv.weight",
        "the set changes zero-point:graph.output[0]",
        "missing: target differs",
        "missing: family differs",
    ] {
        assert!(text.contains(missing), "{missing}: {text}");
    }
    // The quantity's key is its role, the tensor a note.
    let spec: Value =
        serde_json::from_slice(&std::fs::read(set.join("differential.json")).unwrap()).unwrap();
    assert_eq!(spec["tensors"]["zero-point:graph.output[0]"], "c");
    let aliases = spec["aliases"]["zero-point:graph.output[0]"]
        .as_array()
        .unwrap();
    assert!(aliases.iter().any(|a| a == "zero-point:Conv[last].output"));
}

#[test]
fn a_computed_value_names_the_kept_and_the_refuted_candidates() {
    let registry = registry();
    let mut m = registry
        .get("serializer-conv-input-scale-1000000e")
        .unwrap()
        .clone();
    // As a hypothesis, every candidate is tried.
    m.computed[0].kept = None;
    m.status = Status::Hypothesis;
    let c = Capture::load(
        &dir().join("input-scale-quarter-1000000e"),
        "input-scale-quarter-1000000e".into(),
    )
    .unwrap();
    let rows = mapping::check_all(&[&m], std::slice::from_ref(&c)).unwrap();
    assert_eq!(rows[0].outcome, Outcome::Proved);
    let kept: Vec<&str> = rows[0]
        .candidates
        .iter()
        .filter(|x| x.kept)
        .map(|x| x.formula.as_str())
        .collect();
    assert_eq!(kept, ["x0*x1/x2"]);
    assert_eq!(rows[0].candidates.len(), m.computed[0].candidates.len());

    // With only wrong formulas, the set refutes the mapping at the computed word.
    m.computed[0]
        .candidates
        .retain(|x| x.op != mapping::computed::Op::Ratio);
    let rows = mapping::check_all(&[&m], std::slice::from_ref(&c)).unwrap();
    assert_eq!(rows[0].outcome, Outcome::Refuted);
    assert!(rows[0].candidates.iter().all(|x| !x.kept));
}

#[test]
fn an_element_map_is_promoted_only_on_two_elements() {
    let registry = registry();
    let mut r = registry.clone();
    let m = r
        .mappings
        .iter_mut()
        .find(|m| m.name == "serializer-conv-weight-element-15")
        .unwrap();
    m.status = Status::Hypothesis;
    m.evidence.clear();
    let load = |s: &str| Capture::load(&dir().join(s), format!("serializer/{s}")).unwrap();
    let one = [load("weight-37-15")];
    let e = mapping::promote(&r, "serializer-conv-weight-element-15", &one).unwrap_err();
    assert!(
        e.message.contains("promotion needs at least 2"),
        "{}",
        e.message
    );
    let two = [load("weight-0-15"), load("weight-287-15")];
    let (promoted, _) = mapping::promote(&r, "serializer-conv-weight-element-15", &two).unwrap();
    assert_eq!(
        promoted
            .get("serializer-conv-weight-element-15")
            .unwrap()
            .status,
        Status::Promoted
    );
    // The refuting set is refused at the bias byte B also changed.
    let three = [load("weight-0-15"), load("weight-37-and-bias-15")];
    let e = mapping::promote(&r, "serializer-conv-weight-element-15", &three).unwrap_err();
    assert!(e.message.contains("refutes"), "{}", e.message);
    assert!(e.message.contains("NBG_SECTION_DYNAIO"), "{}", e.message);
}

#[test]
fn registry_bounds_placements_and_computed_values() {
    let registry = registry();
    let base = registry
        .get("serializer-conv-input-zero-point-1000000e")
        .unwrap()
        .clone();
    let tmp = tempfile::tempdir().unwrap();
    let cases: Vec<(mapping::Mapping, &str)> = vec![
        {
            let mut m = base.clone();
            m.also[0].repeat = 0;
            (m, "further placements")
        },
        {
            let mut m = base.clone();
            m.computed[0].kept = Some(mapping::computed::Candidate {
                op: mapping::computed::Op::InverseRatio,
                factor: 3,
                offset: 0,
                part: None,
            });
            (m, "the kept one among them")
        },
        {
            let mut m = base.clone();
            m.pid = Some("0x15".into());
            (m, "eight hex digits")
        },
        {
            let mut m = base.clone();
            m.target = None;
            (m, "further placements")
        },
        {
            // A decoded coefficient element is an element map's primary target only.
            let mut m = base.clone();
            m.also[0].target = mapping::Target::Coefficient {
                nn: 0,
                part: Tensor::Weights,
                less: None,
            };
            (m, "coefficient target")
        },
        {
            let mut m = base.clone();
            m.target = Some(mapping::Target::Coefficient {
                nn: 0,
                part: Tensor::Biases,
                less: None,
            });
            (m, "coefficient target")
        },
    ];
    for (m, want) in cases {
        let r = mapping::Registry {
            schema: mapping::SCHEMA.into(),
            mappings: vec![m],
        };
        let path = tmp.path().join("m.json");
        std::fs::write(&path, r.canonical()).unwrap();
        let e = mapping::load(&path).unwrap_err();
        assert!(e.to_string().contains(want), "{e}");
    }
}

/// Every weight and bias initializer of every serializer control is found where the
/// serializer put it; COEF_DATA, which no initializer explains, is reported as not covered.
#[cfg(feature = "onnx")]
#[test]
fn the_locator_finds_every_initializer_of_the_compiled_models() {
    let controls = common::root().join("controls/serializer");
    let mut files = 0;
    let mut coef = 0;
    for e in std::fs::read_dir(&controls).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("nb") {
            continue;
        }
        let stem = p.file_stem().unwrap().to_str().unwrap();
        let model = stem.rsplit_once('-').unwrap().0;
        let onnx = std::fs::read(controls.join(format!("models/{model}.onnx"))).unwrap();
        let doc = nbg_lab::lab::locate::locate(
            &onnx,
            &std::fs::read(&p).unwrap(),
            &nbg_lab::lab::locate::LayerSource::None,
        )
        .unwrap()
        .to_json();
        for r in doc["initializers"].as_array().unwrap() {
            if r["elements"].as_u64().unwrap() >= nbg_lab::lab::locate::MIN_ELEMENTS as u64 {
                assert_eq!(r["result"], "found", "{stem}: {}", r["name"]);
                assert!(
                    r["matches"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|m| m["occurrences"][0]["owner"] == "NBG_SECTION_DYNAIO"),
                    "{stem}: {}",
                    r["name"]
                );
            }
        }
        for c in doc["graph"]["coverage"].as_array().unwrap() {
            if c["owner"] == "NBG_SECTION_COEF_DATA" {
                assert_eq!(c["covered_bytes"], 0, "{stem}");
                coef += 1;
            }
        }
        files += 1;
    }
    assert_eq!(files, 96);
    assert!(coef > 0);
}

/// The field map's `proved` parts are exactly the parts the promoted mappings prove on their
/// evidence: each proved part is covered exactly by a promoted mapping whose capture sets change
/// it, and each such part is labelled `proved` (in the record measured: the 128-byte NN command
/// repeats those words for another generation and holds them as `inferred`). Removing a
/// mapping's bit field, or a label, fails here.
#[test]
fn proved_parts_are_the_parts_promoted_mappings_prove() {
    use nbg_lab::nbg::fieldmap::{self as fm, Evidence};
    let (_, proofs) = mapping::run_fields(&common::root().join(mapping::COMMITTED)).unwrap();
    assert!(proofs.unproved.is_empty(), "{:?}", proofs.unproved);
    let labelled: std::collections::BTreeSet<(&str, &str, &str)> = fm::ALL
        .iter()
        .flat_map(|r| {
            r.fields.iter().flat_map(move |f| {
                f.parts
                    .iter()
                    .filter(move |p| r.evidence(p.evidence) == Evidence::Proved)
                    .map(move |p| (r.id, f.name, p.name))
            })
        })
        .collect();
    // The NN geometry the layer check proves over the NN capture sets, beside the mappings'.
    let geometry = nbg_lab::simulator::geometry_proofs::geometry_proofs(
        &common::root().join("differentials/serializer"),
    );
    assert!(geometry.holds(), "{geometry:?}");
    assert!(geometry.files > 0);
    let mut proved = proofs.proved_parts();
    proved.extend(geometry.proved_parts());
    assert_eq!(proved, labelled);
    // Each geometry part took two values or more, as its layer predicted, and the 5x5 conv on a
    // 7x10 image keeps x and y apart.
    for p in &geometry.proved {
        assert!(p.values.len() >= 2, "{p:?}");
    }
    let values = |part: &str| {
        geometry
            .proved
            .iter()
            .find(|p| p.part == part)
            .map(|p| p.values.iter().copied().collect::<Vec<_>>())
    };
    assert_eq!(values("in_image_x_size"), Some(vec![7, 8]));
    assert_eq!(values("in_image_y_size"), Some(vec![8, 10]));
    assert_eq!(values("kernel_xy_size"), Some(vec![3, 5]));
    // A Relu and a max pooling after the 3x3 conv are fused: `relu` 1, `pooling` 1 (MAX).
    assert_eq!(values("relu"), Some(vec![0, 1]));
    assert_eq!(values("pooling"), Some(vec![0, 1]));
    // The 2x2 window is 0, no pooling the builder's -1 held in one bit.
    assert_eq!(values("pooling_xy_size"), Some(vec![0, 1]));
    // The data types of uint8, int8 and float16 convolutions (the vendor's hardware formats:
    // UINT8 0, FLOAT16 1, INT8 2), the int8 kernel written as uint8, as Mesa writes it.
    assert_eq!(values("in_image_data_type"), Some(vec![0, 1, 2]));
    assert_eq!(values("out_image_data_type"), Some(vec![0, 1, 2]));
    assert_eq!(values("kernel_data_type"), Some(vec![0, 1]));
    let short = fm::NN_COMMAND_128.field("word15").unwrap();
    let part = short
        .parts
        .iter()
        .find(|p| p.name == "in_image_border_const")
        .unwrap();
    assert_eq!(
        fm::NN_COMMAND_128.evidence(part.evidence),
        Evidence::Inferred
    );
    // The NN command's zero points and post shift, from the nn-relu capture sets on 0x1000001e.
    for part in [
        "in_image_border_const",
        "out_zero_point",
        "post_shift",
        "post_shift_bit_7",
    ] {
        assert!(proved.iter().any(|(_, _, p)| *p == part), "{part}");
    }
    // Every proved part changes as its capture sets predict, in the same NN or TP command: the
    // TP command's zero points from the Relu on 0x9f.
    for p in &proofs.proved {
        assert!(p.values.len() >= 2 && p.changes(), "{p:?}");
        assert!(
            p.at.starts_with("NBG_SECTION_NN[") || p.at.starts_with("NBG_SECTION_TP["),
            "{}",
            p.at
        );
    }
    for part in ["in_zp", "out_zp"] {
        assert!(
            proved.contains(&(
                "tp_command",
                if part == "in_zp" { "word29" } else { "word30" },
                part
            )),
            "{part}"
        );
    }
    let zp = proofs
        .proved
        .iter()
        .find(|p| p.part == "in_image_border_const")
        .unwrap();
    let b: std::collections::BTreeSet<u64> = zp.values.iter().map(|v| v.b).collect();
    assert_eq!(b, [100, 140].into());
}

/// The coefficient-element mappings are proved where the decoder puts the element, and only
/// there: the same hypothesis without the zero point, or on another NN command, is refuted or
/// does not apply; the refuting set names B's first other decoded difference.
#[test]
fn coefficient_elements_are_proved_through_the_decoded_streams() {
    let registry = registry();
    for pid in ["1000003b", "9f"] {
        let m = registry
            .get(&format!("serializer-nn-weight-element-{pid}"))
            .unwrap();
        assert_eq!(m.status, Status::Promoted);
        let load = |set: &str| {
            let name = format!("{set}-{pid}");
            Capture::load(&dir().join(&name), name).unwrap()
        };
        let proving = [
            load("nn-conv-u8-weight-37"),
            load("nn-depthwise-u8-weight-70"),
            load("nn-gemm-u8-weight-127"),
        ];
        let rows = mapping::check_all(&[m], &proving).unwrap();
        for r in &rows {
            assert_eq!(r.outcome, Outcome::Proved, "{}", r.capture);
            assert_eq!(r.replay_sha256, Some(r.b_sha256));
            assert!(
                r.written
                    .iter()
                    .any(|w| w.role.as_str() == "decoded-coefficients")
            );
        }
        // Without the zero point, A's element is not the A value.
        let mut bare = m.clone();
        let Some(mapping::Target::Coefficient { less, .. }) = bare.target.as_mut() else {
            panic!("{pid}: a coefficient target");
        };
        *less = None;
        let r = &mapping::check_all(&[&bare], &proving[..1]).unwrap()[0];
        assert_eq!(
            (r.outcome, r.reason),
            (Outcome::Refuted, Reason::TargetHoldsOtherValue)
        );
        let d = r.decoded_mismatch.as_ref().unwrap();
        assert_eq!((d.element, d.replay - d.b), (37, 10), "{pid}: {d:?}");
        // There is no second NN command.
        let mut other = m.clone();
        if let Some(mapping::Target::Coefficient { nn, .. }) = other.target.as_mut() {
            *nn = 1;
        }
        let r = &mapping::check_all(&[&other], &proving[..1]).unwrap()[0];
        assert_eq!(
            (r.outcome, r.reason),
            (Outcome::Inapplicable, Reason::TargetNotFound)
        );
        // The weight and the bias changed: refuted at the bias.
        let both = load("nn-conv-u8-weight-37-and-bias");
        let r = &mapping::check_all(&[m], std::slice::from_ref(&both)).unwrap()[0];
        assert_eq!(r.reason, Reason::DecodedDiffersFromB);
        let d = r.decoded_mismatch.as_ref().unwrap();
        assert_eq!((d.part, d.element, d.b), (Tensor::Biases, 0, 99));
    }
    // float16 kernels on 0x1000000e: the element as the float32 rounded to the nearest half.
    let m = registry
        .get("serializer-nn-fp16-weight-element-1000000e")
        .unwrap();
    assert_eq!(m.status, Status::Promoted);
    let name = "nn-conv-fp16-weight-200-1000000e".to_string();
    let c = Capture::load(&dir().join(&name), name).unwrap();
    let r = &mapping::check_all(&[m], std::slice::from_ref(&c)).unwrap()[0];
    assert_eq!((r.outcome, r.element), (Outcome::Proved, Some(200)));
}
