//! The v2 files Allwinner's A733 board toolkit wrote (`../shared/corpus/v2`, else the copies
//! under `controls/public/v2`) through the chain a user runs: `parse`, `image`, `roundtrip`
//! (every record re-encoded), `info`, `crc-explain`, `diff` and `report`. Their INIT operation
//! names no layer as 0xffffffff, which the spec's corpus wrote as 0xffff: accepted and reported
//! as a corpus invariant, never refused. The same holds for a v1 0x00010020 graph.

use super::common;
use nbg_lab::{NbgFamily, parse};
use serde_json::Value;
use std::path::PathBuf;

fn board_files() -> Vec<PathBuf> {
    let (dir, names) = common::public_v2_paths();
    assert!(!names.is_empty(), "{} lists no file", dir.display());
    names.into_iter().map(|n| dir.join(n)).collect()
}

fn invariant<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["corpus_invariants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("no invariant {name}"))
}

#[test]
fn every_board_file_passes_the_whole_chain() {
    let root = common::root();
    let files = board_files();
    let out = tempfile::tempdir().unwrap();
    for (k, path) in files.iter().enumerate() {
        let p = path.display().to_string();
        let run = |args: &[&str]| {
            let o = common::nbg(&root, args);
            assert_eq!(
                o.status.code(),
                Some(0),
                "nbg {args:?}: {}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            o
        };
        let doc = common::stdout_json(&run(&["parse", "--json", &p]));
        assert_eq!(doc["format"], "nbg-v2", "{p}");
        // INIT names no layer as 0xffffffff; reported, not refused.
        let ops = doc["operations"].as_array().unwrap();
        let init = ops.iter().find(|o| o["type_name"] == "INIT").unwrap();
        assert_eq!(init["layer_id"], 0xffff_ffffu32, "{p}");
        let no_layer = invariant(&doc, "no-layer-id");
        assert_eq!(no_layer["holds"], false, "{p}");
        assert_eq!(no_layer["observed"], "0xffffffff", "{p}");
        // Every operation type is a public name (NN, SH, NT, SP, NN_LUT, ...).
        assert!(ops.iter().all(|o| o["type_name"].is_string()), "{p}");
        run(&["image", "--json", &p]);
        let rt = common::stdout_json(&run(&["roundtrip", "--json", &p]));
        let f = &rt["files"][0];
        assert_eq!(f["ledger_exact"], true, "{p}: {f}");
        assert_eq!(f["records_reencoded"], f["records_total"], "{p}: {f}");
        assert!(f["records_total"].as_u64().unwrap() > 0, "{p}");
        run(&["info", "--json", &p]);
        let crc = common::stdout_json(&run(&["crc-explain", "--json", &p]));
        let rules: Vec<&str> = crc[0]["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["rule"].as_str().unwrap())
            .collect();
        assert_eq!(rules.first(), Some(&"v2-directory-order"), "{p}: {crc}");
        let next = files[(k + 1) % files.len()].display().to_string();
        // Two different files: exit 1, a finding, with every owner named.
        let o = common::nbg(&root, &["diff", "--json", &p, &next]);
        assert_eq!(o.status.code(), Some(1), "{p}");
        assert!(
            !common::stdout_json(&o)["owners"]
                .as_array()
                .unwrap()
                .is_empty()
        );
        let html = out.path().join(format!("{k}.html"));
        run(&["report", &p, "-o", html.to_str().unwrap()]);
        assert!(std::fs::metadata(&html).unwrap().len() > 0);
    }
}

/// A v1 0x00010020 graph whose INIT names no layer as 0xffffffff parses and round-trips; an
/// engine operation naming that layer is still out of range.
#[test]
fn a_v1_0020_init_may_name_no_layer_as_0xffffffff() {
    let bytes = nbg_lab::lab::synth_v1::profile("v1-0020-suffix-crc")
        .unwrap()
        .unwrap();
    let doc = parse(&bytes).unwrap().to_json();
    let ops = doc["operations"].as_array().unwrap();
    let init = ops.iter().find(|o| o["type_name"] == "INIT").unwrap();
    let at = init["offset"].as_u64().unwrap() as usize + 8;
    assert_eq!(common::le32(&bytes, at), 0xffff);
    let mut b = bytes.clone();
    common::put32(&mut b, at, 0xffff_ffff);
    let g = parse(&b).unwrap_or_else(|f| panic!("refused: {f}"));
    let image = nbg_lab::nbg::image::NbgImage::new(&g).unwrap();
    assert_eq!(image.reconstruction().unwrap().bytes, b.len() as u64);
    assert_eq!(invariant(&g.to_json(), "no-layer-id")["holds"], false);
    // The same sentinel on an engine operation (INIT's type word made NN) names no layer.
    let at = init["offset"].as_u64().unwrap() as usize;
    common::put32(&mut b, at, 2);
    assert_eq!(
        parse(&b).unwrap_err().code,
        nbg_lab::Code::OperationLayerOutOfRange
    );
}

/// The LOADSTATE buffers of every board file decode as command streams to their last byte, and a
/// changed state value (its section checksum and the header CRC re-sealed in memory, as the
/// producer would) is named by its buffer, command and state address.
#[test]
fn a_changed_state_value_is_named_by_its_command() {
    use nbg_lab::nbg::image::NbgImage;
    for path in board_files() {
        let b = std::fs::read(&path).unwrap();
        let doc = parse(&b).unwrap().to_json();
        let l = &doc["load_states"];
        assert_eq!(
            l["errors"].as_array().unwrap().len(),
            0,
            "{}: {l}",
            path.display()
        );
        assert_eq!(l["covers_section"], true);
        assert!(l["load_states"].as_u64().unwrap() > 0);
    }
    let (dir, _) = common::public_v2_paths();
    let a = std::fs::read(dir.join("a733-face_detector_int16-0000.nb")).unwrap();
    let doc = parse(&a).unwrap().to_json();
    let section = |kind: u64| {
        doc["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["type"] == kind)
            .cloned()
            .unwrap()
    };
    let (ls, table) = (section(21), section(27));
    let entry1 = table["offset"].as_u64().unwrap() as usize + 8;
    let at = ls["offset"].as_u64().unwrap() as usize + common::le32(&a, entry1) as usize;
    // Entry 1 begins with LOAD_STATE of one value at state 0x0e4c.
    assert_eq!(common::le32(&a, at), 0x0801_0e4c);
    let mut b = a.clone();
    common::put32(&mut b, at + 4, common::le32(&a, at + 4) ^ 0x40);
    let (lo, ln) = (
        ls["offset"].as_u64().unwrap() as usize,
        ls["size"].as_u64().unwrap() as usize,
    );
    let sums = section(40)["offset"].as_u64().unwrap() as usize;
    let record = (0..4)
        .map(|i| sums + 8 * i)
        .find(|&r| common::le32(&b, r) == 21)
        .unwrap();
    let crc = crc32fast::hash(&b[lo..lo + ln]);
    common::put32(&mut b, record + 4, crc);
    common::reseal_v2(&mut b);
    let (ga, gb) = (parse(&a).unwrap(), parse(&b).unwrap());
    let (ia, ib) = (NbgImage::new(&ga).unwrap(), NbgImage::new(&gb).unwrap());
    let d = nbg_lab::lab::diff::diff(&ga, &ia, &gb, &ib).unwrap();
    let fields: Vec<&str> = d
        .owners
        .iter()
        .flat_map(|o| o.ranges.iter().map(|r| r.field.as_str()))
        .collect();
    assert!(
        fields.contains(
            &"NBG_SECTION_LOADSTATE[1].command[0].LOAD_STATE.state[0x0e4c].VIVS_GL_NN_CONFIG"
        ),
        "{fields:?}"
    );
}

/// The NN commands of the A733 face detector, read at Mesa's `etna_nn_params` positions, give
/// output images (W, H, C) equal to an output of a layer of the source model
/// (`../shared/models/face_detection_short_range.ops.json`, NHWC) for 39 of its 45 commands;
/// read one bit off, none would. Every command re-encodes through the layout.
#[test]
fn the_face_detectors_nn_commands_match_its_source_model() {
    let ops = common::root().join("../shared/models/face_detection_short_range.ops.json");
    if !ops.is_file() {
        common::skip("../shared/models is not present");
        return;
    }
    let model: Value = serde_json::from_str(&std::fs::read_to_string(ops).unwrap()).unwrap();
    let mut shapes = std::collections::BTreeSet::new();
    for op in model["operators"].as_array().unwrap() {
        for s in op["output_shapes"].as_array().unwrap() {
            let d: Vec<u64> = s
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            if let [_, h, w, c] = d[..] {
                shapes.insert([w, h, c]);
            }
        }
    }
    let (dir, _) = common::public_v2_paths();
    let b = std::fs::read(dir.join("a733-face_detector_int16-0000.nb")).unwrap();
    let doc = parse(&b).unwrap().to_json();
    let nn = doc["nn_commands"].as_array().unwrap();
    assert_eq!(nn.len(), 45);
    let out = |c: &Value| -> [u64; 3] {
        let o = c["out_image"].as_array().unwrap();
        [0, 1, 2].map(|i| o[i].as_u64().unwrap())
    };
    let matched = nn.iter().filter(|c| shapes.contains(&out(c))).count();
    assert!(matched >= 39, "{matched} of 45 match the model");
    // The same words read one bit higher give no layer of the model.
    let off = nn
        .iter()
        .filter(|c| {
            let at = c["offset"].as_u64().unwrap() as usize;
            let w3 = u64::from(common::le32(&b, at + 12));
            let w4 = u64::from(common::le32(&b, at + 16));
            let shifted = [(w3 >> 7) & 0x1fff, (w3 >> 20) & 0xfff, (w4 >> 1) & 0x3fff];
            shapes.contains(&shifted)
        })
        .count();
    assert_eq!(off, 0);
    let o = common::nbg(
        &common::root(),
        &[
            "roundtrip",
            "--json",
            dir.join("a733-face_detector_int16-0000.nb")
                .to_str()
                .unwrap(),
        ],
    );
    let f = &common::stdout_json(&o)["files"][0];
    assert_eq!(f["records_reencoded"], f["records_total"], "{f}");
}

/// Shader code (v2 PPU_INSTR entries, v1 `ppu_instr` and `lcd` entries, ICD entries an SH
/// state names) is owned instruction by instruction through Mesa's etnaviv ISA layout
/// (`fieldmap::shader_instruction`), and the layout reads true where it can be checked against
/// itself: every branch (opcode 0x16, `opcode_bit6 << 6 | opc`) targets an instruction of its
/// own buffer (Mesa's `#instruction-cf` TARGET, bits 103-117: word 3 bits 7-21).
#[test]
fn shader_instructions_decode_and_branch_inside_their_buffer() {
    use nbg_lab::nbg::family::OwnerClass;
    use nbg_lab::nbg::fieldmap::shader_instruction as si;
    use nbg_lab::nbg::image::NbgImage;
    let part = |f: &nbg_lab::nbg::fieldmap::Field, name: &str| {
        *f.parts.iter().find(|p| p.name == name).unwrap()
    };
    let (opc, bit6) = (part(&si::word0, "opc"), part(&si::word2, "opcode_bit6"));
    let mut files = board_files();
    let (dir, names) = common::public_paths();
    files.extend(names.into_iter().map(|n| dir.join(n)));
    let serializer = common::root().join("controls/serializer");
    for e in std::fs::read_dir(&serializer).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "nb") {
            files.push(p);
        }
    }
    let (mut boards, mut instructions, mut branches) = (0, 0, 0);
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let g = parse(&bytes).unwrap_or_else(|f| panic!("{}: {f}", path.display()));
        let image = NbgImage::new(&g).unwrap();
        let mut shown = 0;
        for o in image.owners() {
            if !o.label.ends_with("shader instructions") || o.class != OwnerClass::DecodedRecord {
                assert!(
                    !(o.label.contains("PPU_INSTR") && o.class == OwnerClass::PreservedOpaque),
                    "{}: {} is opaque",
                    path.display(),
                    o.label
                );
                continue;
            }
            let code = &bytes[o.start as usize..o.end as usize];
            assert_eq!(code.len() % 16, 0, "{}: {}", path.display(), o.label);
            let n = code.len() / 16;
            for k in 0..n {
                let w = |i: usize| u64::from(common::le32(code, 16 * k + 4 * i));
                instructions += 1;
                shown += 1;
                if bit6.get(w(2)) << 6 | opc.get(w(0)) == 0x16 {
                    branches += 1;
                    let target = (w(3) >> 7) & 0x7fff;
                    assert!(
                        target <= n as u64,
                        "{}: {} instruction {k} branches to {target} of {n}",
                        path.display(),
                        o.label
                    );
                }
            }
        }
        if path.starts_with(board_files()[0].parent().unwrap()) && shown > 0 {
            boards += 1;
        }
    }
    assert!(boards > 0, "no board file has shader code");
    assert!(
        instructions > 0 && branches > 0,
        "{instructions} instructions, {branches} branches"
    );
}

/// Every byte of the command, state, hardware-init and index sections (v2 NN, TP, LOADSTATE,
/// ICD, ICDT, HWINITOPERATIONS and the three index tables; v1 `nn`, `tp`, `load_states`, `icd`,
/// `icd_table`, `hw_init` and the index tables) of the serializer controls, the public v1 files
/// and the board files is a decoded field, named or named unknown: the ICD's data buffers (the
/// init graph's images, shader data, TP buffer and VIP8000-class coefficients) word by word as
/// `unknown_b0_31` (by byte where the size is not whole words), every record re-encoded exactly.
#[test]
fn command_state_init_and_index_bytes_are_all_decoded_fields() {
    use nbg_lab::nbg::family::OwnerClass;
    use nbg_lab::nbg::image::NbgImage;
    use nbg_lab::nbg::reencode::reencode;
    const V2: [&str; 9] = [
        "NBG_SECTION_NN",
        "NBG_SECTION_TP",
        "NBG_SECTION_LOADSTATE",
        "NBG_SECTION_ICD",
        "NBG_SECTION_ICDT",
        "NBG_SECTION_HWINITOPERATIONS",
        "NBG_SECTION_LOADSTATE_TABLE",
        "NBG_SECTION_PPU_INSTR_TABLE",
        "NBG_SECTION_COEF_DATA_TABLE",
    ];
    const V1: [&str; 9] = [
        "nn",
        "tp",
        "load_states",
        "icd",
        "icd_table",
        "hw_init",
        "load_states_table",
        "lcd_table",
        "ppu_instr_table",
    ];
    // The section or table an owner's label names ("section 10 type 15 NBG_SECTION_ICD[3]
    // data", "table 14 icd[0] data").
    let named = |label: &str| -> Option<String> {
        let mut words = label.split(' ');
        let name = match words.next()? {
            "section" => words.nth(3)?,
            "table" => words.nth(1)?,
            _ => return None,
        };
        Some(name.split('[').next()?.to_string())
    };
    let mut files = board_files();
    let (dir, names) = common::public_paths();
    files.extend(names.into_iter().map(|n| dir.join(n)));
    for e in std::fs::read_dir(common::root().join("controls/serializer")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "nb") {
            files.push(p);
        }
    }
    let (mut owned, mut buffers, mut v1_tables) = (0u64, 0u64, 0u64);
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let g = parse(&bytes).unwrap_or_else(|f| panic!("{}: {f}", path.display()));
        let image = NbgImage::new(&g).unwrap();
        for o in image.owners() {
            let Some(name) = named(&o.label) else {
                continue;
            };
            if !V2.contains(&name.as_str()) && !V1.contains(&name.as_str()) {
                continue;
            }
            assert!(
                matches!(
                    o.class,
                    OwnerClass::DecodedRecord | OwnerClass::Padding | OwnerClass::Alignment
                ),
                "{}: {} is {:?}",
                path.display(),
                o.label,
                o.class
            );
            owned += o.end - o.start;
            v1_tables += u64::from(V1.contains(&name.as_str()));
            let data = [" image", " data", " TP buffer", " coefficients"];
            if name.eq_ignore_ascii_case("icd") || name == "NBG_SECTION_ICD" {
                buffers += u64::from(data.iter().any(|d| o.label.ends_with(d)));
            }
        }
        let r = reencode(&g, &image);
        assert!(
            r.exact() && r.first_mismatch.is_none(),
            "{}: {:?}",
            path.display(),
            r.first_mismatch
        );
    }
    assert!(
        owned > 0 && buffers > 0 && v1_tables > 0,
        "{owned} bytes, {buffers} ICD buffers, {v1_tables} v1 tables"
    );
}

/// `nbg locate --ops`: every NN command of the A733 face detector against its source model's
/// layers. A command whose kernel matched a source tensor is paired with the operator reading
/// that tensor, and its input image, kernel size and depth, output image and channels equal the
/// layer's (a stride-2 layer runs at stride 1); every other command's output elements are an
/// operator's, alone or tiled over neighbouring commands. A layer changed in the operators file
/// is a disagreement, exit 1; an operators file that does not read, exit 2.
#[test]
fn locate_with_ops_checks_every_nn_command_against_its_layer() {
    let models = common::root().join("../shared/models");
    let (ops, npz) = (
        models.join("face_detection_short_range.ops.json"),
        models.join("face_detection_short_range.weights.npz"),
    );
    if !ops.is_file() {
        common::skip("../shared/models is not present");
        return;
    }
    let (dir, _) = common::public_v2_paths();
    let nb = dir.join("a733-face_detector_int16-0000.nb");
    let run = |ops: &std::path::Path| {
        common::nbg(
            &common::root(),
            &[
                "locate",
                "--json",
                npz.to_str().unwrap(),
                nb.to_str().unwrap(),
                "--ops",
                ops.to_str().unwrap(),
            ],
        )
    };
    let o = run(&ops);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = common::stdout_json(&o);
    let l = &doc["layers"];
    let commands = l["commands"].as_array().unwrap();
    let kernels = doc["decoded"]["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["found"]["command"].is_u64() && t["shape"].as_array().unwrap().len() == 4)
        .count();
    assert_eq!(l["agree"], kernels as u64, "{l}");
    assert_eq!(l["disagree"], 0);
    assert_eq!(l["unaccounted"], 0);
    assert_eq!(
        l["agree"].as_u64().unwrap() + l["accounted"].as_u64().unwrap(),
        commands.len() as u64
    );
    for c in commands.iter().filter(|c| c["verdict"] == "agrees") {
        let fields: Vec<&str> = c["compared"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["field"].as_str().unwrap())
            .collect();
        assert_eq!(
            fields,
            ["in_image", "kernel", "kernel_z", "out_image", "out_z"]
        );
    }
    // One layer's output channels changed: its command now disagrees.
    let mut m: Value = serde_json::from_slice(&std::fs::read(&ops).unwrap()).unwrap();
    let conv = m["operators"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|o| o["op"] == "CONV_2D")
        .unwrap();
    conv["output_shapes"][0][3] = 7.into();
    let tmp = tempfile::tempdir().unwrap();
    let changed = tmp.path().join("changed.ops.json");
    std::fs::write(&changed, serde_json::to_vec(&m).unwrap()).unwrap();
    let o = run(&changed);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(common::stdout_json(&o)["layers"]["disagree"], 1);
    let bad = tmp.path().join("bad.ops.json");
    std::fs::write(&bad, b"{\"operators\": 3}").unwrap();
    let o = run(&bad);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an operators file"));
}
