//! `nbg report`: one self-contained, deterministic HTML page per graph, graph pair or capture
//! set (inline CSS and JavaScript, no network, no fonts to fetch).
//!
//! Everything on a page comes from the library's own values: the parse document
//! (`Graph::to_json`), the ownership ledger (`NbgImage`), the sweep, the diff report and the
//! differential report. The server-rendered tables are the text alternative of the canvas byte
//! map and are what the browser test reads back; the script only draws and navigates.
//!
//! Large files stay small: a page embeds decoded records whole up to `DECODED_MAX` bytes per
//! owner (`DECODED_TOTAL_MAX` in all) and the first and last `SAMPLE_BYTES` of every other
//! owner, never the whole payload.

pub mod board;
pub mod fieldmap;
mod html;
pub mod json;
#[cfg(feature = "onnx")]
pub mod onnx;
pub mod svg;
pub mod text;

use crate::lab::Exit;
use crate::lab::diff::{DiffError, DiffReport, locate};
use crate::lab::differential::{CaptureSet, LoadError};
use crate::nbg::failure::Failure;
use crate::nbg::family::NbgFamily;
use crate::nbg::files::InputError;
use crate::nbg::image::{NbgImage, OwnerClass, ViewClass};
use crate::nbg::parse::{Graph, parse};
use html::{Page, esc, hex};
use serde_json::{Value, json};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Decoded-record owners are embedded whole up to this many bytes (each).
pub const DECODED_MAX: u64 = 64 * 1024;
/// ... and up to this many bytes over all decoded records of a page; later ones are sampled.
pub const DECODED_TOTAL_MAX: u64 = 1024 * 1024;
/// Other owners: this many bytes from each end are embedded.
pub const SAMPLE_BYTES: u64 = 256;
/// Bins of the diff heat strip.
const HEAT_BINS: usize = 512;
/// Changed bytes shown per diff range (the range keeps its true length in the table).
const HEX_CHANGED_MAX: u64 = 64;
/// Context bytes either side of a changed range in the A/B hex views.
const HEX_CONTEXT: u64 = 16;

/// Why a report was not written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// An input is not a valid NBG: which file, and the failure.
    #[error("{0}: {1}")]
    Invalid(String, Failure),
    /// An input or the output could not be read or written.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The capture directory could not be loaded.
    #[error(transparent)]
    Capture(#[from] LoadError),
    /// The two graphs of a pair cannot be compared.
    #[error(transparent)]
    Diff(#[from] DiffError),
    /// A `--vendor-sweep` document is not a vendor sweep of this file: which file, and why.
    #[error("{0}: {1}")]
    VendorSweep(String, String),
}

impl ReportError {
    /// An invalid input is a failed check; the rest are usage or I/O problems.
    pub fn exit_status(&self) -> Exit {
        match self {
            ReportError::Invalid(..) => Exit::Failure,
            ReportError::Input(_) | ReportError::Capture(_) | ReportError::VendorSweep(..) => {
                Exit::Usage
            }
            ReportError::Diff(e) => e.exit_status(),
        }
    }
}

/// What to render.
pub enum Request {
    /// The page of one graph.
    Graph {
        /// The NBG file.
        file: PathBuf,
        /// Whether to include its mutation sweep.
        sweep: bool,
        /// A `nbg sweep --vendor --json` document of the same file, shown on the byte map.
        vendor_sweep: Option<PathBuf>,
    },
    /// The diff page of two graphs.
    Pair {
        /// The A file.
        a: PathBuf,
        /// The B file.
        b: PathBuf,
    },
    /// The page of one capture set's differential.
    Capture {
        /// The capture directory.
        dir: PathBuf,
    },
}

impl Request {
    /// Every file the request reads (outputs may never be one of them).
    pub fn inputs(&self) -> Vec<PathBuf> {
        match self {
            Request::Graph {
                file, vendor_sweep, ..
            } => std::iter::once(file.clone())
                .chain(vendor_sweep.iter().cloned())
                .collect(),
            Request::Pair { a, b } => vec![a.clone(), b.clone()],
            Request::Capture { dir } => ["A1.nb", "A2.nb", "B.nb", "differential.json"]
                .iter()
                .map(|n| dir.join(n))
                .collect(),
        }
    }

    /// Read the inputs and render the page.
    pub fn render(&self) -> Result<String, ReportError> {
        match self {
            Request::Graph {
                file,
                sweep,
                vendor_sweep,
            } => {
                let bytes = crate::nbg::files::read_regular(file)?;
                let vendor = match vendor_sweep {
                    Some(p) => Some(read_vendor_sweep(p, &bytes)?),
                    None => None,
                };
                graph_page_with(&display_name(file), &bytes, *sweep, vendor.as_ref())
                    .map_err(|f| ReportError::Invalid(file.display().to_string(), f))
            }
            Request::Pair { a, b } => {
                let ba = crate::nbg::files::read_regular(a)?;
                let bb = crate::nbg::files::read_regular(b)?;
                pair_page(&display_name(a), &ba, &display_name(b), &bb, |which| {
                    if which == 0 { a } else { b }.display().to_string()
                })
            }
            Request::Capture { dir } => {
                let set = crate::lab::differential::load(dir)?;
                capture_page(&display_name(dir), &set).map_err(|e| {
                    ReportError::Invalid(dir.join(e.file).display().to_string(), e.failure)
                })
            }
        }
    }
}

/// The name a page shows: the file or folder name only, so the same input gives the same bytes
/// wherever it lies.
fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Write `html` to `out` through the shared output rules (`crate::output`): never onto an
/// input or a non-regular file, an existing file only with `force`, atomically, 0666 less the
/// umask.
pub fn write(out: &Path, html: &str, inputs: &[PathBuf], force: bool) -> Result<(), ReportError> {
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let mut outputs = crate::output::Outputs::new(&inputs, force);
    outputs
        .stage(out, html.as_bytes())
        .and_then(|_| outputs.commit())
        .map_err(ReportError::from)
}

/// The committed reports: output path and request, inputs relative to the project root.
/// The public v1 file is one of the redistributable controls the repository carries.
pub fn committed() -> Vec<(&'static str, Request)> {
    vec![
        (
            "evidence/reports/erf-u8.html",
            Request::Graph {
                file: "controls/erf-u8.nb".into(),
                sweep: true,
                vendor_sweep: None,
            },
        ),
        (
            "evidence/reports/timvx-conv2d_relu_maxpool2d_fp32-001e.html",
            Request::Graph {
                file: "controls/public/v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb".into(),
                sweep: true,
                vendor_sweep: None,
            },
        ),
        (
            "evidence/reports/diff-erf-u8-ctc-like.html",
            Request::Pair {
                a: "controls/erf-u8.nb".into(),
                b: "controls/ctc-like.nb".into(),
            },
        ),
        (
            "evidence/reports/capture-dynaio-constant.html",
            Request::Capture {
                dir: "differentials/dynaio-constant".into(),
            },
        ),
    ]
}

/// The request with its paths resolved against `root`.
pub fn rooted(request: &Request, root: &Path) -> Request {
    match request {
        Request::Graph {
            file,
            sweep,
            vendor_sweep,
        } => Request::Graph {
            file: root.join(file),
            sweep: *sweep,
            vendor_sweep: vendor_sweep.as_ref().map(|p| root.join(p)),
        },
        Request::Pair { a, b } => Request::Pair {
            a: root.join(a),
            b: root.join(b),
        },
        Request::Capture { dir } => Request::Capture {
            dir: root.join(dir),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Single graph
// ---------------------------------------------------------------------------------------------

/// Largest `--vendor-sweep` document read.
pub const MAX_VENDOR_SWEEP: u64 = 64 << 20;

use crate::lab::sweep::VENDOR_CELLS;

/// Read a `nbg sweep --vendor --json` document and check it is of `bytes`.
fn read_vendor_sweep(path: &Path, bytes: &[u8]) -> Result<Value, ReportError> {
    let bad = |why: String| ReportError::VendorSweep(path.display().to_string(), why);
    let mut text = Vec::new();
    crate::nbg::files::read_regular_limited(path, &mut text, MAX_VENDOR_SWEEP + 1)?;
    if text.len() as u64 > MAX_VENDOR_SWEEP {
        return Err(bad(format!("larger than {MAX_VENDOR_SWEEP} bytes")));
    }
    let v: Value = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
    if v["schema"] != "nbg-vendor-sweep/1" {
        return Err(bad("not an nbg-vendor-sweep/1 document".into()));
    }
    let sha = crate::nbg::fingerprint::Hash256::of(bytes).hex();
    if v["sha256"].as_str() != Some(sha.as_str()) {
        return Err(bad(format!(
            "a sweep of {}, not of this file ({sha})",
            v["sha256"].as_str().unwrap_or("?")
        )));
    }
    let runs_ok = v["runs"].as_array().is_some_and(|r| {
        r.iter().all(|x| {
            x[0].as_u64()
                .zip(x[1].as_u64())
                .is_some_and(|(s, e)| s < e && e <= bytes.len() as u64)
                && x[2].as_str().is_some_and(|c| VENDOR_CELLS.contains(&c))
        })
    });
    if !runs_ok {
        return Err(bad(
            "its runs are not [start, end, cell] inside the file".into()
        ));
    }
    Ok(v)
}

/// The report of one graph; with `sweep`, the protection map too.
pub fn graph_page(name: &str, bytes: &[u8], sweep: bool) -> Result<String, Failure> {
    graph_page_with(name, bytes, sweep, None)
}

/// `graph_page`, with a vendor sweep's verdicts as the byte map's other layer.
pub fn graph_page_with(
    name: &str,
    bytes: &[u8],
    sweep: bool,
    vendor: Option<&Value>,
) -> Result<String, Failure> {
    let graph = parse(bytes)?;
    let image = NbgImage::new(&graph)?;
    let doc = graph.to_json();
    let sweep = if sweep {
        Some(crate::lab::sweep::sweep(
            bytes,
            crate::lab::sweep::EXHAUSTIVE_LIMIT,
        )?)
    } else {
        None
    };
    let mut p = Page::new(&format!("nbg report: {name}"), "graph");

    summary_card(&mut p, name, &doc);
    let mut data = json!({
        "kind": "graph",
        "size": image.len(),
        "classes": OwnerClass::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "owners": image.owners().iter().map(|o| json!([o.start, o.end, o.class.as_str(), o.label])).collect::<Vec<_>>(),
        "views": image.views().iter().map(|v| json!([v.start, v.end, view_kind(v.class), v.label])).collect::<Vec<_>>(),
        "samples": samples(&graph, &image, bytes),
    });

    // The byte map and its controls.
    let _ = write!(
        p.body,
        r#"<section aria-labelledby="map-h"><h2 id="map-h">Byte map</h2>
<p class="note">Every byte has one owner, coloured by class. Zoom from the whole file down to single bytes; hover or move the cursor for owner, field and decoded value; click or press Enter for a hex view of the owner with field boundaries marked. Keys on the map: arrows move the cursor, <kbd>+</kbd>/<kbd>-</kbd> zoom, <kbd>0</kbd> whole file, <kbd>Enter</kbd> hex view. The owner table below is the text alternative.</p>
<div class="toolbar" role="group" aria-label="byte map controls">
<button type="button" id="zoom-in">Zoom in (+)</button> <button type="button" id="zoom-out">Zoom out (-)</button> <button type="button" id="zoom-all">Whole file (0)</button>
<label><input type="checkbox" id="show-connection" checked> connection region</label>
<label><input type="checkbox" id="show-nested" checked> nested references</label>
{}</div>
<div class="mapwrap"><canvas id="map" width="1100" height="520" tabindex="0" role="img" aria-label="byte map of {} bytes; the owner table is its text alternative" aria-describedby="owners-h"></canvas><div id="tip" role="tooltip" hidden></div></div>
<p id="where" aria-live="polite"></p>
<div id="legend"></div>
<div id="hex" aria-live="polite"></div>
<p class="note" id="bound">Bound: this page embeds decoded records whole up to {} bytes per owner and {} bytes in all, and the first and last {} bytes of every other owner (and of decoded records beyond those bounds); bytes outside those samples are not embedded and show as <code>··</code>. Embedded here: {} of {} bytes.</p>
</section>
"#,
        if sweep.is_some() {
            r#"<label><input type="checkbox" id="show-sweep"> protection map (sweep)</label>"#
        } else if vendor.is_some() {
            r#"<label><input type="checkbox" id="show-sweep"> loader verdicts (vendor sweep)</label>"#
        } else {
            ""
        },
        image.len(),
        DECODED_MAX,
        DECODED_TOTAL_MAX,
        SAMPLE_BYTES,
        embedded_bytes(&data["samples"]),
        image.len()
    );

    owner_table(&mut p, &image);
    views_table(&mut p, &image);
    structure_tables(&mut p, &doc);
    io_tables(&mut p, &doc);
    checks(&mut p, &doc);

    if let Some((report, outcomes)) = &sweep {
        let mut runs: Vec<Value> = Vec::new();
        let mut start = 0usize;
        for i in 1..=outcomes.len() {
            if i == outcomes.len() || outcomes[i].class() != outcomes[start].class() {
                runs.push(json!([start, i, outcomes[start].class()]));
                start = i;
            }
        }
        data["sweep"] = json!({ "runs": runs });
        sweep_section(&mut p, report);
    } else if let Some(v) = vendor {
        data["sweep"] = json!({ "runs": v["runs"], "classes": VENDOR_CELLS });
        vendor_section(&mut p, v);
    }
    p.data(&data);
    Ok(p.finish())
}

/// The map's toggle a view belongs to.
fn view_kind(class: ViewClass) -> &'static str {
    match class {
        ViewClass::SectionCoveredView => "connection",
        ViewClass::NestedReference => "nested",
    }
}

fn embedded_bytes(samples: &Value) -> u64 {
    samples
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["segs"].as_array().into_iter().flatten())
        .map(|seg| seg[1].as_str().map_or(0, |h| h.len() as u64 / 2))
        .sum()
}

/// Per owner: the embedded byte segments `[start, hex]` and, for decoded records, the field
/// units `[start, end, field, value]` that cover them.
fn samples(graph: &Graph<'_>, image: &NbgImage<'_>, bytes: &[u8]) -> Value {
    let mut out = Vec::new();
    let mut budget = DECODED_TOTAL_MAX;
    for o in image.owners() {
        let decoded = o.class == OwnerClass::DecodedRecord;
        let whole = o.len().min(DECODED_MAX);
        let segs: Vec<(u64, u64)> = if decoded && whole <= budget {
            budget -= whole;
            vec![(o.start, o.start + whole)]
        } else if o.len() <= 2 * SAMPLE_BYTES {
            vec![(o.start, o.end)]
        } else {
            vec![
                (o.start, o.start + SAMPLE_BYTES),
                (o.end - SAMPLE_BYTES, o.end),
            ]
        };
        let mut fields = Vec::new();
        for &(s, e) in segs.iter().filter(|_| decoded) {
            let mut at = s;
            while at < e {
                let (name, unit) = locate(graph, o, at);
                // A field may run past the sample; its value is read whole (fields are small).
                let mut end = at + 1;
                while end < o.end && end < e + 256 && locate(graph, o, end).1 == unit {
                    end += 1;
                }
                let name = field_name(&name);
                let value = decode_value(&name, &bytes[at as usize..end as usize]);
                fields.push(json!([at, end, name, value]));
                at = end;
            }
        }
        out.push(json!({
            "segs": segs.iter().map(|&(s, e)| json!([s, hex(&bytes[s as usize..e as usize])])).collect::<Vec<_>>(),
            "fields": fields,
        }));
    }
    Value::Array(out)
}

/// A field name without a byte offset inside an undecoded record (`t[3]+0x1c` -> `t[3]`).
fn field_name(name: &str) -> String {
    name.split("+0x").next().unwrap_or(name).to_string()
}

/// A field's bytes read as the field map stores them: names as text, 1/2/4-byte words and
/// 8-byte offsets and sizes as little-endian integers, word arrays as lists, the rest as hex.
pub fn decode_value(name: &str, b: &[u8]) -> String {
    // Invariant: every `word(i)` below is called on a field of at least `i + 4` bytes.
    let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let leaf = name.rsplit('.').next().unwrap_or(name);
    if leaf == "magic" || leaf.ends_with("name") {
        let text: String = b
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| {
                if (0x20..0x7f).contains(&c) {
                    c as char
                } else {
                    '.'
                }
            })
            .collect();
        return format!("{text:?}");
    }
    match b.len() {
        1 => format!("{} (u8)", b[0]),
        2 => format!("{} (u16)", u16::from_le_bytes([b[0], b[1]])),
        4 => format!("{} = 0x{:x} (u32)", word(0), word(0)),
        8 if !leaf.ends_with("words") => {
            // Invariant: this arm is the 8-byte case.
            let v = u64::from_le_bytes(b.try_into().expect("8 bytes"));
            format!("{v} = 0x{v:x} (u64)")
        }
        n if n % 4 == 0 && n <= 32 => {
            let words: Vec<String> = (0..n / 4).map(|i| word(4 * i).to_string()).collect();
            format!("[{}] (u32 words)", words.join(", "))
        }
        n if n <= 32 => hex(b),
        _ => format!("{}… ({} bytes)", hex(&b[..32]), b.len()),
    }
}

fn summary_card(p: &mut Page, name: &str, doc: &Value) {
    let format = doc["format"].as_str().unwrap_or("?");
    let h = &doc["header"];
    let (crc_status, crc_rule) = if format == "nbg-v2" {
        let c = &doc["file_checksum"];
        (
            if c["matches"].as_bool() == Some(true) {
                "matches".to_string()
            } else {
                "mismatch".to_string()
            },
            format!(
                "{} {} from {}, {} section bytes, {} gap bytes excluded",
                str_of(&c["algorithm"]),
                str_of(&c["scope"]),
                str_of(&c["initial_value"]),
                c["covered_section_bytes"],
                c["excluded_alignment_gap_bytes"]
            ),
        )
    } else {
        let c = &doc["crc"];
        (
            str_of(&c["classification"]),
            c["rule"].as_str().unwrap_or("none").to_string(),
        )
    };
    let network = if format == "nbg-v2" {
        str_of(&doc["network_info"]["name"])
    } else {
        str_of(&h["network_name"])
    };
    let rows = [
        ("file", name.to_string()),
        ("family", format.to_string()),
        ("version", hex32(&h["version"])),
        ("target", hex32(&h["target"])),
        ("network", network),
        ("size", doc["file"]["size"].to_string()),
        ("sha256", str_of(&doc["file"]["sha256"])),
        ("crc-status", crc_status),
        ("crc-rule", crc_rule),
        ("structural-signature", str_of(&doc["structural_signature"])),
    ];
    p.summary(&rows);
}

fn str_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

fn hex32(v: &Value) -> String {
    v.as_u64()
        .map_or_else(|| "-".into(), |n| format!("0x{n:08x}"))
}

fn owner_table(p: &mut Page, image: &NbgImage<'_>) {
    let _ = write!(
        p.body,
        r#"<section><h2 id="owners-h">Owners ({})</h2>
<p class="note">The text alternative of the byte map: one row per owner, in file order. <strong>Show</strong> zooms the map to the owner and opens its hex view.</p>
<table id="owners"><thead><tr><th scope="col">#</th><th scope="col">start</th><th scope="col">end</th><th scope="col">bytes</th><th scope="col">class</th><th scope="col">label</th><th scope="col"></th></tr></thead><tbody>
"#,
        image.owners().len()
    );
    for (i, o) in image.owners().iter().enumerate() {
        let zero = match o.all_zero {
            Some(true) => " (all zero)",
            Some(false) => " (nonzero)",
            None => "",
        };
        let _ = writeln!(
            p.body,
            r#"<tr data-owner="{i}" data-start="{}" data-end="{}" data-class="{}"><td>{i}</td><td>0x{:x}</td><td>0x{:x}</td><td>{}</td><td><span class="sw c-{}"></span>{}</td><td>{}{zero}</td><td><button type="button" class="show" data-owner="{i}">Show</button></td></tr>"#,
            o.start,
            o.end,
            o.class.as_str(),
            o.start,
            o.end,
            o.len(),
            o.class.as_str(),
            o.class.as_str(),
            esc(&o.label)
        );
    }
    p.body.push_str("</tbody></table>\n<h3>Bytes per class</h3>\n<table id=\"totals\"><thead><tr><th scope=\"col\">class</th><th scope=\"col\">bytes</th></tr></thead><tbody>\n");
    for (class, n) in image.totals() {
        let _ = writeln!(
            p.body,
            r#"<tr data-class="{class}"><td><span class="sw c-{class}"></span>{class}</td><td>{n}</td></tr>"#
        );
    }
    p.body.push_str("</tbody></table></section>\n");
}

fn views_table(p: &mut Page, image: &NbgImage<'_>) {
    let _ = write!(
        p.body,
        r#"<section><h2>Views ({})</h2><p class="note">Views own nothing: the connection region over the final 512 bytes and nested references (DYNAIO entries, v1 table entries pointing into another table).</p>
<table id="views"><thead><tr><th scope="col">start</th><th scope="col">end</th><th scope="col">class</th><th scope="col">label</th></tr></thead><tbody>
"#,
        image.views().len()
    );
    for v in image.views() {
        let class = match v.class {
            ViewClass::SectionCoveredView => "section-covered-view",
            ViewClass::NestedReference => "nested-reference",
        };
        let _ = writeln!(
            p.body,
            r#"<tr><td>0x{:x}</td><td>0x{:x}</td><td>{class}</td><td>{}</td></tr>"#,
            v.start,
            v.end,
            esc(&v.label)
        );
    }
    p.body.push_str("</tbody></table></section>\n");
}

/// Sections (v2) or tables (v1) from the parse document.
fn structure_tables(p: &mut Page, doc: &Value) {
    let v2 = doc["format"] == "nbg-v2";
    let (title, id, list) = if v2 {
        ("Sections", "sections", &doc["sections"])
    } else {
        ("Tables", "tables", &doc["tables"])
    };
    let rows = list.as_array().cloned().unwrap_or_default();
    let head: &[&str] = if v2 {
        &[
            "#", "type", "name", "offset", "size", "align", "entry", "decoded", "crc32",
        ]
    } else {
        &[
            "#", "name", "evidence", "offset", "size", "record", "records", "decoded", "crc32",
        ]
    };
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|s| {
            let crc = s["fingerprint"]["crc32"]
                .as_u64()
                .map_or("-".into(), |c| format!("{c:08x}"));
            if v2 {
                vec![
                    s["index"].to_string(),
                    s["type"].to_string(),
                    str_of(&s["type_name"]),
                    hex_num(&s["offset"]),
                    s["size"].to_string(),
                    s["alignment"].to_string(),
                    s["entry_size"].to_string(),
                    s["decoded"].to_string(),
                    crc,
                ]
            } else {
                vec![
                    s["index"].to_string(),
                    str_of(&s["name"]),
                    str_of(&s["evidence"]),
                    hex_num(&s["offset"]),
                    s["size"].to_string(),
                    str_of(&s["record_size"]),
                    str_of(&s["record_count"]),
                    s["decoded"].to_string(),
                    crc,
                ]
            }
        })
        .collect();
    p.table(&format!("{title} ({})", rows.len()), id, head, &body);
}

fn hex_num(v: &Value) -> String {
    v.as_u64()
        .map_or_else(|| "-".into(), |n| format!("0x{n:x}"))
}

fn io_tables(p: &mut Page, doc: &Value) {
    for (title, key) in [("Inputs", "inputs"), ("Outputs", "outputs")] {
        let rows = doc[key].as_array().cloned().unwrap_or_default();
        let body: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                let q = &r["quantization"];
                vec![
                    r["index"].to_string(),
                    str_of(&r["name"]),
                    str_of(&r["data_format_name"]),
                    r["dimensions"].to_string(),
                    str_of(&r["storage_bytes"]),
                    str_of(&q["format_name"]),
                    str_of(&q["scale"]),
                    str_of(&q["zero_point"]),
                ]
            })
            .collect();
        p.table(
            &format!("{title} ({})", rows.len()),
            key,
            &[
                "#",
                "name",
                "format",
                "dimensions",
                "bytes",
                "quant",
                "scale",
                "zero point",
            ],
            &body,
        );
    }
}

fn checks(p: &mut Page, doc: &Value) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    if doc["format"] == "nbg-v2" {
        let c = &doc["file_checksum"];
        rows.push(vec![
            "file crc32 (header.crc_sum)".into(),
            format!(
                "recorded 0x{:08x}, computed 0x{:08x}, {}",
                c["recorded_crc32"].as_u64().unwrap_or(0),
                c["computed_crc32"].as_u64().unwrap_or(0),
                if c["matches"] == true {
                    "matches"
                } else {
                    "mismatch"
                }
            ),
        ]);
        for s in doc["section_checksums"].as_array().into_iter().flatten() {
            rows.push(vec![
                format!("section checksum {}", str_of(&s["section_type_name"])),
                format!(
                    "stored 0x{:08x}, computed 0x{:08x}, {}",
                    s["stored"].as_u64().unwrap_or(0),
                    s["computed"].as_u64().unwrap_or(0),
                    if s["matches"] == true {
                        "matches"
                    } else {
                        "mismatch"
                    }
                ),
            ]);
        }
        let d = &doc["dynamic_io"];
        rows.push(vec![
            "dynamic io".into(),
            if d.is_null() {
                "absent".into()
            } else {
                format!(
                    "{} entries, {} region bytes, {} padding bytes",
                    d["entry_count"], d["region_bytes"], d["padding_bytes"]
                )
            },
        ]);
    } else {
        let c = &doc["crc"];
        rows.push(vec![
            format!("crc field @0x{:x}", c["offset"].as_u64().unwrap_or(0)),
            format!(
                "stored 0x{:08x}, whole-file-zeroed 0x{:08x}: {} ({})",
                c["stored"].as_u64().unwrap_or(0),
                c["computed_whole_file_zeroed"].as_u64().unwrap_or(0),
                str_of(&c["classification"]),
                c["rule"].as_str().unwrap_or("no rule")
            ),
        ]);
        for n in doc["nested_tables"].as_array().into_iter().flatten() {
            rows.push(vec![
                format!("nested {} -> {}", str_of(&n["table"]), str_of(&n["target"])),
                format!("{} entries in bounds", n["entry_count"]),
            ]);
        }
    }
    let r = &doc["connection_region"];
    rows.push(vec![
        "connection region".into(),
        format!(
            "0x{:x}+{}, sha256 {}{}",
            r["offset"].as_u64().unwrap_or(0),
            r["size"],
            str_of(&r["sha256"]),
            if r["covered_by_section"] == true {
                " (covered by sections)"
            } else {
                ""
            }
        ),
    ]);
    p.table("Checks", "checks", &["check", "result"], &rows);
}

/// The vendor sweep's tables: nbg's and the loader's verdicts per owner class, the findings.
fn vendor_section(p: &mut Page, v: &Value) {
    let _ = write!(
        p.body,
        r#"<section><h2>Loader verdicts (vendor sweep)</h2>
<p class="note">{} mutations (every {} offset(s), patterns {}) handed from memory to the vendor's loader simulating {}; the unmutated file: {}. Tick "loader verdicts" above to colour the byte map by each offset's worst cell: the loader crashed or hung, only the loader refuses, only nbg refuses, both accept, both refuse.</p>
"#,
        v["mutations"],
        v["stride"],
        v["patterns"],
        esc(v["config"]["name"].as_str().unwrap_or("")),
        esc(&v["baseline"]["verdict"].to_string())
    );
    let cols = [
        "both_refuse",
        "only_nbg_refuses",
        "only_loader_refuses",
        "both_accept",
        "loader_crashed",
        "loader_hung",
    ];
    let mut rows: Vec<Vec<String>> = v["by_class"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(class, c)| {
            std::iter::once(class.clone())
                .chain(cols.iter().map(|k| c[*k].to_string()))
                .collect()
        })
        .collect();
    rows.push(
        std::iter::once("all".to_string())
            .chain(cols.iter().map(|k| v["total"][*k].to_string()))
            .collect(),
    );
    p.table(
        "By owner class",
        "vendor-classes",
        &[
            "owner class",
            "both refuse",
            "only nbg refuses",
            "only the loader refuses",
            "both accept",
            "loader crashed",
            "loader hung",
        ],
        &rows,
    );
    let findings: Vec<Vec<String>> = v["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            vec![
                format!("0x{:x}", f["offset"].as_u64().unwrap_or(0)),
                format!("0x{:02x}", f["pattern"].as_u64().unwrap_or(0)),
                f["field"].as_str().unwrap_or("").to_string(),
                f["nbg"]["code"].as_str().unwrap_or("valid").to_string(),
                f["loader"]["verdict"].as_str().unwrap_or("").to_string(),
            ]
        })
        .collect();
    p.table(
        "Findings: crashes, hangs, refusals only the loader makes",
        "vendor-findings",
        &["offset", "pattern", "field", "nbg", "loader"],
        &findings,
    );
    p.body.push_str("</section>\n");
}

fn sweep_section(p: &mut Page, r: &crate::lab::sweep::Report) {
    let _ = write!(
        p.body,
        r#"<section><h2>Protection map (sweep)</h2>
<p class="note">Every offset flipped with {:02x?} and parsed again: <strong>detected</strong> (a rule fails), <strong>tolerated</strong> (the owner explains why), <strong>undetected</strong>. Tick "protection map" above to colour the byte map by these classes. {} offsets flipped and parsed, {} classified from checksum coverage.</p>
<dl class="card" id="sweep-summary"><dt>detected</dt><dd data-key="detected">{}</dd><dt>tolerated</dt><dd data-key="tolerated">{}</dd><dt>undetected</dt><dd data-key="undetected">{}</dd></dl>
"#,
        r.patterns, r.exhaustive_offsets, r.derived_offsets, r.detected, r.tolerated, r.undetected
    );
    let by_owner: Vec<Vec<String>> = r
        .by_owner
        .iter()
        .map(|(class, c)| {
            vec![
                class.to_string(),
                c.detected.to_string(),
                c.tolerated.to_string(),
                c.undetected.to_string(),
            ]
        })
        .collect();
    p.table(
        "By owner class",
        "sweep-owners",
        &["owner class", "detected", "tolerated", "undetected"],
        &by_owner,
    );
    let codes: Vec<Vec<String>> = r
        .by_code
        .iter()
        .map(|(c, n)| vec![c.clone(), n.to_string()])
        .collect();
    p.table("Caught by", "sweep-codes", &["code", "offsets"], &codes);
    let reasons: Vec<Vec<String>> = r
        .tolerated_reasons
        .iter()
        .map(|(c, n)| vec![c.to_string(), n.to_string()])
        .collect();
    p.table(
        "Tolerated because",
        "sweep-reasons",
        &["reason", "offsets"],
        &reasons,
    );
    let undetected: Vec<Vec<String>> = r
        .undetected_ranges
        .iter()
        .map(|(s, e, l)| vec![format!("0x{s:x}"), format!("0x{e:x}"), l.clone()])
        .collect();
    p.table(
        "Undetected ranges (first 64)",
        "sweep-undetected",
        &["start", "end", "owner"],
        &undetected,
    );
    p.body.push_str("</section>\n");
}

// ---------------------------------------------------------------------------------------------
// Two graphs
// ---------------------------------------------------------------------------------------------

/// The owner-attributed diff of two graphs of one family. `which(0|1)` names A or B in errors.
pub fn pair_page(
    name_a: &str,
    a: &[u8],
    name_b: &str,
    b: &[u8],
    which: impl Fn(usize) -> String,
) -> Result<String, ReportError> {
    let ga = parse(a).map_err(|f| ReportError::Invalid(which(0), f))?;
    let gb = parse(b).map_err(|f| ReportError::Invalid(which(1), f))?;
    let ia = NbgImage::new(&ga).map_err(|f| ReportError::Invalid(which(0), f))?;
    let ib = NbgImage::new(&gb).map_err(|f| ReportError::Invalid(which(1), f))?;
    let report = crate::lab::diff::diff(&ga, &ia, &gb, &ib)?;
    Ok(render_pair(name_a, a, &ga, &ia, name_b, b, &report))
}

fn render_pair(
    name_a: &str,
    a: &[u8],
    ga: &Graph<'_>,
    ia: &NbgImage<'_>,
    name_b: &str,
    b: &[u8],
    report: &DiffReport,
) -> String {
    let mut p = Page::new(&format!("nbg diff report: {name_a} vs {name_b}"), "diff");
    p.summary(&[
        ("family", report.format.to_string()),
        ("a", name_a.to_string()),
        ("a-size", report.a.size.to_string()),
        ("a-sha256", report.a.sha256.to_string()),
        ("b", name_b.to_string()),
        ("b-size", report.b.size.to_string()),
        ("b-sha256", report.b.sha256.to_string()),
        ("identical", report.identical.to_string()),
        ("changed-bytes", report.changed_bytes.to_string()),
        ("owners-changed", report.owners_changed.to_string()),
    ]);
    let _ = write!(
        p.body,
        r#"<section aria-labelledby="heat-h"><h2 id="heat-h">Where the files differ</h2>
<p class="note">Heat strips along A and along B: changed bytes per bin ({HEAT_BINS} bins per file), from the owner-attributed diff. Changes of owners beyond their first {} listed ranges, and of owners on one side only, are spread evenly over the owner's range; the owner table gives the exact counts. Click a strip, or press Enter on it, to jump to the first changed field at that place.</p>
<div class="strip"><span>A</span><canvas id="heat-a" width="1000" height="36" tabindex="0" role="img" aria-label="changed bytes along A; the field table is the text alternative"></canvas></div>
<div class="strip"><span>B</span><canvas id="heat-b" width="1000" height="36" tabindex="0" role="img" aria-label="changed bytes along B; the field table is the text alternative"></canvas></div>
<p id="where" aria-live="polite"></p>
</section>
"#,
        crate::lab::diff::MAX_RANGES
    );
    // Owners.
    let owner_rows: Vec<Vec<String>> = report
        .owners
        .iter()
        .map(|o| {
            vec![
                o.owner.clone(),
                o.class.as_str().to_string(),
                status_str(&o.status),
                range_str(o.a_range),
                range_str(o.b_range),
                o.changed_bytes.to_string(),
                format!("{} ({} listed)", o.ranges_total, o.ranges.len()),
            ]
        })
        .collect();
    p.table(
        &format!("Changed owners ({})", report.owners_changed),
        "diff-owners",
        &[
            "owner",
            "class",
            "status",
            "A range",
            "B range",
            "changed bytes",
            "ranges",
        ],
        &owner_rows,
    );
    // Fields, with A/B hex side by side.
    let mut hexes = Vec::new();
    let mut heat_a = vec![0u64; HEAT_BINS];
    let mut heat_b = vec![0u64; HEAT_BINS];
    let rows_total: usize = report.owners.iter().map(|o| o.ranges.len()).sum();
    let _ = write!(
        p.body,
        r#"<section><h2 id="fields-h">Changed fields ({rows_total} ranges)</h2>
<p class="note">One row per changed range (at most {} per owner), named down to record and field; values decoded as the field map stores them. <strong>Hex</strong> opens A and B side by side with {HEX_CONTEXT} bytes of context, changed bytes marked.</p>
<table id="fields"><thead><tr><th scope="col">#</th><th scope="col">owner</th><th scope="col">field</th><th scope="col">A</th><th scope="col">B</th><th scope="col">change</th><th scope="col"></th></tr></thead><tbody>
"#,
        crate::lab::diff::MAX_RANGES
    );
    let mut row = 0usize;
    for o in &report.owners {
        let listed: u64 = o.ranges.iter().map(|c| c.a_end - c.a_start).sum();
        if o.ranges_total > o.ranges.len() || o.ranges.is_empty() {
            let rest = o.changed_bytes.saturating_sub(listed);
            if let Some([s, e]) = o.a_range {
                spread(&mut heat_a, a.len() as u64, s, e, rest);
            }
            if let Some([s, e]) = o.b_range {
                spread(&mut heat_b, b.len() as u64, s, e, rest);
            }
        }
        for c in &o.ranges {
            spread(
                &mut heat_a,
                a.len() as u64,
                c.a_start,
                c.a_end,
                c.a_end - c.a_start,
            );
            spread(
                &mut heat_b,
                b.len() as u64,
                c.b_start,
                c.b_end,
                c.b_end - c.b_start,
            );
            let owner = ia.owner_of(c.a_start);
            let (unit_name, unit) = locate(ga, owner, c.a_start);
            let mut unit_end = c.a_end;
            while unit_end < owner.end
                && unit_end < unit + 256
                && locate(ga, owner, unit_end).1 == unit
            {
                unit_end += 1;
            }
            let change = describe_change(&unit_name, unit, unit_end, c, a, b);
            let _ = writeln!(
                p.body,
                r#"<tr class="change" data-row="{row}" data-field="{}" data-a-start="{}" data-b-start="{}"><td>{row}</td><td>{}</td><td>{}</td><td>[0x{:x}, 0x{:x})</td><td>[0x{:x}, 0x{:x})</td><td class="mono">{}</td><td><button type="button" class="hexbtn" data-row="{row}">Hex</button></td></tr>"#,
                esc(&c.field),
                c.a_start,
                c.b_start,
                esc(&o.owner),
                esc(&c.field),
                c.a_start,
                c.a_end,
                c.b_start,
                c.b_end,
                esc(&change)
            );
            hexes.push(json!([
                hex_window(a, c.a_start, c.a_end),
                hex_window(b, c.b_start, c.b_end)
            ]));
            row += 1;
        }
    }
    p.body
        .push_str("</tbody></table>\n<div id=\"hex\" aria-live=\"polite\"></div></section>\n");
    let anchors: Vec<Value> = report
        .owners
        .iter()
        .flat_map(|o| o.ranges.iter().map(|c| json!([c.a_start, c.b_start])))
        .collect();
    p.data(&json!({
        "kind": "diff",
        "a_size": a.len(),
        "b_size": b.len(),
        "heat_a": heat_a,
        "heat_b": heat_b,
        "rows": anchors,
        "hex": hexes,
    }));
    p.finish()
}

fn status_str(s: &crate::lab::diff::Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn range_str(r: Option<[u64; 2]>) -> String {
    r.map_or("-".into(), |[s, e]| format!("[0x{s:x}, 0x{e:x})"))
}

/// Add `n` changed bytes spread evenly over `[s, e)` to the bins of a file of `size` bytes.
fn spread(bins: &mut [u64], size: u64, s: u64, e: u64, n: u64) {
    if e <= s || n == 0 || size == 0 {
        return;
    }
    let k = bins.len() as u64;
    let (first, last) = (s * k / size, ((e - 1) * k / size).min(k - 1));
    let count = last - first + 1;
    for (i, bin) in (first..=last).enumerate() {
        bins[bin as usize] += n / count + u64::from((i as u64) < n % count);
    }
}

/// `field[word]: old -> new` for word fields; the changed bytes otherwise.
fn describe_change(
    unit_name: &str,
    unit: u64,
    unit_end: u64,
    c: &crate::lab::diff::Change,
    a: &[u8],
    b: &[u8],
) -> String {
    let name = field_name(unit_name);
    let width = unit_end - unit;
    let opaque = unit_name.contains("+0x");
    let leaf = name.rsplit('.').next().unwrap_or(&name);
    let u64_field = width == 8 && !leaf.ends_with("words");
    if !opaque
        && width % 4 == 0
        && width > 4
        && width <= 32
        && !u64_field
        && !leaf.ends_with("name")
    {
        let first = (c.a_start - unit) / 4;
        let last = (c.a_end - 1 - unit) / 4;
        let parts: Vec<String> = (first..=last)
            .map(|w| {
                let at = |bytes: &[u8], base: u64| {
                    let o = (base + 4 * w) as usize;
                    // Invariant: the words shown lie inside both files (the changed range is in bounds).
                    u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"))
                };
                let delta = c.b_start - c.a_start;
                format!("{name}[{w}]: {} -> {}", at(a, unit), at(b, unit + delta))
            })
            .collect();
        return parts.join("; ");
    }
    if !opaque && width <= 64 {
        let delta = c.b_start as i128 - c.a_start as i128;
        let b_unit = (unit as i128 + delta) as usize;
        let b_end = (unit_end as i128 + delta) as usize;
        if b_end <= b.len() {
            return format!(
                "{name}: {} -> {}",
                decode_value(&name, &a[unit as usize..unit_end as usize]),
                decode_value(&name, &b[b_unit..b_end])
            );
        }
    }
    let n = (c.a_end - c.a_start).min(16) as usize;
    let more = if c.a_end - c.a_start > 16 { "…" } else { "" };
    format!(
        "{}: {}{more} -> {}{more}",
        c.field,
        hex(&a[c.a_start as usize..c.a_start as usize + n]),
        hex(&b[c.b_start as usize..c.b_start as usize + n])
    )
}

/// `[first offset, hex, changed start, changed end]` around a changed range, bounded.
fn hex_window(bytes: &[u8], start: u64, end: u64) -> Value {
    let end = end.min(start + HEX_CHANGED_MAX);
    let from = start.saturating_sub(HEX_CONTEXT) & !15;
    let to = (end + HEX_CONTEXT).min(bytes.len() as u64);
    json!([from, hex(&bytes[from as usize..to as usize]), start, end])
}

// ---------------------------------------------------------------------------------------------
// Capture set
// ---------------------------------------------------------------------------------------------

/// The differential of one capture set, each step with the values it rests on.
pub fn capture_page(
    name: &str,
    set: &CaptureSet,
) -> Result<String, crate::lab::differential::CaptureError> {
    let r = crate::lab::differential::run(set)?;
    // Invariant: the report has string keys and finite numbers only.
    let value = serde_json::to_value(&r).expect("report serializes");
    let mut p = Page::new(&format!("nbg capture report: {name}"), "capture");
    let replay = r.replay.as_ref();
    p.summary(&[
        ("capture", name.to_string()),
        ("family", r.format.to_string()),
        ("result", r.result.to_string()),
        ("a1-equals-a2", r.a1_equals_a2.to_string()),
        (
            "same-layout",
            r.same_layout.map_or("-".into(), |b| b.to_string()),
        ),
        ("changed-ranges", r.changed_ranges.len().to_string()),
        (
            "recorded-crc32",
            replay.map_or("-".into(), |x| format!("0x{:08x}", x.recorded_crc32)),
        ),
        (
            "recomputed-crc32",
            replay.map_or("-".into(), |x| format!("0x{:08x}", x.recomputed_crc32)),
        ),
        (
            "replay-sha256",
            replay.map_or("-".into(), |x| x.sha256.to_string()),
        ),
        ("b-sha256", r.files.b.sha256.to_string()),
        (
            "provenance",
            r.provenance.clone().unwrap_or_else(|| "-".into()),
        ),
    ]);
    // Step 1.
    let files = [
        ("A1.nb", &r.files.a1),
        ("A2.nb", &r.files.a2),
        ("B.nb", &r.files.b),
    ];
    let rows: Vec<Vec<String>> = files
        .iter()
        .map(|(n, f)| vec![n.to_string(), f.size.to_string(), f.sha256.to_string()])
        .collect();
    p.step(
        "1. A1 = A2: the serializer is deterministic",
        r.a1_equals_a2,
        &format!(
            "A1 and A2 are {}byte-identical (evidence: sizes and SHA-256 of the three captures).",
            if r.a1_equals_a2 { "" } else { "not " }
        ),
    );
    p.table("Captures", "captures", &["file", "bytes", "sha256"], &rows);
    // Step 2.
    p.step(
        "2. Same size and layout descriptors",
        r.same_layout == Some(true),
        &if r.layout_differences.is_empty() {
            "Every directory descriptor (or v1 table) of A equals B's.".to_string()
        } else {
            format!("Differences: {}", r.layout_differences.join("; "))
        },
    );
    // Step 3.
    p.step(
        "3. Localization: every changed byte attributed in A's ledger",
        !r.changed_ranges.is_empty()
            && r.changed_ranges
                .iter()
                .all(|c| c.role != crate::lab::differential::RangeRole::Other),
        "Each run of changed bytes with its role, field and the bytes of A and B (evidence).",
    );
    let loc: Vec<Vec<String>> = r
        .changed_ranges
        .iter()
        .map(|c| {
            let (s, e) = (
                c.start as usize,
                c.end.min(c.start + HEX_CHANGED_MAX) as usize,
            );
            vec![
                format!("0x{:x}", c.start),
                format!("0x{:x}", c.end),
                c.role.to_string(),
                c.owner.clone(),
                c.class.as_str().to_string(),
                c.dynaio_entry.map_or("-".into(), |x| x.to_string()),
                c.entry_offset.map_or("-".into(), |x| x.to_string()),
                hex(&set.a1[s..e]),
                hex(&set.b[s..e]),
            ]
        })
        .collect();
    p.table(
        "Changed ranges",
        "localization",
        &[
            "start", "end", "role", "field", "class", "entry", "entry +", "A bytes", "B bytes",
        ],
        &loc,
    );
    let size = r.files.a1.size;
    let mut heat = vec![0u64; HEAT_BINS];
    for c in &r.changed_ranges {
        spread(&mut heat, size, c.start, c.end, c.end - c.start);
    }
    p.body.push_str(r#"<div class="strip"><span>A→B</span><canvas id="heat-a" width="1000" height="36" tabindex="0" role="img" aria-label="changed bytes along the file; the changed-ranges table is the text alternative"></canvas></div><p id="where" aria-live="polite"></p>
"#);
    // Step 4.
    if let Some(s) = &r.source {
        p.step(
            "4. Source: the DYNAIO entry that holds a_source",
            s.consistent,
            &format!(
                "Entry {} at 0x{:x} ({} bytes) holds a_source {} (entries equal to it: {:?}); b_source {} differs at indices {:?}; localized entry offsets {:?}.",
                s.dynaio_entry,
                s.entry_file_offset,
                s.entry_size,
                hex(&set.spec.a_source),
                s.entries_matching_a_source,
                hex(&set.spec.b_source),
                s.differing_source_indices,
                s.localized_entry_offsets
            ),
        );
    } else {
        p.step(
            "4. Source",
            false,
            "Not reached: the experiment stopped earlier.",
        );
    }
    // Step 5.
    if let Some(x) = replay {
        p.step(
            "5. Replay in memory and compare with B",
            x.matches_b,
            &format!(
                "{} substitution(s) on A; header CRC recomputed with rule {}: recorded in B 0x{:08x}, recomputed 0x{:08x} ({}); section checksums recomputed for types {:?}; replay SHA-256 {} {} B's {}.",
                x.substitutions.len(),
                x.crc_rule,
                x.recorded_crc32,
                x.recomputed_crc32,
                if x.recorded_crc32 == x.recomputed_crc32 {
                    "equal"
                } else {
                    "different"
                },
                x.section_checksums_recomputed,
                x.sha256,
                if x.matches_b { "equals" } else { "differs from" },
                x.b_sha256
            ),
        );
        let subs: Vec<Vec<String>> = x
            .substitutions
            .iter()
            .map(|s| {
                vec![
                    format!("0x{:x}", s.file_offset),
                    s.dynaio_entry.to_string(),
                    s.entry_offset.to_string(),
                    format!("0x{:02x}", s.from),
                    format!("0x{:02x}", s.to),
                ]
            })
            .collect();
        p.table(
            "Substitutions",
            "substitutions",
            &["file offset", "entry", "entry +", "from", "to"],
            &subs,
        );
    } else {
        p.step(
            "5. Replay",
            false,
            "Not reached: the experiment stopped earlier.",
        );
    }
    let _ = writeln!(
        p.body,
        "<details><summary>Evidence: the differential report (canonical JSON, as <code>nbg differential --json</code>)</summary><pre id=\"evidence\">{}</pre></details>",
        esc(&crate::canonical::canonical(&value))
    );
    p.data(&json!({ "kind": "capture", "a_size": size, "heat_a": heat }));
    Ok(p.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_keeps_every_changed_byte_and_stays_in_range() {
        for (size, s, e, n) in [(1000, 0, 1000, 1000), (10, 3, 4, 1), (5000, 4000, 4999, 7)] {
            let mut bins = vec![0u64; HEAT_BINS];
            spread(&mut bins, size, s, e, n);
            assert_eq!(bins.iter().sum::<u64>(), n);
            let first = bins.iter().position(|&b| b > 0).unwrap() as u64;
            assert_eq!(first, s * HEAT_BINS as u64 / size);
        }
    }

    #[test]
    fn field_values_read_as_the_field_map_stores_them() {
        assert_eq!(decode_value("x.magic", b"VPMN"), "\"VPMN\"");
        assert_eq!(decode_value("r[0].name", b"in\0\0"), "\"in\"");
        assert_eq!(
            decode_value("h.version", &[0, 0, 2, 0]),
            "131072 = 0x20000 (u32)"
        );
        assert_eq!(
            decode_value("d[0].offset", &852u64.to_le_bytes()),
            "852 = 0x354 (u64)"
        );
        assert_eq!(
            decode_value("q.raw_words", &[1, 0, 0, 0, 2, 0, 0, 0]),
            "[1, 2] (u32 words)"
        );
        assert_eq!(decode_value("x", &[0xab; 3]), "ababab");
    }
}
