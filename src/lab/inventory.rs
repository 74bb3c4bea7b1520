//! Corpus inventory: every pinned file parsed in parallel, pins verified, and a canonical JSON
//! document (sorted keys, stable order, no timestamps, no absolute paths) plus a Markdown
//! summary of the same facts.
//!
//! `identity.inventory_sha256` is SHA-256 over the canonical bytes of the inventory with that
//! one field absent; it is then inserted.

use crate::canonical::canonical;
use crate::corpus::{Corpus, Entry};
use crate::family::NbgFamily;
use crate::files::InputError;
use crate::fingerprint::Hash256;
use crate::parse::{Graph, Options};
use crate::stream::{self, FileSource};
use rayon::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One file's row: pin check, parse facts or failure.
#[derive(Clone, Debug)]
pub struct FileResult {
    pub entry: Entry,
    pub size: u64,
    pub sha256: Hash256,
    /// Whether the file matches its pinned size and SHA-256.
    pub pin: Pin,
    pub facts: Result<Value, (String, u64, String)>,
}

/// A file against its pin, named in the inventory as `ok`, `size-mismatch`, `sha256-mismatch`
/// or `unreadable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pin {
    /// Size and SHA-256 as pinned.
    Ok,
    /// The size differs from the pinned one.
    SizeMismatch,
    /// The size matches, the SHA-256 does not.
    Sha256Mismatch,
    /// The file could not be read.
    Unreadable,
}

impl Pin {
    /// The inventory's name for this status.
    pub fn as_str(self) -> &'static str {
        match self {
            Pin::Ok => "ok",
            Pin::SizeMismatch => "size-mismatch",
            Pin::Sha256Mismatch => "sha256-mismatch",
            Pin::Unreadable => "unreadable",
        }
    }
}

impl std::fmt::Display for Pin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FileResult {
    pub fn ok(&self) -> bool {
        self.pin == Pin::Ok && self.facts.is_ok()
    }
}

/// Most worker threads a scan uses, whatever is asked: beyond the machine's cores more threads
/// only cost memory (each holds a read buffer).
pub const MAX_JOBS: usize = 64;

/// Read, hash and parse every entry, `jobs` (at most `MAX_JOBS`) at a time; `tick` is called
/// once per file.
pub fn scan(corpus: &Corpus, jobs: usize, tick: &(dyn Fn() + Sync)) -> Vec<FileResult> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.clamp(1, MAX_JOBS))
        .build();
    let work = || {
        corpus
            .entries
            .par_iter()
            .map(|e| {
                let r = scan_one(e);
                tick();
                r
            })
            .collect::<Vec<_>>()
    };
    match pool {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    }
}

/// Stream one file: its structure with positioned reads, its payload once in chunks (memory
/// per file is `stream::BUFFERS x stream::CHUNK`, whatever its size).
fn scan_one(entry: &Entry) -> FileResult {
    let unreadable = |e: InputError| FileResult {
        entry: entry.clone(),
        size: 0,
        sha256: Hash256::default(),
        pin: Pin::Unreadable,
        facts: Err(("unreadable".into(), 0, e.0)),
    };
    let file = match FileSource::open(&entry.full_path) {
        Ok(f) => Arc::new(f),
        Err(e) => return unreadable(e),
    };
    let parsed = match crate::open::parse_source(Arc::clone(&file), Options::default()) {
        Ok(p) => p,
        Err(e) => return unreadable(e),
    };
    let sha256 = match &parsed {
        Ok(g) => g.file().sha256,
        Err(_) => match stream::sha256(&file) {
            Ok(h) => h,
            Err(e) => return unreadable(e),
        },
    };
    let size = file.len();
    let pin = if size != entry.size {
        Pin::SizeMismatch
    } else if sha256.hex() != entry.sha256 {
        Pin::Sha256Mismatch
    } else {
        Pin::Ok
    };
    FileResult {
        entry: entry.clone(),
        size,
        sha256,
        pin,
        facts: parsed
            .map(|g| facts(&g))
            .map_err(|f| (f.code.as_str().to_string(), f.offset, f.message)),
    }
}

/// The parse document, minus per-entry lists that only repeat counts already kept.
fn facts(g: &Graph<'_>) -> Value {
    let mut v = g.to_json();
    if let Some(d) = v.get_mut("dynamic_io").and_then(Value::as_object_mut) {
        d.remove("entries");
    }
    // Decoded records are listed by `nbg parse --json`; the inventory keeps their counts.
    if let Some(doc) = v.as_object_mut() {
        for key in ["layers", "operations", "sh_operations"] {
            if let Some(list) = doc.remove(key) {
                let n = list.as_array().map(Vec::len);
                doc.insert(format!("{key}_decoded"), serde_json::json!(n));
            }
        }
    }
    if let Some(tables) = v.get_mut("nested_tables").and_then(Value::as_array_mut) {
        for t in tables {
            if let Some(t) = t.as_object_mut() {
                t.remove("entries");
            }
        }
    }
    v
}

fn count<K: Ord>(map: &mut BTreeMap<K, u64>, k: K) {
    *map.entry(k).or_insert(0) += 1;
}

/// The canonical inventory document.
pub fn document(corpus: &Corpus, results: &[FileResult]) -> Value {
    let facts = results.iter().map(|r| r.facts.clone()).collect();
    build(corpus, results, facts)
}

/// `document` that moves each file's facts into the document instead of copying them (the
/// results keep their pins and failures; their facts become `null`), so the facts of a large
/// corpus are held once, not twice.
pub fn document_moving(corpus: &Corpus, results: &mut [FileResult]) -> Value {
    let facts = results
        .iter_mut()
        .map(|r| match &mut r.facts {
            Ok(f) => Ok(std::mem::take(f)),
            Err(e) => Err(e.clone()),
        })
        .collect();
    build(corpus, results, facts)
}

/// Parse facts, or the failure's code, offset and message.
type Facts = Result<Value, (String, u64, String)>;

/// `facts[i]` is the parse outcome of `results[i]`.
fn build(corpus: &Corpus, results: &[FileResult], facts: Vec<Facts>) -> Value {
    let mut results: Vec<(&FileResult, Facts)> = results.iter().zip(facts).collect();
    results.sort_by(|a, b| a.0.entry.path.cmp(&b.0.entry.path));
    let file_count = results.len();
    let mut files = Vec::new();
    let mut split: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    let mut profile: BTreeMap<(String, String), (u64, BTreeSet<u64>)> = BTreeMap::new();
    let (mut formats, mut types, mut quant) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let mut io_hist: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    let mut crc: BTreeMap<String, u64> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut shas = BTreeSet::new();
    let mut sigs = BTreeSet::new();
    let mut bytes = 0u64;
    for (r, facts) in results {
        bytes += r.size;
        shas.insert(r.sha256.hex());
        let mut row = json!({
            "path": r.entry.path,
            "role": r.entry.role,
            "pinned": { "sha256": r.entry.sha256, "size": r.entry.size },
            "pin": r.pin,
            "size": r.size,
            "sha256": r.sha256,
        });
        match facts {
            Ok(f) => {
                sigs.insert(
                    f["structural_signature"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                );
                let hexs = |k: &str| format!("0x{:08x}", f["header"][k].as_u64().unwrap_or(0));
                count(
                    &mut split,
                    (
                        f["format"].as_str().unwrap_or("").to_string(),
                        hexs("version"),
                        hexs("target"),
                    ),
                );
                summarize(
                    &f,
                    &mut profile,
                    &mut formats,
                    &mut types,
                    &mut quant,
                    &mut io_hist,
                    &mut crc,
                );
                row["facts"] = f;
                row["failure"] = Value::Null;
            }
            Err((code, offset, message)) => {
                row["facts"] = Value::Null;
                row["failure"] = json!({ "code": code, "offset": offset, "message": message });
                failures.push(json!({ "path": r.entry.path, "code": code }));
            }
        }
        if r.pin != Pin::Ok {
            failures.push(json!({ "path": r.entry.path, "code": r.pin }));
        }
        files.push(row);
    }
    let mut doc = json!({
        "schema": "nbg-inventory/1",
        "config": { "name": corpus.config_name, "schema": corpus.schema },
        "identity": {
            "files": file_count,
            "bytes": bytes,
            "unique_file_sha256": shas.len(),
            "unique_structural_signatures": sigs.len(),
            "config_sha256": corpus.config_sha256,
        },
        "version_target": split.into_iter().map(|((format, version, target), files)| json!({
            "format": format, "version": version, "target": target, "files": files
        })).collect::<Vec<_>>(),
        "section_profile": profile.into_iter().map(|((kind, name), (files, sizes))| json!({
            "type": kind, "name": name, "files": files, "entry_sizes": sizes
        })).collect::<Vec<_>>(),
        "tensor_surface": { "formats": formats, "data_types": types, "quantization": quant },
        "io_histogram": io_hist.into_iter().map(|((i, o), files)| json!({
            "inputs": i, "outputs": o, "files": files
        })).collect::<Vec<_>>(),
        "crc": crc,
        "failures": failures,
        "files": files,
    });
    let digest = Hash256::of(canonical(&doc).as_bytes());
    doc["identity"]["inventory_sha256"] = Value::from(digest.hex());
    doc
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    f: &Value,
    profile: &mut BTreeMap<(String, String), (u64, BTreeSet<u64>)>,
    formats: &mut BTreeMap<String, u64>,
    types: &mut BTreeMap<String, u64>,
    quant: &mut BTreeMap<String, u64>,
    io_hist: &mut BTreeMap<(u64, u64), u64>,
    crc: &mut BTreeMap<String, u64>,
) {
    let empty = Vec::new();
    let rows = f
        .get("sections")
        .or(f.get("tables"))
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for s in rows {
        if s["size"].as_u64() == Some(0) && f["format"] == "nbg-v1" {
            continue;
        }
        let (kind, name) = if f["format"] == "nbg-v2" {
            (
                format!("{:02}", s["type"].as_u64().unwrap_or(0)),
                s["type_name"].as_str().unwrap_or("").to_string(),
            )
        } else {
            (
                format!("{:02}", s["section_type"].as_u64().unwrap_or(0)),
                s["name"].as_str().unwrap_or("").to_string(),
            )
        };
        let size = s
            .get("entry_size")
            .or(s.get("record_size"))
            .and_then(Value::as_u64);
        let e = profile.entry((kind, name)).or_insert((0, BTreeSet::new()));
        e.0 += 1;
        e.1.extend(size);
    }
    let records = f["inputs"]
        .as_array()
        .into_iter()
        .chain(f["outputs"].as_array())
        .flatten();
    for r in records {
        let name = |k: &str, raw: &str| {
            r[k].as_str()
                .map_or_else(|| format!("unknown({})", r[raw]), str::to_string)
        };
        count(formats, name("data_format_name", "data_format"));
        count(types, name("data_type_name", "data_type"));
        count(
            quant,
            r["quantization"]["format_name"]
                .as_str()
                .unwrap_or("unknown")
                .to_string(),
        );
    }
    let n = |k: &str| f[k].as_array().map_or(0, |a| a.len() as u64);
    count(io_hist, (n("inputs"), n("outputs")));
    let finding = if f["format"] == "nbg-v2" {
        format!(
            "v2 file checksum {}",
            if f["file_checksum"]["matches"] == true {
                "matches"
            } else {
                "mismatch"
            }
        )
    } else {
        format!(
            "v1 crc field {}",
            f["crc"]["classification"].as_str().unwrap_or("unknown")
        )
    };
    count(crc, finding);
}

/// The Markdown summary of an inventory document.
pub fn summary(doc: &Value) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let id = &doc["identity"];
    let _ = writeln!(
        s,
        "# Corpus inventory: {}\n",
        doc["config"]["name"].as_str().unwrap_or("")
    );
    let _ = writeln!(s, "| identity | value |\n| --- | --- |");
    for k in [
        "files",
        "bytes",
        "unique_file_sha256",
        "unique_structural_signatures",
        "config_sha256",
        "inventory_sha256",
    ] {
        let _ = writeln!(s, "| {k} | {} |", plain(&id[k]));
    }
    let table = |s: &mut String, title: &str, rows: &Value, cols: &[&str]| {
        let _ = writeln!(
            s,
            "\n## {title}\n\n| {} |\n|{}",
            cols.join(" | "),
            " --- |".repeat(cols.len())
        );
        for r in rows.as_array().into_iter().flatten() {
            let cells: Vec<String> = cols.iter().map(|c| plain(&r[*c])).collect();
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        }
    };
    table(
        &mut s,
        "Version and target",
        &doc["version_target"],
        &["format", "version", "target", "files"],
    );
    table(
        &mut s,
        "Section and table profile",
        &doc["section_profile"],
        &["type", "name", "files", "entry_sizes"],
    );
    for (title, key) in [
        ("Tensor formats", "formats"),
        ("Tensor data types", "data_types"),
        ("Quantization", "quantization"),
    ] {
        let rows: Vec<Value> = doc["tensor_surface"][key]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| json!({ "value": k, "records": v }))
            .collect();
        table(&mut s, title, &Value::Array(rows), &["value", "records"]);
    }
    table(
        &mut s,
        "I/O counts",
        &doc["io_histogram"],
        &["inputs", "outputs", "files"],
    );
    let crc: Vec<Value> = doc["crc"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| json!({ "finding": k, "files": v }))
        .collect();
    table(
        &mut s,
        "CRC findings",
        &Value::Array(crc),
        &["finding", "files"],
    );
    table(&mut s, "Failures", &doc["failures"], &["path", "code"]);
    s
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        Value::Array(a) if a.is_empty() => "-".into(),
        Value::Array(a) => a.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// Whether every file passed (pins and parse).
pub fn all_ok(results: &[FileResult]) -> bool {
    results.iter().all(FileResult::ok)
}
