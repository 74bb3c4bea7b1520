//! The exported Kaitai Struct files checked by a real consumer: `kaitai-struct-compiler` 0.11
//! (npm, installed by `.ci/setup` into `.ci/node`) compiles `evidence/fieldmap/nbg_v1.ksy` and
//! `nbg_v2.ksy` to Python; the generated parsers (with the `kaitaistruct` runtime) decode every
//! control and public file, and the header, directory, I/O records, network info, memory and
//! checksum records, DYNAIO table and v1 tables (layer, operation, SH, patch, SW operation,
//! hardware-init, PPU parameter) equal `nbg parse --json` field for field.
//! Without the compiler or runtime the test prints `skipped:`; under `CI=true` that fails.

use crate::common;
use nbg_lab::NbgFamily;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

fn prerequisites(root: &Path) -> Result<PathBuf, String> {
    let modules = root.join(".ci/node/node_modules");
    for package in ["kaitai-struct-compiler", "js-yaml"] {
        if !modules.join(package).is_dir() {
            return Err(format!(
                "{package} not installed in .ci/node (run .ci/setup)"
            ));
        }
    }
    let runtime = Command::new("python3")
        .args(["-c", "import kaitaistruct"])
        .status()
        .map_err(|e| format!("python3: {e}"))?;
    if !runtime.success() {
        return Err("the kaitaistruct Python runtime is not installed (run .ci/setup)".into());
    }
    Ok(modules)
}

/// Keep only `keys` of an object (missing keys as null).
fn pick(v: &Value, keys: &[&str]) -> Value {
    Value::Object(
        keys.iter()
            .map(|k| (k.to_string(), v[*k].clone()))
            .collect(),
    )
}

fn io(v: &Value) -> Value {
    Value::Array(
        v.as_array()
            .expect("records")
            .iter()
            .map(|r| {
                let mut o = pick(
                    r,
                    &[
                        "index",
                        "name",
                        "dimension_count",
                        "dimensions",
                        "data_format",
                        "data_type",
                    ],
                );
                o["quantization"] = pick(&r["quantization"], &["format", "raw_words"]);
                o
            })
            .collect(),
    )
}

fn each(v: &Value, keys: &[&str]) -> Value {
    match v.as_array() {
        Some(a) => Value::Array(a.iter().map(|r| pick(r, keys)).collect()),
        None => Value::Null,
    }
}

fn records(doc: &Value, out: &mut serde_json::Map<String, Value>) {
    out.insert(
        "layers".into(),
        each(
            &doc["layers"],
            &["index", "name", "id", "uid", "operation_count"],
        ),
    );
    out.insert(
        "operations".into(),
        each(
            &doc["operations"],
            &[
                "index",
                "type",
                "engine_index",
                "layer_id",
                "state_id",
                "patch_index",
                "patch_count",
                "preempt",
                "abs_share_id",
                "abs_op_id",
            ],
        ),
    );
    out.insert(
        "sh_operations".into(),
        each(
            &doc["sh_operations"],
            &["index", "instr_index", "ppu_param_index"],
        ),
    );
    out.insert(
        "patches".into(),
        if doc["patches"].is_null() {
            Value::Null
        } else {
            pick(&doc["patches"], &["count"])
        },
    );
}

/// The parse document projected onto what the Kaitai script prints.
fn expected(doc: &Value) -> Value {
    let mut out = serde_json::Map::new();
    if doc["format"] == "nbg-v2" {
        out.insert(
            "header".into(),
            pick(
                &doc["header"],
                &[
                    "version",
                    "target",
                    "crc_sum",
                    "declared_file_size_low",
                    "declared_file_size_high",
                    "sub_header_offset",
                    "sub_header_size",
                    "sub_header_count",
                    "class",
                    "reserved",
                ],
            ),
        );
        out.insert(
            "sub_header".into(),
            pick(
                &doc["sub_header"],
                &[
                    "section_headers_offset",
                    "section_header_size",
                    "section_header_count",
                ],
            ),
        );
        out.insert(
            "sections".into(),
            each(
                &doc["sections"],
                &[
                    "type",
                    "offset",
                    "size",
                    "load_address",
                    "alignment",
                    "entry_size",
                    "reserved_words",
                ],
            ),
        );
        out.insert("inputs".into(), io(&doc["inputs"]));
        out.insert("outputs".into(), io(&doc["outputs"]));
        let n = &doc["network_info"];
        let mut info = pick(
            n,
            &[
                "name",
                "input_count",
                "output_count",
                "layer_count",
                "absolute_operation_count",
                "operation_count",
                "core_count",
                "address_width",
            ],
        );
        info["attribute"] = pick(
            &n["attribute"],
            &[
                "raw",
                "change_ppu_param",
                "nn_command_size_code",
                "tp_command_size_code",
                "dma_support_code",
                "reserved_bits",
            ],
        );
        out.insert("network_info".into(), info);
        for k in ["memory_pool_bytes", "vip_sram_bytes", "axi_sram_bytes"] {
            out.insert(k.into(), doc[k].clone());
        }
        out.insert(
            "section_checksums".into(),
            each(&doc["section_checksums"], &["section_type", "stored"]),
        );
        out.insert(
            "dynamic_io".into(),
            match doc["dynamic_io"]["entries"].as_array() {
                Some(e) => e.iter().map(|e| json!([e["offset"], e["size"]])).collect(),
                None => Value::Null,
            },
        );
        records(doc, &mut out);
    } else {
        out.insert(
            "header".into(),
            pick(
                &doc["header"],
                &[
                    "version",
                    "target",
                    "network_name",
                    "layer_count",
                    "operation_count",
                    "input_count",
                    "output_count",
                ],
            ),
        );
        out.insert(
            "feature_database".into(),
            pick(
                &doc["feature_database"],
                &[
                    "raw_bits",
                    "bits",
                    "num_pixel_pipes",
                    "core_count",
                    "device_index",
                    "axi_bus_width_index",
                    "cluster_id_width",
                    "nn_core_count",
                    "tp_core_count",
                    "nbg_crc_sum",
                    "vip_sram_width",
                ],
            ),
        );
        for k in ["memory_pool", "axi_sram", "vip_sram"] {
            out.insert(k.into(), doc[k].clone());
        }
        out.insert(
            "tables".into(),
            doc["tables"]
                .as_array()
                .expect("tables")
                .iter()
                .map(|t| json!([t["offset"], t["size"]]))
                .collect(),
        );
        out.insert("inputs".into(), io(&doc["inputs"]));
        out.insert("outputs".into(), io(&doc["outputs"]));
        out.insert(
            "nested_tables".into(),
            Value::Object(
                doc["nested_tables"]
                    .as_array()
                    .expect("nested")
                    .iter()
                    .map(|n| {
                        (
                            n["table"].as_str().expect("name").to_string(),
                            n["entries"].clone(),
                        )
                    })
                    .collect(),
            ),
        );
        if !doc["layers"].is_null() {
            records(doc, &mut out);
            out.insert(
                "sw_operations".into(),
                each(&doc["sw_operations"], &["index", "type", "name"]),
            );
            out.insert(
                "hw_init_operations".into(),
                each(
                    &doc["hw_init_operations"],
                    &["index", "state_id", "patch_index", "patch_count"],
                ),
            );
            out.insert(
                "ppu_params".into(),
                each(
                    &doc["ppu_params"],
                    &[
                        "index",
                        "global_offset",
                        "global_scale",
                        "group_size",
                        "group_count",
                    ],
                ),
            );
        }
    }
    Value::Object(out)
}

#[test]
fn kaitai_parsers_generated_from_the_export_agree_with_the_parser() {
    let root = common::root();
    let modules = match prerequisites(&root) {
        Ok(m) => m,
        Err(why) => {
            common::skip(&why);
            return;
        }
    };
    let generated = tempfile_dir();
    for family in ["v1", "v2"] {
        let status = Command::new("node")
            .arg(root.join("tests/kaitai/compile.js"))
            .arg(&modules)
            .arg(root.join(format!("evidence/fieldmap/nbg_{family}.ksy")))
            .arg(&generated)
            .status()
            .expect("node runs");
        assert!(
            status.success(),
            "kaitai-struct-compiler refused nbg_{family}.ksy"
        );
    }
    let mut files: Vec<PathBuf> = common::control_names()
        .iter()
        .map(|n| root.join("controls").join(n))
        .collect();
    // Every public file: v1 and the v2 board files (the shared corpus, else the committed ones).
    for (dir, names) in [common::public_paths(), common::public_v2_paths()] {
        files.extend(names.into_iter().map(|n| dir.join(n)));
    }
    // Every real v2 file of the vendor's serializer.
    let serializer = root.join("controls/serializer");
    let mut real: Vec<PathBuf> = std::fs::read_dir(&serializer)
        .expect("controls/serializer")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "nb"))
        .collect();
    real.sort();
    files.extend(real);
    // Names with bytes after their NUL, in both families (the generated parser must stop at
    // the NUL as nbg does).
    for (name, bytes) in [
        (
            "v2-trailing-names.nb",
            crate::names::v2_with_trailing_names(),
        ),
        (
            "v1-trailing-names.nb",
            crate::names::v1_with_trailing_names(),
        ),
    ] {
        let path = generated.join(name);
        std::fs::write(&path, bytes).expect("write");
        files.push(path);
    }
    for file in &files {
        let bytes = std::fs::read(file).expect("read");
        let doc = nbg_lab::parse(&bytes).expect("valid").to_json();
        let mut cmd = Command::new("python3");
        cmd.arg(root.join("tests/kaitai/decode.py"))
            .arg(&generated)
            .arg(file);
        if !doc["layers"].is_null() {
            cmd.arg("records");
        }
        let out = cmd.output().expect("python3 runs");
        assert!(
            out.status.success(),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let kaitai: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let want = expected(&doc);
        for (key, value) in want.as_object().expect("object") {
            assert_eq!(&kaitai[key], value, "{}: {key}", file.display());
        }
        assert_eq!(
            kaitai.as_object().map(|o| o.len()),
            want.as_object().map(|o| o.len()),
            "{}",
            file.display()
        );
    }
    let _ = std::fs::remove_dir_all(&generated);
}

/// A fresh folder under the target directory for the generated parsers.
fn tempfile_dir() -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kaitai-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp folder");
    dir
}
