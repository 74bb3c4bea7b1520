//! `nbg vendor agreement`: nbg's verdict beside the vendor loader's on every NBG the project
//! holds (`controls/`, `differentials/`, and the public corpus beside it when present), each
//! under the configuration its own target word selects. A file one accepts and the other
//! refuses is a disagreement, listed with both verdicts.

use super::{BatchVerdict, Config, Sdk, VendorError};
use crate::nbg::format::{OFF_TARGET_WORD, OFF_VERSION_WORD};
use crate::nbg::read::le32_at;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest file judged (the corpus's files are far smaller).
pub const MAX_FILE: u64 = 64 << 20;

/// One file's two verdicts.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The path, relative to the folder it was found under.
    pub file: String,
    /// The version word, hex.
    pub version: String,
    /// The target word, hex.
    pub target: String,
    /// nbg's verdict: `valid` or the failure code.
    pub nbg: String,
    /// The configuration the target word selects, when the driver has one.
    pub config: Option<String>,
    /// The loader's verdict (none without a configuration).
    pub loader: Option<BatchVerdict>,
    /// nbg and the loader disagree.
    pub disagree: bool,
}

/// Every `*.nb` under `dir`, sorted, symlinks not followed.
fn nb_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let Ok(m) = p.symlink_metadata() else {
            continue;
        };
        if m.is_dir() {
            nb_files(&p, out);
        } else if m.is_file() && p.extension().is_some_and(|x| x == "nb") && m.len() <= MAX_FILE {
            out.push(p);
        }
    }
}

/// The files judged: the project's `controls/` and `differentials/`, then `corpus` (the public
/// v1 files) when given; labels relative to `root` or prefixed `public/`.
pub fn files(root: &Path, corpus: Option<&Path>) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for dir in ["controls", "differentials"] {
        let mut found = Vec::new();
        nb_files(&root.join(dir), &mut found);
        for p in found {
            let label = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            out.push((label, p));
        }
    }
    if let Some(c) = corpus {
        let mut found = Vec::new();
        nb_files(c, &mut found);
        for p in found {
            let label = p.strip_prefix(c).unwrap_or(&p).display().to_string();
            out.push((format!("public/{label}"), p));
        }
    }
    out
}

/// Judge every file: nbg's parse, then the loader in one batch per configuration.
pub fn run(
    sdk: &Sdk,
    configs: &[Config],
    files: &[(String, PathBuf)],
) -> Result<Vec<Row>, VendorError> {
    let mut rows = Vec::new();
    let mut by_config: BTreeMap<String, Vec<(usize, Vec<u8>)>> = BTreeMap::new();
    for (label, path) in files {
        let bytes = crate::files::read_regular(path)?;
        let nbg = match crate::nbg::parse::parse(&bytes) {
            Ok(_) => "valid".to_string(),
            Err(f) => f.code.as_str().to_string(),
        };
        let target = le32_at(&bytes, OFF_TARGET_WORD);
        let config = target.and_then(|t| super::targets::for_pid(configs, t));
        let version = le32_at(&bytes, OFF_VERSION_WORD);
        if let Some(c) = config {
            by_config
                .entry(c.name.clone())
                .or_default()
                .push((rows.len(), bytes));
        }
        rows.push(Row {
            file: label.clone(),
            version: version.map_or("?".into(), |v| format!("0x{v:08x}")),
            target: target.map_or("?".into(), |t| format!("0x{t:08x}")),
            nbg,
            config: config.map(|c| c.name.clone()),
            loader: None,
            disagree: false,
        });
    }
    for (name, items) in by_config {
        // Invariant: the name came from `configs`.
        let config = configs.iter().find(|c| c.name == name).expect("config");
        let (indices, images): (Vec<usize>, Vec<Vec<u8>>) = items.into_iter().unzip();
        let (verdicts, _) = super::load_batch(sdk, config, &images)?;
        for (i, v) in indices.iter().zip(verdicts) {
            let accepted = v == BatchVerdict::Accepted;
            rows[*i].disagree = accepted != (rows[*i].nbg == "valid");
            rows[*i].loader = Some(v);
        }
    }
    Ok(rows)
}
