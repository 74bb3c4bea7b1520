//! Capture sets on disk: their files, spec and source quantities, read (`load`) and written
//! (what `nbg synth-differential` and `nbg vendor capture` write).

use crate::exit::Exit;
use crate::files::{InputError, read_regular, write_atomic};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Most quantities one `differential.json` names.
pub const MAX_QUANTITIES: usize = 64;
/// Most aliases one `differential.json` gives, over all its quantities.
pub const MAX_ALIASES: usize = 16 * MAX_QUANTITIES;

/// A source value in `differential.json` (`quantities.<key>.a` / `.b`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A non-negative integer.
    Unsigned(u64),
    /// A negative integer.
    Signed(i64),
    /// A number with a fraction.
    Float(f64),
    /// A byte array.
    Bytes(Vec<u8>),
}

/// JSON has no NaN: equality of values read from JSON is an equivalence.
impl Eq for Value {}

/// A controlled quantity of a capture set: its value in A and in B.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quantity {
    /// The value in A.
    pub a: Value,
    /// The value in B.
    pub b: Value,
}

/// The capture set's file names: the two captures of source A, the capture of source B and the
/// spec, all in one folder.
pub const A1_FILE: &str = "A1.nb";
/// See `A1_FILE`.
pub const A2_FILE: &str = "A2.nb";
/// See `A1_FILE`.
pub const B_FILE: &str = "B.nb";
/// See `A1_FILE`.
pub const SPEC_FILE: &str = "differential.json";

/// `differential.json`: the controlled source bytes of A and B.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CaptureSpec {
    /// The controlled source bytes as compiled into A.
    pub a_source: Vec<u8>,
    /// The same source bytes as compiled into B.
    pub b_source: Vec<u8>,
    /// Where the captures came from (tool, version, command), shown in reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<String>,
    /// Further controlled quantities by key (a quantization scale, say), each with its A and
    /// B value; the source keys of `mapping` registries name them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub quantities: std::collections::BTreeMap<String, Quantity>,
    /// Quantities held fixed in A and B (the other scales and zero points of the model), by
    /// key: the inputs of computed values read them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub context: std::collections::BTreeMap<String, Value>,
    /// The other keys of a quantity of `quantities` or `context`, by its key: the further roles
    /// the same value plays (`scale:graph.input[0]` is also `scale:Conv.input`). A mapping's
    /// key matches the quantity or any of these.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub aliases: std::collections::BTreeMap<String, Vec<String>>,
    /// The tensor (or initializer) each quantity belongs to in the model, by key: a note for
    /// the reader, never matched.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tensors: std::collections::BTreeMap<String, String>,
}

/// How a key names a quantity of a capture set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyMatch<'s> {
    /// The quantity under this key of `quantities` or `context`.
    Found(&'s str),
    /// The key names a node kind without an index (`Conv.weight`) and the model has several
    /// such nodes: which one is meant is not guessed.
    Ambiguous,
    /// No quantity has the key.
    Absent,
}

impl CaptureSpec {
    /// Every key of the quantity stored under `key`: the key itself, then its aliases.
    pub fn keys_of<'s>(&'s self, key: &'s str) -> impl Iterator<Item = &'s str> {
        std::iter::once(key).chain(
            self.aliases
                .get(key)
                .into_iter()
                .flatten()
                .map(String::as_str),
        )
    }

    /// The stored key of the quantity `key` names in `quantities` (or, with `context`, in
    /// either), directly or through an alias.
    /// A key of several roles joined by `&` (`zero-point:graph.output[0] & zero-point:Conv[last].output`)
    /// names the quantity that plays all of them.
    pub fn resolve<'s>(&'s self, key: &str, context: bool) -> KeyMatch<'s> {
        if key.contains('&') {
            let mut found = None;
            for part in key.split('&').map(str::trim) {
                match self.resolve(part, context) {
                    KeyMatch::Found(k) if found.is_none_or(|f| f == k) => found = Some(k),
                    KeyMatch::Ambiguous => return KeyMatch::Ambiguous,
                    _ => return KeyMatch::Absent,
                }
            }
            return found.map_or(KeyMatch::Absent, KeyMatch::Found);
        }
        let stored = self
            .quantities
            .keys()
            .chain(context.then(|| self.context.keys()).into_iter().flatten());
        let mut ambiguous = false;
        let plain = unindexed(key);
        for k in stored {
            let mut keys = self.keys_of(k);
            if keys.any(|x| x == key) {
                return KeyMatch::Found(k);
            }
            ambiguous |= plain == key && self.keys_of(k).any(|x| unindexed(x) == key);
        }
        if ambiguous {
            KeyMatch::Ambiguous
        } else {
            KeyMatch::Absent
        }
    }
}

/// `key` with the index of its scope dropped (`scale:Conv[1].weight` -> `scale:Conv.weight`):
/// an unindexed key names a quantity only in a graph with one such node, so a key that equals
/// another's unindexed form there is ambiguous.
pub fn unindexed(key: &str) -> String {
    let (kind, role) = key.split_once(':').unwrap_or(("", key));
    let Some((scope, rest)) = role.split_once('.') else {
        return key.to_string();
    };
    let index_free =
        |i: &str| i == "last" || (!i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()));
    let plain = match scope.split_once('[') {
        Some((name, index)) if index.strip_suffix(']').is_some_and(index_free) => name,
        _ => scope,
    };
    match key.split_once(':') {
        Some(_) => format!("{kind}:{plain}.{rest}"),
        None => format!("{plain}.{rest}"),
    }
}

/// Largest `differential.json` read.
pub const MAX_SPEC_BYTES: u64 = 16 << 20;

/// The four files of a capture set.
pub struct CaptureSet {
    /// `A1.nb`: the first capture of source A.
    pub a1: Vec<u8>,
    /// `A2.nb`: the second capture of source A (must equal A1: the serializer is deterministic).
    pub a2: Vec<u8>,
    /// `B.nb`: the capture of source B.
    pub b: Vec<u8>,
    /// `differential.json`.
    pub spec: CaptureSpec,
}

/// Why a capture directory could not be loaded: a usage or I/O problem.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file of the set could not be read.
    #[error(transparent)]
    Unreadable(#[from] InputError),
    /// The directory cannot be examined.
    #[error("{}: {source}", .dir.display())]
    Dir {
        /// The capture directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The path is not a directory.
    #[error("{}: not a capture directory", .0.display())]
    NotDir(PathBuf),
    /// `differential.json` is larger than `MAX_SPEC_BYTES`.
    #[error("{}: differential.json is at most {MAX_SPEC_BYTES} bytes", .0.display())]
    SpecTooLarge(PathBuf),
    /// `differential.json` is not a JSON object.
    #[error("{}: differential.json must be a JSON object", .0.display())]
    SpecNotObject(PathBuf),
    /// `differential.json` does not match `CaptureSpec`.
    #[error("{}: {source}", .spec.display())]
    SpecFields {
        /// The `differential.json` path.
        spec: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// `a_source` and `b_source` are empty or of different lengths.
    #[error(
        "{}: a_source and b_source must be non-empty and of the same length ({a} vs {b})",
        .spec.display()
    )]
    Sources {
        /// The `differential.json` path.
        spec: PathBuf,
        /// Length of `a_source`.
        a: usize,
        /// Length of `b_source`.
        b: usize,
    },
    /// More than `MAX_QUANTITIES` quantities.
    #[error("{}: at most {} quantities, {} tensor notes and {} aliases", .0.display(), MAX_QUANTITIES, MAX_QUANTITIES, MAX_ALIASES)]
    TooManyQuantities(PathBuf),
}

impl LoadError {
    /// Every capture set that cannot be loaded is a usage or I/O problem.
    pub fn exit_status(&self) -> Exit {
        match self {
            LoadError::Unreadable(_)
            | LoadError::Dir { .. }
            | LoadError::NotDir(_)
            | LoadError::SpecTooLarge(_)
            | LoadError::SpecNotObject(_)
            | LoadError::SpecFields { .. }
            | LoadError::Sources { .. }
            | LoadError::TooManyQuantities(_) => Exit::Usage,
        }
    }
}

/// Load a capture directory: `A1.nb`, `A2.nb`, `B.nb`, `differential.json`.
pub fn load(dir: &Path) -> Result<CaptureSet, LoadError> {
    let meta = std::fs::symlink_metadata(dir).map_err(|source| LoadError::Dir {
        dir: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(LoadError::NotDir(dir.to_path_buf()));
    }
    let spec_path = dir.join("differential.json");
    let mut json = Vec::new();
    crate::files::read_regular_limited(&spec_path, &mut json, MAX_SPEC_BYTES + 1)?;
    if json.len() as u64 > MAX_SPEC_BYTES {
        return Err(LoadError::SpecTooLarge(spec_path));
    }
    // The derived deserializer would also take `[a_source, b_source]`: only an object is one.
    if json.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(LoadError::SpecNotObject(spec_path));
    }
    let spec: CaptureSpec = match serde_json::from_slice(&json) {
        Ok(s) => s,
        Err(source) => {
            return Err(LoadError::SpecFields {
                spec: spec_path,
                source,
            });
        }
    };
    if spec.a_source.len() != spec.b_source.len() || spec.a_source.is_empty() {
        return Err(LoadError::Sources {
            spec: spec_path,
            a: spec.a_source.len(),
            b: spec.b_source.len(),
        });
    }
    let aliases: usize = spec.aliases.values().map(Vec::len).sum();
    if spec.quantities.len() + spec.context.len() > MAX_QUANTITIES
        || aliases > MAX_ALIASES
        || spec.tensors.len() > MAX_QUANTITIES
    {
        return Err(LoadError::TooManyQuantities(spec_path));
    }
    Ok(CaptureSet {
        a1: read_regular(&dir.join("A1.nb"))?,
        a2: read_regular(&dir.join("A2.nb"))?,
        b: read_regular(&dir.join("B.nb"))?,
        spec,
    })
}

/// Write a capture set (A twice, B and the spec) into the new folder `out`; a failure leaves no
/// folder behind.
pub fn write(a: &[u8], b: &[u8], spec: &CaptureSpec, out: &Path) -> Result<(), InputError> {
    write_set(a, a, b, spec, out)
}

/// Write a capture set of two separate captures of A (a real serializer run twice), B and the
/// spec into the new folder `out`; a failure leaves no folder behind.
pub fn write_set(
    a1: &[u8],
    a2: &[u8],
    b: &[u8],
    spec: &CaptureSpec,
    out: &Path,
) -> Result<(), InputError> {
    let folder = crate::output::new_dir(out)?;
    // Invariant: a spec is byte lists, strings and numbers, which always serialize.
    let json = crate::canonical::canonical(&serde_json::to_value(spec).unwrap_or_default());
    for (file, bytes) in [
        (A1_FILE, a1),
        (A2_FILE, a2),
        (B_FILE, b),
        (SPEC_FILE, json.as_bytes()),
    ] {
        write_atomic(&out.join(file), bytes, false)?;
    }
    folder.keep();
    Ok(())
}
