//! The vendor's own reader as a differential oracle: `../shared/peers/nbinfo/nbinfo -a` on every
//! control, capture-set file and public file, its `Key: value` blocks compared field by field with
//! `nbg parse --json`. The lab never runs `nbinfo`; only this test does, when the peer exists.
//!
//! Fields nbinfo prints that nbg does not decode, by design (see `notebooks/vendor-reader.md`):
//! the memory estimates (`Total Video/System Memory`, the input/memory-pool overlap summary), the
//! v1 per-operation `Coeff header Size` (looked up in a table nbg keeps as a nested view), and v2
//! `Memory Pool Alignment` (no v2 field; nbinfo prints 64). Per-operation `Command Size`,
//! `Instr Size` and v2 `Coeff data Size` are compared with nbg's derived `command_bytes`,
//! `instruction_bytes` and `coefficient_bytes`.

use crate::common;
use nbg_lab::NbgFamily;

use nbg_lab::parse;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

type Fields = BTreeMap<String, String>;

/// Every file the comparison covers: (label, path).
fn files() -> Vec<(String, PathBuf)> {
    let root = common::root();
    let mut out: Vec<(String, PathBuf)> = common::control_names()
        .into_iter()
        .map(|n| (format!("controls/{n}"), root.join("controls").join(n)))
        .collect();
    let mut sets: Vec<PathBuf> = std::fs::read_dir(root.join("differentials"))
        .expect("differentials")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    sets.sort();
    for set in sets {
        // A group of sets (differentials/serializer) holds the vendor serializer's 0x00020005
        // files, which nbinfo refuses ("fail to init parser", exit 255): outside its versions.
        if !set.join("differential.json").is_file() {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!(
                    "skipped: {}: 0x00020005 capture sets, a version nbinfo does not read\n",
                    set.display()
                )
                .as_bytes(),
            );
            continue;
        }
        for f in ["A1.nb", "A2.nb", "B.nb"] {
            let name = set.file_name().unwrap().to_string_lossy().into_owned();
            out.push((format!("differentials/{name}/{f}"), set.join(f)));
        }
    }
    // Every public file when ../shared is there, else the ones the repository carries: v1 and
    // the v2 board files.
    let (dir, names) = common::public_paths();
    for name in names {
        out.push((format!("public/{name}"), dir.join(&name)));
    }
    let (dir, names) = common::public_v2_paths();
    for name in names {
        out.push((format!("public/v2/{name}"), dir.join(&name)));
    }
    out
}

/// Integers in decimal, `0x` hex as decimal, anything else trimmed as it is.
fn canon(v: &str) -> String {
    let v = v.trim();
    if let Some(h) = v.strip_prefix("0x") {
        if let Ok(n) = u64::from_str_radix(h, 16) {
            return n.to_string();
        }
    }
    v.to_string()
}

/// nbinfo's blocks as flat `field -> value`; record fields as `layer[i].x`, `operation[i].x`,
/// `input[i].x`, `output[i].x`.
fn read_nbinfo(text: &str) -> Fields {
    let mut out = Fields::new();
    let mut block = String::new();
    let mut record: Option<String> = None;
    let (mut layers, mut operations) = (0usize, 0usize);
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('*') || line.starts_with("nbg file name") {
            continue;
        }
        let titles = [
            "Overall Info",
            "Layer Table",
            "Operation Table",
            "Input Table",
            "Output Table",
            "Memory Info",
            "Input and memory_pool overlap info",
        ];
        if titles.contains(&line) {
            block = line.to_string();
            record = None;
            continue;
        }
        if let Some(n) = line
            .strip_prefix("Input ")
            .and_then(|n| n.parse::<usize>().ok())
        {
            record = Some(format!("input[{n}]"));
            continue;
        }
        if let Some(n) = line
            .strip_prefix("Output ")
            .and_then(|n| n.parse::<usize>().ok())
        {
            record = Some(format!("output[{n}]"));
            continue;
        }
        // `Output Count` is printed without a colon.
        let (key, value) = match line.split_once(':') {
            Some((k, v)) => (k, v.trim()),
            None => match line.rsplit_once(' ') {
                Some((k, v)) if k.trim() == "Output Count" => (k, v.trim()),
                _ => continue,
            },
        };
        let key = key.split_whitespace().collect::<Vec<_>>().join(" ");
        match block.as_str() {
            "Layer Table" => {
                if key == "Layer Table Index" {
                    record = Some(format!("layer[{layers}]"));
                    layers += 1;
                }
            }
            "Operation Table" => {
                if key == "Operation Type" {
                    record = Some(format!("operation[{operations}]"));
                    operations += 1;
                }
            }
            "Overall Info" => record = Some("overall".into()),
            "Input Table" | "Output Table" => {}
            _ => continue,
        }
        let Some(r) = &record else { continue };
        // Operation type names are printed in title case (`Init`, `End`, `NN`).
        let value = if key == "Operation Type" {
            value.to_uppercase()
        } else {
            canon(value)
        };
        out.insert(format!("{r}.{key}"), value);
    }
    out.insert("records.layers".into(), layers.to_string());
    out.insert("records.operations".into(), operations.to_string());
    out
}

fn s(v: &Value) -> String {
    match v {
        Value::String(x) => x.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => u8::from(*b).to_string(),
        other => other.to_string(),
    }
}

/// (offset, size) of a v2 section type, (0, 0) when absent.
fn section(d: &Value, kind: u64) -> (String, String) {
    d["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["type"].as_u64() == Some(kind))
        .map_or(("0".into(), "0".into()), |x| {
            (s(&x["offset"]), s(&x["size"]))
        })
}

/// (offset, size) of a v1 table, (0, 0) when the version has no such entry.
fn table(d: &Value, name: &str) -> (String, String) {
    d["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .map_or(("0".into(), "0".into()), |t| {
            (s(&t["offset"]), s(&t["size"]))
        })
}

/// nbg's parse document under nbinfo's field names.
fn nbg_fields(d: &Value) -> Fields {
    let mut f = Fields::new();
    let mut put = |k: &str, v: String| {
        f.insert(k.to_string(), v);
    };
    let v2 = d["format"] == "nbg-v2";
    let h = &d["header"];
    put("overall.Version", s(&h["version"]));
    put("overall.Target", s(&h["target"]));
    put(
        "overall.Input Count",
        d["inputs"].as_array().unwrap().len().to_string(),
    );
    put(
        "overall.Output Count",
        d["outputs"].as_array().unwrap().len().to_string(),
    );
    // nbinfo prints an absent memory pool or SRAM (a v2 file without the section) as 0.
    let zero_if_null = |v: &Value| if v.is_null() { "0".into() } else { s(v) };
    put(
        "overall.Memory Pool Size (bytes)",
        zero_if_null(&d["memory_pool_bytes"]),
    );
    put("overall.AXI SRAM Size", zero_if_null(&d["axi_sram_bytes"]));
    put("overall.VIP SRAM Size", zero_if_null(&d["vip_sram_bytes"]));
    let mut tables: Vec<(&str, (String, String))> = Vec::new();
    if v2 {
        let n = &d["network_info"];
        put("overall.Network Name", s(&n["name"]));
        put("overall.Core Count", s(&n["core_count"]));
        put("overall.core count", s(&n["core_count"]));
        put("overall.Layer Count", s(&n["layer_count"]));
        put(
            "overall.Operation Count",
            d["operations"].as_array().map_or(0, Vec::len).to_string(),
        );
        put("overall.CheckSum Value", s(&h["crc_sum"]));
        let a = &n["attribute"];
        put("overall.nn command size", s(&a["nn_command_bytes"]));
        put("overall.tp command size", s(&a["tp_command_bytes"]));
        put("overall.change ppu param", s(&a["change_ppu_param"]));
        tables.extend([
            ("nn table", section(d, 7)),
            ("tp table", section(d, 8)),
            ("ICD", section(d, 15)),
            ("coeff header", section(d, 6)),
            ("coeff data", section(d, 24)),
            ("ppu instr", section(d, 19)),
            ("load states", section(d, 21)),
            ("dyna io", section(d, 20)),
        ]);
    } else {
        let db = &d["feature_database"];
        put("overall.Network Name", s(&h["network_name"]));
        put("overall.Core Count", s(&db["core_count"]));
        put("overall.core count", s(&db["core_count"]));
        put("overall.Layer Count", s(&h["layer_count"]));
        put("overall.Operation Count", s(&h["operation_count"]));
        put("overall.CheckSum Value", s(&db["nbg_crc_sum"]));
        put(
            "overall.Memory Pool Alignment",
            s(&d["memory_pool"]["alignment"]),
        );
        put("overall.nn command size", s(&db["nn_command_bytes"]));
        put("overall.tp command size", s(&db["tp_command_bytes"]));
        put(
            "overall.change ppu param",
            s(&db["bits"]["change_ppu_param"]),
        );
        // Before 0x0001001c nbinfo calls the LCD table's data "coeff data" and has no coeff
        // header; from 0x0001001c the LCD data is its "coeff header".
        let has_coeff_data = d["tables"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "coeff_data");
        let (coeff_header, coeff_data) = if has_coeff_data {
            (table(d, "lcd"), table(d, "coeff_data"))
        } else {
            (("0".into(), "0".into()), table(d, "lcd"))
        };
        tables.extend([
            ("nn table", table(d, "nn")),
            ("tp table", table(d, "tp")),
            ("ICD", table(d, "icd")),
            ("coeff header", coeff_header),
            ("coeff data", coeff_data),
            ("ppu instr", table(d, "ppu_instr")),
            ("load states", table(d, "load_states")),
            ("dyna io", table(d, "dyna_io")),
        ]);
    }
    for (name, (offset, size)) in tables {
        put(&format!("overall.{name} offset"), offset);
        // nbinfo's own spelling.
        let size_key = if name == "coeff data" {
            "ceoff data size".to_string()
        } else {
            format!("{name} size")
        };
        put(&format!("overall.{size_key}"), size);
    }
    let layers = d["layers"].as_array().cloned().unwrap_or_default();
    put("records.layers", layers.len().to_string());
    for (i, l) in layers.iter().enumerate() {
        put(&format!("layer[{i}].Layer Table Index"), s(&l["index"]));
        put(&format!("layer[{i}].Layer Name"), s(&l["name"]));
        put(&format!("layer[{i}].ID"), s(&l["id"]));
        put(&format!("layer[{i}].UID"), s(&l["uid"]));
        put(
            &format!("layer[{i}].Operation Count"),
            s(&l["operation_count"]),
        );
    }
    let operations = d["operations"].as_array().cloned().unwrap_or_default();
    put("records.operations", operations.len().to_string());
    for (i, o) in operations.iter().enumerate() {
        let p = |k: &str| format!("operation[{i}].{k}");
        put(&p("Operation Type"), s(&o["type_name"]));
        put(&p("Operation Table Index"), s(&o["index"]));
        put(&p("Index"), s(&o["engine_index"]));
        put(&p("Layer Table Index"), s(&o["layer_id"]));
        put(&p("Index of First Patch"), s(&o["patch_index"]));
        put(&p("Number of Patches"), s(&o["patch_count"]));
        put(&p("Absolute OP ID"), s(&o["abs_op_id"]));
        put(&p("Absolute share ID"), s(&o["abs_share_id"]));
        put(&p("Preempt"), s(&o["preempt"]));
        // nbinfo prints sizes for every operation but SW: the load-state entry, then its
        // `calc_command_size` (NN and SP one NN command, TP one TP command, SH the PPU
        // instruction entry, 0 for the rest, NT and NN_LUT included), and where a patch of
        // source 5 names one, the v2 coefficient table entry.
        if o["type_name"] != "SW" {
            put(&p("Command Size (bytes)"), s(&o["command_bytes"]));
            let instr = match o["type_name"].as_str() {
                Some("NN" | "TP" | "SH" | "SP") => s(&o["instruction_bytes"]),
                _ => "0".into(),
            };
            put(&p("Instr Size (bytes)"), instr);
        }
        if !o["coefficient_bytes"].is_null() {
            put(&p("Coeff data Size (bytes)"), s(&o["coefficient_bytes"]));
        }
    }
    for (dir, list) in [("input", &d["inputs"]), ("output", &d["outputs"])] {
        for (i, r) in list.as_array().unwrap().iter().enumerate() {
            let p = |k: &str| format!("{dir}[{i}].{k}");
            put(&p("Dim Count"), s(&r["dimension_count"]));
            for (k, dim) in r["dimensions"].as_array().unwrap().iter().enumerate() {
                put(&p(&format!("Size of Dim[{k}]")), s(dim));
            }
            put(
                &p("Data Format"),
                format!("VIP_BUFFER_FORMAT_{}", s(&r["data_format_name"])),
            );
            put(
                &p("Data Type"),
                format!("VIP_BUFFER_TYPE_{}", s(&r["data_type_name"])),
            );
            let q = &r["quantization"];
            let qname = match q["format_name"].as_str() {
                Some("AFFINE_ASYMMETRIC") => "TF_ASYMM".to_string(),
                Some(x) => x.to_string(),
                None => s(&q["format"]),
            };
            put(
                &p("Quantization Format"),
                format!("VIP_BUFFER_QUANTIZE_{qname}"),
            );
            if let Some(scale) = q["scale"].as_f64() {
                put(&p("TF Scale"), format!("{scale:.6}"));
                put(&p("TF Zeropoint"), s(&q["zero_point"]));
            }
            if !q["fixed_point_position"].is_null() {
                put(&p("Fixed Point Pos"), s(&q["fixed_point_position"]));
            }
            // nbinfo reports the buffer it would allocate: storage rounded up to 64 bytes.
            if let Some(bytes) = r["storage_bytes"].as_u64() {
                put(
                    &p("Memory Size (bytes)"),
                    bytes.next_multiple_of(64).to_string(),
                );
            }
            put(&p(&format!("{dir} name")), s(&r["name"]));
        }
    }
    f
}

/// Fields nbinfo prints that nbg does not decode (by design; see the module note).
fn by_design(field: &str) -> bool {
    let key = field.split_once('.').map_or(field, |(_, k)| k);
    key == "Coeff header Size (bytes)" || field == "overall.Memory Pool Alignment"
}

/// Field groups of the agreement table.
const GROUPS: [&str; 5] = ["overall", "layer", "operation", "input", "output"];

fn group(field: &str) -> usize {
    let head = field.split(['.', '[']).next().unwrap_or("");
    GROUPS.iter().position(|g| *g == head).unwrap_or(0)
}

/// Per group: (fields compared, fields that agree).
type Tally = [(usize, usize); 5];

/// Compare one file: every field nbinfo prints (except by-design ones) must equal nbg's, and
/// every record nbg decodes must be printed (its identifying field). Returns the tally, the
/// number of by-design fields and the disagreements.
/// Every layer and operation field nbinfo prints must be decoded by nbg too: a version whose
/// tables nbg kept opaque fails here ("nbg has no such field").
fn compare(label: &str, nbinfo: &Fields, nbg: &Fields, v2: bool) -> (Tally, usize, Vec<String>) {
    let mut problems = Vec::new();
    let mut tally: Tally = [(0, 0); 5];
    let mut skipped = 0;
    for (field, theirs) in nbinfo {
        if by_design(field) || (v2 && field == "overall.Memory Pool Alignment") {
            skipped += 1;
            continue;
        }
        let g = &mut tally[group(field)];
        g.0 += 1;
        match nbg.get(field) {
            Some(ours) if ours == theirs => g.1 += 1,
            Some(ours) => {
                problems.push(format!("{label}: {field}: nbinfo {theirs:?}, nbg {ours:?}"))
            }
            None => problems.push(format!(
                "{label}: {field}: nbinfo {theirs:?}, nbg has no such field"
            )),
        }
    }
    // nbinfo prints preempt / share / absolute ids only for some versions; a decoded record
    // must still appear, through its identifying field.
    let identifying = ["Layer Name", "Operation Type", "Dim Count"];
    for (field, ours) in nbg {
        let key = field.split_once('.').map_or("", |(_, k)| k);
        if identifying.contains(&key) && !nbinfo.contains_key(field) {
            problems.push(format!(
                "{label}: {field}: nbg {ours:?}, nbinfo does not print it"
            ));
        }
    }
    (tally, skipped, problems)
}

/// `nbinfo -a` output; `-o` and `-m` (the views that crashed on random records) must succeed too.
fn run(peer: &Path, path: &Path) -> String {
    let mut all = String::new();
    for flag in ["-o", "-m", "-a"] {
        let o = Command::new(peer)
            .arg(flag)
            .arg(path)
            .output()
            .expect("run nbinfo");
        assert!(
            o.status.success(),
            "nbinfo {flag} {} failed: {:?} (a crash is a signal, e.g. SIGSEGV)",
            path.display(),
            o.status
        );
        all = String::from_utf8_lossy(&o.stdout).into_owned();
    }
    all
}

fn check_file(peer: &Path, label: &str, path: &Path) -> (String, Vec<String>) {
    let bytes = std::fs::read(path).expect("file");
    let doc = parse(&bytes)
        .unwrap_or_else(|f| panic!("{label}: {f}"))
        .to_json();
    let theirs = read_nbinfo(&run(peer, path));
    let ours = nbg_fields(&doc);
    let (tally, skipped, p) = compare(label, &theirs, &ours, doc["format"] == "nbg-v2");
    let cells: Vec<String> = tally.iter().map(|(n, ok)| format!("{ok}/{n}")).collect();
    (
        format!("| {label} | {} | {skipped} |", cells.join(" | ")),
        p,
    )
}

/// Every profile of `nbg synth` at other seeds, and `synth-corpus` files, built in a temporary
/// folder: read without a crash and with nbg's values.
#[test]
fn nbinfo_reads_every_synth_profile_and_corpus_file() {
    let Some(peer) = common::nbinfo() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut problems = Vec::new();
    let mut built = Vec::new();
    for profile in nbg_lab::lab::synth::PROFILES {
        for seed in [1u64, 2, 99] {
            let bytes = nbg_lab::lab::synth::profile(profile, seed)
                .unwrap()
                .emit()
                .unwrap();
            built.push((format!("synth {profile} seed {seed}"), bytes));
        }
    }
    // The small v1 builder's profiles of every version the vendor's reader knows (it refuses
    // newer ones by version, exit 255).
    for (profile, version, _, _) in nbg_lab::lab::synth_v1::PROFILES {
        if version <= nbg_lab::nbg::format::v1::MAX_KNOWN_VERSION {
            let bytes = nbg_lab::lab::synth_v1::profile(profile).unwrap().unwrap();
            built.push((format!("synth {profile}"), bytes));
        }
    }
    for seed in 0..2 {
        built.push((
            format!("synth-corpus bulk seed {seed}"),
            nbg_lab::lab::synth::bulk(seed, 96 * 1024)
                .unwrap()
                .emit()
                .unwrap(),
        ));
    }
    for (i, (label, bytes)) in built.iter().enumerate() {
        let path = dir.path().join(format!("{i}.nb"));
        std::fs::write(&path, bytes).expect("write");
        let (_, mut p) = check_file(&peer, label, &path);
        problems.append(&mut p);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn nbinfo_agrees_with_nbg_on_every_control_capture_set_and_public_file() {
    let Some(peer) = common::nbinfo() else { return };
    let mut problems = Vec::new();
    let mut rows = Vec::new();
    for (label, path) in files() {
        let (row, mut p) = check_file(&peer, &label, &path);
        rows.push(row);
        problems.append(&mut p);
    }
    // The agreement table of `notebooks/vendor-reader.md` (agreeing/compared per group).
    println!("| file | {} | by design |", GROUPS.join(" | "));
    for r in &rows {
        println!("{r}");
    }
    assert!(
        problems.is_empty(),
        "{} disagreements:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn nbinfo_blocks_are_read_as_printed() {
    let text = "nbg file name x.nb\n\n nbinfo version 2.0.0\n****\nOverall Info\n****\n\
        Network Name:      net: a\nVersion:     0x20000\nOutput Count        3\n****\n\
        Layer Table\n****\nLayer Table Index:   0\nLayer Name:   L0\n****\nLayer Table Index:  1\n\
        Layer Name:   L1\n****\nInput Table\n****\nInput 0\nDim Count:   2\ninput name:   in\n";
    let f = read_nbinfo(text);
    assert_eq!(f["overall.Network Name"], "net: a");
    assert_eq!(f["overall.Version"], "131072");
    assert_eq!(f["overall.Output Count"], "3");
    assert_eq!(f["layer[1].Layer Name"], "L1");
    assert_eq!(f["records.layers"], "2");
    assert_eq!(f["input[0].Dim Count"], "2");
    // A disagreement names the file, the field and both values.
    let mut ours = f.clone();
    ours.insert("layer[1].Layer Name".into(), "other".into());
    let (tally, _, p) = compare("x.nb", &f, &ours, true);
    assert_eq!(tally[1], (4, 3));
    assert_eq!(
        p,
        ["x.nb: layer[1].Layer Name: nbinfo \"L1\", nbg \"other\""]
    );
}
