//! Committed evidence files: what they contain and how each is rebuilt in memory, and `nbg
//! lab`'s steps (`steps`), which check them. The top of the library: evidence rebuilds what
//! every layer below makes (inventories, differentials, mappings, ONNX runs, HTML reports).
//!
//! Every evidence file is canonical JSON (sorted keys, two-space indent, trailing newline, no
//! timestamps, no absolute paths), so a rebuild can be compared byte for byte.

use crate::exit::Exit;
use crate::files::InputError;
use crate::lab::corpus::ConfigError;
use crate::lab::differential::{CaptureError, LoadError};
use crate::lab::mapping::{CaptureFailure, MappingError};
use crate::nbg::failure::Failure;
use crate::nbg::fieldmap::Family;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::parse;
use crate::report::ReportError;
use crate::report::fieldmap::Export;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub use crate::canonical::{Generated, canonical};

pub mod steps;

/// The image ledger document of one file: `owners`, `views`, `totals`, `reconstruction`.
pub fn image_document(bytes: &[u8]) -> Result<Value, Failure> {
    let graph = parse(bytes)?;
    Ok(NbgImage::new(&graph)?.to_json())
}

/// Names of the pinned controls, from `controls/controls.json`.
pub fn control_names(root: &Path) -> Result<Vec<String>, EvidenceError> {
    let path = root.join("controls/controls.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(source) => return Err(EvidenceError::Read { path, source }),
    };
    let v: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(source) => return Err(EvidenceError::Json { path, source }),
    };
    let controls = v["controls"].as_array().ok_or(EvidenceError::NoControls)?;
    controls
        .iter()
        .map(|c| {
            c["name"]
                .as_str()
                .map(str::to_string)
                .ok_or(EvidenceError::UnnamedControl)
        })
        .collect()
}

/// Rebuild `evidence/images/<control>.json` for every pinned control.
pub fn image_evidence(root: &Path) -> Result<Vec<Generated>, EvidenceError> {
    let mut out = Vec::new();
    for name in control_names(root)? {
        let file = root.join("controls").join(&name);
        let bytes = crate::files::read_regular(&file)?;
        let doc = match image_document(&bytes) {
            Ok(d) => d,
            Err(failure) => return Err(EvidenceError::Control { name, failure }),
        };
        let stem = name.strip_suffix(".nb").unwrap_or(&name);
        out.push(Generated {
            path: format!("evidence/images/{stem}.json"),
            text: canonical(&doc),
        });
    }
    Ok(out)
}

/// The capture directories under `dir`, sorted.
fn capture_names(dir: &Path) -> Result<Vec<String>, EvidenceError> {
    let subdirs = |d: &Path| -> Result<Vec<String>, EvidenceError> {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .map_err(|source| EvidenceError::Read {
                path: d.to_path_buf(),
                source,
            })?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    };
    // A folder without a `differential.json` is a group of sets (`serializer/`, the vendor
    // serializer's own), one level deep.
    let mut out = Vec::new();
    for name in subdirs(dir)? {
        if dir
            .join(&name)
            .join(crate::lab::differential::SPEC_FILE)
            .is_file()
        {
            out.push(name);
        } else {
            out.extend(
                subdirs(&dir.join(&name))?
                    .into_iter()
                    .map(|n| format!("{name}/{n}")),
            );
        }
    }
    Ok(out)
}

/// Rebuild `evidence/differentials/<name>.json` for every committed capture set.
pub fn differential_evidence(root: &Path) -> Result<Vec<Generated>, EvidenceError> {
    let dir = root.join("differentials");
    let registry = crate::lab::mapping::load(&root.join(crate::lab::mapping::COMMITTED))?;
    let mut out = Vec::new();
    for name in capture_names(&dir)? {
        let set = crate::lab::differential::load(&dir.join(&name))?;
        let report = match crate::lab::differential::run_with(&set, &registry) {
            Ok(r) => r,
            Err(source) => return Err(EvidenceError::Differential { name, source }),
        };
        let value = match serde_json::to_value(&report) {
            Ok(v) => v,
            Err(source) => return Err(EvidenceError::Serialize { name, source }),
        };
        out.push(Generated {
            path: format!("evidence/differentials/{name}.json"),
            text: canonical(&value),
        });
    }
    Ok(out)
}

/// The inventories kept as evidence: (config relative to the project root, output stem). Both
/// corpora live in the repository, so the evidence is rebuilt on any clone; a user's own corpus
/// (or `../shared/corpus`) is inventoried with `nbg lab --corpus`.
pub const INVENTORIES: [(&str, &str); 4] = [
    ("controls/corpus.json", "evidence/inventory/controls"),
    (
        "controls/public/corpus.json",
        "evidence/inventory/public-controls",
    ),
    (
        "controls/public/v2/corpus.json",
        "evidence/inventory/public-v2-controls",
    ),
    (
        "controls/serializer/corpus.json",
        "evidence/inventory/serializer-controls",
    ),
];

/// Rebuild the inventory JSON and its Markdown summary for one config.
pub fn inventory_evidence(
    root: &Path,
    config: &str,
    stem: &str,
) -> Result<Vec<Generated>, EvidenceError> {
    let corpus = crate::lab::corpus::load(&root.join(config))?;
    let results = crate::lab::inventory::scan(&corpus, default_jobs(), &|| {});
    let doc = crate::lab::inventory::document(&corpus, &results);
    Ok(vec![
        Generated {
            path: format!("{stem}.json"),
            text: canonical(&doc.to_json()),
        },
        Generated {
            path: format!("{stem}.md"),
            text: crate::report::inventory::summary(&doc.head),
        },
    ])
}

/// Worker threads: the machine's parallelism.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Every generated evidence file, rebuilt in memory.
pub fn all(root: &Path) -> Result<Vec<Generated>, EvidenceError> {
    let mut out = image_evidence(root)?;
    out.extend(differential_evidence(root)?);
    #[cfg(feature = "onnx")]
    out.extend(onnx_evidence(root)?);
    for (config, stem) in INVENTORIES {
        out.extend(inventory_evidence(root, config, stem)?);
    }
    out.extend(report_evidence(root)?);
    out.extend(mapping_evidence(root)?);
    #[cfg(feature = "onnx")]
    out.extend(locate_evidence()?);
    out.extend(fieldmap_evidence()?);
    Ok(out)
}

/// The mapping registry in canonical form, and `evidence/mappings/check.json`: every mapping
/// checked against every committed capture set (the refuting sets included).
pub fn mapping_evidence(root: &Path) -> Result<Vec<Generated>, EvidenceError> {
    use crate::lab::mapping;
    let registry = mapping::load(&root.join(mapping::COMMITTED))?;
    let dir = root.join("differentials");
    let captures = capture_names(&dir)?
        .into_iter()
        .map(|n| mapping::Capture::load(&dir.join(&n), n))
        .collect::<Result<Vec<_>, _>>()?;
    let all: Vec<&mapping::Mapping> = registry.mappings.iter().collect();
    let rows = mapping::check_all(&all, &captures)?;
    let text = registry.canonical();
    let sha = crate::digest::Hash256::of(text.as_bytes());
    // The grouped sets (the vendor serializer's) are checked against every mapping too, but
    // only the rows that apply are kept: most pairs are another target's or kind's.
    let (grouped, top): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| r.capture.contains('/'));
    let grouped_applied: Vec<_> = grouped
        .iter()
        .filter(|r| r.outcome != mapping::Outcome::Inapplicable)
        .cloned()
        .collect();
    let applied = mapping::CheckDocument {
        summary: mapping::summary(&grouped),
        ..mapping::check_document(&sha, &grouped_applied)
    };
    // The record bit fields the promoted mappings prove (the field map's `proved` labels).
    let (_, fields) = mapping::run_fields(&root.join(mapping::COMMITTED)).map_err(|e| match e {
        mapping::Stop::Input(e) => EvidenceError::Mapping(e),
        mapping::Stop::Capture(e) => EvidenceError::Check(e),
    })?;
    Ok(vec![
        Generated {
            path: mapping::COMMITTED.into(),
            text,
        },
        Generated {
            path: "evidence/mappings/check.json".into(),
            text: canonical(&crate::report::json::value(&mapping::check_document(
                &sha, &top,
            ))),
        },
        Generated {
            path: "evidence/mappings/serializer-check.json".into(),
            text: canonical(&crate::report::json::value(&applied)),
        },
        Generated {
            path: "evidence/mappings/fields.json".into(),
            text: canonical(&fields.document(&sha)),
        },
    ])
}

/// The committed exports of the field map: (path, family, format).
pub const FIELDMAP_EXPORTS: [(&str, Option<Family>, Export); 4] = [
    ("evidence/fieldmap/fieldmap.json", None, Export::Json),
    ("evidence/fieldmap/fieldmap.md", None, Export::Markdown),
    (
        "evidence/fieldmap/nbg_v1.ksy",
        Some(Family::V1),
        Export::Ksy,
    ),
    (
        "evidence/fieldmap/nbg_v2.ksy",
        Some(Family::V2),
        Export::Ksy,
    ),
];

/// Rebuild `evidence/fieldmap/*`: the field map as JSON, Markdown and Kaitai Struct.
pub fn fieldmap_evidence() -> Result<Vec<Generated>, EvidenceError> {
    FIELDMAP_EXPORTS
        .iter()
        .map(|&(path, family, format)| {
            Ok(Generated {
                path: path.to_string(),
                text: crate::report::fieldmap::render(family, format)?,
            })
        })
        .collect()
}

/// The committed reports: output path and request, inputs relative to the project root.
/// The public v1 file is one of the redistributable controls the repository carries.
pub fn committed_reports() -> Vec<(&'static str, crate::report::Request)> {
    use crate::report::Request;
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

/// Rebuild `evidence/reports/*.html`, the committed `nbg report` pages (`committed_reports`).
pub fn report_evidence(root: &Path) -> Result<Vec<Generated>, EvidenceError> {
    committed_reports()
        .into_iter()
        .map(|(path, request)| {
            let text = crate::report::rooted(&request, root)
                .render()
                .map_err(|source| EvidenceError::Report { path, source })?;
            Ok(Generated {
                path: path.to_string(),
                text,
            })
        })
        .collect()
}

/// One mismatch between a committed evidence file and its rebuild.
pub struct Mismatch {
    /// Path of the committed file that differs.
    pub path: String,
    /// Unified diff, committed (-) against rebuilt (+); empty for a missing file.
    pub diff: String,
    /// Whether the committed file is absent (rather than different).
    pub missing: bool,
}

/// Compare every rebuilt file with the committed one; also list committed evidence files no
/// generator produces.
pub fn verify(root: &Path) -> Result<(usize, Vec<Mismatch>), EvidenceError> {
    let generated = all(root)?;
    let mut mismatches = Vec::new();
    for g in &generated {
        match std::fs::read_to_string(root.join(&g.path)) {
            Ok(committed) if committed == g.text => {}
            Ok(committed) => mismatches.push(Mismatch {
                path: g.path.clone(),
                diff: similar::TextDiff::from_lines(&committed, &g.text)
                    .unified_diff()
                    .context_radius(3)
                    .header(
                        &format!("committed/{}", g.path),
                        &format!("rebuilt/{}", g.path),
                    )
                    .to_string(),
                missing: false,
            }),
            Err(_) => mismatches.push(Mismatch {
                path: g.path.clone(),
                diff: String::new(),
                missing: true,
            }),
        }
    }
    for path in committed_files(&root.join("evidence"), "evidence") {
        // Built without ONNX, its evidence has no generator here: skipped (the CLI says so).
        if !cfg!(feature = "onnx") && ONNX_EVIDENCE.iter().any(|d| path.starts_with(d)) {
            continue;
        }
        if !generated.iter().any(|g| g.path == path) {
            mismatches.push(Mismatch {
                path,
                diff: "no generator produces this committed evidence file\n".into(),
                missing: false,
            });
        }
    }
    Ok((generated.len(), mismatches))
}

fn committed_files(dir: &Path, rel: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let name = format!("{rel}/{}", e.file_name().to_string_lossy());
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(committed_files(&e.path(), &name)),
            Ok(t) if t.is_file() => out.push(name),
            _ => {}
        }
    }
    out.sort();
    out
}

/// Why an evidence file could not be rebuilt or written: a usage or I/O problem.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// A committed input (`controls/controls.json`, the `differentials` folder) could not be
    /// read.
    #[error("{}: {source}", .path.display())]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `controls/controls.json` is not JSON.
    #[error("{}: {source}", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// `controls/controls.json` has no `controls` array.
    #[error("controls.json: no controls array")]
    NoControls,
    /// An entry of `controls` has no `name`.
    #[error("control without a name")]
    UnnamedControl,
    /// A file could not be read or written.
    #[error(transparent)]
    File(#[from] InputError),
    /// A pinned control is not a valid NBG.
    #[error("{name}: {failure}")]
    Control {
        /// The control's file name.
        name: String,
        /// Why it does not parse or its ledger cannot be proven.
        failure: Failure,
    },
    /// The committed mapping registry was refused.
    #[error(transparent)]
    Mapping(#[from] MappingError),
    /// A committed capture set could not be loaded.
    #[error(transparent)]
    Capture(#[from] LoadError),
    /// A committed capture set's differential could not start.
    #[error("{name}/{source}")]
    Differential {
        /// The capture set's folder name.
        name: String,
        /// Which capture is invalid.
        source: CaptureError,
    },
    /// A committed capture set does not parse while the mappings are checked.
    #[error(transparent)]
    Check(#[from] CaptureFailure),
    /// A rebuilt document could not be turned into JSON.
    #[error("{name}: {source}")]
    Serialize {
        /// What was being serialized.
        name: String,
        /// Why.
        source: serde_json::Error,
    },
    /// A committed corpus config was refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A committed report could not be rendered.
    #[error("{path}: {source}")]
    Report {
        /// The report's path relative to the project root.
        path: &'static str,
        /// Why.
        source: ReportError,
    },
    /// The field map could not be exported.
    #[error(transparent)]
    FieldMap(#[from] crate::report::fieldmap::FieldMapError),
    /// The evidence of the ONNX layer (audits, runs) could not be rebuilt: a committed model,
    /// input or policy was refused.
    #[cfg(feature = "onnx")]
    #[error("{what}: {refusal}")]
    Onnx {
        /// Which piece of the evidence.
        what: String,
        /// The refusal.
        refusal: crate::onnx::refusal::Refusal,
    },
    /// The locator's evidence could not be rebuilt.
    #[cfg(feature = "onnx")]
    #[error(transparent)]
    Locate(#[from] crate::lab::locate::LocateError),
    /// A builder refused the synthetic pair the locator's evidence is built from.
    #[error(transparent)]
    Build(#[from] crate::lab::synth::BuildError),
    /// A folder of the evidence tree could not be created.
    #[error("{}: {source}", .dir.display())]
    CreateDir {
        /// The folder.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl EvidenceError {
    /// Evidence that cannot be rebuilt or written is a usage or I/O problem.
    pub fn exit_status(&self) -> Exit {
        match self {
            EvidenceError::Read { .. }
            | EvidenceError::Json { .. }
            | EvidenceError::NoControls
            | EvidenceError::UnnamedControl
            | EvidenceError::File(_)
            | EvidenceError::Control { .. }
            | EvidenceError::Mapping(_)
            | EvidenceError::Capture(_)
            | EvidenceError::Differential { .. }
            | EvidenceError::Check(_)
            | EvidenceError::Serialize { .. }
            | EvidenceError::Config(_)
            | EvidenceError::Report { .. }
            | EvidenceError::FieldMap(_)
            | EvidenceError::Build(_)
            | EvidenceError::CreateDir { .. } => Exit::Usage,
            #[cfg(feature = "onnx")]
            EvidenceError::Onnx { .. } | EvidenceError::Locate(_) => Exit::Usage,
        }
    }
}

/// Write every rebuilt evidence file (atomically), for `verify-generated --write`.
pub fn write_all(root: &Path) -> Result<usize, EvidenceError> {
    let generated = all(root)?;
    for g in &generated {
        let path = root.join(&g.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| EvidenceError::CreateDir {
                dir: parent.to_path_buf(),
                source,
            })?;
        }
        crate::files::write_atomic(&path, g.text.as_bytes(), true)?;
    }
    Ok(generated.len())
}

/// Where the evidence that needs the `onnx` feature lives (the audit and runs; the locator,
/// which reads ONNX models).
pub const ONNX_EVIDENCE: [&str; 2] = ["evidence/onnx/", "evidence/locate/"];

/// Rebuild `evidence/onnx/`: the audit of every committed ONNX fixture, and the CPU and hybrid
/// runs of the spectral-mask control on its committed input.
#[cfg(feature = "onnx")]
pub fn onnx_evidence(root: &Path) -> Result<Vec<Generated>, EvidenceError> {
    use crate::onnx::{audit, fixtures, npz, policy, run};
    let refused = |what: &str| {
        let what = what.to_string();
        move |refusal| EvidenceError::Onnx { what, refusal }
    };
    let serialize = |name: String| move |source| EvidenceError::Serialize { name, source };
    let policy = policy::load(&root.join(policy::DEFAULT_POLICY)).map_err(refused("policy"))?;
    let limits = audit::Limits::default();
    let dir = root.join(fixtures::DIR);
    let read = |name: &str| crate::files::read_regular(&dir.join(name));
    let mut out = Vec::new();
    for (file, stem) in [
        ("spectral_mask_conv.onnx", "spectral-mask"),
        ("dynamic_identity.onnx", "dynamic-identity"),
        ("mixed_sin.onnx", "mixed-sin"),
    ] {
        let a = audit::audit(&read(file)?, &limits, &policy).map_err(refused(file))?;
        let value = serde_json::to_value(&a).map_err(serialize(file.into()))?;
        out.push(Generated {
            path: format!("evidence/onnx/{stem}-audit.json"),
            text: canonical(&value),
        });
    }
    let model = read("spectral_mask_conv.onnx")?;
    let a = audit::audit(&model, &limits, &policy).map_err(refused("spectral_mask_conv.onnx"))?;
    let inputs = npz::read_inputs(
        &read("spectral_mask_input.npz")?,
        &a.inputs,
        limits.tensor_bytes,
    )
    .map_err(refused("spectral_mask_input.npz"))?;
    for (mode, name) in [(run::Mode::Cpu, "cpu"), (run::Mode::Hybrid, "hybrid")] {
        let mut engines = run::Engines::for_audit(&a);
        let (report, _) = run::run(&a, &model, mode, &inputs, &limits, &mut engines)
            .map_err(|(_, r)| refused(name)(r))?;
        let value = serde_json::to_value(&report).map_err(serialize(format!("{name} run")))?;
        out.push(Generated {
            path: format!("evidence/onnx/spectral-mask-{name}-run.json"),
            text: canonical(&value),
        });
    }
    Ok(out)
}

/// `evidence/locate/synthetic-pair.json`: the locator on the synthetic pair.
#[cfg(feature = "onnx")]
fn locate_evidence() -> Result<Vec<Generated>, EvidenceError> {
    use crate::lab::locate::{locate, synthetic_pair};
    let (m, n) = synthetic_pair()?;
    let doc = locate(&m, &n, &crate::lab::locate::LayerSource::None)?;
    Ok(vec![Generated {
        path: "evidence/locate/synthetic-pair.json".into(),
        text: canonical(&doc.to_json()),
    }])
}
