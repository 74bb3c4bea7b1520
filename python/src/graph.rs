//! `Graph`: a parsed file's facts as Python objects, its `parse --json` document, and its
//! decoded weights as numpy arrays.

use crate::error::contained;
use crate::input::Input;
use crate::value::{show, to_py};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict};
use serde_json::Value;
use std::sync::Arc;

/// `doc[key]` as text, where it is text.
pub fn text(doc: &Value, key: &str) -> Option<String> {
    doc.get(key)?.as_str().map(str::to_string)
}

/// `doc[key]` as an unsigned integer, where it is one.
pub fn unsigned(doc: &Value, key: &str) -> Option<u64> {
    doc.get(key)?.as_u64()
}

/// `doc[key]` as a list of unsigned integers (empty where it is none).
fn unsigneds(doc: &Value, key: &str) -> Vec<u64> {
    let items = doc.get(key).and_then(Value::as_array);
    items
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
        .collect()
}

/// The entries of the list `doc[key]` (none where it is absent or null).
pub fn entries<'a>(doc: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    doc.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// A graph input or output, as its I/O record describes it.
#[pyclass(module = "nbg_lab", frozen, get_all)]
pub struct Tensor {
    /// Its name, where the record layout has one (v1 before 0x00010004 has none).
    name: Option<String>,
    /// Its shape, outermost first (the NumPy order `coefficients` and `nbg run` use).
    shape: Vec<u64>,
    /// Its dimensions as stored, innermost first.
    dimensions: Vec<u64>,
    /// Its element type (`UINT8`, `INT16`, `FLOAT16`...), where the format word is known.
    dtype: Option<String>,
    /// Its quantization format (`AFFINE_ASYMMETRIC`, `DYNAMIC_FIXED_POINT`, `NONE`...).
    quantization: Option<String>,
    /// The affine scale, for affine quantization.
    scale: Option<f64>,
    /// The affine zero point, for affine quantization.
    zero_point: Option<i64>,
    /// The fixed-point position, for dynamic fixed point.
    fixed_point_position: Option<i64>,
}

#[pymethods]
impl Tensor {
    fn __repr__(&self) -> String {
        format!(
            "Tensor(name={}, shape={:?}, dtype={}, quantization={})",
            show(&self.name),
            self.shape,
            show(&self.dtype),
            show(&self.quantization)
        )
    }
}

impl Tensor {
    fn of(doc: &Value) -> Tensor {
        let signed = |k: &str| doc.get(k).and_then(Value::as_i64);
        Tensor {
            name: text(doc, "name"),
            shape: unsigneds(doc, "npz_shape"),
            dimensions: unsigneds(doc, "dimensions"),
            dtype: text(doc, "element_type"),
            quantization: text(doc, "quantization_format"),
            scale: doc.get("scale").and_then(Value::as_f64),
            zero_point: signed("zero_point"),
            fixed_point_position: signed("fixed_point_position"),
        }
    }
}

/// A layer of the network's layer table.
#[pyclass(module = "nbg_lab", frozen, get_all)]
pub struct Layer {
    /// Its position in the table.
    index: u64,
    /// Its id.
    id: Option<u64>,
    /// Its name (the compiler's layer class: `ConvolutionReluPoolingLayer2`...).
    name: Option<String>,
    /// How many operations it has.
    operation_count: Option<u64>,
    /// File offset of its record.
    offset: Option<u64>,
}

#[pymethods]
impl Layer {
    fn __repr__(&self) -> String {
        format!("Layer(index={}, name={})", self.index, show(&self.name))
    }
}

/// An operation of the network's operation table.
#[pyclass(module = "nbg_lab", frozen, get_all)]
pub struct Operation {
    /// Its position in the table.
    index: u64,
    /// Its engine's type word.
    r#type: Option<u64>,
    /// The engine's name (`NN`, `TP`, `SH`, `INIT`...).
    type_name: Option<String>,
    /// The layer it belongs to (0xffffffff or 0xffff for none).
    layer_id: Option<u64>,
    /// File offset of its record.
    offset: Option<u64>,
}

#[pymethods]
impl Operation {
    fn __repr__(&self) -> String {
        format!(
            "Operation(index={}, type_name={}, layer_id={})",
            self.index,
            show(&self.type_name),
            show(&self.layer_id)
        )
    }
}

/// A section (v2) or table (v1) of the file.
#[pyclass(module = "nbg_lab", frozen, get_all)]
pub struct Section {
    /// Its name (`NBG_SECTION_NETWORK_INFO`, `input`, `nn_commands`...).
    name: Option<String>,
    /// File offset of its payload.
    offset: u64,
    /// Its payload's size in bytes.
    size: u64,
    /// SHA-256 of its payload, in hex.
    sha256: Option<String>,
}

#[pymethods]
impl Section {
    fn __repr__(&self) -> String {
        format!(
            "Section(name={}, offset={}, size={})",
            show(&self.name),
            self.offset,
            self.size
        )
    }
}

/// A parsed NBG file. Its attributes are read from the same document as `nbg parse --json`
/// prints, which `to_dict()` returns whole.
#[pyclass(module = "nbg_lab", frozen)]
pub struct Graph {
    input: Arc<Input>,
    doc: Value,
}

impl Graph {
    /// The graph of `input`, whose parse gave `doc`.
    pub fn new(input: Arc<Input>, doc: Value) -> Graph {
        Graph { input, doc }
    }

    fn header(&self) -> &Value {
        self.doc.get("header").unwrap_or(&Value::Null)
    }
}

#[pymethods]
impl Graph {
    /// `nbg-v1` or `nbg-v2`.
    #[getter]
    fn format(&self) -> Option<String> {
        text(&self.doc, "format")
    }

    /// The family: `v1` or `v2`.
    #[getter]
    fn family(&self) -> Option<String> {
        self.format()?.strip_prefix("nbg-").map(str::to_string)
    }

    /// The header's version word (0x00020000, 0x0001000e...).
    #[getter]
    fn version(&self) -> Option<u64> {
        unsigned(self.header(), "version")
    }

    /// The target word as `nbg parse` prints it (`0x1000003b`): the PID of the part the file
    /// was compiled for.
    #[getter]
    fn target(&self) -> Option<String> {
        text(&self.doc, "target")
    }

    /// The network's name.
    #[getter]
    fn name(&self) -> Option<String> {
        let v2 = self.doc.get("network_info").and_then(|n| text(n, "name"));
        v2.or_else(|| text(self.header(), "network_name"))
    }

    /// The file's size in bytes.
    #[getter]
    fn size(&self) -> Option<u64> {
        unsigned(self.doc.get("file")?, "size")
    }

    /// The file's SHA-256, in hex.
    #[getter]
    fn sha256(&self) -> Option<String> {
        text(self.doc.get("file")?, "sha256")
    }

    /// The graph's inputs.
    #[getter]
    fn inputs(&self) -> Vec<Tensor> {
        entries(&self.doc, "inputs").map(Tensor::of).collect()
    }

    /// The graph's outputs.
    #[getter]
    fn outputs(&self) -> Vec<Tensor> {
        entries(&self.doc, "outputs").map(Tensor::of).collect()
    }

    /// The layer table.
    #[getter]
    fn layers(&self) -> Vec<Layer> {
        let layer = |(i, l): (usize, &Value)| Layer {
            index: unsigned(l, "index").unwrap_or(i as u64),
            id: unsigned(l, "id"),
            name: text(l, "name"),
            operation_count: unsigned(l, "operation_count"),
            offset: unsigned(l, "offset"),
        };
        entries(&self.doc, "layers")
            .enumerate()
            .map(layer)
            .collect()
    }

    /// The operation table.
    #[getter]
    fn operations(&self) -> Vec<Operation> {
        let operation = |(i, o): (usize, &Value)| Operation {
            index: unsigned(o, "index").unwrap_or(i as u64),
            r#type: unsigned(o, "type"),
            type_name: text(o, "type_name"),
            layer_id: unsigned(o, "layer_id"),
            offset: unsigned(o, "offset"),
        };
        entries(&self.doc, "operations")
            .enumerate()
            .map(operation)
            .collect()
    }

    /// The sections (v2's section directory) or tables (v1's entry table).
    #[getter]
    fn sections(&self) -> Vec<Section> {
        let v2 = self.doc.get("sections").is_some_and(Value::is_array);
        let (list, name) = if v2 {
            ("sections", "type_name")
        } else {
            ("tables", "name")
        };
        let section = |s: &Value| Section {
            name: text(s, name),
            offset: unsigned(s, "offset").unwrap_or(0),
            size: unsigned(s, "size").unwrap_or(0),
            sha256: s.get("fingerprint").and_then(|f| text(f, "sha256")),
        };
        entries(&self.doc, list).map(section).collect()
    }

    /// The document `nbg parse --json` prints, as `json.loads` reads it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.doc)
    }

    /// Every decoded weight and bias as a numpy array, named and typed as `nbg coefficients
    /// -o` writes them (NN buffers' `.weights`, `.biases`, `.extras`, `.zero_point`; TP parts;
    /// the images shaders read). With `float=True`, every weight tensor is float32 as far as the
    /// file says (`nbg coefficients -o --float`). A path is read again and must still be the
    /// file that was parsed.
    #[pyo3(signature = (float = false))]
    fn coefficients<'py>(&self, py: Python<'py>, float: bool) -> PyResult<Bound<'py, PyDict>> {
        let expected = self.sha256();
        let input = Arc::clone(&self.input);
        let tensors = py.detach(move || {
            contained(|| {
                use nbg_lab::nbg::family::NbgFamily;
                let bytes = input.load()?;
                // The file parsed before: a parse that now fails, or hashes otherwise (the
                // parse's own SHA-256), means it changed since.
                let graph = nbg_lab::parse(&bytes)
                    .ok()
                    .filter(|g| expected.as_deref() == Some(g.file().sha256.hex().as_str()))
                    .ok_or_else(|| input.changed())?;
                let view = graph.coefficient_view();
                let c = nbg_lab::nbg::coefficients::of(&view);
                Ok(nbg_lab::report::weights_npz::tensors(&c, float))
            })
        })?;
        let numpy = py.import("numpy")?;
        let out = PyDict::new(py);
        for t in tensors {
            // One copy into a bytearray the array then owns (writable), no loop per element.
            let data = PyByteArray::new(py, &t.data);
            let flat = numpy.call_method1("frombuffer", (data, t.dtype.descr()))?;
            out.set_item(t.name, flat.call_method1("reshape", (t.shape,))?)?;
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "Graph(format={}, target={}, name={}, size={})",
            show(&self.format()),
            show(&self.target()),
            show(&self.name()),
            show(&self.size())
        )
    }
}
