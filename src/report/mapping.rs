//! Text of `nbg mapping check` and `promote`.

use crate::lab::mapping::{CheckRow, CoveredPart, FieldProofs, Outcome, Reason, Refusal, summary};

/// One check: the mapping, the capture set, the outcome and reason, the first unexplained
/// byte, the computed candidates and, when proved, the replay's SHA-256.
pub fn row(r: &CheckRow) -> String {
    let mut s = format!(
        "{:<28} {:<40} {:<12} {}",
        r.mapping,
        r.capture,
        r.outcome.as_str(),
        serde_json::to_value(r.reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    );
    if r.outcome == Outcome::Inapplicable {
        s.push_str(&format!("\n    missing: {}", missing(r)));
    }
    if let Some(u) = &r.first_unexplained {
        s.push_str(&format!(
            "\n    first unexplained byte 0x{:x} in {} ({}): A 0x{:02x} B 0x{:02x} replay 0x{:02x}; {} unexplained of {} changed",
            u.offset, u.field, u.class.as_str(), u.a, u.b, u.replayed, r.unexplained_bytes, r.changed_bytes
        ));
    }
    if let Some(d) = &r.decoded_mismatch {
        s.push_str(&format!(
            "\n    first decoded difference: {}[{}] replay {} B {}",
            d.part.as_str(),
            d.element,
            d.replay,
            d.b
        ));
    }
    let computed: std::collections::BTreeSet<usize> =
        r.candidates.iter().map(|c| c.computed).collect();
    for k in computed {
        let of = |kept: bool| -> Vec<&str> {
            r.candidates
                .iter()
                .filter(|c| c.computed == k && c.kept == kept)
                .map(|c| c.formula.as_str())
                .collect()
        };
        s.push_str(&format!(
            "\n    computed {k}: kept [{}], refuted [{}]",
            of(true).join(", "),
            of(false).join(", ")
        ));
    }
    if let (Outcome::Proved, Some(sha)) = (r.outcome, &r.replay_sha256) {
        s.push_str(&format!("\n    replay sha256 {sha} = B"));
    }
    s.push('\n');
    s
}

/// What an inapplicable row lacks, in words: whether the capture set was not asked this
/// mapping's question or cannot answer it.
fn missing(r: &CheckRow) -> String {
    let changes = if r.changes.is_empty() {
        "nothing it names".to_string()
    } else {
        r.changes.join(", ")
    };
    match r.reason {
        Reason::FamilyDiffers => "family differs: the captures are of the other NBG family".into(),
        Reason::TargetDiffers => "target differs: the captures are for another target".into(),
        Reason::SourceKeyAbsent => format!(
            "role absent: the mapping reads {} (or a computed input), the set changes {changes}",
            r.source_key
        ),
        Reason::RoleAmbiguous => format!(
            "role ambiguous: {} names one node of a kind the model has several of; the set changes {changes}",
            r.source_key
        ),
        Reason::SourceTypeDiffers => {
            "source type differs: the set changes a float where the mapping stores an integer"
                .into()
        }
        Reason::A1DiffersFromA2 => "A1 and A2 differ: the captures are not deterministic".into(),
        Reason::TargetNotFound => {
            "target not found: the graph has no place the mapping names".into()
        }
        Reason::CoefficientsNotDecoded => {
            "coefficients not decoded: nbg coefficients says why".into()
        }
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
    }
}

/// Every check, then the counts.
pub fn check(rows: &[CheckRow]) -> String {
    let mut s: String = rows.iter().map(row).collect();
    let sum = summary(rows);
    s.push_str(&format!(
        "{} checks: {} proved, {} refuted, {} inapplicable\n",
        rows.len(),
        sum.proved,
        sum.refuted,
        sum.inapplicable
    ));
    s
}

/// A refused promotion: why, then the checks it rests on (for stderr).
pub fn refused(r: &Refusal) -> String {
    let mut s = format!("nbg: refused: {}\n", r.message);
    for c in &r.rows {
        s.push_str(&row(c));
    }
    s
}

/// A promotion written: its checks and what was written.
pub fn promoted(rows: &[CheckRow], name: &str, evidence: usize, path: &std::path::Path) -> String {
    let mut s: String = rows.iter().map(row).collect();
    s.push_str(&format!(
        "promoted {name} on {evidence} capture sets; wrote {}\n",
        path.display()
    ));
    s
}

/// `nbg mapping fields`: the parts proved and held, with their values per capture set, the
/// placements that cover no part exactly, and evidence that no longer proves its mapping.
pub fn fields(p: &FieldProofs) -> String {
    let covered = |c: &CoveredPart| {
        let values: Vec<String> = c
            .values
            .iter()
            .map(|v| format!("{} -> {} ({})", v.a, v.b, v.capture))
            .collect();
        format!(
            "  {}.{} ({}) {}  by {}{}\n    {}\n",
            c.at,
            c.part,
            c.record,
            c.word,
            c.mapping,
            c.pid
                .as_deref()
                .map(|p| format!(" on {p}"))
                .unwrap_or_default(),
            values.join("; ")
        )
    };
    let mut s = format!("proved: {} parts\n", p.proved.len());
    s.extend(p.proved.iter().map(covered));
    s.push_str(&format!(
        "held (covered exactly, no capture set changes the value): {}\n",
        p.held.len()
    ));
    s.extend(p.held.iter().map(covered));
    s.push_str(&format!(
        "not aligned (covers no part exactly): {}\n",
        p.unaligned.len()
    ));
    for u in &p.unaligned {
        s.push_str(&format!(
            "  {} bits {}..{} ({}) by {}: in {}\n",
            u.at,
            u.shift,
            u.shift + u.bits,
            u.record,
            u.mapping,
            if u.parts.is_empty() {
                "a word with no parts".to_string()
            } else {
                u.parts.join("+")
            }
        ));
    }
    s.push_str(&format!(
        "evidence that no longer proves its mapping: {}\n",
        p.unproved.len()
    ));
    for u in &p.unproved {
        s.push_str(&format!("  {} on {}: {}\n", u.mapping, u.capture, u.detail));
    }
    s
}

/// `nbg mapping fields`, second part: the NN command geometry the layer check proves over the
/// NN capture sets.
#[cfg(feature = "onnx")]
pub fn geometry(g: &crate::simulator::geometry_proofs::GeometryProofs) -> String {
    use crate::simulator::geometry_proofs::GeometryProof;
    let part = |p: &GeometryProof| {
        let values: Vec<String> = p.values.iter().map(u64::to_string).collect();
        format!(
            "  {}.{} ({}): {} over {} commands\n",
            p.word,
            p.part,
            p.record,
            values.join(", "),
            p.commands
        )
    };
    let mut s = format!(
        "NN geometry against the source layers ({} capture files, nbg locate --layers):\n",
        g.files
    );
    s.push_str(&format!(
        "proved (two values or more, each as the layer predicts): {} parts\n",
        g.proved.len()
    ));
    s.extend(g.proved.iter().map(part));
    s.push_str(&format!("held (one value): {}\n", g.held.len()));
    s.extend(g.held.iter().map(part));
    s.push_str(&format!(
        "commands that disagree with their layer: {}\n",
        g.disagreements.len()
    ));
    for d in &g.disagreements {
        s.push_str(&format!(
            "  {} nn[{}].{}: {:?}, the layer {:?}\n",
            d.file, d.command, d.field, d.nbg, d.model
        ));
    }
    s.push_str(&format!("files not checked: {}\n", g.unchecked.len()));
    for u in &g.unchecked {
        s.push_str(&format!("  {u}\n"));
    }
    s
}

/// `nbg mapping check --run`: each proved pair run on the simulator and the oracle.
#[cfg(feature = "onnx")]
pub fn runs(runs: &[crate::simulator::mapping_run::RunCheck]) -> String {
    use crate::simulator::mapping_run::RunOutcome;
    let mut s = format!("runs: {} proved pairs\n", runs.len());
    for r in runs {
        let verdict = match &r.outcome {
            RunOutcome::Agrees => "agrees".to_string(),
            RunOutcome::ReplayDiffers => "REPLAY DIFFERS from B".to_string(),
            RunOutcome::ModelDiffers => {
                "B (the serializer's compile of model B) DIFFERS from model B on the oracle"
                    .to_string()
            }
            RunOutcome::NoSourceModel => {
                "no source model (not a serializer capture set)".to_string()
            }
            RunOutcome::NotRun { reason } => format!("not run: {reason}"),
        };
        s.push_str(&format!("  {} on {}: {verdict}\n", r.mapping, r.capture));
        if let Some(eq) = r.replay_outputs_equal_b {
            s.push_str(&format!(
                "    replay outputs {} B's on {}\n",
                if eq { "equal" } else { "DIFFER FROM" },
                r.config.as_deref().unwrap_or("?")
            ));
        }
        for o in &r.outputs {
            s.push_str(&format!(
                "    B {} against the oracle for model B: max abs {:.6} (bound {:.6}){}\n",
                o.name,
                o.max_abs_error,
                o.bound,
                if o.pass { "" } else { " FAIL" }
            ));
        }
    }
    s
}
