//! `nbg lab`: the main job on a fresh clone. Each step reports pass/fail, item count, timing
//! and per-item rows; the lab passes only when every step passes.
//!
//! With no arguments it runs on what the repository holds: the synthetic and public controls,
//! the committed capture sets and the evidence. Each `--corpus CONFIG` adds an inventory step
//! over a user's own hash-pinned corpus; its documents are returned, and written only when the
//! caller asks.

use crate::evidence::{self, EvidenceError};
use crate::lab::inventory;
use crate::lab::{Report, Row, Step};
use crate::nbg::image::NbgImage;
use crate::nbg::parse::parse;
use std::path::Path;
use std::time::Instant;

/// A step's rows and note, or why it could not run.
type Outcome = Result<(Vec<Row>, String), EvidenceError>;

fn step(name: String, f: impl FnOnce() -> Outcome) -> Step {
    let t = Instant::now();
    let (rows, note, ok) = match f() {
        Ok((rows, note)) => (rows, note, true),
        Err(e) => (Vec::new(), e.to_string(), false),
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

/// Run every step from the project root, then one inventory step per added corpus, each given
/// with the config path as the user wrote it.
pub fn run(root: &Path, corpora: &[(String, crate::lab::corpus::Corpus)]) -> Report {
    let mut steps = vec![step("round-trip controls".into(), || {
        roundtrip_controls(root)
    })];
    steps.push(step("replay differentials".into(), || {
        replay_differentials(root)
    }));
    steps.push(step("re-check promoted mappings".into(), || {
        promoted_mappings(root)
    }));
    for (config, stem) in evidence::INVENTORIES {
        let name = format!(
            "inventory {}",
            stem.trim_start_matches("evidence/inventory/")
        );
        steps.push(step(name, || {
            let corpus = crate::lab::corpus::load(&root.join(config))?;
            let (rows, note, _) = inventory_step(&corpus);
            Ok((rows, note))
        }));
    }
    steps.push(step("board files v2".into(), || board_files(root)));
    steps.push(step("verify evidence".into(), || verify_step(root)));
    let mut inventories = Vec::new();
    let mut stems: Vec<String> = Vec::new();
    for (shown, corpus) in corpora {
        let mut documents = None;
        steps.push(step(format!("inventory {shown}"), || {
            let (rows, note, docs) = inventory_step(corpus);
            documents = Some(docs);
            Ok((rows, note))
        }));
        if let Some([json, md]) = documents {
            let base = Path::new(shown)
                .file_stem()
                .map_or("corpus".into(), |s| s.to_string_lossy().into_owned());
            let mut stem = base.clone();
            let mut n = 1;
            while stems.contains(&stem) {
                n += 1;
                stem = format!("{base}-{n}");
            }
            stems.push(stem.clone());
            inventories.push(crate::canonical::Generated {
                path: format!("{stem}.json"),
                text: json,
            });
            inventories.push(crate::canonical::Generated {
                path: format!("{stem}.md"),
                text: md,
            });
        }
    }
    Report { steps, inventories }
}

/// The pinned controls the repository holds: synthetic v2, redistributable public v1, the
/// A733 toolkit's v2 board files and the vendor serializer's real v2 files.
pub const CONTROL_CONFIGS: [&str; 4] = [
    "controls/corpus.json",
    "controls/public/corpus.json",
    "controls/public/v2/corpus.json",
    "controls/serializer/corpus.json",
];

/// The public v2 board files beside the project (the shared corpus grows), and the copies the
/// repository carries, used where `../shared` is absent (a fresh clone).
pub const BOARD_V2_CONFIGS: [&str; 2] = [
    "../shared/corpus/v2/corpus.json",
    "controls/public/v2/corpus.json",
];

/// Every board file of the first of `BOARD_V2_CONFIGS` present through the chain a user runs:
/// parse, the ledger re-emitted exactly, every decoded record re-encoded, the header CRC
/// explained, `nbg info`, the HTML page, and a diff with the next file.
fn board_files(root: &Path) -> Outcome {
    let config = BOARD_V2_CONFIGS
        .iter()
        .find(|c| root.join(c).is_file())
        .unwrap_or(&BOARD_V2_CONFIGS[1]);
    let corpus = crate::lab::corpus::load(&root.join(config))?;
    let files: Vec<(String, Vec<u8>)> = corpus
        .entries
        .iter()
        .map(|e| Ok((e.path.clone(), crate::files::read_regular(&e.full_path)?)))
        .collect::<Result<_, EvidenceError>>()?;
    let mut rows = Vec::new();
    for (i, (name, bytes)) in files.iter().enumerate() {
        let next = &files[(i + 1) % files.len()];
        let detail =
            board_chain(&corpus.entries[i].full_path, bytes, &next.1).map(|d| d.join(", "));
        rows.push(Row {
            item: name.clone(),
            passed: detail.is_ok(),
            detail: detail.unwrap_or_else(|e| e),
        });
    }
    Ok((
        rows,
        format!("{config}: parse, image, records re-encoded, crc-explain, info, report, diff"),
    ))
}

/// One board file's chain: each link's result, or the first that broke.
fn board_chain(path: &Path, bytes: &[u8], next: &[u8]) -> Result<Vec<String>, String> {
    let broke = |what: &str, why: String| format!("{what}: {why}");
    let graph = parse(bytes).map_err(|f| broke("parse", f.to_string()))?;
    let image = NbgImage::new(&graph).map_err(|f| broke("image", f.to_string()))?;
    let r = image
        .reconstruction()
        .map_err(|e| broke("roundtrip", e.to_string()))?;
    let mut done = vec![format!("exact ({} bytes)", r.bytes)];
    let records = crate::nbg::reencode::reencode(&graph, &image);
    if records.records_reencoded != records.records_total {
        return Err(broke(
            "records",
            format!(
                "{} of {} re-encoded",
                records.records_reencoded, records.records_total
            ),
        ));
    }
    done.push(format!("{} records re-encoded", records.records_total));
    let crc = crate::nbg::crc_explain::explain_with(&graph, |s, e| {
        crate::nbg::fingerprint::crc32(&bytes[s as usize..e as usize])
    });
    let rule = crc.matches.first().ok_or_else(|| {
        broke(
            "crc-explain",
            format!("no rule reproduces 0x{:08x}", crc.stored),
        )
    })?;
    done.push(format!("crc {}", rule.rule));
    crate::lab::info::info(path, None)
        .map_err(|e| broke("info", e.to_string()))?
        .map_err(|f| broke("info", f.to_string()))?;
    done.push("info".into());
    crate::report::graph_page(&path.display().to_string(), bytes, false)
        .map_err(|f| broke("report", f.to_string()))?;
    done.push("report".into());
    let other = parse(next).map_err(|f| broke("diff", f.to_string()))?;
    let other_image = NbgImage::new(&other).map_err(|f| broke("diff", f.to_string()))?;
    let d = crate::lab::diff::diff(&graph, &image, &other, &other_image)
        .map_err(|e| broke("diff", e.to_string()))?;
    done.push(format!("diff {} owners", d.owners.len()));
    Ok(done)
}

fn roundtrip_controls(root: &Path) -> Outcome {
    let mut rows = Vec::new();
    for config in CONTROL_CONFIGS {
        let corpus = crate::lab::corpus::load(&root.join(config))?;
        for e in &corpus.entries {
            let bytes = crate::files::read_regular(&e.full_path)?;
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
            let item = Path::new(config)
                .parent()
                .map_or_else(|| e.path.clone(), |d| d.join(&e.path).display().to_string());
            rows.push(Row {
                item,
                passed: detail.is_ok(),
                detail: detail.unwrap_or_else(|x| x),
            });
        }
    }
    Ok((
        rows,
        "ledger proved, re-emitted and compared with the pin".into(),
    ))
}

fn replay_differentials(root: &Path) -> Outcome {
    let generated = evidence::differential_evidence(root)?;
    let mut rows = Vec::new();
    for g in generated {
        let name = g
            .path
            .trim_start_matches("evidence/differentials/")
            .trim_end_matches(".json")
            .to_string();
        let rebuilt: serde_json::Value =
            serde_json::from_str(&g.text).map_err(|source| EvidenceError::Serialize {
                name: g.path.clone(),
                source,
            })?;
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

fn promoted_mappings(root: &Path) -> Outcome {
    let rows: Vec<Row> = crate::lab::mapping::recheck_promoted(root)?
        .into_iter()
        .map(|r| Row {
            item: format!("{} <- {}", r.mapping, r.capture),
            passed: r.passed,
            detail: r.detail,
        })
        .collect();
    Ok((
        rows,
        "each promoted mapping replayed on its evidence (digests, then SHA-256 of B)".into(),
    ))
}

/// Inventory one corpus: a row per file, a note with the counts, and the canonical inventory
/// JSON and Markdown summary.
fn inventory_step(corpus: &crate::lab::corpus::Corpus) -> (Vec<Row>, String, [String; 2]) {
    let bar = crate::progress::bar(corpus.entries.len() as u64, crate::progress::Unit::Files);
    let results = inventory::scan(corpus, evidence::default_jobs(), &|| {
        crate::progress::inc(&bar, 1)
    });
    crate::progress::clear(bar);
    let doc = inventory::document(corpus, &results);
    let rows: Vec<Row> = results
        .iter()
        .map(|r| Row {
            item: r.entry.path.clone(),
            passed: r.ok(),
            detail: match &r.facts {
                Ok(f) => format!("{} pin {}", f.format, r.pin),
                Err((code, offset, _)) => format!("{code} at 0x{offset:x}, pin {}", r.pin),
            },
        })
        .collect();
    let failed = rows.iter().filter(|r| !r.passed).count();
    let id = &doc.head.identity;
    let note = format!(
        "{} {}: {} files, {} ok, {failed} failed, {} bytes, inventory sha256 {}",
        corpus.schema,
        corpus.config_name,
        rows.len(),
        rows.len() - failed,
        id.bytes,
        id.inventory_sha256.map(|h| h.hex()).unwrap_or_default()
    );
    let docs = [
        crate::canonical::canonical(&doc.to_json()),
        crate::report::inventory::summary(&doc.head),
    ];
    (rows, note, docs)
}

fn verify_step(root: &Path) -> Outcome {
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
