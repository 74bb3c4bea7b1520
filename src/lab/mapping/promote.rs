//! Promotion on proving evidence, and the re-check of promoted mappings.

use super::*;

/// Why a promotion was refused.
#[derive(Debug)]
pub struct Refusal {
    /// Why, in words.
    pub message: String,
    /// The checks the refusal rests on.
    pub rows: Vec<CheckRow>,
}

/// The registry with `name` promoted on the evidence of `captures`, whose `name`s are the
/// capture directories relative to the mappings file's folder. Refused unless at least two
/// capture sets with different B values prove it and none refutes it; inapplicable sets are
/// not evidence and are left out.
pub fn promote(
    registry: &Registry,
    name: &str,
    captures: &[Capture],
) -> Result<(Registry, Vec<CheckRow>), Refusal> {
    let refuse = |message: String, rows: Vec<CheckRow>| Err(Refusal { message, rows });
    let Some(m) = registry.get(name) else {
        return refuse(format!("no mapping named {name:?}"), Vec::new());
    };
    let rows = match check_all(&[m], captures) {
        Ok(r) => r,
        Err(e) => return refuse(e.to_string(), Vec::new()),
    };
    if let Some(r) = rows.iter().find(|r| r.outcome == Outcome::Refuted) {
        let at = r
            .first_unexplained
            .as_ref()
            .map(|u| format!(" at 0x{:x} ({})", u.offset, u.field))
            .unwrap_or_default();
        return refuse(format!("{} refutes {name}{at}", r.capture), rows.clone());
    }
    let mut evidence: Vec<Evidence> = Vec::new();
    for (r, c) in rows.iter().zip(captures) {
        // A row is proved only once its source quantity was found, so every proved row has one.
        let (Outcome::Proved, Some(q)) = (r.outcome, r.source.clone()) else {
            continue;
        };
        let [a1, a2, b] = c.digests();
        evidence.push(Evidence {
            capture: c.name.clone(),
            a1_sha256: a1.hex(),
            a2_sha256: a2.hex(),
            b_sha256: b.hex(),
            a: q.a,
            b: q.b,
        });
    }
    evidence.sort_by(|x, y| x.capture.cmp(&y.capture));
    evidence.dedup_by(|x, y| (&x.a1_sha256, &x.b_sha256) == (&y.a1_sha256, &y.b_sha256));
    let distinct: Vec<String> = evidence
        .iter()
        // Invariant: a JSON `Value` has string keys only, so it always serializes.
        .map(|e| serde_json::to_string(&e.b).expect("value serializes"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if evidence.len() < 2 || distinct.len() < 2 {
        return refuse(
            format!(
                "{name}: {} capture sets prove it with {} distinct B values; promotion needs at least 2 of each",
                evidence.len(),
                distinct.len()
            ),
            rows,
        );
    }
    if evidence.len() > MAX_EVIDENCE {
        return refuse(format!("at most {MAX_EVIDENCE} evidence entries"), rows);
    }
    let proving: Vec<&CheckRow> = rows
        .iter()
        .filter(|r| r.outcome == Outcome::Proved)
        .collect();
    if m.is_element_map() {
        let indices: std::collections::BTreeSet<u64> =
            proving.iter().filter_map(|r| r.element).collect();
        if indices.len() < 2 {
            return refuse(
                format!(
                    "{name}: an element map needs proving capture sets of at least 2 different elements, not {}",
                    indices.len()
                ),
                rows,
            );
        }
    }
    // Each computed value keeps the one candidate every proving set keeps.
    let mut kept = Vec::new();
    for (k, c) in m.computed.iter().enumerate() {
        let survivors: Vec<computed::Candidate> = c
            .candidates
            .iter()
            .filter(|cand| {
                proving.iter().all(|r| {
                    r.candidates
                        .iter()
                        .any(|x| x.computed == k && x.candidate == **cand && x.kept)
                })
            })
            .copied()
            .collect();
        match survivors.as_slice() {
            [one] => kept.push(*one),
            [] => {
                return refuse(
                    format!(
                        "{name}: computed value {k}: no candidate reproduces every proving set"
                    ),
                    rows,
                );
            }
            many => {
                let texts: Vec<String> = many.iter().map(|x| x.text(c.inputs.len())).collect();
                return refuse(
                    format!(
                        "{name}: computed value {k}: {} all reproduce every proving set; a capture set that separates them is needed",
                        texts.join(", ")
                    ),
                    rows,
                );
            }
        }
    }
    let mut out = registry.clone();
    let Some(target) = out.mappings.iter_mut().find(|x| x.name == name) else {
        return refuse(format!("no mapping {name} in the registry"), rows);
    };
    target.status = Status::Promoted;
    target.evidence = evidence;
    for (c, k) in target.computed.iter_mut().zip(kept) {
        c.kept = Some(k);
    }
    Ok((out, rows))
}

/// Capture directory names relative to `base` (the mappings file's folder) when they lie
/// inside it, else as given.
pub(super) fn relative_name(base: &Path, dir: &Path) -> Result<String, MappingError> {
    let canon = |p: &Path| {
        std::fs::canonicalize(p).map_err(|source| MappingError::Canonical {
            path: p.to_path_buf(),
            source,
        })
    };
    let (b, d) = (canon(base)?, canon(dir)?);
    d.strip_prefix(&b)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .map(|r| r.to_string_lossy().into_owned())
        .ok_or_else(|| MappingError::Outside {
            dir: dir.to_path_buf(),
            base: base.to_path_buf(),
        })
}

pub(super) fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// One promoted mapping re-checked on one capture set of its evidence.
#[derive(Clone, Debug)]
pub struct Recheck {
    /// The mapping.
    pub mapping: String,
    /// The capture set.
    pub capture: String,
    /// Whether the set still hashes as recorded and still proves the mapping.
    pub passed: bool,
    /// What was found.
    pub detail: String,
}

/// Re-check every promoted mapping of the registry at `root/COMMITTED` against its evidence:
/// each capture set must still hash to its recorded digests and still prove the mapping.
pub fn recheck_promoted(root: &Path) -> Result<Vec<Recheck>, MappingError> {
    let path = root.join(COMMITTED);
    let registry = load(&path)?;
    let base = folder(&path);
    let mut rows = Vec::new();
    for m in registry
        .mappings
        .iter()
        .filter(|m| m.status == Status::Promoted)
    {
        for e in &m.evidence {
            let detail = match Capture::load(&base.join(&e.capture), e.capture.clone()) {
                Err(err) => Err(err.to_string()),
                Ok(c) => {
                    let [a1, a2, b] = c.digests();
                    if [a1.hex(), a2.hex(), b.hex()]
                        != [e.a1_sha256.clone(), e.a2_sha256.clone(), e.b_sha256.clone()]
                    {
                        Err("capture files no longer match the recorded SHA-256".to_string())
                    } else {
                        match check_all(&[m], std::slice::from_ref(&c)) {
                            Err(f) => Err(f.to_string()),
                            Ok(r) if r[0].outcome == Outcome::Proved => {
                                Ok("proved (replay sha256 = B)".to_string())
                            }
                            Ok(r) => Err(format!("{:?}: {:?}", r[0].outcome, r[0].reason)),
                        }
                    }
                }
            };
            rows.push(Recheck {
                mapping: m.name.clone(),
                capture: e.capture.clone(),
                passed: detail.is_ok(),
                detail: detail.unwrap_or_else(|x| x),
            });
        }
    }
    Ok(rows)
}
