//! The report of one graph: summary, byte map, owners, views, structure, I/O, checks and the
//! sweep layers.

use super::*;
use crate::nbg::fieldmap::Type;

/// Largest `--vendor-sweep` document read.
pub const MAX_VENDOR_SWEEP: u64 = 64 << 20;

use crate::lab::sweep::VENDOR_CELLS;

/// Read a `nbg sweep --vendor --json` document and check it is of `bytes`.
pub(super) fn read_vendor_sweep(path: &Path, bytes: &[u8]) -> Result<Value, ReportError> {
    let bad = |why: String| ReportError::VendorSweep(path.display().to_string(), why);
    let mut text = Vec::new();
    crate::files::read_regular_limited(path, &mut text, MAX_VENDOR_SWEEP + 1)?;
    if text.len() as u64 > MAX_VENDOR_SWEEP {
        return Err(bad(format!("larger than {MAX_VENDOR_SWEEP} bytes")));
    }
    let v: Value = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
    if v["schema"] != "nbg-vendor-sweep/1" {
        return Err(bad("not an nbg-vendor-sweep/1 document".into()));
    }
    let sha = crate::digest::Hash256::of(bytes).hex();
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
pub(super) fn view_kind(class: ViewClass) -> &'static str {
    match class {
        ViewClass::SectionCoveredView => "connection",
        ViewClass::NestedReference => "nested",
    }
}

pub(super) fn embedded_bytes(samples: &Value) -> u64 {
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
pub(super) fn samples(graph: &Graph<'_>, image: &NbgImage<'_>, bytes: &[u8]) -> Value {
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
            .map(|&c| {
                if (0x20..0x7f).contains(&c) {
                    c as char
                } else {
                    '.'
                }
            })
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

pub(super) fn summary_card(p: &mut Page, name: &str, doc: &Value) {
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

pub(super) fn str_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

pub(super) fn hex32(v: &Value) -> String {
    v.as_u64()
        .map_or_else(|| "-".into(), |n| format!("0x{n:08x}"))
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

/// Sections (v2) or tables (v1) from the parse document.
pub(super) fn structure_tables(p: &mut Page, doc: &Value) {
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

pub(super) fn hex_num(v: &Value) -> String {
    v.as_u64()
        .map_or_else(|| "-".into(), |n| format!("0x{n:x}"))
}

pub(super) fn io_tables(p: &mut Page, doc: &Value) {
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

pub(super) fn checks(p: &mut Page, doc: &Value) {
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
pub(super) fn vendor_section(p: &mut Page, v: &Value) {
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
