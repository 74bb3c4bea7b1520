//! `nbg lab`: the main job on a fresh clone. Each step reports pass/fail, item count, timing
//! and per-item rows; the lab passes only when every step passes.

use crate::evidence;
use crate::image::NbgImage;
use crate::inventory;
use crate::parse;
use std::path::Path;
use std::time::Instant;

pub struct Row {
    pub item: String,
    pub passed: bool,
    pub detail: String,
}

pub struct Step {
    pub name: &'static str,
    pub passed: bool,
    pub items: usize,
    pub seconds: f64,
    pub note: String,
    pub rows: Vec<Row>,
}

pub struct Report {
    pub steps: Vec<Step>,
}

fn step(name: &'static str, f: impl FnOnce() -> Result<(Vec<Row>, String), String>) -> Step {
    let t = Instant::now();
    let (rows, note, ok) = match f() {
        Ok((rows, note)) => (rows, note, true),
        Err(e) => (Vec::new(), e, false),
    };
    Step {
        name,
        passed: ok && rows.iter().all(|r| r.passed),
        items: rows.len(),
        seconds: t.elapsed().as_secs_f64(),
        note,
        rows,
    }
}

/// Run every step from the project root.
pub fn run(root: &Path) -> Report {
    let mut steps = vec![step("round-trip controls", || roundtrip_controls(root))];
    steps.push(step("replay differentials", || replay_differentials(root)));
    for (config, stem) in evidence::INVENTORIES {
        let name = if stem.ends_with("controls") {
            "inventory controls"
        } else {
            "inventory public corpus"
        };
        let path = root.join(config);
        if !path.exists() && config.starts_with("../") {
            steps.push(step(name, || {
                Ok((Vec::new(), format!("skipped: {config} is not present")))
            }));
            continue;
        }
        steps.push(step(name, || inventory_step(&path)));
    }
    steps.push(step("verify evidence", || verify_step(root)));
    Report { steps }
}

fn roundtrip_controls(root: &Path) -> Result<(Vec<Row>, String), String> {
    let corpus = crate::corpus::load(&root.join("controls/corpus.json")).map_err(|e| e.0)?;
    let mut rows = Vec::new();
    for e in &corpus.entries {
        let bytes = crate::files::read_regular(&e.full_path).map_err(|e| e.0)?;
        let detail = match parse(&bytes).and_then(|g| NbgImage::new(&g)) {
            Err(f) => Err(format!("{} at 0x{:x}", f.code, f.offset)),
            Ok(image) => match image.reconstruction() {
                Ok(r) if r.sha256.hex() == e.sha256 && r.bytes == e.size => {
                    Ok(format!("exact, sha256 {}", r.sha256))
                }
                Ok(r) => Err(format!("exact but pin differs (sha256 {})", r.sha256)),
                Err(err) => Err(err.to_string()),
            },
        };
        rows.push(Row {
            item: e.path.clone(),
            passed: detail.is_ok(),
            detail: detail.unwrap_or_else(|x| x),
        });
    }
    Ok((
        rows,
        "ledger proved, re-emitted and compared with the pin".into(),
    ))
}

fn replay_differentials(root: &Path) -> Result<(Vec<Row>, String), String> {
    let generated = evidence::differential_evidence(root)?;
    let mut rows = Vec::new();
    for g in generated {
        let name = g
            .path
            .trim_start_matches("evidence/differentials/")
            .trim_end_matches(".json")
            .to_string();
        let rebuilt: serde_json::Value =
            serde_json::from_str(&g.text).map_err(|e| e.to_string())?;
        let committed = std::fs::read_to_string(root.join(&g.path))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        let result = rebuilt["result"].as_str().unwrap_or("").to_string();
        let (passed, detail) = match committed {
            Some(c) if c["result"] == rebuilt["result"] => {
                (true, format!("{result} (as committed)"))
            }
            Some(c) => (
                false,
                format!("{result}, committed evidence says {}", c["result"]),
            ),
            None => (false, format!("{result}, no committed evidence {}", g.path)),
        };
        rows.push(Row {
            item: name,
            passed,
            detail,
        });
    }
    Ok((rows, "A1 = A2, localization, in-memory replay".into()))
}

fn inventory_step(config: &Path) -> Result<(Vec<Row>, String), String> {
    let corpus = crate::corpus::load(config).map_err(|e| e.0)?;
    let bar = crate::progress::bar(corpus.entries.len() as u64, crate::progress::Unit::Files);
    let results = inventory::scan(&corpus, evidence::default_jobs(), &|| {
        crate::progress::inc(&bar, 1)
    });
    crate::progress::clear(bar);
    let doc = inventory::document(&corpus, &results);
    let rows = results
        .iter()
        .map(|r| Row {
            item: r.entry.path.clone(),
            passed: r.ok(),
            detail: match &r.facts {
                Ok(f) => format!("{} pin {}", f["format"].as_str().unwrap_or(""), r.pin),
                Err((code, offset, _)) => format!("{code} at 0x{offset:x}, pin {}", r.pin),
            },
        })
        .collect();
    let id = &doc["identity"];
    Ok((
        rows,
        format!(
            "{} bytes, inventory sha256 {}",
            id["bytes"],
            id["inventory_sha256"].as_str().unwrap_or("")
        ),
    ))
}

fn verify_step(root: &Path) -> Result<(Vec<Row>, String), String> {
    let (n, mismatches) = evidence::verify(root)?;
    let rows = mismatches
        .iter()
        .map(|m| Row {
            item: m.path.clone(),
            passed: false,
            detail: if m.missing {
                "missing".into()
            } else {
                "differs (nbg verify-generated shows the diff)".into()
            },
        })
        .collect();
    Ok((rows, format!("{n} evidence files rebuilt in memory")))
}
