//! The text form of every command's result: what `nbg` prints on a terminal. Each function
//! returns the whole text, lines ending in `\n`; the CLI only writes it out.

use crate::lab;
use crate::lab::diff::DiffReport;
use crate::lab::differential;
use crate::lab::sweep;
use crate::nbg::crc_rules::Explanation;
use crate::nbg::family::ViewClass;
use crate::nbg::family::{Integrity, Layout, NbgFamily};
use crate::nbg::format::v1::LayoutEvidence;
use crate::nbg::image::{EmitError, NbgImage, Reconstruction};
use crate::nbg::parse::{Graph, IoRecord};
use std::fmt::Write;

/// Changed ranges `differential` lists before it summarises the rest.
const CHANGED_RANGES_SHOWN: usize = 64;

/// `nbg parse`: the summary of one graph, rendered from its family's typed views (layout,
/// integrity, network); with `all`, every layer and operation.
pub fn graph(g: &Graph<'_>, all: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "format     {} (version 0x{:08x})",
        g.format(),
        g.version()
    );
    if let Some(evidence) = g.layout_evidence() {
        let _ = writeln!(
            s,
            "layout     {}",
            match evidence {
                LayoutEvidence::Proved =>
                    "known (proved: public files of this version round-trip and nbinfo agrees)",
                LayoutEvidence::VendorReader =>
                    "known (vendor-reader: the gates of nbinfo's v1 reader; no public file of this version)",
                LayoutEvidence::BoundedUnknown =>
                    "bounded-unknown (newer than any version the vendor's reader knows: public entries read, the rest opaque)",
            }
        );
    }
    let _ = writeln!(
        s,
        "target     {}",
        crate::nbg::format::target_hex(g.target())
    );
    let _ = writeln!(
        s,
        "file       {} bytes, sha256 {}",
        g.file().size,
        g.file().sha256
    );
    if let Some(n) = g.network() {
        // The declared count, and the operation table's where the two differ (a network
        // info that counts operations the table does not list).
        let listed = g.records().operations.as_ref().map(Vec::len);
        let operations = match listed {
            Some(l) if l as u64 != u64::from(n.operations) => {
                format!(
                    "{} operations declared, {l} in the operation table",
                    n.operations
                )
            }
            _ => format!("{} operations", n.operations),
        };
        let _ = writeln!(
            s,
            "network    {:?}: {} layers, {operations}{}",
            n.name,
            n.layers,
            n.cores.map_or(String::new(), |c| format!(", {c} cores"))
        );
    }
    match g.layout() {
        Layout::Tables {
            fixed,
            extension,
            tables,
        } => {
            let _ = writeln!(
                s,
                "fixed part {} bytes, {} entries ({} public{}), opaque extension {} bytes",
                fixed.size,
                fixed.entry_count,
                fixed.public_entry_count,
                if fixed.extension_entries.is_empty() {
                    String::new()
                } else {
                    format!(", extension: {}", fixed.extension_entries.join(" "))
                },
                extension.size
            );
            let _ = writeln!(s, "\ntables ({}):", tables.len());
            let _ = writeln!(
                s,
                "  {:>3} {:<18} {:<9} {:>10} {:>10} {:>6} {:>7}",
                "#", "name", "evidence", "offset", "size", "record", "records"
            );
            for t in tables {
                let _ = writeln!(
                    s,
                    "  {:>3} {:<18} {:<9} {:>#10x} {:>10} {:>6} {:>7}",
                    t.index,
                    t.name,
                    t.evidence,
                    t.offset,
                    t.size,
                    t.record_size.map_or("-".into(), |r| r.to_string()),
                    t.record_count.map_or("-".into(), |r| r.to_string()),
                );
            }
        }
        Layout::Sections(sections) => {
            let _ = writeln!(s, "\nsections ({}):", sections.len());
            let _ = writeln!(
                s,
                "  {:>3} {:>4}  {:<34} {:>10} {:>10} {:>5} {:>5}  crc32",
                "#", "type", "name", "offset", "size", "align", "entry"
            );
            for x in sections {
                let _ = writeln!(
                    s,
                    "  {:>3} {:>4}  {:<34} {:>#10x} {:>10} {:>5} {:>5}  {:08x}",
                    x.index,
                    x.kind,
                    x.type_name,
                    x.offset,
                    x.size,
                    x.alignment,
                    x.entry_size,
                    x.fingerprint.crc32
                );
            }
        }
    }
    io_table(&mut s, "inputs", g.inputs());
    io_table(&mut s, "outputs", g.outputs());
    let rows = if all {
        usize::MAX
    } else {
        crate::nbg::parse::records::SUMMARY_ROWS
    };
    s.push_str(&g.records().summary(rows));
    let _ = writeln!(s, "\nchecks:");
    match g.integrity() {
        Integrity::Directory {
            file: c,
            sections,
            dynamic_io,
        } => {
            let _ = writeln!(
                s,
                "  file crc32        0x{:08x} matches ({} section bytes, {} gap bytes excluded)",
                c.computed_crc32, c.covered_section_bytes, c.excluded_alignment_gap_bytes
            );
            let _ = writeln!(s, "  section checksums {} match", sections.len());
            match dynamic_io {
                Some(d) => {
                    let _ = writeln!(
                        s,
                        "  dynamic io        {} entries, {} region bytes, {} padding (zero)",
                        d.entry_count, d.region_bytes, d.padding_bytes
                    );
                }
                None => {
                    let _ = writeln!(s, "  dynamic io        absent");
                }
            }
        }
        Integrity::CrcField { crc: c, nested } => {
            let _ = writeln!(
                s,
                "  crc field @0x{:x}  stored 0x{:08x}, whole-file-zeroed 0x{:08x}: {}{}",
                c.offset,
                c.stored,
                c.computed_whole_file_zeroed,
                c.classification,
                c.rule.as_ref().map_or(String::new(), |r| format!(" ({r})"))
            );
            for n in nested {
                let _ = writeln!(
                    s,
                    "  nested {} -> {}: {} entries in bounds",
                    n.table, n.target, n.entry_count
                );
            }
        }
    }
    let r = g.connection_region();
    let _ = writeln!(
        s,
        "  connection region 0x{:x}+{} sha256 {}{}",
        r.offset,
        r.size,
        r.sha256,
        if r.covered_by_section {
            " (covered by sections)"
        } else {
            ""
        }
    );
    let invariants = g.corpus_invariants();
    let off: Vec<_> = invariants.iter().filter(|i| !i.holds).collect();
    let _ = writeln!(
        s,
        "  corpus invariants {} of {} hold (reported, not enforced)",
        invariants.len() - off.len(),
        invariants.len()
    );
    for i in off {
        // Not a failure: what the spec's corpus always had, beside what this file has.
        let _ = writeln!(
            s,
            "    {}: the spec's corpus had {}; this file has {}",
            i.name, i.expected, i.observed
        );
    }
    let _ = writeln!(s, "  structural sig    {}", g.structural_signature());
    s
}

fn io_table(s: &mut String, title: &str, records: &[IoRecord]) {
    let _ = writeln!(s, "\n{title} ({}):", records.len());
    for r in records {
        let _ = writeln!(
            s,
            "  {:>3} {:<32} {:<8} {:?} (innermost first; NPZ {:?}) {} bytes, quant {}",
            r.index,
            r.name.as_deref().unwrap_or("(unnamed)"),
            r.data_format_name.unwrap_or("unknown"),
            r.dimensions,
            r.dimensions.iter().rev().collect::<Vec<_>>(),
            r.storage_bytes.map_or("unknown".into(), |b| b.to_string()),
            r.quantization.format_name.unwrap_or("unknown"),
        );
    }
}

/// `nbg crc-explain`: the field, the stored value and every hypothesis that reproduces it.
pub fn crc_explain(name: &str, e: &Explanation) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{name}: {} field @0x{:x} stored 0x{:08x}; {} of {} hypotheses reproduce it",
        e.format,
        e.field_offset,
        e.stored,
        e.matches.len(),
        e.hypotheses_evaluated
    );
    let show = |r: &[[u64; 2]]| {
        r.iter()
            .map(|x| format!("[0x{:x},0x{:x})", x[0], x[1]))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for h in &e.matches {
        let ranges = if h.ranges.len() > 6 {
            format!("{} ranges", h.ranges.len())
        } else {
            show(&h.ranges)
        };
        let zeroed = if h.zeroed.is_empty() {
            String::new()
        } else if h.zeroed.len() > 4 {
            format!(" zeroed {} words", h.zeroed.len())
        } else {
            format!(" zeroed {}", show(&h.zeroed))
        };
        let _ = writeln!(s, "  {} {ranges}{zeroed}", h.rule);
    }
    s
}

/// `nbg image --fields`: one line per decoded field, offset, size, name and value.
pub fn fields(fields: &[crate::lab::fields::FieldValue]) -> String {
    let mut s = format!("decoded fields ({})\n", fields.len());
    for f in fields {
        let _ = write!(s, "  0x{:08x} {:>6}  {}", f.offset, f.size, f.field);
        if let Some(v) = &f.value {
            let _ = write!(s, " = {v}");
        }
        for p in &f.parts {
            let _ = write!(s, " {}={}", p.part, p.value);
        }
        s.push('\n');
    }
    s
}

/// `nbg image --unknown`: the fields named unknown, by name, most bytes first.
pub fn unknown_fields(groups: &[(String, u64, u64)]) -> String {
    let total: u64 = groups.iter().map(|g| g.2).sum();
    let mut s = format!(
        "fields named unknown: {total} bytes in {} fields\n",
        groups.len()
    );
    for (field, count, bytes) in groups {
        let _ = writeln!(s, "  {bytes:>10} bytes {count:>6} x  {field}");
    }
    s
}

/// `nbg image`: the owner table, the views, the totals per class and the reconstruction.
pub fn image(
    name: &str,
    image: &NbgImage<'_>,
    recon: &Result<Reconstruction, EmitError>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{name} ({}, {} bytes)", image.format(), image.len());
    let _ = writeln!(
        s,
        "  {:>10} {:>10} {:>10}  {:<17} label",
        "start", "end", "bytes", "class"
    );
    for o in image.owners() {
        let zero = match o.all_zero {
            Some(true) => " (all zero)",
            Some(false) => " (nonzero)",
            None => "",
        };
        let why = o.undecoded.as_ref().map_or(String::new(), |u| {
            let code = u.code.as_ref().map_or(String::new(), |c| format!(" {c}"));
            let detail = u.detail.as_ref().map_or(String::new(), |d| format!(" {d}"));
            format!(" [{}{code}{detail}]", u.reason.as_str())
        });
        let _ = writeln!(
            s,
            "  {:>#10x} {:>#10x} {:>10}  {:<17} {}{zero}{why}",
            o.start,
            o.end,
            o.len(),
            o.class.as_str(),
            o.label
        );
    }
    let _ = writeln!(s, "  views: {}", image.views().len());
    for v in image
        .views()
        .iter()
        .filter(|v| v.class != ViewClass::NestedReference)
    {
        let _ = writeln!(s, "    {:>#10x} {:>#10x}  {}", v.start, v.end, v.label);
    }
    let _ = writeln!(s, "  totals:");
    for (class, bytes) in image.totals() {
        let _ = writeln!(s, "    {class:<17} {bytes}");
    }
    match recon {
        Ok(r) => {
            let _ = writeln!(
                s,
                "  reconstruction: identical, {} bytes, sha256 {}",
                r.bytes, r.sha256
            );
        }
        Err(e) => {
            let _ = writeln!(s, "  reconstruction: {e}");
        }
    }
    s
}

/// `nbg diff`: sizes, then identical or the changed owners.
pub fn diff(a_name: &str, b_name: &str, report: &DiffReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "A {a_name} ({} bytes)\nB {b_name} ({} bytes)",
        report.a.size, report.b.size
    );
    if report.identical {
        let _ = writeln!(s, "identical");
        return s;
    }
    let _ = writeln!(
        s,
        "{} bytes of A and {} of B differ (changed, or with no counterpart), in {} owners",
        report.a_bytes_differing, report.b_bytes_differing, report.owners_changed
    );
    let _ = writeln!(
        s,
        "  {:<40} {:<16} {:<9} {:>10} {:>7}",
        "owner", "class", "status", "bytes", "ranges"
    );
    for o in &report.owners {
        // The status's serde name, as in the JSON report.
        let status = serde_json::to_value(&o.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  {:<40} {:<16} {:<9} {:>10} {:>7}",
            o.owner,
            o.class.as_str(),
            status,
            o.changed_bytes,
            o.ranges_total
        );
    }
    // Bit-field words name the parts that changed, with both values.
    let parts: Vec<(&str, &crate::lab::diff::PartChange)> = report
        .owners
        .iter()
        .flat_map(|o| o.ranges.iter())
        .flat_map(|c| {
            let word = c
                .field
                .rsplit_once('.')
                .map_or(c.field.as_str(), |(w, _)| w);
            c.parts.iter().map(move |p| (word, p))
        })
        .collect();
    if !parts.is_empty() {
        let _ = writeln!(s, "changed bit fields");
        for (word, p) in parts {
            let _ = writeln!(s, "  {word}.{} {} -> {}", p.part, p.a, p.b);
        }
    }
    // Scalar fields (a bit-field word's parts are above), with both values.
    let values: Vec<(&str, &crate::lab::diff::Values)> = report
        .owners
        .iter()
        .flat_map(|o| o.ranges.iter())
        .filter(|c| c.parts.is_empty())
        .filter_map(|c| c.values.as_ref().map(|v| (c.field.as_str(), v)))
        .collect();
    if !values.is_empty() {
        let _ = writeln!(s, "changed fields");
        for (field, v) in values {
            let _ = writeln!(s, "  {field} {} -> {}", v.a, v.b);
        }
    }
    // Coefficient elements, by the NN command whose decoded buffer holds them.
    if !report.coefficients.is_empty() {
        let _ = writeln!(s, "changed coefficient elements (decoded, as stored)");
        for t in &report.coefficients {
            let _ = writeln!(s, "  {}: {} of {} changed", t.name(), t.changed, t.elements);
            for e in &t.first {
                let _ = writeln!(s, "    {}[{}] {} -> {}", t.name(), e.index, e.a, e.b);
            }
        }
    }
    s
}

/// `nbg diff --hexdump`: every changed range of both files with 16 bytes of context, read
/// through the images (only the bytes shown).
pub fn diff_hexdump(
    report: &DiffReport,
    a: &NbgImage<'_>,
    b: &NbgImage<'_>,
    colour: bool,
) -> String {
    let mut s = String::new();
    for o in &report.owners {
        for c in &o.ranges {
            let _ = writeln!(
                s,
                "\n{} {} A[0x{:x}..0x{:x}) B[0x{:x}..0x{:x})",
                o.owner, c.field, c.a_start, c.a_end, c.b_start, c.b_end
            );
            s.push_str(&hex_context("A", a, c.a_start, c.a_end, colour));
            s.push_str(&hex_context("B", b, c.b_start, c.b_end, colour));
        }
    }
    s
}

/// Up to 64 changed bytes with 16 bytes of context either side, changed bytes highlighted.
pub fn hex_context(side: &str, image: &NbgImage<'_>, start: u64, end: u64, colour: bool) -> String {
    let end = end.min(start + 64);
    let from = start.saturating_sub(16) & !15;
    let to = (end + 16).min(image.len());
    let window = image.range(from, to);
    let mut s = String::new();
    let mut row = from;
    while row < to {
        let _ = write!(s, "  {side} {row:08x}:");
        let shown = window.get((row - from) as usize..).unwrap_or_default();
        for (o, b) in (row..(row + 16).min(to)).zip(shown) {
            if (start..end).contains(&o) {
                if colour {
                    let _ = write!(s, " \x1b[1;31m{b:02x}\x1b[0m");
                } else {
                    let _ = write!(s, "[{b:02x}]");
                }
            } else {
                let _ = write!(s, " {b:02x}");
            }
        }
        s.push('\n');
        row += 16;
    }
    s
}

/// `nbg differential`: the capture's checks, changed ranges, source match and replay.
pub fn differential(dir: &str, report: &differential::Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "capture {dir}");
    let _ = writeln!(s, "  a1 = a2        {}", report.a1_equals_a2);
    if let Some(same) = report.same_layout {
        let _ = writeln!(s, "  same layout    {same}");
    }
    for d in &report.layout_differences {
        let _ = writeln!(s, "    {d}");
    }
    for r in report.changed_ranges.iter().take(CHANGED_RANGES_SHOWN) {
        let entry = match (r.dynaio_entry, r.entry_offset, r.section_offset) {
            (Some(e), Some(o), Some(so)) => format!(" entry {e} +{o} (region +{so})"),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "  changed [0x{:x}, 0x{:x}) {} {}{entry}",
            r.start, r.end, r.role, r.owner
        );
    }
    let more = report
        .changed_ranges
        .len()
        .saturating_sub(CHANGED_RANGES_SHOWN) as u64
        + report.changed_ranges_omitted;
    if more > 0 {
        let _ = writeln!(
            s,
            "  ... and {more} more changed ranges (--json lists the first {})",
            differential::MAX_CHANGED_RANGES
        );
    }
    if let Some(m) = &report.source {
        let _ = writeln!(
            s,
            "  source         entry {} at 0x{:x} ({} bytes); differing indices {:?}; consistent {}",
            m.dynaio_entry,
            m.entry_file_offset,
            m.entry_size,
            m.differing_source_indices,
            m.consistent
        );
    }
    if let Some(r) = &report.replay {
        let _ = writeln!(
            s,
            "  replay         {} substitutions; crc recorded 0x{:08x} recomputed 0x{:08x} ({})",
            r.substitutions.len(),
            r.recorded_crc32,
            r.recomputed_crc32,
            r.crc_rule
        );
        let _ = writeln!(s, "                 sha256 {} (B {})", r.sha256, r.b_sha256);
    }
    if let Some(m) = &report.mapping {
        let _ = writeln!(
            s,
            "  mapping        {}: {:?} ({:?}), {} unexplained of {} changed bytes",
            m.mapping, m.outcome, m.reason, m.unexplained_bytes, m.changed_bytes
        );
    }
    let _ = writeln!(s, "  result         {}", report.result);
    s
}

/// `nbg sweep`: the totals, per owner class, per catching code, and what went undetected.
pub fn sweep(name: &str, report: &sweep::Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{name} ({}, {} offsets x {} patterns): {} detected, {} tolerated, {} undetected",
        report.format,
        report.offsets,
        report.patterns.len(),
        report.detected,
        report.tolerated,
        report.undetected
    );
    let _ = writeln!(
        s,
        "  {:<18} {:>10} {:>10} {:>10}",
        "owner class", "detected", "tolerated", "undetected"
    );
    for (class, c) in &report.by_owner {
        let _ = writeln!(
            s,
            "  {class:<18} {:>10} {:>10} {:>10}",
            c.detected, c.tolerated, c.undetected
        );
    }
    let _ = writeln!(s, "  caught by:");
    for (code, n) in &report.by_code {
        let _ = writeln!(s, "    {code:<32} {n}");
    }
    if !report.tolerated_reasons.is_empty() {
        let _ = writeln!(s, "  tolerated because:");
        for (reason, n) in &report.tolerated_reasons {
            let _ = writeln!(s, "    {n:>8}  {reason}");
        }
    }
    for (start, end, label) in &report.undetected_ranges {
        let _ = writeln!(s, "  undetected [0x{start:x}, 0x{end:x}) {label}");
    }
    if report.derived_offsets > 0 {
        let _ = writeln!(
            s,
            "  {} offsets flipped and parsed; {} payload/gap offsets classified from checksum coverage (--exhaustive to flip them too)",
            report.exhaustive_offsets, report.derived_offsets
        );
    }
    let _ = writeln!(
        s,
        "  work: {} reparses reading {} bytes",
        report.work.reparses, report.work.bytes_read
    );
    s
}

/// `nbg lab`: one line per step, and its rows where they are few or failed.
pub fn lab_steps(report: &lab::Report) -> String {
    let mut s = String::new();
    for step in &report.steps {
        let _ = writeln!(
            s,
            "{:<28} {:<4} {:>4} items {:>8.2}s  {}",
            step.name,
            if step.passed { "pass" } else { "FAIL" },
            step.items,
            step.seconds,
            step.note
        );
        for row in step
            .rows
            .iter()
            .filter(|r| !r.passed || report.steps.len() < 2 || step.rows.len() <= 8)
        {
            let _ = writeln!(
                s,
                "    {:<4} {:<52} {}",
                if row.passed { "ok" } else { "FAIL" },
                row.item,
                row.detail
            );
        }
    }
    s
}

/// `nbg lab`'s last line: steps passed and failed.
pub fn lab_total(report: &lab::Report) -> String {
    let failed = report.steps.iter().filter(|s| !s.passed).count();
    format!(
        "lab: {} steps, {} passed, {} failed\n",
        report.steps.len(),
        report.steps.len() - failed,
        failed
    )
}

/// `nbg sweep --vendor`: the 2x2 table of nbg's and the loader's verdicts, per owner class,
/// then the findings.
#[cfg(feature = "onnx")]
pub fn vendor_sweep(name: &str, r: &crate::simulator::sweep::Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{name}: {} mutations ({} bytes, every {} offset{}, patterns {:?}) under {} (0x{:08x}); unmutated: {:?}; {} loader children, {:.0} s",
        r.mutations,
        r.bytes,
        r.stride,
        if r.stride == 1 { "" } else { "s: sampled" },
        r.patterns,
        r.config.name,
        r.config.pid,
        r.baseline,
        r.children,
        r.seconds
    );
    let row = |s: &mut String, label: &str, c: &crate::lab::sweep::VendorCells| {
        let _ = writeln!(
            s,
            "  {label:<22} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            c.both_refuse,
            c.only_nbg_refuses,
            c.only_loader_refuses,
            c.both_accept,
            c.loader_crashed,
            c.loader_hung
        );
    };
    let _ = writeln!(
        s,
        "  {:<22} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "owner class", "both-ref", "only-nbg", "only-ldr", "both-acc", "crashed", "hung"
    );
    for (class, c) in &r.by_class {
        row(&mut s, class, c);
    }
    row(&mut s, "all", &r.total);
    if !r.findings.is_empty() {
        let _ = writeln!(s, "  findings (first {}):", r.findings.len());
        for f in &r.findings {
            let _ = writeln!(
                s,
                "    0x{:x} ^0x{:02x} {} ({}): nbg {:?}, loader {:?}",
                f.offset, f.pattern, f.field, f.class, f.nbg, f.loader
            );
        }
    }
    s
}

/// `nbg check`: a file that parses.
pub fn parses(name: &str, crc_unexplained: bool) -> String {
    let crc = if crc_unexplained {
        " (crc unexplained)"
    } else {
        ""
    };
    format!("{name}: ok{crc}\n")
}

/// A file's failure in a list of files: `FILE: CODE at 0xOFFSET`.
pub fn failed(name: &str, f: &crate::nbg::failure::Failure) -> String {
    if f.code == crate::nbg::failure::Code::Unreadable {
        // Nothing was read: the reason, not an offset.
        let why = f
            .message
            .strip_prefix(&format!("{name}: "))
            .unwrap_or(&f.message);
        return format!("{name}: unreadable: {why}\n");
    }
    format!("{name}: {} at 0x{:x}\n", f.code, f.offset)
}

/// `nbg roundtrip`: the ledger's emission (`exact` or why not), then the re-encoding, each
/// line naming the file.
pub fn roundtrip(
    name: &str,
    emitted: Result<(), &EmitError>,
    r: &crate::nbg::reencode::Reencoding,
) -> String {
    let ledger = match emitted {
        Ok(()) => "exact".to_string(),
        Err(e) => e.to_string(),
    };
    format!(
        "{name}: {ledger}\n{name}: {}\n",
        reencoding(r).replace('\n', &format!("\n{name}: "))
    )
}

/// `nbg verify-generated`: every evidence file identical (and, when checked, the files the
/// vendor's driver compiles), or each that differs: its path and its diff (`None`: not
/// committed).
pub fn verified(n: usize, mismatches: &[(&str, Option<&str>)], compiled_ok: bool) -> String {
    let mut s = String::new();
    if mismatches.is_empty() {
        let _ = writeln!(
            s,
            "{n} evidence files rebuilt; all identical{}",
            if compiled_ok {
                ""
            } else {
                "; the vendor-compiled files differ"
            }
        );
        return s;
    }
    for (path, diff) in mismatches {
        match diff {
            None => {
                let _ = writeln!(s, "{path}: missing (not committed)");
            }
            Some(d) => {
                let _ = write!(s, "{path}: differs\n{d}");
            }
        }
    }
    let _ = writeln!(s, "{} of {n} evidence files differ", mismatches.len());
    s
}

/// The re-encoding lines `nbg roundtrip` prints for a file.
pub fn reencoding(r: &crate::nbg::reencode::Reencoding) -> String {
    let mut s = format!(
        "records: {} re-encoded exactly (of {} decoded-record owners)",
        r.records_reencoded, r.records_total
    );
    if let Some(m) = &r.first_mismatch {
        s.push_str(&format!(
            "\nfirst field that does not round-trip: {} at 0x{:x} ({}; {} owner(s) differ)",
            m.field, m.offset, m.owner, r.mismatches
        ));
    }
    for label in &r.not_reencodable {
        s.push_str(&format!("\nnot re-encodable yet: {label}"));
    }
    s
}

/// `nbg patches`: how many patches name their field and source, per field, and the first that
/// do not with the reason.
pub fn patches(name: &str, t: Option<&crate::nbg::parse::patch_targets::PatchTargets>) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let Some(t) = t else {
        let _ = writeln!(s, "{name}: no decoded patch table");
        return s;
    };
    let _ = writeln!(
        s,
        "{name}: {} patches, {} resolved to a named field and source, {} unused (all-zero, no owner), {} unresolved",
        t.patches,
        t.resolved,
        t.unused,
        t.patches - t.resolved - t.unused
    );
    for (field, n) in &t.by_field {
        let _ = writeln!(s, "  {n:>6}  {field}");
    }
    for u in &t.unresolved {
        let why = |r: &Result<String, &str>| match r {
            Ok(v) => v.clone(),
            Err(e) => format!("? ({e})"),
        };
        let _ = writeln!(
            s,
            "  unresolved patch[{}] {} {}: field {}, source {}",
            u.patch,
            u.owner.as_deref().unwrap_or("(no owner)"),
            u.kind,
            why(&u.field),
            why(&u.source)
        );
    }
    s
}

/// `nbg coefficients`: per coefficient buffer its command, header, streams and biases.
pub fn coefficients(name: &str, c: &crate::nbg::coefficients::Coefficients) -> String {
    use crate::nbg::coefficients::tables::Contents;
    use std::fmt::Write;
    let (buffers, refused) = (&c.buffers, &c.refused);
    let mut s = String::new();
    let streams: usize = buffers.iter().map(|b| b.streams.len()).sum();
    let _ = writeln!(
        s,
        "{name}: {} coefficient buffers cut ({streams} streams), {} zero-run buffers, {} tables, {} shader images, {} TP buffers, {} refused; streams decoded: {} of {streams}; kernels put together: {} of {}",
        buffers.len(),
        c.zero_run.len(),
        c.tables.len(),
        c.images.len(),
        c.tp.len(),
        refused.len(),
        buffers
            .iter()
            .flat_map(|b| &b.streams)
            .filter(|st| st.decoded.is_some())
            .count(),
        buffers.iter().filter(|b| b.weights.is_some()).count(),
        buffers.len()
    );
    for b in buffers {
        let h = &b.header;
        let cmd = b.command.map_or("no NN command".to_string(), |c| {
            format!(
                "NN[{}] kernel {}x{}x{}, {} channels, {} per core",
                c.index,
                c.kernel[0],
                c.kernel[1],
                c.kernel[2],
                c.output_channels,
                c.kernels_per_core
            )
        });
        let _ = writeln!(
            s,
            "  entry {} @0x{:x} {} B: {cmd}; header v{} bit16 {} fp16 {} precode {} run-length {} symbols {:?} avg_bias {}{}",
            b.entry,
            b.offset,
            b.size,
            h.version,
            u8::from(h.bit16),
            u8::from(h.fp16),
            u8::from(h.precode),
            h.run_length_size,
            h.symbol_bits,
            h.avg_bias,
            if b.header_reencoded {
                ""
            } else {
                " (header does not re-encode)"
            }
        );
        let bits: Vec<String> = b.streams.iter().map(|st| st.bits.to_string()).collect();
        let dirty = b.streams.iter().filter(|st| !st.padding_zero).count();
        let _ = writeln!(
            s,
            "    {} streams, bits [{}], non-zero padding in {dirty}",
            b.streams.len(),
            bits.join(", ")
        );
        match &b.biases {
            Some(x) => {
                let _ = writeln!(
                    s,
                    "    {} biases of {} bytes @0x{:x}, then {} B{}",
                    x.values.len(),
                    x.width,
                    x.offset,
                    x.tail_bytes,
                    if x.tail_zero { " of zero" } else { " not zero" }
                );
            }
            None => {
                let _ = writeln!(s, "    biases not located");
            }
        }
        if let Some(l) = &b.lookup {
            let _ = writeln!(
                s,
                "    then a lookup table of {} 32-bit words @0x{:x}",
                l.words.len(),
                l.offset
            );
        }
        for st in &b.streams {
            if let Some(e) = &st.not_decoded {
                let _ = writeln!(
                    s,
                    "    stream {} @0x{:x} not decoded: {} at bit {}: {}",
                    st.core,
                    st.offset,
                    e.code.as_str(),
                    e.bit,
                    e.message
                );
            }
        }
        let decoded: Vec<_> = b.streams.iter().filter_map(|st| st.decoded).collect();
        if !decoded.is_empty() {
            let _ = writeln!(
                s,
                "    decoded {} of {} streams: {} codes, {} elements, {} runs, {} raw escapes; re-encoded {}",
                decoded.len(),
                b.streams.len(),
                decoded.iter().map(|d| d.codes).sum::<u64>(),
                decoded.iter().map(|d| d.elements).sum::<u64>(),
                decoded.iter().map(|d| d.runs).sum::<u64>(),
                decoded.iter().map(|d| d.raw_escapes).sum::<u64>(),
                decoded.iter().filter(|d| d.reencoded).count()
            );
        }
        match (&b.weights, &b.weights_error) {
            (Some(w), _) => {
                let _ = writeln!(
                    s,
                    "    weights {:?} {:?}{} zero point {}, block padding {}, sha256 {}",
                    w.dtype,
                    w.shape,
                    if w.layout.depthwise {
                        " depthwise,"
                    } else {
                        ""
                    },
                    w.zero_point,
                    if w.padding_zero { "zero" } else { "not zero" },
                    w.sha256
                );
            }
            (None, Some(e)) => {
                let _ = writeln!(
                    s,
                    "    weights not put together: stream {}: {} at bit {}: {}",
                    e.core,
                    e.error.code.as_str(),
                    e.error.bit,
                    e.error.message
                );
            }
            (None, None) => {}
        }
    }
    for t in &c.tables {
        let what = match &t.contents {
            Contents::PostMultipliers {
                values,
                tail_bytes,
                tail_zero,
            } => format!(
                "post-multipliers of {} channels (positive, negative float32), then {tail_bytes} B{}",
                values.len(),
                if *tail_zero { " of zero" } else { " not zero" }
            ),
            Contents::Lookup { words, tail_bytes } => {
                format!(
                    "lookup table of {} 32-bit words, then {tail_bytes} B",
                    words.len()
                )
            }
        };
        let _ = writeln!(
            s,
            "  entry {} @0x{:x} {} B: NN[{}]{}: {what}",
            t.entry,
            t.offset,
            t.size,
            t.command.index,
            t.operation
                .as_ref()
                .map_or(String::new(), |o| format!(" {} {}", o.kind, o.layer_name))
        );
    }
    for i in &c.images {
        let readers: Vec<String> = i
            .readers
            .iter()
            .map(|r| match &r.operation {
                Some(o) => format!("op{} {} {} u{}", o.index, o.kind, o.layer_name, r.uniform),
                None => format!("u{}", r.uniform),
            })
            .collect();
        let _ = writeln!(
            s,
            "  entry {} @0x{:x} {} B: image {:?} {:?} (depth, height, width, per pixel), then {} B{}; read by {}",
            i.entry,
            i.offset,
            i.size,
            i.dtype,
            i.shape,
            i.tail_bytes,
            if i.padding_zero {
                ""
            } else {
                ", padding not zero"
            },
            readers.join(", ")
        );
    }
    for z in &c.zero_run {
        let zrl: Vec<String> = z.streams.iter().map(|s| s.zrl.to_string()).collect();
        let _ = writeln!(
            s,
            "  entry {} @0x{:x} {} B: NN[{}] zero-run buffer, {} streams (run widths {}), kernels {:?} in {:?} order{}",
            z.entry,
            z.offset,
            z.size,
            z.command.index,
            z.streams.len(),
            zrl.join(", "),
            z.shape,
            z.order,
            if z.reencoded {
                ", re-encoded"
            } else {
                ", does not re-encode"
            }
        );
    }
    for b in &c.tp {
        let _ = writeln!(
            s,
            "  entry {} @0x{:x} {} B: TP fully-connected kernels, {} parts",
            b.entry,
            b.offset,
            b.size,
            b.parts.len()
        );
        for p in &b.parts {
            let layout = match &p.layout {
                crate::nbg::coefficients::tp::Layout::ZeroRun { .. } => "zero-run".to_string(),
                crate::nbg::coefficients::tp::Layout::Huffman {
                    header,
                    stream_align,
                    ..
                } => format!(
                    "Huffman (run-length {}, avg_bias {}, streams every {stream_align} B)",
                    header.run_length_size, header.avg_bias
                ),
            };
            let _ = writeln!(
                s,
                "    TP[{}]{} @0x{:x} {} B: {} outputs x {} inputs of {} bits, {} biases, {layout}",
                p.shape.command,
                p.operation.as_ref().map_or(String::new(), |o| format!(
                    " op{} {}",
                    o.index, o.layer_name
                )),
                p.offset,
                p.size,
                p.shape.filters,
                p.shape.slices,
                p.weight_bits(),
                p.biases.len()
            );
        }
    }
    for r in refused {
        let _ = writeln!(
            s,
            "  entry {} @0x{:x}: {} at +0x{:x}",
            r.entry,
            r.offset,
            r.error.code.as_str(),
            r.error.at
        );
    }
    s
}

/// `nbg dump`: what was chosen, then `hexdump -C` lines with file offsets (16 bytes each, a
/// gap after 8, the printable ASCII between bars).
pub fn hexdump(name: &str, s: &crate::lab::dump::Selection, bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "{name}: {} [0x{:x}, 0x{:x}), {} bytes\n",
        s.what,
        s.start,
        s.end,
        bytes.len()
    );
    for (i, row) in bytes.chunks(16).enumerate() {
        let _ = write!(out, "{:08x} ", s.start + 16 * i as u64);
        for k in 0..16 {
            let gap = if k == 8 { " " } else { "" };
            match row.get(k) {
                Some(b) => {
                    let _ = write!(out, "{gap} {b:02x}");
                }
                None => {
                    out.push_str(gap);
                    out.push_str("   ");
                }
            }
        }
        let ascii: String = row.iter().map(|&b| super::printable(b)).collect();
        let _ = writeln!(out, "  |{ascii}|");
    }
    out
}

/// `nbg diff A B` where B does not parse: why, then B's changed bytes by A's owners and fields,
/// with both sides' bytes.
pub fn damaged_diff(a_name: &str, b_name: &str, d: &crate::lab::diff::DamagedDiff) -> String {
    use std::fmt::Write as _;
    let f = &d.b_failure;
    let mut out = format!(
        "{b_name} does not parse: {} at 0x{:x}: {}\n{a_name}: {} bytes, {b_name}: {} bytes; {} bytes differ, attributed through {a_name}'s owners\n",
        f.code, f.offset, f.message, d.a.size, d.b_size, d.changed_bytes
    );
    for o in &d.owners {
        let _ = writeln!(
            out,
            "  {} [0x{:x}, 0x{:x}) {}: {} bytes changed",
            o.owner,
            o.range[0],
            o.range[1],
            o.class.as_str(),
            o.changed_bytes
        );
        for c in &o.ranges {
            let _ = writeln!(
                out,
                "    [0x{:x}, 0x{:x}) {}: {} -> {}",
                c.start, c.end, c.field, c.a, c.b
            );
        }
        if o.ranges_total > o.ranges.len() {
            let _ = writeln!(out, "    ... {} more", o.ranges_total - o.ranges.len());
        }
    }
    out
}
