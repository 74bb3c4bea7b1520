//! Corpus inventory: every pinned file parsed in parallel, pins verified, and a canonical JSON
//! document (sorted keys, stable order, no timestamps, no absolute paths) plus a Markdown
//! summary of the same facts.
//!
//! `identity.inventory_sha256` is SHA-256 over the canonical bytes of the inventory with that
//! one field absent; it is then inserted.

use crate::canonical::canonical;
use crate::digest::Hash256;
use crate::files::InputError;
use crate::lab::corpus::{Corpus, Entry};
use crate::nbg::failure::Code;
use crate::nbg::family::{Integrity, Layout, NbgFamily};
use crate::nbg::parse::{Graph, Options};
use crate::nbg::stream::{self, FileSource};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One file's row: pin check, parse facts or failure.
#[derive(Clone, Debug)]
pub struct FileResult {
    /// The corpus entry scanned.
    pub entry: Entry,
    /// Bytes read (0 when unreadable).
    pub size: u64,
    /// SHA-256 of the bytes read.
    pub sha256: Hash256,
    /// Whether the file matches its pinned size and SHA-256.
    pub pin: Pin,
    /// The parse facts, or the failure's code, offset and message.
    pub facts: Result<Facts, (FailureCode, u64, String)>,
}

/// What the inventory keeps of a parsed file: its entry's `facts` and its share of the
/// aggregate tables, both taken from the graph.
#[derive(Clone, Debug)]
pub struct Facts {
    /// The parse document, minus per-entry lists that only repeat counts already kept.
    pub doc: Value,
    /// The family's format name (`nbg-v1`, `nbg-v2`).
    pub format: &'static str,
    signature: Hash256,
    totals: Totals,
}

/// Why a file has no parse facts, named in the inventory by the parse failure's code or
/// `unreadable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailureCode {
    /// The parse failed with this code.
    Parse(Code),
    /// The file could not be opened or read.
    Unreadable,
}

impl FailureCode {
    /// The inventory's name for this failure.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCode::Parse(code) => code.as_str(),
            FailureCode::Unreadable => "unreadable",
        }
    }
}

impl std::fmt::Display for FailureCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl serde::Serialize for FailureCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
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
    /// Whether the file matches its pin and parses.
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
/// per file is a few `stream::CHUNK`s, whatever its size).
fn scan_one(entry: &Entry) -> FileResult {
    let unreadable = |e: InputError| FileResult {
        entry: entry.clone(),
        size: 0,
        sha256: Hash256::default(),
        pin: Pin::Unreadable,
        facts: Err((FailureCode::Unreadable, 0, e.to_string())),
    };
    let file = match FileSource::open(&entry.full_path) {
        Ok(f) => Arc::new(f),
        Err(e) => return unreadable(e),
    };
    let parsed = match crate::nbg::open::parse_source(Arc::clone(&file), Options::default()) {
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
            .map(|g| Facts {
                doc: facts(&g),
                format: g.format(),
                signature: g.structural_signature(),
                totals: Totals::of(&g),
            })
            .map_err(|f| (FailureCode::Parse(f.code), f.offset, f.message)),
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

/// The inventory's aggregate tables (everything but its rows), added file by file. Counts and
/// sets only, so the order in which files are added does not matter.
#[derive(Clone, Debug, Default)]
struct Totals {
    split: BTreeMap<(String, String, String), u64>,
    profile: BTreeMap<(String, String), (u64, BTreeSet<u64>)>,
    formats: BTreeMap<String, u64>,
    types: BTreeMap<String, u64>,
    quant: BTreeMap<String, u64>,
    io_hist: BTreeMap<(u64, u64), u64>,
    crc: BTreeMap<String, u64>,
}

fn add<K: Ord + Clone>(into: &mut BTreeMap<K, u64>, from: &BTreeMap<K, u64>) {
    for (k, n) in from {
        *into.entry(k.clone()).or_insert(0) += n;
    }
}

impl Totals {
    fn add(&mut self, other: &Totals) {
        add(&mut self.split, &other.split);
        add(&mut self.formats, &other.formats);
        add(&mut self.types, &other.types);
        add(&mut self.quant, &other.quant);
        add(&mut self.io_hist, &other.io_hist);
        add(&mut self.crc, &other.crc);
        for (k, (files, sizes)) in &other.profile {
            let e = self
                .profile
                .entry(k.clone())
                .or_insert((0, BTreeSet::new()));
            e.0 += files;
            e.1.extend(sizes);
        }
    }

    /// One file's share, from its graph.
    fn of(g: &Graph<'_>) -> Self {
        let mut t = Totals::default();
        count(
            &mut t.split,
            (
                g.format().to_string(),
                format!("0x{:08x}", g.version()),
                crate::nbg::format::target_hex(g.target()),
            ),
        );
        let mut profile = |kind: u32, name: &str, size: Option<u64>| {
            let e = t
                .profile
                .entry((format!("{kind:02}"), name.to_string()))
                .or_insert((0, BTreeSet::new()));
            e.0 += 1;
            e.1.extend(size);
        };
        match g.layout() {
            Layout::Sections(sections) => {
                for s in sections {
                    profile(s.kind, s.type_name, Some(u64::from(s.entry_size)));
                }
            }
            // A v1 table the file leaves empty is not part of its profile.
            Layout::Tables { tables, .. } => {
                for t in tables.iter().filter(|t| t.size != 0) {
                    profile(t.section_type, t.name, t.record_size);
                }
            }
        }
        for r in g.inputs().iter().chain(g.outputs()) {
            let name = |n: Option<&str>, raw: u32| {
                n.map_or_else(|| format!("unknown({raw})"), str::to_string)
            };
            count(&mut t.formats, name(r.data_format_name, r.data_format));
            count(&mut t.types, name(r.data_type_name, r.data_type));
            count(
                &mut t.quant,
                r.quantization.format_name.unwrap_or("unknown").to_string(),
            );
        }
        count(
            &mut t.io_hist,
            (g.inputs().len() as u64, g.outputs().len() as u64),
        );
        let finding = match g.integrity() {
            Integrity::Directory { file, .. } => format!(
                "v2 file checksum {}",
                if file.matches { "matches" } else { "mismatch" }
            ),
            Integrity::CrcField { crc, .. } => format!("v1 crc field {}", crc.classification),
        };
        count(&mut t.crc, finding);
        t
    }
}

/// One file's part of the inventory: what the aggregate tables need, and its entry of `files`
/// (`body`: a JSON value, or its canonical text for a document written piece by piece).
#[derive(Debug)]
pub struct Row<B = Spilled> {
    /// The entry's path as the config writes it.
    pub path: String,
    /// The file against its pin.
    pub pin: Pin,
    /// The parse failure's code, offset and message.
    pub failure: Option<(FailureCode, u64, String)>,
    size: u64,
    sha256: Hash256,
    signature: Option<String>,
    totals: Totals,
    body: B,
}

impl<B> Row<B> {
    /// Whether the file matches its pin and parses.
    pub fn ok(&self) -> bool {
        self.pin == Pin::Ok && self.failure.is_none()
    }
}

fn row(r: &FileResult, facts: Result<Facts, (FailureCode, u64, String)>) -> Row<Value> {
    let mut body = json!({
        "path": r.entry.path,
        "role": r.entry.role,
        "pinned": { "sha256": r.entry.sha256, "size": r.entry.size },
        "pin": r.pin,
        "size": r.size,
        "sha256": r.sha256,
    });
    let (signature, totals, failure) = match facts {
        Ok(f) => {
            body["facts"] = f.doc;
            body["failure"] = Value::Null;
            (Some(f.signature.hex()), f.totals, None)
        }
        Err((code, offset, message)) => {
            body["facts"] = Value::Null;
            body["failure"] = json!({ "code": code, "offset": offset, "message": message });
            (None, Totals::default(), Some((code, offset, message)))
        }
    };
    Row {
        path: r.entry.path.clone(),
        pin: r.pin,
        failure,
        size: r.size,
        sha256: r.sha256,
        signature,
        totals,
        body,
    }
}

/// The inventory's aggregate tables: the document without `files`.
#[derive(Clone, Debug, Serialize)]
pub struct Head {
    /// `nbg-inventory/1`.
    pub schema: &'static str,
    /// The corpus config.
    pub config: ConfigName,
    /// Counts and hashes that identify the inventory.
    pub identity: Identity,
    /// Files per (format, version, target).
    pub version_target: Vec<VersionTarget>,
    /// Files per section type (v2) or table (v1), with the entry sizes seen.
    pub section_profile: Vec<ProfileRow>,
    /// I/O records per tensor format, data type and quantization.
    pub tensor_surface: TensorSurface,
    /// Files per (inputs, outputs) count.
    pub io_histogram: Vec<IoCount>,
    /// Files per CRC finding.
    pub crc: BTreeMap<String, u64>,
    /// Files that failed their pin or their parse.
    pub failures: Vec<FailureRow>,
}

/// The corpus config an inventory is of.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigName {
    /// Its `name`.
    pub name: String,
    /// Its schema.
    pub schema: &'static str,
}

/// Counts and hashes that identify an inventory.
#[derive(Clone, Debug, Serialize)]
pub struct Identity {
    /// Files listed.
    pub files: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Distinct file SHA-256s.
    pub unique_file_sha256: usize,
    /// Distinct structural signatures of the files that parse.
    pub unique_structural_signatures: usize,
    /// SHA-256 of the config file.
    pub config_sha256: Hash256,
    /// SHA-256 of the canonical document without this field; absent while it is computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inventory_sha256: Option<Hash256>,
}

/// Files of one (format, version, target).
#[derive(Clone, Debug, Serialize)]
pub struct VersionTarget {
    /// `nbg-v1` or `nbg-v2`.
    pub format: String,
    /// The version word, `0x%08x`.
    pub version: String,
    /// The target word, `0x%08x`.
    pub target: String,
    /// Files.
    pub files: u64,
}

/// Files holding one section type or table.
#[derive(Clone, Debug, Serialize)]
pub struct ProfileRow {
    /// The type number, two digits.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its public name.
    pub name: String,
    /// Files.
    pub files: u64,
    /// Entry (v2) or record (v1) sizes seen.
    pub entry_sizes: BTreeSet<u64>,
}

/// I/O records per tensor format, data type and quantization.
#[derive(Clone, Debug, Serialize)]
pub struct TensorSurface {
    /// Per data format name.
    pub formats: BTreeMap<String, u64>,
    /// Per data type name.
    pub data_types: BTreeMap<String, u64>,
    /// Per quantization format name.
    pub quantization: BTreeMap<String, u64>,
}

/// Files with one (inputs, outputs) count.
#[derive(Clone, Debug, Serialize)]
pub struct IoCount {
    /// Input records.
    pub inputs: u64,
    /// Output records.
    pub outputs: u64,
    /// Files.
    pub files: u64,
}

/// A file that failed its pin or its parse.
#[derive(Clone, Debug, Serialize)]
pub struct FailureRow {
    /// Its path as the config writes it.
    pub path: String,
    /// The parse failure's code or the pin status.
    pub code: String,
}

/// The head of `rows` (sorted by path), without `identity.inventory_sha256`.
fn head<B>(corpus: &Corpus, rows: &[Row<B>]) -> Head {
    let mut totals = Totals::default();
    let mut failures = Vec::new();
    let mut shas = BTreeSet::new();
    let mut sigs = BTreeSet::new();
    let mut bytes = 0u64;
    for r in rows {
        bytes += r.size;
        shas.insert(r.sha256.hex());
        sigs.extend(r.signature.as_deref());
        totals.add(&r.totals);
        if let Some((code, _, _)) = &r.failure {
            failures.push(FailureRow {
                path: r.path.clone(),
                code: code.as_str().to_string(),
            });
        }
        if r.pin != Pin::Ok {
            failures.push(FailureRow {
                path: r.path.clone(),
                code: r.pin.as_str().to_string(),
            });
        }
    }
    let Totals {
        split,
        profile,
        formats,
        types,
        quant,
        io_hist,
        crc,
    } = totals;
    Head {
        schema: "nbg-inventory/1",
        config: ConfigName {
            name: corpus.config_name.clone(),
            schema: corpus.schema,
        },
        identity: Identity {
            files: rows.len(),
            bytes,
            unique_file_sha256: shas.len(),
            unique_structural_signatures: sigs.len(),
            config_sha256: corpus.config_sha256,
            inventory_sha256: None,
        },
        version_target: split
            .into_iter()
            .map(|((format, version, target), files)| VersionTarget {
                format,
                version,
                target,
                files,
            })
            .collect(),
        section_profile: profile
            .into_iter()
            .map(|((kind, name), (files, entry_sizes))| ProfileRow {
                kind,
                name,
                files,
                entry_sizes,
            })
            .collect(),
        tensor_surface: TensorSurface {
            formats,
            data_types: types,
            quantization: quant,
        },
        io_histogram: io_hist
            .into_iter()
            .map(|((inputs, outputs), files)| IoCount {
                inputs,
                outputs,
                files,
            })
            .collect(),
        crc,
        failures,
    }
}

/// The head as a JSON value (sorted keys).
fn head_json(head: &Head) -> Value {
    // Invariant: `Head` derives `Serialize` over strings, integers, hashes and string-keyed
    // maps, so it always serializes.
    serde_json::to_value(head).expect("inventory head serializes")
}

/// An inventory built in memory: its head and each file's entry of `files`.
#[derive(Clone, Debug)]
pub struct Document {
    /// The aggregate tables, with `identity.inventory_sha256`.
    pub head: Head,
    /// Each file's entry, sorted by path.
    pub files: Vec<Value>,
}

impl Document {
    /// The canonical document's value.
    pub fn to_json(&self) -> Value {
        let mut doc = head_json(&self.head);
        doc["files"] = Value::Array(self.files.clone());
        doc
    }
}

/// The inventory of `results`.
pub fn document(corpus: &Corpus, results: &[FileResult]) -> Document {
    let mut rows: Vec<Row<Value>> = results.iter().map(|r| row(r, r.facts.clone())).collect();
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    let mut doc = Document {
        head: head(corpus, &rows),
        files: rows.into_iter().map(|r| r.body).collect(),
    };
    doc.head.identity.inventory_sha256 = Some(Hash256::of(canonical(&doc.to_json()).as_bytes()));
    doc
}

/// Where a file's entry of `files` (canonical text) lies in an inventory's spill file.
#[derive(Clone, Copy, Debug)]
pub struct Spilled {
    offset: u64,
    len: usize,
}

/// Entries of `files` as they are ready: appended to an unnamed temporary file, so memory stays
/// flat however many files a corpus holds. The first write error is kept.
struct Spill {
    file: std::fs::File,
    len: u64,
    error: Option<std::io::Error>,
}

impl Spill {
    fn append(&mut self, text: &str) -> Spilled {
        use std::io::Write;
        let at = Spilled {
            offset: self.len,
            len: text.len(),
        };
        match self.file.write_all(text.as_bytes()) {
            Ok(()) => self.len += text.len() as u64,
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        at
    }
}

/// Why an inventory could not be assembled: a usage or I/O problem.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// The temporary file that holds the entries of `files` could not be made or written.
    #[error("temporary file of the inventory: {0}")]
    Temporary(std::io::Error),
}

impl InventoryError {
    /// A failed temporary file is an I/O problem.
    pub fn exit_status(&self) -> crate::exit::Exit {
        match self {
            InventoryError::Temporary(_) => crate::exit::Exit::Usage,
        }
    }
}

/// `scan`, keeping of each file only its share of the aggregate tables (its entry of `files`
/// goes to a temporary file as canonical text as soon as the file is parsed; its facts as JSON
/// values took about 0.3 MiB), then the inventory of them.
pub fn inventory(
    corpus: &Corpus,
    jobs: usize,
    tick: &(dyn Fn() + Sync),
) -> Result<Inventory, InventoryError> {
    let spill = std::sync::Mutex::new(Spill {
        file: tempfile::tempfile().map_err(InventoryError::Temporary)?,
        len: 0,
        error: None,
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.clamp(1, MAX_JOBS))
        .build();
    let work = || {
        corpus
            .entries
            .par_iter()
            .map(|e| {
                let mut r = scan_one(e);
                let facts = std::mem::replace(
                    &mut r.facts,
                    Err((FailureCode::Unreadable, 0, String::new())),
                );
                let row = row(&r, facts);
                let text = indent(
                    &serde_json::to_string_pretty(&row.body).unwrap_or_default(),
                    2,
                );
                drop(row.body);
                let body = spill
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .append(&text);
                tick();
                Row {
                    body,
                    path: row.path,
                    pin: row.pin,
                    failure: row.failure,
                    size: row.size,
                    sha256: row.sha256,
                    signature: row.signature,
                    totals: row.totals,
                }
            })
            .collect::<Vec<_>>()
    };
    let mut rows = match pool {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    };
    let spill = spill.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = spill.error {
        return Err(InventoryError::Temporary(e));
    }
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    let mut inventory = Inventory {
        head: head(corpus, &rows),
        rows,
        spill: spill.file,
    };
    let mut sha = HashWriter(sha2::Digest::new());
    inventory
        .write(&mut sha)
        .map_err(InventoryError::Temporary)?;
    let digest = Hash256(sha2::Digest::finalize(sha.0).into());
    inventory.head.identity.inventory_sha256 = Some(digest);
    Ok(inventory)
}

/// `text` (pretty JSON) nested `levels` deep: every line after the first indented by two
/// spaces per level. JSON strings hold no raw line breaks, so every `\n` is the printer's.
fn indent(text: &str, levels: usize) -> String {
    text.replace('\n', &format!("\n{}", "  ".repeat(levels)))
}

/// An inventory held as its aggregate document plus each file's entry as canonical text in a
/// temporary file, written piece by piece: the same bytes as `canonical(&document(..))`.
pub struct Inventory {
    /// The document without `files` (what `summary` reads), with `identity.inventory_sha256`.
    pub head: Head,
    /// Sorted by path.
    pub rows: Vec<Row<Spilled>>,
    spill: std::fs::File,
}

/// Hashes what is written to it.
struct HashWriter(sha2::Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        sha2::Digest::update(&mut self.0, buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Inventory {
    /// The canonical text, as `canonical` prints it: the head's members in key order with
    /// `files` in its place, each file's entry copied from the temporary file.
    pub fn write(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let head = head_json(&self.head);
        let empty = serde_json::Map::new();
        let mut members: Vec<(&str, Option<&Value>)> = head
            .as_object()
            .unwrap_or(&empty)
            .iter()
            .map(|(k, v)| (k.as_str(), Some(v)))
            .collect();
        members.push(("files", None));
        members.sort_by_key(|m| m.0);
        let mut buf = Vec::new();
        w.write_all(b"{")?;
        for (i, (key, value)) in members.into_iter().enumerate() {
            w.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
            w.write_all(serde_json::to_string(key)?.as_bytes())?;
            w.write_all(b": ")?;
            match value {
                Some(v) => w.write_all(indent(&serde_json::to_string_pretty(v)?, 1).as_bytes())?,
                None if self.rows.is_empty() => w.write_all(b"[]")?,
                None => {
                    for (j, r) in self.rows.iter().enumerate() {
                        w.write_all(if j == 0 { b"[\n    " } else { b",\n    " })?;
                        buf.resize(r.body.len, 0);
                        self.spill.read_exact_at(&mut buf, r.body.offset)?;
                        w.write_all(&buf)?;
                    }
                    w.write_all(b"\n  ]")?;
                }
            }
        }
        w.write_all(b"\n}\n")
    }

    /// Whether every file passed (pins and parse).
    pub fn all_ok(&self) -> bool {
        self.rows.iter().all(Row::ok)
    }
}

/// Whether every file passed (pins and parse).
pub fn all_ok(results: &[FileResult]) -> bool {
    results.iter().all(FileResult::ok)
}
