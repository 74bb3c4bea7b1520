//! `Image`: the byte ledger of a file, every byte of `[0, size)` with exactly one owner.

use crate::graph::{entries, text, unsigned};
use crate::value::{show, to_py};
use pyo3::prelude::*;
use serde_json::Value;

/// One owned range of the file.
#[pyclass(module = "nbg_lab", frozen, get_all)]
pub struct Owner {
    /// First byte (file offset).
    start: u64,
    /// One past the last byte.
    end: u64,
    /// Its class (`decoded-record`, `padding`, `preserved-opaque`...).
    class_: Option<String>,
    /// The field or record it is (`fixed part: header`, `nn_commands[3]`...).
    field: Option<String>,
}

#[pymethods]
impl Owner {
    fn __repr__(&self) -> String {
        format!(
            "Owner(start={}, end={}, class_={}, field={})",
            self.start,
            self.end,
            show(&self.class_),
            show(&self.field)
        )
    }
}

/// A file's ledger as `nbg image --json` prints it: its owners, their totals by class, and the
/// proof that the owners re-emit the file byte for byte.
#[pyclass(module = "nbg_lab", frozen)]
pub struct Image {
    doc: Value,
}

impl Image {
    /// The image whose `nbg image --json` document is `doc`.
    pub fn new(doc: Value) -> Image {
        Image { doc }
    }
}

#[pymethods]
impl Image {
    /// Every owner, in file order.
    #[getter]
    fn owners(&self) -> Vec<Owner> {
        let owner = |o: &Value| Owner {
            start: unsigned(o, "start").unwrap_or(0),
            end: unsigned(o, "end").unwrap_or(0),
            class_: text(o, "class"),
            field: text(o, "label"),
        };
        entries(&self.doc, "owners").map(owner).collect()
    }

    /// Bytes by owner class.
    #[getter]
    fn totals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.doc.get("totals").unwrap_or(&Value::Null))
    }

    /// Whether the owners re-emit the file byte for byte.
    #[getter]
    fn identical(&self) -> Option<bool> {
        self.doc.get("reconstruction")?.get("identical")?.as_bool()
    }

    /// The document `nbg image --json` prints, as `json.loads` reads it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.doc)
    }

    fn __repr__(&self) -> String {
        let owners = entries(&self.doc, "owners").count();
        let identical = match self.identical() {
            Some(true) => "True",
            Some(false) => "False",
            None => "None",
        };
        format!("Image(owners={owners}, identical={identical})")
    }
}
