//! The report of one graph: summary, byte map, owners, views, structure, I/O, checks and the
//! sweep layers.

use super::*;
use crate::nbg::fieldmap::Type;

/// Largest `--vendor-sweep` document read.
pub const MAX_VENDOR_SWEEP: u64 = 64 << 20;

use crate::lab::sweep::VENDOR_CELLS;
use crate::lab::sweep::{VENDOR_SCHEMA, VendorCells};
use crate::nbg::family::{Integrity, Layout};
use serde::{Deserialize, Serialize};

/// What a page reads of a saved `nbg sweep --vendor --json` document
/// (`simulator::sweep::Report` and its schema).
#[derive(Debug, Deserialize)]
pub struct SavedVendorSweep {
    schema: String,
    sha256: String,
    mutations: u64,
    stride: u64,
    patterns: Vec<u8>,
    config: SavedConfig,
    baseline: SavedVerdict,
    by_class: std::collections::BTreeMap<String, VendorCells>,
    total: VendorCells,
    findings: Vec<SavedFinding>,
    runs: Vec<(u64, u64, String)>,
}

/// The simulated configuration of a saved sweep.
#[derive(Debug, Deserialize)]
struct SavedConfig {
    name: String,
}

/// A verdict of a saved sweep, by its name.
#[derive(Debug, Deserialize)]
struct SavedVerdict {
    verdict: String,
}

/// nbg's side of a saved finding: the failure code where nbg refused.
#[derive(Debug, Deserialize)]
struct SavedNbg {
    code: Option<String>,
}

/// A saved finding: a crash, hang or refusal only the loader makes.
#[derive(Debug, Deserialize)]
struct SavedFinding {
    offset: u64,
    pattern: u8,
    field: String,
    nbg: SavedNbg,
    loader: SavedVerdict,
}

/// Read a `nbg sweep --vendor --json` document and check it is of `bytes`.
pub(super) fn read_vendor_sweep(
    path: &Path,
    bytes: &[u8],
) -> Result<SavedVendorSweep, ReportError> {
    let bad = |why: String| ReportError::VendorSweep(path.display().to_string(), why);
    let mut text = Vec::new();
    crate::files::read_regular_limited(path, &mut text, MAX_VENDOR_SWEEP + 1)?;
    if text.len() as u64 > MAX_VENDOR_SWEEP {
        return Err(bad(format!("larger than {MAX_VENDOR_SWEEP} bytes")));
    }
    let v: SavedVendorSweep = serde_json::from_slice(&text)
        .map_err(|e| bad(format!("not an {VENDOR_SCHEMA} document: {e}")))?;
    if v.schema != VENDOR_SCHEMA {
        return Err(bad(format!("not an {VENDOR_SCHEMA} document")));
    }
    let sha = crate::digest::Hash256::of(bytes).hex();
    if v.sha256 != sha {
        return Err(bad(format!(
            "a sweep of {}, not of this file ({sha})",
            v.sha256
        )));
    }
    let runs_ok = v
        .runs
        .iter()
        .all(|(s, e, c)| s < e && *e <= bytes.len() as u64 && VENDOR_CELLS.contains(&c.as_str()));
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
    vendor: Option<&SavedVendorSweep>,
) -> Result<String, Failure> {
    let graph = parse(bytes)?;
    let image = NbgImage::new(&graph)?;
    let sweep = if sweep {
        Some(crate::lab::sweep::sweep(
            bytes,
            crate::lab::sweep::EXHAUSTIVE_LIMIT,
        )?)
    } else {
        None
    };
    let mut p = Page::new(&format!("nbg report: {name}"), "graph");

    summary_card(&mut p, name, &graph);
    let samples = samples(&graph, &image, bytes);
    let embedded: u64 = samples
        .iter()
        .flat_map(|s| &s.segs)
        .map(|(_, h)| h.len() as u64 / 2)
        .sum();
    let mut data = json!({
        "kind": "graph",
        "size": image.len(),
        "classes": OwnerClass::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "owners": image.owners().iter().map(|o| json!([o.start, o.end, o.class.as_str(), o.label])).collect::<Vec<_>>(),
        "views": image.views().iter().map(|v| json!([v.start, v.end, view_kind(v.class), v.label])).collect::<Vec<_>>(),
        "samples": samples,
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
        embedded,
        image.len()
    );

    owner_table(&mut p, &image);
    views_table(&mut p, &image);
    structure_tables(&mut p, &graph);
    io_tables(&mut p, &graph);
    checks(&mut p, &graph);

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
        data["sweep"] = json!({ "runs": v.runs, "classes": VENDOR_CELLS });
        vendor_section(&mut p, v);
    }
    p.data(&data);
    Ok(p.finish())
}

/// The map's toggle a view belongs to.
pub(super) fn view_kind(class: ViewClass) -> &'static str {
    match class {
        ViewClass::SectionCoveredView => "connection",
        ViewClass::NestedReference => "nested",
    }
}

/// One owner's embedded bytes, as the page's script reads them.
#[derive(Serialize)]
pub(super) struct Sample {
    /// Byte segments `[start, hex]`.
    segs: Vec<(u64, String)>,
    /// For decoded records, the field units `[start, end, field, value]` that cover them.
    fields: Vec<(u64, u64, String, String)>,
}

/// Per owner: the embedded byte segments and, for decoded records, their field units.
pub(super) fn samples(graph: &Graph<'_>, image: &NbgImage<'_>, bytes: &[u8]) -> Vec<Sample> {
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
                let ty = crate::lab::diff::unit_type(graph, o, at);
                let value = decode_value(ty, &bytes[at as usize..end as usize]);
                fields.push((at, end, name, value));
                at = end;
            }
        }
        out.push(Sample {
            segs: segs
                .iter()
                .map(|&(s, e)| (s, hex(&bytes[s as usize..e as usize])))
                .collect(),
            fields,
        });
    }
    out
}

/// A field name without a byte offset inside an undecoded record (`t[3]+0x1c` -> `t[3]`).
pub(super) fn field_name(name: &str) -> String {
    name.split("+0x").next().unwrap_or(name).to_string()
}

/// A field's bytes read as the field map types it (`diff::unit_type`): text for names and
/// magics, integers, word lists; bytes the map does not lay out are read by their width.
pub fn decode_value(ty: Option<Type>, b: &[u8]) -> String {
    // Invariant: every `word(i)` below is called on a field of at least `i + 4` bytes.
    let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let text = || {
        let t: String = b
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| super::printable(c))
            .collect();
        format!("{t:?}")
    };
    let words = |n: usize| {
        let w: Vec<String> = (0..n / 4).map(|i| word(4 * i).to_string()).collect();
        format!("[{}] (u32 words)", w.join(", "))
    };
    let u64_of = || {
        // Invariant: called on 8-byte fields only.
        let v = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        format!("{v} = 0x{v:x} (u64)")
    };
    match (ty, b.len()) {
        (Some(Type::Str | Type::Magic), _) => text(),
        (Some(Type::U32s), n) if n % 4 == 0 && n <= 32 => words(n),
        (Some(Type::I32), 4) => format!("{} (i32)", word(0) as i32),
        (_, 1) => format!("{} (u8)", b[0]),
        (_, 2) => format!("{} (u16)", u16::from_le_bytes([b[0], b[1]])),
        (_, 4) => format!("{} = 0x{:x} (u32)", word(0), word(0)),
        (Some(Type::U64) | None, 8) => u64_of(),
        (_, n) if n % 4 == 0 && n <= 32 && ty != Some(Type::Bytes) => words(n),
        (_, n) if n <= 32 => hex(b),
        _ => format!("{}… ({} bytes)", hex(&b[..32]), b.len()),
    }
}

/// `matches` or `mismatch`.
fn verdict(matches: bool) -> &'static str {
    if matches { "matches" } else { "mismatch" }
}

pub(super) fn summary_card(p: &mut Page, name: &str, graph: &Graph<'_>) {
    let (crc_status, crc_rule) = match graph.integrity() {
        Integrity::Directory { file: c, .. } => (
            verdict(c.matches).to_string(),
            format!(
                "{} {} from {}, {} section bytes, {} gap bytes excluded",
                c.algorithm,
                c.scope,
                c.initial_value,
                c.covered_section_bytes,
                c.excluded_alignment_gap_bytes
            ),
        ),
        Integrity::CrcField { crc, .. } => (
            crc.classification.to_string(),
            crc.rule.clone().unwrap_or_else(|| "none".into()),
        ),
    };
    let rows = [
        ("file", name.to_string()),
        ("family", graph.format().to_string()),
        ("version", format!("0x{:08x}", graph.version())),
        ("target", crate::nbg::format::target_hex(graph.target())),
        ("network", graph.network_name()),
        ("size", graph.file().size.to_string()),
        ("sha256", graph.file().sha256.hex()),
        ("crc-status", crc_status),
        ("crc-rule", crc_rule),
        ("structural-signature", graph.structural_signature().hex()),
    ];
    p.summary(&rows);
}

pub(super) fn owner_table(p: &mut Page, image: &NbgImage<'_>) {
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

pub(super) fn views_table(p: &mut Page, image: &NbgImage<'_>) {
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

/// `-` for what the file does not say.
fn or_dash(v: Option<impl std::fmt::Display>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// Sections (v2) or tables (v1), each with its family's columns.
pub(super) fn structure_tables(p: &mut Page, graph: &Graph<'_>) {
    let crc = |f: Option<&crate::nbg::fingerprint::Fingerprint>| {
        or_dash(f.map(|f| format!("{:08x}", f.crc32)))
    };
    match graph.layout() {
        Layout::Sections(sections) => {
            let body: Vec<Vec<String>> = sections
                .iter()
                .map(|s| {
                    vec![
                        s.index.to_string(),
                        s.kind.to_string(),
                        s.type_name.to_string(),
                        format!("0x{:x}", s.offset),
                        s.size.to_string(),
                        s.alignment.to_string(),
                        s.entry_size.to_string(),
                        s.decoded.to_string(),
                        crc(Some(&s.fingerprint)),
                    ]
                })
                .collect();
            p.table(
                &format!("Sections ({})", body.len()),
                "sections",
                &[
                    "#", "type", "name", "offset", "size", "align", "entry", "decoded", "crc32",
                ],
                &body,
            );
        }
        Layout::Tables { tables, .. } => {
            let body: Vec<Vec<String>> = tables
                .iter()
                .map(|t| {
                    vec![
                        t.index.to_string(),
                        t.name.to_string(),
                        t.evidence.to_string(),
                        format!("0x{:x}", t.offset),
                        t.size.to_string(),
                        or_dash(t.record_size),
                        or_dash(t.record_count),
                        t.decoded.to_string(),
                        crc(t.fingerprint.as_ref()),
                    ]
                })
                .collect();
            p.table(
                &format!("Tables ({})", body.len()),
                "tables",
                &[
                    "#", "name", "evidence", "offset", "size", "record", "records", "decoded",
                    "crc32",
                ],
                &body,
            );
        }
    }
}

pub(super) fn io_tables(p: &mut Page, graph: &Graph<'_>) {
    for (title, key, records) in [
        ("Inputs", "inputs", graph.inputs()),
        ("Outputs", "outputs", graph.outputs()),
    ] {
        let body: Vec<Vec<String>> = records
            .iter()
            .map(|r| {
                let q = &r.quantization;
                let dims: Vec<String> = r.dimensions.iter().map(u32::to_string).collect();
                vec![
                    r.index.to_string(),
                    or_dash(r.name.as_ref()),
                    or_dash(r.data_format_name),
                    format!("[{}]", dims.join(",")),
                    or_dash(r.storage_bytes),
                    or_dash(q.format_name),
                    // As the parse document writes an f32: widened to f64, shortest form.
                    or_dash(
                        q.scale
                            .and_then(|s| serde_json::Number::from_f64(f64::from(s))),
                    ),
                    or_dash(q.zero_point),
                ]
            })
            .collect();
        p.table(
            &format!("{title} ({})", records.len()),
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

pub(super) fn checks(p: &mut Page, graph: &Graph<'_>) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    match graph.integrity() {
        Integrity::Directory {
            file: c,
            sections,
            dynamic_io,
        } => {
            rows.push(vec![
                "file crc32 (header.crc_sum)".into(),
                format!(
                    "recorded 0x{:08x}, computed 0x{:08x}, {}",
                    c.recorded_crc32,
                    c.computed_crc32,
                    verdict(c.matches)
                ),
            ]);
            for s in sections {
                rows.push(vec![
                    format!("section checksum {}", s.section_type_name),
                    format!(
                        "stored 0x{:08x}, computed 0x{:08x}, {}",
                        s.stored,
                        s.computed,
                        verdict(s.matches)
                    ),
                ]);
            }
            rows.push(vec![
                "dynamic io".into(),
                dynamic_io.map_or_else(
                    || "absent".into(),
                    |d| {
                        format!(
                            "{} entries, {} region bytes, {} padding bytes",
                            d.entry_count, d.region_bytes, d.padding_bytes
                        )
                    },
                ),
            ]);
        }
        Integrity::CrcField { crc: c, nested } => {
            rows.push(vec![
                format!("crc field @0x{:x}", c.offset),
                format!(
                    "stored 0x{:08x}, whole-file-zeroed 0x{:08x}: {} ({})",
                    c.stored,
                    c.computed_whole_file_zeroed,
                    c.classification,
                    c.rule.as_deref().unwrap_or("no rule")
                ),
            ]);
            for n in nested {
                rows.push(vec![
                    format!("nested {} -> {}", n.table, n.target),
                    format!("{} entries in bounds", n.entry_count),
                ]);
            }
        }
    }
    let r = graph.connection_region();
    rows.push(vec![
        "connection region".into(),
        format!(
            "0x{:x}+{}, sha256 {}{}",
            r.offset,
            r.size,
            r.sha256.hex(),
            if r.covered_by_section {
                " (covered by sections)"
            } else {
                ""
            }
        ),
    ]);
    p.table("Checks", "checks", &["check", "result"], &rows);
}

/// The vendor sweep's tables: nbg's and the loader's verdicts per owner class, the findings.
pub(super) fn vendor_section(p: &mut Page, v: &SavedVendorSweep) {
    let patterns: Vec<String> = v.patterns.iter().map(u8::to_string).collect();
    let _ = write!(
        p.body,
        r#"<section><h2>Loader verdicts (vendor sweep)</h2>
<p class="note">{} mutations (every {} offset(s), patterns [{}]) handed from memory to the vendor's loader simulating {}; the unmutated file: {}. Tick "loader verdicts" above to colour the byte map by each offset's worst cell: the loader crashed or hung, only the loader refuses, only nbg refuses, both accept, both refuse.</p>
"#,
        v.mutations,
        v.stride,
        patterns.join(","),
        esc(&v.config.name),
        esc(&v.baseline.verdict)
    );
    let cells = |c: &VendorCells| {
        [
            c.both_refuse,
            c.only_nbg_refuses,
            c.only_loader_refuses,
            c.both_accept,
            c.loader_crashed,
            c.loader_hung,
        ]
        .map(|n| n.to_string())
    };
    let mut rows: Vec<Vec<String>> = v
        .by_class
        .iter()
        .map(|(class, c)| std::iter::once(class.clone()).chain(cells(c)).collect())
        .collect();
    rows.push(
        std::iter::once("all".to_string())
            .chain(cells(&v.total))
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
    let findings: Vec<Vec<String>> = v
        .findings
        .iter()
        .map(|f| {
            vec![
                format!("0x{:x}", f.offset),
                format!("0x{:02x}", f.pattern),
                f.field.clone(),
                f.nbg.code.clone().unwrap_or_else(|| "valid".into()),
                f.loader.verdict.clone(),
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

pub(super) fn sweep_section(p: &mut Page, r: &crate::lab::sweep::Report) {
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
