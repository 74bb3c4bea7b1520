//! `controls/serializer/`: real NBG files the vendor's serializer wrote from the project's own
//! tiny models (`simulator::models`), for eight targets. Committed with the models, a hash-pinned
//! `corpus.json` (`nbg-corpus/1`, which `nbg lab` round-trips always) and `serializer.json`
//! (driver, configuration and model SHA-256 per file); `nbg verify-generated` recompiles every
//! file when the driver is installed and compares bytes.

use super::{Config, Sdk, VendorError};
use crate::digest::Hash256;
use serde_json::{Value, json};
use std::path::Path;

/// The folder, relative to the project.
pub const DIR: &str = "controls/serializer";

/// The configurations compiled for (the spec's NN target first; GC, ULSI, NANO and PICO parts).
pub const TARGETS: [&str; 8] = [
    "VIP9000NANOS_PID0X1000000E",
    "GCNANOULTRA31_VIP2_PID0X15",
    "VIP9000ULSI_PID0XBA",
    "VIPNANOQI_PID0X88",
    "VIP8000NANOSI_PLUS_PID0X9F",
    "VIPPICO_V3_PID0X99",
    "VIP9000LQ_PID0XD2",
    "VIP9000NANODI_PID0X1000001E",
];

/// One control: its file name, model and configuration.
pub struct Control {
    /// `MODEL-PID.nb`.
    pub file: String,
    /// The model's name in `simulator::models`.
    pub model: &'static str,
    /// The model's ONNX bytes.
    pub onnx: Vec<u8>,
    /// The configuration name.
    pub config: &'static str,
}

/// Every control, models in `simulator::models` order, then targets in `TARGETS` order.
pub fn plan(configs: &[Config]) -> Result<Vec<(Control, Config)>, VendorError> {
    let mut out = Vec::new();
    for (model, _, onnx) in super::models::all() {
        for name in TARGETS {
            let c = configs
                .iter()
                .find(|c| c.name == name)
                .ok_or_else(|| VendorError::Target(format!("the driver has no {name}")))?;
            out.push((
                Control {
                    file: format!("{model}-{:x}.nb", c.pid),
                    model,
                    onnx: onnx.clone(),
                    config: name,
                },
                c.clone(),
            ));
        }
    }
    Ok(out)
}

/// Compile every control: (control, NBG bytes, the compile record).
pub fn build(
    sdk: &Sdk,
    configs: &[Config],
) -> Result<Vec<(Control, super::Compiled)>, VendorError> {
    let planned = plan(configs)?;
    let jobs: Vec<super::compiles::Job> = planned
        .iter()
        .map(|(control, config)| super::compiles::Job {
            config,
            model: &control.onnx,
            network_name: None,
            pass: 0,
        })
        .collect();
    let compiled = super::compiles::all(sdk, &jobs);
    planned
        .into_iter()
        .zip(compiled)
        .map(|((control, _), x)| x.map(|x| (control, x)))
        .collect()
}

/// The pinned config and the provenance document of a build.
pub fn documents(sdk: &Sdk, built: &[(Control, super::Compiled)]) -> (Value, Value) {
    let files: Vec<Value> = built
        .iter()
        .map(|(c, x)| json!({"path": c.file, "role": "serializer", "sha256": x.nbg_sha256, "size": x.nbg_bytes}))
        .collect();
    let provenance: Vec<Value> = built
        .iter()
        .map(|(c, x)| {
            json!({
                "file": c.file,
                "model": format!("models/{}.onnx", c.model),
                "model_sha256": x.model_sha256,
                "config": c.config,
                "pid": format!("0x{:08x}", x.config.pid),
                "nbg_sha256": x.nbg_sha256,
                "nbg_version": x.nbg_version,
            })
        })
        .collect();
    (
        json!({"schema": "nbg-corpus/1", "files": files}),
        json!({"schema": "nbg-serializer-controls/1", "driver": sdk.to_json(), "files": provenance}),
    )
}

/// Write the controls, the models, `corpus.json` and `serializer.json` under `root`.
pub fn write(root: &Path, sdk: &Sdk, configs: &[Config]) -> Result<usize, VendorError> {
    let built = build(sdk, configs)?;
    let dir = root.join(DIR);
    std::fs::create_dir_all(dir.join("models")).map_err(|source| crate::files::InputError::Io {
        path: dir.join("models"),
        source,
    })?;
    for (model, _, onnx) in super::models::all() {
        crate::files::write_atomic(&dir.join(format!("models/{model}.onnx")), &onnx, true)?;
    }
    for (c, x) in &built {
        crate::files::write_atomic(&dir.join(&c.file), &x.nbg, true)?;
    }
    let (corpus, provenance) = documents(sdk, &built);
    for (name, doc) in [("corpus.json", corpus), ("serializer.json", provenance)] {
        let text = crate::canonical::canonical(&doc);
        crate::files::write_atomic(&dir.join(name), text.as_bytes(), true)?;
    }
    Ok(built.len())
}

/// Recompile every control and compare with the committed files (the models and both
/// documents too): one line per difference.
pub fn verify(
    root: &Path,
    sdk: &Sdk,
    configs: &[Config],
) -> Result<(usize, Vec<String>), VendorError> {
    let dir = root.join(DIR);
    let mut problems = Vec::new();
    let mut same = |path: String, want: &[u8]| match std::fs::read(dir.join(&path)) {
        Ok(have) if have == want => {}
        Ok(have) => problems.push(format!(
            "{DIR}/{path}: committed sha256 {}, rebuilt {}",
            Hash256::of(&have),
            Hash256::of(want)
        )),
        Err(e) => problems.push(format!("{DIR}/{path}: {e}")),
    };
    for (model, _, onnx) in super::models::all() {
        same(format!("models/{model}.onnx"), &onnx);
    }
    let built = build(sdk, configs)?;
    for (c, x) in &built {
        same(c.file.clone(), &x.nbg);
    }
    let (corpus, provenance) = documents(sdk, &built);
    same(
        "corpus.json".into(),
        crate::canonical::canonical(&corpus).as_bytes(),
    );
    same(
        "serializer.json".into(),
        crate::canonical::canonical(&provenance).as_bytes(),
    );
    Ok((built.len(), problems))
}
