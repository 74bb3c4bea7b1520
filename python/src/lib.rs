//! `nbg_lab._native`: the nbg-lab crate's parser, ledger, decoders and lab in Python. Every
//! function runs the same library code as the `nbg` command, without the GIL, and gives the
//! same documents its `--json` prints; a refusal raises `NbgError` with the CLI's code.

mod error;
mod graph;
mod input;
mod ledger;
mod value;

use error::{NbgError, Refusal, contained};
use graph::Graph;
use input::{Input, Source};
use ledger::Image;
use nbg_lab::nbg::failure::{Code, Failure};
use nbg_lab::nbg::family::NbgFamily;
use nbg_lab::nbg::image::NbgImage;
use nbg_lab::nbg::stream::FileSource;
use nbg_lab::report::json;
use pyo3::prelude::*;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// Run `work` without the GIL, a panic contained, and turn its document into Python objects.
fn document<'py>(
    py: Python<'py>,
    work: impl FnOnce() -> Result<Value, Refusal> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let doc = py.detach(|| contained(work))?;
    value::to_py(py, &doc)
}

/// Parse an NBG file strictly: a path (`str` or `os.PathLike`) or its bytes (`bytes`,
/// `memoryview`, `bytearray`). Returns a `Graph`; raises `NbgError` at the first rule the file
/// breaks (`bad-magic`, `truncated`...) or when it cannot be read (`unreadable`).
#[pyfunction]
fn parse(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Graph> {
    let input = Arc::new(Input::of(source)?);
    let held = Arc::clone(&input);
    let doc = py.detach(move || {
        contained(|| match held.source() {
            Source::Memory(bytes) => Ok(nbg_lab::parse(bytes)?.to_json()),
            Source::File(path) => {
                // Streamed as `nbg parse` streams it: the file is never held in memory.
                let parsed = nbg_lab::nbg::open::parse_file(path, Default::default())?;
                Ok(parsed?.to_json())
            }
        })
    })?;
    Ok(Graph::new(input, doc))
}

/// The byte ledger of an NBG file (a path or its bytes), as `nbg image --json` prints it: every
/// byte owned once, and the proof that the owners re-emit the file.
#[pyfunction]
fn image(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Image> {
    let input = Input::of(source)?;
    let doc = py.detach(|| contained(|| with_ledger(&input, |_, image| Ok(image.to_json()))))?;
    Ok(Image::new(doc))
}

/// Build `input`'s graph and ledger and hand them to `then`; the I/O errors of a file read in
/// ranges are checked after it.
fn with_ledger(
    input: &Input,
    then: impl FnOnce(&nbg_lab::Graph<'_>, &NbgImage<'_>) -> Result<Value, Refusal>,
) -> Result<Value, Refusal> {
    let path = match input.source() {
        Source::Memory(bytes) => {
            let graph = nbg_lab::parse(bytes)?;
            let image = NbgImage::new(&graph)?;
            return then(&graph, &image);
        }
        Source::File(path) => path,
    };
    let (source, built) = nbg_lab::nbg::open::open_image(path)?;
    let (graph, image) = built?;
    let doc = then(&graph, &image)?;
    match source.error() {
        Some(e) => Err(e.into()),
        None => Ok(doc),
    }
}

/// Re-emit a file from its ledger and re-encode every decoded record through the field map,
/// in memory (nothing is written): `nbg roundtrip --json`'s entry for the file.
#[pyfunction]
fn roundtrip<'py>(py: Python<'py>, source: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let input = Input::of(source)?;
    document(py, || {
        with_ledger(&input, |graph, image| {
            let records = nbg_lab::nbg::reencode::reencode(graph, image);
            let emitted = image.reconstruction();
            Ok(json::round_trip(&input.shown(), &records, &emitted))
        })
    })
}

/// Compare two NBG files owner by owner: `nbg diff --json`'s document. When `b` does not
/// parse, its bytes are attributed through `a`'s ledger with the reason.
#[pyfunction]
fn diff<'py>(py: Python<'py>, a: PathBuf, b: PathBuf) -> PyResult<Bound<'py, PyAny>> {
    document(py, || {
        let open = nbg_lab::nbg::open::open_image;
        let ((sa, la), (sb, lb)) = (open(&a)?, open(&b)?);
        // A's I/O error first, as `nbg diff` says them.
        let io = |sa: &FileSource, sb: &FileSource| {
            sa.error().or_else(|| sb.error()).map_or(Ok(()), Err)
        };
        io(&sa, &sb)?;
        let (ga, ia) = la?;
        let doc = match lb {
            Ok((gb, ib)) => {
                let report = nbg_lab::lab::diff::diff(&ga, &ia, &gb, &ib)
                    .map_err(|e| Refusal::new("family-mismatch", 0, e.to_string()))?;
                json::value(&report)
            }
            Err(f) => {
                let bytes = nbg_lab::files::read_regular(&b)?;
                json::value(&nbg_lab::lab::diff::damaged(&ga, &ia, &bytes, &f))
            }
        };
        io(&sa, &sb)?;
        Ok(doc)
    })
}

/// Judge files as `nbg check --json` does: each parses, and with `target` (a PID) or `runtime`
/// (the newest version word the board's runtime reads), whether it will load there. Returns
/// `{"files": [...]}`; a file that cannot be read is an `unreadable` entry, not an exception.
#[pyfunction]
#[pyo3(signature = (paths, target = None, runtime = None, strict = false))]
fn check<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    target: Option<u32>,
    runtime: Option<u32>,
    strict: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use nbg_lab::lab::compatibility::{Expect, judge};
    document(py, || {
        let expect = Expect { target, runtime };
        let entries = paths.iter().map(|path| {
            let shown = path.display().to_string();
            let parsed = nbg_lab::nbg::open::parse_file(path, Default::default())
                .unwrap_or_else(|e| Err(Failure::new(Code::Unreadable, 0, e.to_string())));
            json::judgement(&shown, &judge(&shown, parsed, expect, strict))
        });
        Ok(json::files(entries.collect()))
    })
}

/// What a file is and where it runs: `nbg info --json`'s entry for the file (boards named by the
/// installed vendor driver's configurations, when there is one).
#[pyfunction]
fn info<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyAny>> {
    document(py, || {
        let configs = nbg_lab::simulator::info_configurations();
        let info = nbg_lab::lab::info::info(&path, configs.as_deref())??;
        Ok(json::value(&info))
    })
}

/// Match a source model's tensors (`MODEL.onnx` or `TENSORS.npz`) to a graph's decoded
/// coefficients: `nbg locate --json`'s document; with `layers=True`, every NN command against
/// the model layer its kernel pairs it with (`--layers`).
#[pyfunction]
#[pyo3(signature = (model, graph, layers = false))]
fn locate<'py>(
    py: Python<'py>,
    model: PathBuf,
    graph: PathBuf,
    layers: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use nbg_lab::lab::locate::{LayerSource, LocateError, locate_files};
    document(py, || {
        let source = if layers {
            LayerSource::Model
        } else {
            LayerSource::None
        };
        locate_files(&model, &graph, &source)
            .map(|doc| doc.to_json())
            .map_err(|e| match e {
                LocateError::Parse(f) | LocateError::Ledger(f) => f.into(),
                LocateError::NbgUnreadable(e) => e.into(),
                LocateError::ModelUnreadable { refusal, .. } | LocateError::Model(refusal) => {
                    Refusal::new(refusal.code.to_string(), 0, refusal.message)
                }
                other => Refusal::new("usage", 0, other.to_string()),
            })
    })
}

/// The module: its functions, classes and `NbgError`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NbgError", m.py().get_type::<NbgError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Graph>()?;
    m.add_class::<graph::Tensor>()?;
    m.add_class::<graph::Layer>()?;
    m.add_class::<graph::Operation>()?;
    m.add_class::<graph::Section>()?;
    m.add_class::<Image>()?;
    m.add_class::<ledger::Owner>()?;
    for f in [
        wrap_pyfunction!(parse, m)?,
        wrap_pyfunction!(image, m)?,
        wrap_pyfunction!(roundtrip, m)?,
        wrap_pyfunction!(diff, m)?,
        wrap_pyfunction!(check, m)?,
        wrap_pyfunction!(info, m)?,
        wrap_pyfunction!(locate, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
