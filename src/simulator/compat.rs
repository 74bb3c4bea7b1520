//! `nbg vendor compat`: which configurations and which version words the vendor's loader
//! accepts a file under, measured: each file under each configuration, as it is and with its
//! version word replaced in memory (the image is never written), with nbg's verdict beside.

use super::{BatchVerdict, Config, Sdk, VendorError};
use crate::nbg::format::{OFF_TARGET_WORD, OFF_VERSION_WORD};
use serde::Serialize;

/// One (file, configuration, version) trial.
#[derive(Clone, Debug, Serialize)]
pub struct Trial {
    /// The file, as given.
    pub file: String,
    /// Its own version word, hex.
    pub own_version: String,
    /// The version word tried (its own when unchanged), hex.
    pub version: String,
    /// Its own target word, hex.
    pub own_target: String,
    /// The configuration.
    pub config: String,
    /// That configuration's PID, hex.
    pub pid: String,
    /// The loader's verdict.
    pub loader: BatchVerdict,
    /// nbg's verdict on the same image: `valid` or the failure code.
    pub nbg: String,
}

fn hex(v: u32) -> String {
    format!("0x{v:08x}")
}

/// Load every file under every configuration, with its own version and each of `versions`.
pub fn run(
    sdk: &Sdk,
    configs: &[&Config],
    files: &[(String, Vec<u8>)],
    versions: &[u32],
) -> Result<Vec<Trial>, VendorError> {
    let word = |b: &[u8], at: usize| crate::nbg::read::le32_at(b, at).unwrap_or(0);
    let mut out = Vec::new();
    for config in configs {
        let mut images = Vec::new();
        let mut meta = Vec::new();
        for (name, bytes) in files {
            let own = word(bytes, OFF_VERSION_WORD);
            let mut tried = vec![own];
            tried.extend(versions.iter().copied().filter(|&v| v != own));
            for v in tried {
                let mut b = bytes.clone();
                if let Some(w) = b.get_mut(OFF_VERSION_WORD..OFF_VERSION_WORD + 4) {
                    w.copy_from_slice(&v.to_le_bytes());
                }
                let nbg = match crate::nbg::parse::parse(&b) {
                    Ok(_) => "valid".to_string(),
                    Err(f) => f.code.as_str().to_string(),
                };
                images.push(b);
                meta.push((name.clone(), own, v, word(bytes, OFF_TARGET_WORD), nbg));
            }
        }
        let (verdicts, _) = super::load_batch(sdk, config, &images)?;
        for ((file, own, v, target, nbg), loader) in meta.into_iter().zip(verdicts) {
            out.push(Trial {
                file,
                own_version: hex(own),
                version: hex(v),
                own_target: hex(target),
                config: config.name.clone(),
                pid: hex(config.pid),
                loader,
                nbg,
            });
        }
    }
    Ok(out)
}
