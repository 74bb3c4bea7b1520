//! Patches resolved (`nbg patches`, `nbg::parse::patch_targets`): every patch record of the real files
//! names the field it relocates and what its address points to, in both families, and a patch
//! that points nowhere is reported with its reason, never guessed.

use super::common;
use nbg_lab::{NbgFamily, parse};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn targets(bytes: &[u8]) -> nbg_lab::nbg::parse::patch_targets::PatchTargets {
    parse(bytes)
        .expect("parses")
        .patch_targets()
        .expect("a decoded patch table")
}

/// Every real file the repository carries or reads beside it: the serializer controls, the
/// public v1 files and the A733 board files.
fn real_files() -> Vec<PathBuf> {
    let root = common::root();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("controls/serializer"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "nb"))
        .collect();
    let (dir, names) = common::public_paths();
    files.extend(names.into_iter().map(|n| dir.join(n)));
    let (dir, names) = common::public_v2_paths();
    files.extend(names.into_iter().map(|n| dir.join(n)));
    files.sort();
    files
}

#[test]
fn every_patch_of_the_real_files_names_its_field_and_source() {
    let files = real_files();
    assert!(
        files.len() > 100,
        "the serializer controls and public files"
    );
    let mut unresolved = Vec::new();
    let (mut total, mut resolved) = (0, 0);
    for path in &files {
        let t = targets(&std::fs::read(path).unwrap());
        total += t.patches - t.unused;
        resolved += t.resolved;
        for u in &t.unresolved {
            unresolved.push(format!("{}: {u:?}", path.display()));
        }
    }
    // The one KERNEL_BITSTREAM source (the Gemm + Relu control on 0x1000001e) is resolved to
    // the coefficient header table's entry, as the simulator runs it (`vendor_run`).
    assert!(unresolved.is_empty(), "{unresolved:#?}");
    assert_eq!(resolved, total);
}

#[test]
fn the_face_detectors_patches_point_at_the_public_address_words() {
    let (dir, _) = common::public_v2_paths();
    let t = targets(&std::fs::read(dir.join("a733-face_detector_int16-0000.nb")).unwrap());
    assert_eq!((t.patches, t.resolved), (315, 315));
    // Each NN command's address words (Mesa's layout: kernel word 5, input word 6, output
    // word 7, circular-buffer ends words 19 and 21) and the state that holds the command's
    // address.
    for field in [
        "NN.word5.kernel_address",
        "NN.in_image_address",
        "NN.out_image_address",
        "NN.word19.out_image_circular_buf_end_addr_plus_1",
        "NN.word21.in_image_circular_buf_end_addr_plus_1",
        "NBG_SECTION_LOADSTATE.LOAD_STATE.state[0x0428].VIVS_PS_NN_INST_ADDR",
    ] {
        assert!(
            t.by_field.get(field).is_some_and(|&n| n > 0),
            "{field}: {:?}",
            t.by_field
        );
    }
    let kernel: Vec<_> = t
        .targets
        .iter()
        .filter(|x| {
            x.field
                .as_deref()
                .is_ok_and(|f| f.ends_with("word5.kernel_address"))
        })
        .collect();
    // Every kernel address points at a coefficient buffer and is stored >> 6.
    assert!(!kernel.is_empty());
    for k in kernel {
        assert!(
            k.source
                .as_deref()
                .unwrap()
                .starts_with("NBG_SECTION_COEF_DATA["),
            "{k:?}"
        );
        assert_eq!(k.transformation, "RIGHT_SHIFT_6", "{k:?}");
    }
}

#[test]
fn a_hardware_init_stream_names_the_icd_commands_it_starts() {
    // VIP8000-class serializer control: its second init stream starts four 128-byte TP
    // commands in ICD entry 5 (the command addresses step by 0x80), and the COMMAND patches
    // of that record point at their input, output and lookup-table words.
    let t = targets(&common::control("serializer/conv-fp16-88.nb"));
    assert_eq!(t.resolved, t.patches, "{:#?}", t.unresolved);
    let named: BTreeMap<usize, String> = t
        .targets
        .iter()
        .filter_map(|x| Some((x.patch, x.field.clone().ok()?)))
        .collect();
    assert_eq!(
        named[&4],
        "NBG_SECTION_ICD[9].command[4].LOAD_STATE.state[0x042e].VIVS_PS_TP_INST_ADDR"
    );
    assert_eq!(named[&9], "NBG_SECTION_ICD[5].tp[1].in_image_base_address");
    assert_eq!(
        named[&14],
        "NBG_SECTION_ICD[5].tp[2].out_image_base_address"
    );
    assert_eq!(
        named[&19],
        "NBG_SECTION_ICD[5].tp[3].alu_load_pwl_lut_address"
    );
    assert_eq!(t.targets[19].source.as_deref(), Ok("NBG_SECTION_ICD[8]"));
}

#[test]
fn v1_patches_resolve_through_lcd_or_their_own_tables() {
    // Before 0x00010018 the state buffers are lcd_table entries; from it, load_states'.
    let (dir, _) = common::public_paths();
    let lenet = targets(&std::fs::read(dir.join("a733-lenet-v2-0016.nb")).unwrap());
    let names: Vec<String> = lenet
        .targets
        .iter()
        .filter_map(|x| x.field.clone().ok())
        .collect();
    assert!(
        names.contains(&"lcd[6].command[1].LOAD_STATE.state[0x0428].VIVS_PS_NN_INST_ADDR".into())
    );
    assert!(names.contains(&"tp[0].alu_load_pwl_lut_address".into()));
    assert_eq!(lenet.targets[23].source.as_deref(), Ok("lcd[4]"));
    // Its table ends in 20 all-zero records no operation's range holds: unused, not failures.
    assert_eq!((lenet.patches, lenet.resolved, lenet.unused), (53, 33, 20));
    let blaze = targets(&std::fs::read(dir.join("st-blazeface_128x128_quant-001e.nb")).unwrap());
    assert_eq!(blaze.resolved, blaze.patches);
    assert!(blaze.by_field["load_states.LOAD_STATE.state[0x042e].VIVS_PS_TP_INST_ADDR"] > 0);
}

#[test]
fn a_patch_that_points_nowhere_is_reported_with_its_reason() {
    // The face detector's first NN patch (patch 1, the command-address state) moved past its
    // state buffer, its index changed to name no coefficient buffer: both reported.
    let (dir, _) = common::public_v2_paths();
    let mut b = std::fs::read(dir.join("a733-face_detector_int16-0000.nb")).unwrap();
    let g = parse(&b).unwrap();
    let v = g.to_json();
    let section = v["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["type"] == 10)
        .unwrap();
    let at = section["offset"].as_u64().unwrap() as usize;
    let size = section["entry_size"].as_u64().unwrap() as usize;
    let kernel = (0..section["size"].as_u64().unwrap() as usize / size)
        .find(|&i| common::le32(&b, at + i * size + 8) == 5)
        .unwrap();
    common::put32(&mut b, at + size + 4, 0x0010_0000);
    common::put32(&mut b, at + kernel * size + 12, 0x7fff_ffff);
    common::reseal_v2(&mut b);
    let t = targets(&b);
    assert_eq!(t.resolved, 313);
    let reasons: Vec<(usize, Value)> = t
        .unresolved
        .iter()
        .map(|u| (u.patch, serde_json::json!([u.field, u.source])))
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert_eq!(reasons[0].0, 1);
    assert!(
        reasons[0]
            .1
            .to_string()
            .contains("not on a LOAD_STATE value"),
        "{reasons:?}"
    );
    assert_eq!(reasons[1].0, kernel);
    assert!(
        reasons[1].1.to_string().contains("names no entry"),
        "{reasons:?}"
    );
}

#[test]
fn nbg_patches_lists_every_patch_as_json() {
    let root = common::root();
    let o = common::nbg(
        &root,
        &["patches", "--json", "controls/serializer/conv-fp16-88.nb"],
    );
    assert_eq!(o.status.code(), Some(0));
    let v = common::stdout_json(&o);
    let p = &v["files"][0]["patches"];
    assert_eq!(p["patches"], 33);
    assert_eq!(p["targets"].as_array().unwrap().len(), 33);
    assert_eq!(p["targets"][0]["source"]["Ok"], "NBG_SECTION_ICD[0]");
    let text = common::nbg(&root, &["patches", "controls/serializer/conv-fp16-88.nb"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("33 patches, 33 resolved"), "{text}");
}

#[test]
fn mutated_patch_words_never_break_the_resolver() {
    // Every word of every 7th patch record set to edge values: each file still parses (a
    // patch word is never a parse rule) and every patch is resolved or reported, never a panic.
    let (dir, _) = common::public_v2_paths();
    let original = std::fs::read(dir.join("a733-face_detector_int16-0000.nb")).unwrap();
    let v = parse(&original).unwrap().to_json();
    let section = v["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["type"] == 10)
        .unwrap()
        .clone();
    let at = section["offset"].as_u64().unwrap() as usize;
    let size = section["entry_size"].as_u64().unwrap() as usize;
    let count = section["size"].as_u64().unwrap() as usize / size;
    let mut checked = 0;
    for record in (0..count).step_by(7) {
        for word in 0..size / 4 {
            for value in [1, 0x8000_0000, u32::MAX] {
                let mut b = original.clone();
                common::put32(&mut b, at + record * size + word * 4, value);
                common::reseal_v2(&mut b);
                let Ok(g) = parse(&b) else { continue };
                let t = g.patch_targets().unwrap();
                assert_eq!(t.targets.len(), count);
                assert!(t.resolved + t.unused <= t.patches);
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

/// Checked against the public v1 board files' own records: where a patch sends an NN command's
/// output to a graph output (`nn[k].out_image_address` <- `output[i]`), the commands writing
/// that output produce exactly its elements (out_image x * y * z summed over its tiles). An
/// output no NN command writes (a TP or shader writes it) is not counted.
#[test]
fn nn_commands_writing_an_output_produce_its_elements() {
    let (dir, names) = common::public_paths();
    let mut checked = 0;
    for name in &names {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let Ok(nbg_lab::Graph::V1(g)) = parse(&bytes) else {
            continue;
        };
        let (Some(nn), Some(t)) = (g.nn_commands.as_ref(), g.patch_targets()) else {
            continue;
        };
        let mut written: BTreeMap<usize, u64> = BTreeMap::new();
        for x in &t.targets {
            let (Ok(field), Ok(source)) = (&x.field, &x.source) else {
                continue;
            };
            let Some(k) = field
                .strip_prefix("nn[")
                .and_then(|f| f.strip_suffix("].out_image_address"))
                .and_then(|k| k.parse::<usize>().ok())
            else {
                continue;
            };
            let Some(i) = source
                .strip_prefix("output[")
                .and_then(|s| s.split(']').next())
                .and_then(|i| i.parse::<usize>().ok())
            else {
                continue;
            };
            let [x, y, z] = nn[k].out_image;
            *written.entry(i).or_default() += x * y * z;
        }
        for (i, elements) in written {
            assert_eq!(
                elements, g.outputs[i].element_count,
                "{name}: output[{i}] {:?}",
                g.outputs[i].dimensions
            );
            checked += 1;
        }
    }
    assert!(
        checked > 0,
        "no NN command of the public v1 files writes an output"
    );
}
