//! Hash-pinned corpus configurations.
//!
//! `nbg-corpus/1` (the project's own): `{"schema", "files": [{"path", "role", "sha256",
//! "size"}]}`, paths relative to the config's folder. `nbg-public-corpus/1` (the shared public
//! corpus, read as it is): `{"schema", "files": [{"file", "size", "sha256", "version",
//! "target", "source"}]}`, paths relative to the config's `v1/` folder where it has one (the
//! corpus root, `../shared/corpus/corpus.json`), else to the config's own folder (a family's
//! folder, `../shared/corpus/v2/corpus.json`). Unknown keys, duplicate
//! keys and duplicate files are errors; paths must stay inside their root, with no absolute
//! paths, no `..`, no symlink at any component and only regular files.

use crate::digest::Hash256;
use crate::exit::Exit;
use crate::files::InputError;
pub use crate::files::{PathError, resolve};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Why a corpus config was refused: a usage error (exit 2) with a clear message.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error(transparent)]
    Unreadable(#[from] InputError),
    /// The config is larger than `MAX_CONFIG_BYTES`.
    #[error("{config}: a corpus config is at most {MAX_CONFIG_BYTES} bytes")]
    TooLarge {
        /// The config as given.
        config: String,
    },
    /// The config's text breaks a rule.
    #[error("{config}: {problem}")]
    Invalid {
        /// The config as given.
        config: String,
        /// The rule it breaks.
        problem: ConfigProblem,
    },
}

impl ConfigError {
    /// Every config problem is a usage problem.
    pub fn exit_status(&self) -> Exit {
        match self {
            ConfigError::Unreadable(_)
            | ConfigError::TooLarge { .. }
            | ConfigError::Invalid { .. } => Exit::Usage,
        }
    }
}

/// The rule a config's text breaks.
#[derive(Debug, thiserror::Error)]
pub enum ConfigProblem {
    /// The text is not JSON.
    #[error("not a corpus config: {0}")]
    NotJson(serde_json::Error),
    /// The top level is not a JSON object.
    #[error("a corpus config is a JSON object")]
    NotObject,
    /// `files[i]` is not a JSON object.
    #[error("files[{0}] must be a JSON object")]
    EntryNotObject(usize),
    /// `schema` is present but not a string.
    #[error("not a corpus config: schema must be a string")]
    SchemaNotString,
    /// `schema` is missing.
    #[error("not a corpus config: missing field `schema`")]
    SchemaMissing,
    /// The fields do not match the declared schema (unknown, missing or mistyped keys).
    #[error("{0}")]
    Fields(serde_json::Error),
    /// A public entry's `version` or `target` is not a `0x` hex string; the entry's file.
    #[error("{0}: version and target must be hex strings")]
    NotHex(String),
    /// The declared schema is neither `OWN_SCHEMA` nor `PUBLIC_SCHEMA`.
    #[error("unknown schema {0:?}; expected {OWN_SCHEMA:?} or {PUBLIC_SCHEMA:?}")]
    UnknownSchema(String),
    /// The root folder is a symlink.
    #[error("{} is a symlink", .0.display())]
    RootSymlink(PathBuf),
    /// The root is not a directory.
    #[error("{} is not a directory", .0.display())]
    RootNotDir(PathBuf),
    /// The root cannot be examined.
    #[error("{}: {source}", .root.display())]
    RootUnreadable {
        /// The root folder.
        root: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An entry's role is not one word of letters, digits, `_` and `-`.
    #[error("{path}: role {role:?} must be one word")]
    Role {
        /// The entry's path as written.
        path: String,
        /// The role as written.
        role: String,
    },
    /// An entry's digest is not 64 lowercase hex digits; the entry's path.
    #[error("{0}: sha256 must be 64 lowercase hex digits")]
    Digest(String),
    /// An entry's path does not resolve to a regular file inside the root.
    #[error("{path}: {source}")]
    Path {
        /// The entry's path as written.
        path: String,
        /// Why it does not resolve.
        source: PathError,
    },
    /// Two entries name the same file; the second entry's path.
    #[error("{0}: listed twice")]
    Duplicate(String),
}

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
    /// The toolkit that wrote the file, where the corpus records it (`../shared/corpus/v2`).
    #[allow(dead_code)] // provenance, as `source`
    #[serde(default)]
    toolkit: Option<String>,
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
    crate::files::read_regular_limited(config, &mut bytes, MAX_CONFIG_BYTES + 1)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            config: config.display().to_string(),
        });
    }
    from_bytes(&bytes, config)
}

/// Largest config read (about 300,000 entries).
pub const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// The config's schema, read from its shape check: serde's derived struct deserializer also
/// accepts a JSON array in place of an object (fields by position); a config is only ever
/// written with objects, so any other shape is refused before it is read into the structs.
fn schema_of_objects(bytes: &[u8]) -> Result<String, ConfigProblem> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(ConfigProblem::NotJson)?;
    let top = value.as_object().ok_or(ConfigProblem::NotObject)?;
    if let Some(files) = top.get("files").and_then(|f| f.as_array()) {
        if let Some(i) = files.iter().position(|f| !f.is_object()) {
            return Err(ConfigProblem::EntryNotObject(i));
        }
    }
    match top.get("schema") {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(ConfigProblem::SchemaNotString),
        None => Err(ConfigProblem::SchemaMissing),
    }
}

/// Check config text as if it were read from `config` (which names the root folder).
pub fn from_bytes(bytes: &[u8], config: &Path) -> Result<Corpus, ConfigError> {
    let shown = config.display().to_string();
    let err = |problem: ConfigProblem| ConfigError::Invalid {
        config: shown.clone(),
        problem,
    };
    let schema = schema_of_objects(bytes).map_err(err)?;
    let dir = config
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (schema, root, raw): (&'static str, PathBuf, Vec<RawEntry>) = match schema.as_str() {
        OWN_SCHEMA => {
            let c: OwnConfig =
                serde_json::from_slice(bytes).map_err(|e| err(ConfigProblem::Fields(e)))?;
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
            let c: PublicConfig =
                serde_json::from_slice(bytes).map_err(|e| err(ConfigProblem::Fields(e)))?;
            debug_assert_eq!(c.schema, PUBLIC_SCHEMA);
            for f in &c.files {
                if !f.version.starts_with("0x") || !f.target.starts_with("0x") {
                    return Err(err(ConfigProblem::NotHex(f.file.clone())));
                }
            }
            let files = c
                .files
                .into_iter()
                .map(|f| (f.file, "public".to_string(), f.sha256, f.size))
                .collect();
            // Not through a symlink: `check_dir` below refuses one at any component.
            let v1 = dir.join("v1");
            let root = if std::fs::symlink_metadata(&v1).is_ok_and(|m| m.is_dir()) {
                v1
            } else {
                dir.to_path_buf()
            };
            (PUBLIC_SCHEMA, root, files)
        }
        other => {
            return Err(err(ConfigProblem::UnknownSchema(other.to_string())));
        }
    };
    check_dir(&root).map_err(err)?;
    let mut entries: Vec<Entry> = Vec::with_capacity(raw.len());
    // Duplicates found by hashing, so loading stays linear in the number of files.
    let mut seen = std::collections::HashSet::with_capacity(raw.len());
    for (path, role, sha256, size) in raw {
        if role.is_empty()
            || !role
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(err(ConfigProblem::Role { path, role }));
        }
        if sha256.len() != 64
            || !sha256
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        {
            return Err(err(ConfigProblem::Digest(path)));
        }
        let full_path = match resolve(&root, &path) {
            Ok(p) => p,
            Err(source) => return Err(err(ConfigProblem::Path { path, source })),
        };
        if !seen.insert(full_path.clone()) {
            return Err(err(ConfigProblem::Duplicate(path)));
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

fn check_dir(root: &Path) -> Result<(), ConfigProblem> {
    match std::fs::symlink_metadata(root) {
        Ok(m) if m.file_type().is_symlink() => Err(ConfigProblem::RootSymlink(root.into())),
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(ConfigProblem::RootNotDir(root.into())),
        Err(source) => Err(ConfigProblem::RootUnreadable {
            root: root.into(),
            source,
        }),
    }
}

/// Write `files` synthetic v2 graphs of about `bytes` each (`bulk-NNNN.nb`) and their
/// `nbg-corpus/1` config into the new folder `out`; a failure leaves no folder behind.
pub fn write_synthetic(out: &Path, files: u32, bytes: u64) -> Result<(), InputError> {
    let folder = crate::output::new_dir(out)?;
    let mut entries = Vec::new();
    for i in 0..files {
        // Streamed: the payload is generated while it is written and hashed, never held.
        let name = format!("bulk-{i:04}.nb");
        let (layout, generated) =
            crate::lab::synth::bulk_streamed(u64::from(i), bytes).map_err(|e| InputError::Io {
                path: out.join(&name),
                source: e.into_io(),
            })?;
        let mut digest = (Hash256::default(), 0);
        crate::files::write_atomic_with(&out.join(&name), false, |w| {
            let mut hashed = crate::nbg::fingerprint::HashingWriter::new(w);
            layout
                .write(&mut hashed, Some(&generated))
                .map_err(crate::lab::synth::BuildError::into_io)?;
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
