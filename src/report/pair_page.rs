//! The report of the diff of two graphs.

use super::*;

/// The owner-attributed diff of two graphs of one family. `which(0|1)` names A or B in errors.
pub fn pair_page(
    name_a: &str,
    a: &[u8],
    name_b: &str,
    b: &[u8],
    which: impl Fn(usize) -> String,
) -> Result<String, ReportError> {
    let ga = parse(a).map_err(|f| ReportError::Invalid(which(0), f))?;
    let ia = NbgImage::new(&ga).map_err(|f| ReportError::Invalid(which(0), f))?;
    // A B that does not parse is what the reverse engineer broke: its bytes are attributed
    // through A's ledger, as `nbg diff` does.
    let gb = match parse(b) {
        Ok(g) => g,
        Err(f) => {
            let d = crate::lab::diff::damaged(&ga, &ia, b, &f);
            return Ok(render_damaged(name_a, name_b, &d));
        }
    };
    let ib = NbgImage::new(&gb).map_err(|f| ReportError::Invalid(which(1), f))?;
    let report = crate::lab::diff::diff(&ga, &ia, &gb, &ib)?;
    Ok(render_pair(name_a, a, &ga, &ia, name_b, b, &report))
}

/// The page of a pair whose B does not parse: why, and B's changed bytes by A's owners and
/// fields with both sides' bytes.
fn render_damaged(name_a: &str, name_b: &str, d: &crate::lab::diff::DamagedDiff) -> String {
    let f = &d.b_failure;
    let mut p = Page::new(
        &format!("nbg diff report: {name_a} vs {name_b} (B does not parse)"),
        "damaged",
    );
    p.summary(&[
        ("a", name_a.to_string()),
        ("a-size", d.a.size.to_string()),
        ("a-sha256", d.a.sha256.to_string()),
        ("b", name_b.to_string()),
        ("b-size", d.b_size.to_string()),
        (
            "b-failure",
            format!("{} at 0x{:x}: {}", f.code, f.offset, f.message),
        ),
        ("changed-bytes", d.changed_bytes.to_string()),
        ("owners-changed", d.owners.len().to_string()),
    ]);
    let owners: Vec<Vec<String>> = d
        .owners
        .iter()
        .map(|o| {
            vec![
                o.owner.clone(),
                o.class.as_str().to_string(),
                format!("[0x{:x}, 0x{:x})", o.range[0], o.range[1]),
                o.changed_bytes.to_string(),
                format!("{} ({} listed)", o.ranges_total, o.ranges.len()),
            ]
        })
        .collect();
    p.table(
        &format!("A's owners holding a changed byte ({})", d.owners.len()),
        "damaged-owners",
        &["owner", "class", "range in A", "changed bytes", "ranges"],
        &owners,
    );
    let ranges: Vec<Vec<String>> = d
        .owners
        .iter()
        .flat_map(|o| {
            o.ranges.iter().map(move |c| {
                vec![
                    o.owner.clone(),
                    c.field.clone(),
                    format!("[0x{:x}, 0x{:x})", c.start, c.end),
                    c.a.clone(),
                    c.b.clone(),
                ]
            })
        })
        .collect();
    p.table(
        "Changed bytes, by A's fields",
        "damaged-fields",
        &["owner", "field", "range", "A", "B"],
        &ranges,
    );
    p.data(&serde_json::json!({ "kind": "damaged" }));
    p.finish()
}

pub(super) fn render_pair(
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
        ("a-bytes-differing", report.a_bytes_differing.to_string()),
        ("b-bytes-differing", report.b_bytes_differing.to_string()),
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
    // Coefficient elements, named by the decoded buffer that holds them.
    if !report.coefficients.is_empty() {
        let rows: Vec<Vec<String>> = report
            .coefficients
            .iter()
            .flat_map(|t| {
                t.first.iter().map(move |e| {
                    vec![
                        format!("{}[{}]", t.name(), e.index),
                        e.a.to_string(),
                        e.b.to_string(),
                        format!("{} of {}", t.changed, t.elements),
                    ]
                })
            })
            .collect();
        p.table(
            "Changed coefficient elements (decoded, as stored)",
            "diff-coefficients",
            &["element", "A", "B", "tensor elements changed"],
            &rows,
        );
    }
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
            let ty = crate::lab::diff::unit_type(ga, owner, c.a_start);
            let change = describe_change(&unit_name, ty, unit, unit_end, c, a, b);
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

pub(super) fn status_str(s: &crate::lab::diff::Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

pub(super) fn range_str(r: Option<[u64; 2]>) -> String {
    r.map_or("-".into(), |[s, e]| format!("[0x{s:x}, 0x{e:x})"))
}

/// Add `n` changed bytes spread evenly over `[s, e)` to the bins of a file of `size` bytes.
pub(super) fn spread(bins: &mut [u64], size: u64, s: u64, e: u64, n: u64) {
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
pub(super) fn describe_change(
    unit_name: &str,
    ty: Option<crate::nbg::fieldmap::Type>,
    unit: u64,
    unit_end: u64,
    c: &crate::lab::diff::Change,
    a: &[u8],
    b: &[u8],
) -> String {
    let name = field_name(unit_name);
    let width = unit_end - unit;
    let opaque = unit_name.contains("+0x");
    let word_array = ty == Some(crate::nbg::fieldmap::Type::U32s) || (ty.is_none() && width != 8);
    if !opaque && word_array && width % 4 == 0 && width > 4 && width <= 32 {
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
                decode_value(ty, &a[unit as usize..unit_end as usize]),
                decode_value(ty, &b[b_unit..b_end])
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
pub(super) fn hex_window(bytes: &[u8], start: u64, end: u64) -> Value {
    let end = end.min(start + HEX_CHANGED_MAX);
    let from = start.saturating_sub(HEX_CONTEXT) & !15;
    let to = (end + HEX_CONTEXT).min(bytes.len() as u64);
    json!([from, hex(&bytes[from as usize..to as usize]), start, end])
}
