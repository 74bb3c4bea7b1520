//! `nbg vendor compat`: which configurations and which version words the vendor's loader
//! accepts a file under, measured: each file under each configuration, as it is and with its
//! version word replaced in memory (the image is never written), with nbg's verdict beside.

use super::{BatchVerdict, Config, Sdk, VendorError};
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
    let word = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    let mut out = Vec::new();
    for config in configs {
        let mut images = Vec::new();
        let mut meta = Vec::new();
        for (name, bytes) in files {
            let own = word(bytes, 4);
            let mut tried = vec![own];
            tried.extend(versions.iter().copied().filter(|&v| v != own));
            for v in tried {
                let mut b = bytes.clone();
                if b.len() >= 8 {
                    b[4..8].copy_from_slice(&v.to_le_bytes());
                }
                let nbg = match crate::parse::parse(&b) {
                    Ok(_) => "valid".to_string(),
                    Err(f) => f.code.as_str().to_string(),
                };
                images.push(b);
                meta.push((name.clone(), own, v, word(bytes, 8), nbg));
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
