//! The report of a capture set (A1/A2/B).

use super::*;

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
