//! Hash-pinned corpus configurations.
//!
//! `nbg-corpus/1` (the project's own): `{"schema", "files": [{"path", "role", "sha256",
//! "size"}]}`, paths relative to the config's folder. `nbg-public-corpus/1` (the shared public
//! corpus, read as it is): `{"schema", "files": [{"file", "size", "sha256", "version",
//! "target", "source"}]}`, paths relative to the config's `v1/` folder. Unknown keys, duplicate
//! keys and duplicate files are errors; paths must stay inside their root, with no absolute
//! paths, no `..`, no symlink at any component and only regular files.

use crate::fingerprint::Hash256;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::{Component, Path, PathBuf};

/// A config problem: a usage error (exit 2) with a clear message.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnConfig {
    schema: String,
    files: Vec<OwnEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnEntry {
    path: String,
    role: String,
    sha256: String,
    size: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PublicConfig {
    schema: String,
    files: Vec<PublicEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PublicEntry {
    file: String,
    size: u64,
    sha256: String,
    version: String,
    target: String,
    #[allow(dead_code)] // provenance, kept by the config, not used by the inventory
    source: serde_json::Value,
}

/// (path, role, sha256, size) as written in a config.
type RawEntry = (String, String, String, u64);

/// Schema tag of a corpus config the lab owns (paths and roles of its files).
pub const OWN_SCHEMA: &str = "nbg-corpus/1";
/// Schema tag of the public corpus manifest under `../shared`.
pub const PUBLIC_SCHEMA: &str = "nbg-public-corpus/1";

/// One pinned file, resolved and checked.
#[derive(Clone, Debug)]
pub struct Entry {
    /// As written in the config (relative to `Corpus::root`).
    pub path: String,
    /// The file's path resolved against the corpus root (never through a symlink).
    pub full_path: PathBuf,
    /// Why the file is in the corpus (`valid`, `control`, ...), as the config says.
    pub role: String,
    /// Expected SHA-256 (lowercase hex): a changed file is caught before it is used.
    pub sha256: String,
    /// Expected size in bytes.
    pub size: u64,
}

/// A loaded corpus: its schema, where it lies, and its entries in config order.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// Which schema the config declared (`OWN_SCHEMA` or `PUBLIC_SCHEMA`).
    pub schema: &'static str,
    /// Config file name (never an absolute path in reports).
    pub config_name: String,
    /// SHA-256 of the config bytes, so a report names exactly the corpus it ran on.
    pub config_sha256: Hash256,
    /// The folder entry paths are resolved against.
    pub root: PathBuf,
    /// The files, in config order.
    pub entries: Vec<Entry>,
}

/// Load and check a config of either schema.
pub fn load(config: &Path) -> Result<Corpus, ConfigError> {
    let mut bytes = Vec::new();
    crate::files::read_regular_limited(config, &mut bytes, MAX_CONFIG_BYTES + 1)
        .map_err(|e| ConfigError(e.to_string()))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError(format!(
            "{}: a corpus config is at most {MAX_CONFIG_BYTES} bytes",
            config.display()
        )));
    }
    from_bytes(&bytes, config)
}

/// Largest config read (about 300,000 entries).
pub const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// The config's schema, read from its shape check: serde's derived struct deserializer also
/// accepts a JSON array in place of an object (fields by position); a config is only ever
/// written with objects, so any other shape is refused before it is read into the structs.
fn schema_of_objects(bytes: &[u8]) -> Result<String, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not a corpus config: {e}"))?;
    let top = value
        .as_object()
        .ok_or("a corpus config is a JSON object")?;
    if let Some(files) = top.get("files").and_then(|f| f.as_array()) {
        if let Some(i) = files.iter().position(|f| !f.is_object()) {
            return Err(format!("files[{i}] must be a JSON object"));
        }
    }
    match top.get("schema") {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(_) => Err("not a corpus config: schema must be a string".into()),
        None => Err("not a corpus config: missing field `schema`".into()),
    }
}

/// Check config text as if it were read from `config` (which names the root folder).
pub fn from_bytes(bytes: &[u8], config: &Path) -> Result<Corpus, ConfigError> {
    let shown = config.display().to_string();
    let err = |m: String| ConfigError(format!("{shown}: {m}"));
    let schema = schema_of_objects(bytes).map_err(err)?;
    let dir = config
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (schema, root, raw): (&'static str, PathBuf, Vec<RawEntry>) = match schema.as_str() {
        OWN_SCHEMA => {
            let c: OwnConfig = serde_json::from_slice(bytes).map_err(|e| err(e.to_string()))?;
            debug_assert_eq!(c.schema, OWN_SCHEMA);
            (
                OWN_SCHEMA,
                dir.to_path_buf(),
                c.files
                    .into_iter()
                    .map(|f| (f.path, f.role, f.sha256, f.size))
                    .collect(),
            )
        }
        PUBLIC_SCHEMA => {
            let c: PublicConfig = serde_json::from_slice(bytes).map_err(|e| err(e.to_string()))?;
            debug_assert_eq!(c.schema, PUBLIC_SCHEMA);
            for f in &c.files {
                if !f.version.starts_with("0x") || !f.target.starts_with("0x") {
                    return Err(err(format!(
                        "{}: version and target must be hex strings",
                        f.file
                    )));
                }
            }
            let files = c
                .files
                .into_iter()
                .map(|f| (f.file, "public".to_string(), f.sha256, f.size))
                .collect();
            (PUBLIC_SCHEMA, dir.join("v1"), files)
        }
        other => {
            return Err(err(format!(
                "unknown schema {other:?}; expected {OWN_SCHEMA:?} or {PUBLIC_SCHEMA:?}"
            )));
        }
    };
    check_dir(&root).map_err(&err)?;
    let mut entries: Vec<Entry> = Vec::with_capacity(raw.len());
    // Duplicates found by hashing, so loading stays linear in the number of files.
    let mut seen = std::collections::HashSet::with_capacity(raw.len());
    for (path, role, sha256, size) in raw {
        if role.is_empty()
            || !role
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(err(format!("{path}: role {role:?} must be one word")));
        }
        if sha256.len() != 64
            || !sha256
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        {
            return Err(err(format!(
                "{path}: sha256 must be 64 lowercase hex digits"
            )));
        }
        let full_path = resolve(&root, &path).map_err(|m| err(format!("{path}: {m}")))?;
        if !seen.insert(full_path.clone()) {
            return Err(err(format!("{path}: listed twice")));
        }
        entries.push(Entry {
            path,
            full_path,
            role,
            sha256,
            size,
        });
    }
    let name = config
        .file_name()
        .map_or_else(|| shown.clone(), |n| n.to_string_lossy().into_owned());
    Ok(Corpus {
        schema,
        config_name: name,
        config_sha256: Hash256(Sha256::digest(bytes).into()),
        root,
        entries,
    })
}

fn check_dir(root: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(root) {
        Ok(m) if m.file_type().is_symlink() => Err(format!("{} is a symlink", root.display())),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!("{} is not a directory", root.display())),
        Err(e) => Err(format!("{}: {e}", root.display())),
    }
}

/// Resolve a config path inside `root`: relative, no `..`, no symlink at any component, a
/// regular file at the end.
pub fn resolve(root: &Path, path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if path.is_empty() || p.is_absolute() {
        return Err("paths must be relative to the config's folder".into());
    }
    let mut full = root.to_path_buf();
    for c in p.components() {
        match c {
            Component::Normal(part) => {
                full.push(part);
                let meta = std::fs::symlink_metadata(&full)
                    .map_err(|e| format!("{}: {e}", full.display()))?;
                if meta.file_type().is_symlink() {
                    return Err(format!(
                        "{} is a symlink; corpus paths never follow links",
                        full.display()
                    ));
                }
            }
            _ => return Err("paths may not contain '..', '.' or a root".into()),
        }
    }
    let meta = std::fs::symlink_metadata(&full).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", full.display()));
    }
    Ok(full)
}

/// Write `files` synthetic v2 graphs of about `bytes` each (`bulk-NNNN.nb`) and their
/// `nbg-corpus/1` config into the new folder `out`; a failure leaves no folder behind.
pub fn write_synthetic(out: &Path, files: u32, bytes: u64) -> Result<(), crate::files::InputError> {
    let folder = crate::output::new_dir(out)?;
    let mut entries = Vec::new();
    for i in 0..files {
        // Streamed: the payload is generated while it is written and hashed, never held.
        let (layout, generated) = crate::synth::bulk_streamed(u64::from(i), bytes);
        let name = format!("bulk-{i:04}.nb");
        let mut digest = (Hash256::default(), 0);
        crate::files::write_atomic_with(&out.join(&name), false, |w| {
            let mut hashed = crate::fingerprint::HashingWriter::new(w);
            layout.write(&mut hashed, Some(&generated))?;
            digest = hashed.finish();
            Ok(())
        })?;
        let (sha256, size) = digest;
        entries.push(serde_json::json!({
            "path": name,
            "role": "bulk",
            "sha256": sha256,
            "size": size,
        }));
    }
    let config = serde_json::json!({ "schema": OWN_SCHEMA, "files": entries });
    crate::files::write_atomic(
        &out.join("corpus.json"),
        crate::canonical::canonical(&config).as_bytes(),
        false,
    )?;
    folder.keep();
    Ok(())
}
