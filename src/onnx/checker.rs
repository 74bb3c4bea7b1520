//! The checker the audit runs before any session: what `onnx.checker.check_model(full_check=True)`
//! refuses, refused here with a specific code and the node or value concerned.
//!
//! Operator schemas come from `onnx/schemas.json`, generated from the pinned `onnx` package's
//! own schema registry by `bench/onnx_schemas.py` (never hand-written; `verify-fixtures` checks
//! it against its regeneration). Checked: IR version and opset imports; graph names; that every
//! value a node reads is defined before it (in this graph or an enclosing one) and every graph
//! output is produced; operator known at the imported opset, not deprecated; input, output and
//! attribute arity, names, types and required flags; type constraints (inputs bound to one
//! type parameter agree, types allowed, inferred output types against declared ones); `If`
//! branch output counts; tensor payloads against their shapes; and type and shape inference
//! for the operators the fixtures and Silero use (constant shapes, axes and pads read from
//! initializers and `Constant` nodes; unknown stays unknown), refusing an inferred shape that
//! contradicts a declared one. `infer` exposes the inferred facts so that a test can compare
//! them with the `onnx` package's own inference (`onnx/shape_reference.json`).

use super::error::OnnxError;
use super::proto::{AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeValue};
use super::refusal::{Refusal, RefusalCode};
use serde::Deserialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The generated table, compiled in.
pub const SCHEMAS_JSON: &str = include_str!("../../onnx/schemas.json");
pub use super::pins::SCHEMAS_PATH;
/// The script that regenerates the table from the pinned `onnx` package.
pub const SCHEMAS_GENERATOR: &str = "bench/onnx_schemas.py";

/// The operator schema table (`onnx/schemas.json`): every schema of the pinned `onnx`
/// package, sorted by (domain, name, since).
#[derive(Debug, Deserialize)]
pub struct Table {
    /// The table format, `nbg-onnx-operator-schemas/1`.
    pub schema: String,
    /// The `onnx` package version it was generated from.
    pub onnx: String,
    /// How many schemas it holds (must equal `operators.len()`).
    pub count: usize,
    /// The schemas.
    pub operators: Vec<Schema>,
}

/// One operator schema at one operator set version.
#[derive(Debug, Deserialize)]
pub struct Schema {
    /// The operator's domain (empty: the default ONNX domain).
    pub domain: String,
    /// The operator (`Conv`, `Relu`, ...).
    pub name: String,
    /// The operator set version this schema takes effect from.
    pub since: i64,
    /// Whether the schema is deprecated.
    pub deprecated: bool,
    /// The least and most inputs a node may have.
    pub inputs: [i64; 2],
    /// The least and most outputs a node may have.
    pub outputs: [i64; 2],
    /// (name, type string, single/optional/variadic, homogeneous)
    pub formal_inputs: Vec<(String, String, String, bool)>,
    /// The same, for the outputs.
    pub formal_outputs: Vec<(String, String, String, bool)>,
    /// (name, AttributeProto type, required)
    pub attributes: Vec<(String, i32, bool)>,
    /// Each type parameter (`T`, ...) with the type strings it may be, sorted.
    pub type_constraints: BTreeMap<String, Vec<String>>,
}

/// The compiled-in table, parsed on first use, or why it cannot be.
static TABLE: OnceLock<Result<Table, OnnxError>> = OnceLock::new();

/// The parsed table (parsed once).
pub fn table() -> Result<&'static Table, OnnxError> {
    TABLE
        .get_or_init(|| {
            let t: Table = serde_json::from_str(SCHEMAS_JSON)
                .map_err(|e| OnnxError::SchemaTable(e.to_string()))?;
            if t.schema != "nbg-onnx-operator-schemas/1" || t.count != t.operators.len() {
                return Err(OnnxError::SchemaTableIncomplete);
            }
            Ok(t)
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn graph_invalid(m: String) -> Refusal {
    Refusal::new(RefusalCode::GraphInvalid, m)
}
fn schema_mismatch(m: String) -> Refusal {
    Refusal::new(RefusalCode::SchemaMismatch, m)
}
fn type_mismatch(m: String) -> Refusal {
    Refusal::new(RefusalCode::TypeMismatch, m)
}
fn shape_mismatch(m: String) -> Refusal {
    Refusal::new(RefusalCode::ShapeMismatch, m)
}
fn opset_invalid(m: String) -> Refusal {
    Refusal::new(RefusalCode::OpsetInvalid, m)
}

fn norm(domain: &str) -> &str {
    if domain == "ai.onnx" { "" } else { domain }
}

/// Domains whose operators the table defines: a node there must match a schema.
fn standard(domain: &str) -> bool {
    matches!(
        norm(domain),
        "" | "ai.onnx.ml" | "ai.onnx.preview.training" | "ai.onnx.preview"
    )
}

/// The ONNX type string of a tensor element type (`tensor(float)` and so on).
pub fn type_string(elem: i32) -> Option<String> {
    const N: [&str; 27] = [
        "",
        "float",
        "uint8",
        "int8",
        "uint16",
        "int16",
        "int32",
        "int64",
        "string",
        "bool",
        "float16",
        "double",
        "uint32",
        "uint64",
        "complex64",
        "complex128",
        "bfloat16",
        "float8e4m3fn",
        "float8e4m3fnuz",
        "float8e5m2",
        "float8e5m2fnuz",
        "uint4",
        "int4",
        "float4e2m1",
        "float8e8m0",
        "uint2",
        "int2",
    ];
    let n = N.get(usize::try_from(elem).ok()?)?;
    (!n.is_empty()).then(|| format!("tensor({n})"))
}

/// Bits per element of a fixed-size type; `None` for strings and unknown codes.
fn bits(elem: i32) -> Option<u64> {
    match elem {
        24 => Some(8),
        25 | 26 => Some(2),
        e => super::proto::data_type::bits(e),
    }
}

/// A shape as inference knows it: `None` dimensions are unknown.
pub type Shape = Vec<Option<i64>>;

/// A value's known facts: tensor element type, shape, and (for a small integer constant) its
/// contents, which operators taking shapes, axes or pads as inputs read.
#[derive(Clone, Debug, Default)]
struct Facts {
    elem: Option<i32>,
    shape: Option<Shape>,
    value: Option<Vec<i64>>,
}

/// The most elements of an integer constant whose contents inference keeps.
const MAX_KNOWN_VALUE: u64 = 64;

type Scope = BTreeMap<String, Facts>;

fn node_label(n: &NodeProto, i: usize) -> String {
    match n.name.as_deref().filter(|s| !s.is_empty()) {
        Some(name) => format!("node {name:?} ({})", n.op_type.as_deref().unwrap_or("")),
        None => format!("node #{i} ({})", n.op_type.as_deref().unwrap_or("")),
    }
}

fn facts_of_value(v: &super::proto::ValueInfoProto) -> Facts {
    match v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(TypeValue::TensorType(t)) => Facts {
            elem: t.elem_type.filter(|&e| e != 0),
            shape: t.shape.as_ref().map(|s| {
                s.dim
                    .iter()
                    .map(|d| match d.value {
                        Some(super::proto::DimensionValue::DimValue(n)) => Some(n),
                        _ => None,
                    })
                    .collect()
            }),
            value: None,
        },
        _ => Facts::default(),
    }
}

fn facts_of_tensor(t: &TensorProto) -> Facts {
    Facts {
        elem: t.data_type,
        shape: Some(t.dims.iter().map(|&d| Some(d)).collect()),
        value: int_values(t),
    }
}

/// The contents of a small int64 or int32 tensor; `None` for anything else or a payload that
/// does not match its shape.
fn int_values(t: &TensorProto) -> Option<Vec<i64>> {
    let count = t.dims.iter().try_fold(1u64, |a, &d| {
        u64::try_from(d).ok().and_then(|d| a.checked_mul(d))
    })?;
    if count > MAX_KNOWN_VALUE {
        return None;
    }
    let v: Vec<i64> = match (t.data_type?, &t.raw_data) {
        (7, Some(raw)) => raw
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect(),
        (6, Some(raw)) => raw
            .chunks_exact(4)
            .map(|c| i64::from(i32::from_le_bytes(c.try_into().unwrap_or_default())))
            .collect(),
        (7, None) => t.int64_data.clone(),
        (6, None) => t.int32_data.iter().map(|&x| i64::from(x)).collect(),
        _ => return None,
    };
    let width = if t.data_type == Some(7) { 8 } else { 4 };
    let whole = t
        .raw_data
        .as_ref()
        .is_none_or(|r| r.len() as u64 == count * width);
    (whole && v.len() as u64 == count).then_some(v)
}

/// The element type and shape inference gave one node output (before declared facts were
/// merged in): what `infer` reports, for comparison with the `onnx` package's inference.
#[derive(Clone, Debug, PartialEq)]
pub struct Inferred {
    /// The output value's name.
    pub value: String,
    /// The inferred element type (a `proto::data_type` code), when known.
    pub elem: Option<i32>,
    /// The inferred shape, when the rank is known; `None` dimensions are unknown.
    pub shape: Option<Shape>,
}

/// Check the whole model. The audit has already bounded the graph tree.
pub fn check(model: &ModelProto) -> Result<(), Refusal> {
    run(model, None)
}

/// Check the whole model and report what inference gave every node output, in graph order
/// (subgraphs before the node that holds them).
pub fn infer(model: &ModelProto) -> Result<Vec<Inferred>, Refusal> {
    let log = RefCell::new(Vec::new());
    run(model, Some(&log))?;
    Ok(log.into_inner())
}

fn run(model: &ModelProto, log: Option<&RefCell<Vec<Inferred>>>) -> Result<(), Refusal> {
    let table =
        table().map_err(|e| Refusal::new(RefusalCode::SchemaTableInvalid, e.to_string()))?;
    match model.ir_version {
        Some(v) if v >= 1 => {}
        v => {
            return Err(Refusal::new(
                RefusalCode::IrVersionInvalid,
                format!(
                    "ir_version is {}; it must be set and positive",
                    v.unwrap_or(0)
                ),
            ));
        }
    }
    if model.opset_import.is_empty() {
        return Err(opset_invalid(
            "the model imports no operator set (opset_import is empty)".into(),
        ));
    }
    let mut opsets: BTreeMap<String, i64> = BTreeMap::new();
    for o in &model.opset_import {
        let d = norm(o.domain.as_deref().unwrap_or("")).to_string();
        let v = o.version.unwrap_or(0);
        if v < 1 {
            return Err(opset_invalid(format!(
                "opset_import for domain {d:?} has version {v}"
            )));
        }
        if opsets.insert(d.clone(), v).is_some() {
            return Err(opset_invalid(format!(
                "opset_import names domain {d:?} twice"
            )));
        }
    }
    let mut by_name: BTreeMap<(&str, &str), Vec<&Schema>> = BTreeMap::new();
    for s in &table.operators {
        by_name.entry((&s.domain, &s.name)).or_default().push(s);
    }
    let c = Checker {
        opsets,
        by_name,
        log,
    };
    let graph = model.graph.as_ref().ok_or_else(|| {
        Refusal::new(
            RefusalCode::GraphMissing,
            "the model has no graph".to_string(),
        )
    })?;
    c.graph(graph, &Scope::new(), "main graph").map(|_| ())
}

struct Checker<'t> {
    opsets: BTreeMap<String, i64>,
    by_name: BTreeMap<(&'t str, &'t str), Vec<&'t Schema>>,
    log: Option<&'t RefCell<Vec<Inferred>>>,
}

impl Checker<'_> {
    /// Check one graph; returns the facts of its outputs (what an `If` node produces).
    fn graph(&self, g: &GraphProto, outer: &Scope, what: &str) -> Result<Vec<Facts>, Refusal> {
        let gname = g.name.as_deref().unwrap_or("");
        if gname.is_empty() {
            return Err(graph_invalid(format!("the {what} has an empty name")));
        }
        let mut scope = outer.clone();
        for t in &g.initializer {
            tensor_data(t, gname)?;
            scope.insert(t.name.clone().unwrap_or_default(), facts_of_tensor(t));
        }
        for s in &g.sparse_initializer {
            if let Some(v) = &s.values {
                scope.insert(
                    v.name.clone().unwrap_or_default(),
                    Facts {
                        elem: v.data_type,
                        shape: Some(s.dims.iter().map(|&d| Some(d)).collect()),
                        value: None,
                    },
                );
            }
        }
        for v in &g.input {
            let name = v.name.clone().unwrap_or_default();
            if name.is_empty() {
                return Err(graph_invalid(format!(
                    "graph {gname:?} has an unnamed input"
                )));
            }
            // An initializer listed as an input keeps the declared facts where given; its
            // contents are a default a feed may replace, so not known.
            let f = facts_of_value(v);
            let e = scope.entry(name).or_default();
            e.value = None;
            if f.elem.is_some() {
                e.elem = f.elem;
            }
            if f.shape.is_some() {
                e.shape = f.shape;
            }
        }
        let declared: BTreeMap<&str, Facts> = g
            .value_info
            .iter()
            .chain(&g.output)
            .filter_map(|v| Some((v.name.as_deref()?, facts_of_value(v))))
            .collect();
        let produced_later: BTreeMap<&str, usize> = g
            .node
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.output.iter().map(move |o| (o.as_str(), i)))
            .collect();
        for (i, n) in g.node.iter().enumerate() {
            let label = node_label(n, i);
            if n.op_type.as_deref().unwrap_or("").is_empty() {
                return Err(graph_invalid(format!(
                    "{label} in graph {gname:?} has no op_type"
                )));
            }
            for x in n.input.iter().filter(|x| !x.is_empty()) {
                if scope.contains_key(x) {
                    continue;
                }
                return Err(graph_invalid(match produced_later.get(x.as_str()) {
                    Some(&j) if j >= i => format!(
                        "{label} in graph {gname:?} reads {x:?}, which {} produces later: the nodes are not in topological order",
                        node_label(&g.node[j], j)
                    ),
                    _ => format!("{label} in graph {gname:?} reads {x:?}, which nothing defines"),
                }));
            }
            let mut branches: BTreeMap<&str, Vec<Facts>> = BTreeMap::new();
            for a in &n.attribute {
                for t in a.t.iter().chain(&a.tensors) {
                    tensor_data(t, gname)?;
                }
                let aname = a.name.as_deref().unwrap_or("");
                let sub = format!("subgraph {aname:?} of {label}");
                for sg in a.g.iter().chain(&a.graphs) {
                    let outs = self.graph(sg, &scope, &sub)?;
                    branches.insert(aname, outs);
                }
            }
            let outs = self.node(n, &label, &scope, &branches)?;
            for (o, mut f) in n.output.iter().zip(outs) {
                if o.is_empty() {
                    continue;
                }
                if let Some(log) = self.log {
                    log.borrow_mut().push(Inferred {
                        value: o.clone(),
                        elem: f.elem,
                        shape: f.shape.clone(),
                    });
                }
                if let Some(d) = declared.get(o.as_str()) {
                    compare(o, &label, &f, d)?;
                    merge(&mut f, d);
                }
                scope.insert(o.clone(), f);
            }
        }
        let mut outs = Vec::with_capacity(g.output.len());
        for o in &g.output {
            let name = o.name.as_deref().unwrap_or("");
            let Some(f) = scope.get(name).filter(|_| !name.is_empty()) else {
                return Err(graph_invalid(format!(
                    "output {name:?} of graph {gname:?} is produced by no node, input or initializer"
                )));
            };
            let mut f = f.clone();
            merge(&mut f, &facts_of_value(o));
            outs.push(f);
        }
        Ok(outs)
    }

    /// Schema checks for one node; returns the inferred facts of its outputs.
    fn node(
        &self,
        n: &NodeProto,
        label: &str,
        scope: &Scope,
        branches: &BTreeMap<&str, Vec<Facts>>,
    ) -> Result<Vec<Facts>, Refusal> {
        let op = n.op_type.as_deref().unwrap_or("");
        let domain = norm(n.domain.as_deref().unwrap_or(""));
        let unknown = vec![Facts::default(); n.output.len()];
        let Some(&version) = self.opsets.get(domain) else {
            return Err(opset_invalid(format!(
                "{label} uses domain {domain:?}, which the model does not import"
            )));
        };
        if !standard(domain) {
            return Ok(unknown);
        }
        let Some(versions) = self.by_name.get(&(domain, op)) else {
            return Err(schema_mismatch(format!(
                "{label}: no operator {op:?} exists in domain {domain:?}"
            )));
        };
        let Some(schema) = versions
            .iter()
            .filter(|s| s.since <= version)
            .max_by_key(|s| s.since)
        else {
            let first = versions.iter().map(|s| s.since).min().unwrap_or(0);
            return Err(opset_invalid(format!(
                "{label}: {op} first appears in opset {first} of domain {domain:?}; the model imports version {version}"
            )));
        };
        if schema.deprecated {
            return Err(schema_mismatch(format!(
                "{label}: {op} is deprecated at opset {version}"
            )));
        }
        let (ni, no) = (n.input.len() as i64, n.output.len() as i64);
        if ni < schema.inputs[0] || ni > schema.inputs[1] {
            return Err(schema_mismatch(format!(
                "{label} has {ni} inputs; {op}-{} takes {} to {}",
                schema.since, schema.inputs[0], schema.inputs[1]
            )));
        }
        if no < schema.outputs[0] || no > schema.outputs[1] {
            return Err(schema_mismatch(format!(
                "{label} has {no} outputs; {op}-{} produces {} to {}",
                schema.since, schema.outputs[0], schema.outputs[1]
            )));
        }
        for a in &n.attribute {
            let name = a.name.as_deref().unwrap_or("");
            let Some(s) = schema.attributes.iter().find(|s| s.0 == name) else {
                return Err(schema_mismatch(format!(
                    "{label}: {op}-{} has no attribute {name:?}",
                    schema.since
                )));
            };
            let t = attribute_type(a);
            if t != s.1 {
                return Err(schema_mismatch(format!(
                    "{label}: attribute {name:?} is of type {t}; {op} requires type {}",
                    s.1
                )));
            }
        }
        for s in schema.attributes.iter().filter(|s| s.2) {
            if !n.attribute.iter().any(|a| a.name.as_deref() == Some(&s.0)) {
                return Err(schema_mismatch(format!(
                    "{label}: required attribute {:?} is missing",
                    s.0
                )));
            }
        }
        if op == "If" && domain.is_empty() {
            let count = |k: &str| {
                n.attribute
                    .iter()
                    .find(|a| a.name.as_deref() == Some(k))
                    .and_then(|a| a.g.as_ref())
                    .map(|g| g.output.len())
            };
            let (t, e) = (count("then_branch"), count("else_branch"));
            if t != e || t != Some(n.output.len()) {
                return Err(graph_invalid(format!(
                    "{label}: then_branch has {} outputs, else_branch {}, the node {}",
                    t.unwrap_or(0),
                    e.unwrap_or(0),
                    n.output.len()
                )));
            }
        }
        // Type constraints: bind each type parameter from the inputs.
        let mut bound: BTreeMap<&str, i32> = BTreeMap::new();
        for (k, x) in n.input.iter().enumerate() {
            if x.is_empty() {
                continue;
            }
            let Some(formal) = formal_at(&schema.formal_inputs, k) else {
                continue;
            };
            let Some(elem) = scope.get(x).and_then(|f| f.elem) else {
                continue;
            };
            let Some(ts) = type_string(elem) else {
                continue;
            };
            let param = formal.1.as_str();
            match schema.type_constraints.get(param) {
                Some(allowed) => {
                    if !allowed.contains(&ts) && allowed.iter().all(|a| a.starts_with("tensor(")) {
                        return Err(type_mismatch(format!(
                            "{label}: input {x:?} is {ts}; {op} allows {param} in {}",
                            allowed.join(", ")
                        )));
                    }
                    // Heterogeneous variadics bind nothing across their members.
                    if formal.2 == "variadic" && !formal.3 {
                        continue;
                    }
                    if let Some(&prev) = bound.get(param) {
                        if prev != elem {
                            return Err(type_mismatch(format!(
                                "{label}: input {x:?} is {ts} but an earlier input bound to {param} is {}; they must agree",
                                type_string(prev).unwrap_or_default()
                            )));
                        }
                    } else {
                        bound.insert(param, elem);
                    }
                }
                None => {
                    if param.starts_with("tensor(") && param != ts {
                        return Err(type_mismatch(format!(
                            "{label}: input {x:?} is {ts}; {op} takes {param}"
                        )));
                    }
                }
            }
        }
        let inputs: Vec<Facts> = n
            .input
            .iter()
            .map(|x| scope.get(x).cloned().unwrap_or_default())
            .collect();
        let mut outs = unknown;
        for (k, f) in outs.iter_mut().enumerate() {
            let Some(formal) = formal_at(&schema.formal_outputs, k) else {
                continue;
            };
            let p = formal.1.as_str();
            f.elem = if let Some(&e) = bound.get(p) {
                Some(e)
            } else if p.starts_with("tensor(") {
                (1..=26).find(|&e| type_string(e).as_deref() == Some(p))
            } else {
                None
            };
        }
        if op == "Cast" && domain.is_empty() {
            outs[0].elem = int_attr(n, "to").map(|v| v as i32);
        }
        if !domain.is_empty() {
            return Ok(outs);
        }
        match op {
            "Constant" => {
                if let Some(f) = constant(n) {
                    outs[0] = f;
                }
            }
            "ConstantOfShape" => {
                outs[0].elem = Some(
                    n.attribute
                        .iter()
                        .find(|a| a.name.as_deref() == Some("value"))
                        .and_then(|a| a.t.as_ref())
                        .and_then(|t| t.data_type)
                        .unwrap_or(super::proto::data_type::FLOAT),
                );
            }
            "If" => {
                let (t, e) = (branches.get("then_branch"), branches.get("else_branch"));
                if let (Some(t), Some(e)) = (t, e) {
                    for (o, (a, b)) in outs.iter_mut().zip(t.iter().zip(e)) {
                        *o = join(a, b);
                    }
                }
            }
            _ => {}
        }
        let shapes = infer_shapes(op, schema.since, n, &inputs, label)?;
        for (o, s) in outs.iter_mut().zip(shapes) {
            if s.is_some() {
                o.shape = s;
            }
        }
        if let Some(o) = outs.first_mut() {
            if o.value.is_none() {
                o.value = infer_value(op, n, &inputs, o);
            }
        }
        Ok(outs)
    }
}

fn formal_at(
    formals: &[(String, String, String, bool)],
    k: usize,
) -> Option<&(String, String, String, bool)> {
    formals
        .get(k)
        .or_else(|| formals.last().filter(|f| f.2 == "variadic"))
}

/// The attribute's declared type, or the one its populated field implies.
fn attribute_type(a: &AttributeProto) -> i32 {
    use super::proto::attribute_type as t;
    if let Some(x) = a.r#type.filter(|&x| x != t::UNDEFINED) {
        return x;
    }
    if a.f.is_some() {
        t::FLOAT
    } else if a.i.is_some() {
        t::INT
    } else if a.s.is_some() {
        t::STRING
    } else if a.t.is_some() {
        t::TENSOR
    } else if a.g.is_some() {
        t::GRAPH
    } else if !a.floats.is_empty() {
        t::FLOATS
    } else if !a.ints.is_empty() {
        t::INTS
    } else if !a.strings.is_empty() {
        t::STRINGS
    } else if !a.tensors.is_empty() {
        t::TENSORS
    } else if !a.graphs.is_empty() {
        t::GRAPHS
    } else {
        t::UNDEFINED
    }
}

fn int_attr(n: &NodeProto, name: &str) -> Option<i64> {
    n.attribute
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
        .and_then(|a| a.i)
}

fn ints_attr<'n>(n: &'n NodeProto, name: &str) -> Option<&'n [i64]> {
    n.attribute
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
        .map(|a| a.ints.as_slice())
}

/// Declared facts fill what inference left open (after `compare` found no contradiction).
fn merge(f: &mut Facts, d: &Facts) {
    if f.elem.is_none() {
        f.elem = d.elem;
    }
    match (f.shape.as_mut(), &d.shape) {
        (None, Some(s)) => f.shape = Some(s.clone()),
        (Some(i), Some(s)) if i.len() == s.len() => {
            for (a, b) in i.iter_mut().zip(s) {
                if a.is_none() {
                    *a = *b;
                }
            }
        }
        _ => {}
    }
}

/// What an `If` produces: the facts both branches agree on.
fn join(a: &Facts, b: &Facts) -> Facts {
    Facts {
        elem: a.elem.filter(|_| a.elem == b.elem),
        shape: match (&a.shape, &b.shape) {
            (Some(x), Some(y)) if x.len() == y.len() => {
                Some(x.iter().zip(y).map(|(p, q)| p.filter(|_| p == q)).collect())
            }
            _ => None,
        },
        value: None,
    }
}

/// A `Constant` node's output, from whichever value attribute it carries.
fn constant(n: &NodeProto) -> Option<Facts> {
    use super::proto::data_type::{FLOAT, INT64};
    let a = n.attribute.first()?;
    let scalar = Some(vec![]);
    Some(match a.name.as_deref()? {
        "value" => facts_of_tensor(a.t.as_ref()?),
        "value_int" => Facts {
            elem: Some(INT64),
            shape: scalar,
            value: Some(vec![a.i?]),
        },
        "value_ints" => Facts {
            elem: Some(INT64),
            shape: Some(vec![Some(a.ints.len() as i64)]),
            value: (a.ints.len() as u64 <= MAX_KNOWN_VALUE).then(|| a.ints.clone()),
        },
        "value_float" => Facts {
            elem: Some(FLOAT),
            shape: scalar,
            value: None,
        },
        "value_floats" => Facts {
            elem: Some(FLOAT),
            shape: Some(vec![Some(a.floats.len() as i64)]),
            value: None,
        },
        "value_string" => Facts {
            elem: Some(8),
            shape: scalar,
            value: None,
        },
        "value_strings" => Facts {
            elem: Some(8),
            shape: Some(vec![Some(a.strings.len() as i64)]),
            value: None,
        },
        _ => return None,
    })
}

/// Inferred and declared facts of one value must not contradict.
fn compare(value: &str, label: &str, inferred: &Facts, declared: &Facts) -> Result<(), Refusal> {
    if let (Some(i), Some(d)) = (inferred.elem, declared.elem) {
        if i != d {
            return Err(type_mismatch(format!(
                "{label} produces {value:?} as {}, which is declared {}",
                type_string(i).unwrap_or_default(),
                type_string(d).unwrap_or_default()
            )));
        }
    }
    if let (Some(i), Some(d)) = (&inferred.shape, &declared.shape) {
        let contradicts = i.len() != d.len()
            || i.iter()
                .zip(d)
                .any(|(a, b)| matches!((a, b), (Some(x), Some(y)) if x != y));
        if contradicts {
            return Err(shape_mismatch(format!(
                "{label}: inferred shape of {value:?} is {}, declared {}",
                dims(i),
                dims(d)
            )));
        }
    }
    Ok(())
}

fn dims(s: &[Option<i64>]) -> String {
    let v: Vec<String> = s
        .iter()
        .map(|d| d.map_or("?".to_string(), |x| x.to_string()))
        .collect();
    format!("[{}]", v.join(", "))
}

const UNARY: [&str; 33] = [
    "Abs",
    "Acos",
    "Asin",
    "Atan",
    "Ceil",
    "Cos",
    "Cosh",
    "Elu",
    "Erf",
    "Exp",
    "Floor",
    "HardSigmoid",
    "HardSwish",
    "Identity",
    "IsInf",
    "IsNaN",
    "LeakyRelu",
    "Log",
    "LogSoftmax",
    "Neg",
    "Not",
    "Reciprocal",
    "Relu",
    "Round",
    "Selu",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Softmax",
    "Softplus",
    "Sqrt",
    "Tanh",
];
const BROADCAST: [&str; 19] = [
    "Add",
    "And",
    "BitwiseAnd",
    "BitwiseOr",
    "Div",
    "Equal",
    "Greater",
    "GreaterOrEqual",
    "Less",
    "LessOrEqual",
    "Max",
    "Mean",
    "Min",
    "Mod",
    "Mul",
    "Or",
    "Pow",
    "Sub",
    "Where",
];

/// An integer list an operator takes as an attribute (older versions) or an input.
enum Arg {
    Absent,
    Known(Vec<i64>),
    /// Given, but not a constant inference can read.
    Unknown,
}

impl Arg {
    /// Input `k` when the operator version reads it as an input, else attribute `attr`.
    fn of(n: &NodeProto, inputs: &[Facts], as_input: bool, k: usize, attr: &str) -> Arg {
        if !as_input {
            return match ints_attr(n, attr) {
                Some(v) => Arg::Known(v.to_vec()),
                None => Arg::Absent,
            };
        }
        if n.input.get(k).is_none_or(|x| x.is_empty()) {
            return Arg::Absent;
        }
        match inputs.get(k).and_then(|f| f.value.clone()) {
            Some(v) => Arg::Known(v),
            None => Arg::Unknown,
        }
    }
}

/// An axis in `0..rank`, negative ones counted from the end.
fn axis(a: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if a < 0 { a + r } else { a };
    (0..r).contains(&a).then_some(a as usize)
}

/// Distinct axes in `0..rank`; `None` if any is out of range or repeated.
fn axes(v: &[i64], rank: usize) -> Option<Vec<usize>> {
    let mut out: Vec<usize> = v.iter().map(|&a| axis(a, rank)).collect::<Option<_>>()?;
    let n = out.len();
    out.sort_unstable();
    out.dedup();
    (out.len() == n).then_some(out)
}

/// Shapes of every output; `None` where inference cannot know one statically.
fn infer_shapes(
    op: &str,
    since: i64,
    n: &NodeProto,
    inputs: &[Facts],
    label: &str,
) -> Result<Vec<Option<Shape>>, Refusal> {
    let shape = |k: usize| inputs.get(k).and_then(|f| f.shape.clone());
    Ok(match op {
        "Split" => split_shapes(since, n, inputs),
        "LSTM" | "GRU" | "RNN" => rnn_shapes(since, n, shape(0), shape(2)),
        "If" => vec![],
        _ => vec![infer_shape(op, since, n, inputs, label)?],
    })
}

/// The contents of a small integer output where its inputs' are known (shapes flowing into
/// `Reshape`, `Slice` and the like).
fn infer_value(op: &str, n: &NodeProto, inputs: &[Facts], out: &Facts) -> Option<Vec<i64>> {
    let value = |k: usize| inputs.get(k).and_then(|f| f.value.clone());
    match op {
        "Identity" => value(0),
        "Cast" if matches!(out.elem, Some(6 | 7)) => value(0),
        "Shape" => {
            let s = inputs.first()?.shape.as_ref()?;
            let (a, b) = shape_range(n, s.len());
            s[a..b].iter().copied().collect()
        }
        _ => None,
    }
}

/// The dimensions `Shape` reports: `start` and `end` clamped into `0..=rank`.
fn shape_range(n: &NodeProto, rank: usize) -> (usize, usize) {
    let r = rank as i64;
    let at = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let a = at(int_attr(n, "start").unwrap_or(0));
    let b = at(int_attr(n, "end").unwrap_or(r));
    (a, b.max(a))
}

/// Shape inference for one output of the operators the fixtures and Silero use.
/// `Ok(None)` when the shape cannot be known statically here.
fn infer_shape(
    op: &str,
    since: i64,
    n: &NodeProto,
    inputs: &[Facts],
    label: &str,
) -> Result<Option<Shape>, Refusal> {
    let shape = |k: usize| inputs.get(k).and_then(|f| f.shape.clone());
    Ok(match op {
        "Cast" | "Dropout" => shape(0),
        o if UNARY.contains(&o) => shape(0),
        o if BROADCAST.contains(&o) || o == "Sum" => {
            let mut acc: Option<Vec<Option<i64>>> = Some(vec![]);
            for k in 0..inputs.len() {
                acc = match (acc, shape(k)) {
                    (Some(a), Some(b)) => Some(broadcast(&a, &b).ok_or_else(|| {
                        shape_mismatch(format!(
                            "{label}: input shapes {} and {} do not broadcast",
                            dims(&a),
                            dims(&b)
                        ))
                    })?),
                    _ => None,
                };
            }
            acc
        }
        "MatMul" => match (shape(0), shape(1)) {
            (Some(a), Some(b)) if a.len() >= 2 && b.len() >= 2 => {
                let (m, k1) = (a[a.len() - 2], a[a.len() - 1]);
                let (k2, nn) = (b[b.len() - 2], b[b.len() - 1]);
                if let (Some(x), Some(y)) = (k1, k2) {
                    if x != y {
                        return Err(shape_mismatch(format!(
                            "{label}: MatMul of {} and {}: inner dimensions differ",
                            dims(&a),
                            dims(&b)
                        )));
                    }
                }
                broadcast(&a[..a.len() - 2], &b[..b.len() - 2]).map(|mut s| {
                    s.extend([m, nn]);
                    s
                })
            }
            _ => None,
        },
        "Transpose" => shape(0).map(|s| match ints_attr(n, "perm") {
            Some(p) if p.len() == s.len() => p
                .iter()
                .map(|&i| {
                    usize::try_from(i)
                        .ok()
                        .and_then(|i| s.get(i).copied().flatten())
                })
                .collect(),
            Some(_) => vec![None; s.len()],
            None => s.iter().rev().copied().collect(),
        }),
        "Shape" => shape(0).map(|s| {
            let (a, b) = shape_range(n, s.len());
            vec![Some((b - a) as i64)]
        }),
        "Size" => Some(vec![]),
        "Gemm" => match (shape(0), shape(1)) {
            (Some(a), Some(b)) if a.len() == 2 && b.len() == 2 => {
                let ta = int_attr(n, "transA").unwrap_or(0) != 0;
                let tb = int_attr(n, "transB").unwrap_or(0) != 0;
                let (m, k1) = if ta { (a[1], a[0]) } else { (a[0], a[1]) };
                let (k2, nn) = if tb { (b[1], b[0]) } else { (b[0], b[1]) };
                if let (Some(x), Some(y)) = (k1, k2) {
                    if x != y {
                        return Err(shape_mismatch(format!(
                            "{label}: Gemm of {} and {}: inner dimensions differ",
                            dims(&a),
                            dims(&b)
                        )));
                    }
                }
                Some(vec![m, nn])
            }
            _ => None,
        },
        "Concat" => {
            let all: Option<Vec<Vec<Option<i64>>>> = (0..inputs.len()).map(shape).collect();
            match (all, int_attr(n, "axis")) {
                (Some(all), Some(axis))
                    if !all.is_empty() && all.iter().all(|s| s.len() == all[0].len()) =>
                {
                    let r = all[0].len() as i64;
                    let ax = if axis < 0 { axis + r } else { axis };
                    if !(0..r).contains(&ax) {
                        return Ok(None);
                    }
                    let ax = ax as usize;
                    let mut out = Vec::with_capacity(all[0].len());
                    for d in 0..all[0].len() {
                        if d == ax {
                            out.push(all.iter().try_fold(0i64, |a, s| a.checked_add(s[d]?)));
                            continue;
                        }
                        let known: Vec<i64> = all.iter().filter_map(|s| s[d]).collect();
                        if known.windows(2).any(|w| w[0] != w[1]) {
                            return Err(shape_mismatch(format!(
                                "{label}: Concat inputs differ in dimension {d} outside axis {ax}"
                            )));
                        }
                        out.push(known.first().copied());
                    }
                    Some(out)
                }
                _ => None,
            }
        }
        "Flatten" => shape(0).and_then(|s| {
            let r = s.len() as i64;
            let axis = int_attr(n, "axis").unwrap_or(1);
            let axis = if axis < 0 { axis + r } else { axis };
            if !(0..=r).contains(&axis) {
                return None;
            }
            let (a, b) = s.split_at(axis as usize);
            Some(vec![product(a), product(b)])
        }),
        "Conv" => conv_shape(n, shape(0), shape(1)),
        "ConstantOfShape" => match inputs.first().and_then(|f| f.value.clone()) {
            Some(v) if v.iter().all(|&d| d >= 0) => Some(v.iter().map(|&d| Some(d)).collect()),
            _ => shape(0).and_then(|s| rank_only(&s)),
        },
        "Reshape" => {
            let allowzero = int_attr(n, "allowzero").unwrap_or(0) != 0;
            match inputs.get(1).and_then(|f| f.value.clone()) {
                Some(v) => reshape(shape(0).as_deref(), &v, allowzero),
                None => shape(1).and_then(|s| rank_only(&s)),
            }
        }
        "Gather" => match (shape(0), shape(1)) {
            (Some(data), Some(idx)) => {
                axis(int_attr(n, "axis").unwrap_or(0), data.len()).map(|ax| {
                    let mut out = data[..ax].to_vec();
                    out.extend(idx);
                    out.extend(&data[ax + 1..]);
                    out
                })
            }
            _ => None,
        },
        "Unsqueeze" => shape(0).and_then(|s| match Arg::of(n, inputs, since >= 13, 1, "axes") {
            Arg::Known(v) => {
                let ax = axes(&v, s.len() + v.len())?;
                let mut rest = s.iter();
                (0..s.len() + v.len())
                    .map(|j| {
                        if ax.contains(&j) {
                            Some(Some(1))
                        } else {
                            rest.next().copied()
                        }
                    })
                    .collect()
            }
            _ => None,
        }),
        "Squeeze" => shape(0).and_then(|s| match Arg::of(n, inputs, since >= 13, 1, "axes") {
            Arg::Known(v) => {
                let ax = axes(&v, s.len())?;
                ax.iter().all(|&a| s[a].is_none_or(|d| d == 1)).then(|| {
                    (0..s.len())
                        .filter(|j| !ax.contains(j))
                        .map(|j| s[j])
                        .collect()
                })
            }
            Arg::Absent if s.iter().all(Option::is_some) => {
                Some(s.iter().copied().filter(|&d| d != Some(1)).collect())
            }
            _ => None,
        }),
        "Slice" => shape(0).map(|s| slice(since, n, inputs, &s)),
        "Pad" => shape(0).map(|s| pad(since, n, inputs, &s)),
        o if o.starts_with("Reduce") && REDUCE.contains(&o) => {
            // ReduceSum took its axes as an input from version 13, the others from 18.
            let as_input = since >= if o == "ReduceSum" { 13 } else { 18 };
            shape(0).and_then(|s| reduce(n, inputs, as_input, &s))
        }
        _ => None,
    })
}

/// A shape of unknown dimensions whose rank is the length of a 1-D shape tensor.
fn rank_only(shape_of_shape: &[Option<i64>]) -> Option<Shape> {
    match shape_of_shape {
        [Some(r)] if (0..=MAX_KNOWN_VALUE as i64).contains(r) => Some(vec![None; *r as usize]),
        _ => None,
    }
}

const REDUCE: [&str; 10] = [
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
];

/// `Reshape` to a known target: 0 copies the input's dimension (unless `allowzero`), one -1
/// takes what the others leave of the element count.
fn reshape(input: Option<&[Option<i64>]>, target: &[i64], allowzero: bool) -> Option<Shape> {
    let mut out = Vec::with_capacity(target.len());
    let mut free = None;
    for (i, &d) in target.iter().enumerate() {
        out.push(match d {
            -1 if free.is_none() => {
                free = Some(i);
                None
            }
            0 if !allowzero => input.and_then(|s| s.get(i).copied().flatten()),
            d if d >= 0 => Some(d),
            _ => return None,
        });
    }
    if let Some(k) = free {
        let total = input.and_then(product);
        let rest = out.iter().enumerate().try_fold(1i64, |a, (i, d)| {
            if i == k {
                Some(a)
            } else {
                a.checked_mul((*d)?)
            }
        });
        if let (Some(t), Some(r)) = (total, rest) {
            if r > 0 && t % r == 0 {
                out[k] = Some(t / r);
            }
        }
    }
    Some(out)
}

/// The length numpy slicing gives a dimension of `dim` for `start:end:step`.
fn slice_len(dim: i64, start: i64, end: i64, step: i64) -> Option<i64> {
    if step == 0 {
        return None;
    }
    if dim == 0 {
        return Some(0);
    }
    let (d, st) = (i128::from(dim), i128::from(step));
    let norm = |v: i64| {
        let v = i128::from(v);
        if v < 0 { v + d } else { v }
    };
    let (s, e) = (norm(start), norm(end));
    let len = if st > 0 {
        let (s, e) = (s.clamp(0, d), e.clamp(0, d));
        ((e - s).max(0) + st - 1) / st
    } else {
        let (s, e) = (s.clamp(0, d - 1), e.clamp(-1, d - 1));
        ((s - e).max(0) - st - 1) / -st
    };
    i64::try_from(len).ok()
}

/// `Slice`: attributes before version 10, inputs (starts, ends, axes, steps) from it.
fn slice(since: i64, n: &NodeProto, inputs: &[Facts], s: &[Option<i64>]) -> Shape {
    let unknown = vec![None; s.len()];
    let as_input = since >= 10;
    let (Arg::Known(starts), Arg::Known(ends)) = (
        Arg::of(n, inputs, as_input, 1, "starts"),
        Arg::of(n, inputs, as_input, 2, "ends"),
    ) else {
        return unknown;
    };
    let k = starts.len();
    let on: Vec<usize> = match Arg::of(n, inputs, as_input, 3, "axes") {
        Arg::Absent => (0..k).collect(),
        Arg::Known(v) if v.len() == k && axes(&v, s.len()).is_some() => {
            v.iter().filter_map(|&x| axis(x, s.len())).collect()
        }
        _ => return unknown,
    };
    let steps = match Arg::of(n, inputs, as_input, 4, "steps") {
        Arg::Absent => vec![1; k],
        Arg::Known(v) if v.len() == k => v,
        _ => return unknown,
    };
    if ends.len() != k || on.len() != k || on.iter().any(|&a| a >= s.len()) {
        return unknown;
    }
    let mut out = s.to_vec();
    for (i, &a) in on.iter().enumerate() {
        out[a] = s[a].and_then(|d| slice_len(d, starts[i], ends[i], steps[i]));
    }
    out
}

/// `Pad`: `pads` (`paddings` in version 1) an attribute before version 11, an input from
/// it; version 18 adds the axes they apply to.
fn pad(since: i64, n: &NodeProto, inputs: &[Facts], s: &[Option<i64>]) -> Shape {
    let unknown = vec![None; s.len()];
    let name = if since < 2 { "paddings" } else { "pads" };
    let Arg::Known(pads) = Arg::of(n, inputs, since >= 11, 1, name) else {
        return unknown;
    };
    // Before version 18 there is no fourth input: every axis is padded.
    let on: Vec<usize> = match Arg::of(n, inputs, true, 3, "axes") {
        Arg::Absent => (0..s.len()).collect(),
        Arg::Known(v) if axes(&v, s.len()).is_some() => {
            v.iter().filter_map(|&x| axis(x, s.len())).collect()
        }
        _ => return unknown,
    };
    if pads.len() != 2 * on.len() {
        return unknown;
    }
    let mut out = s.to_vec();
    for (i, &a) in on.iter().enumerate() {
        out[a] = s[a].and_then(|d| d.checked_add(pads[i])?.checked_add(pads[i + on.len()]));
    }
    out
}

/// The reductions: axes an attribute or (per `as_input`) an input, `keepdims` default 1,
/// `noop_with_empty_axes` where axes are an input.
fn reduce(n: &NodeProto, inputs: &[Facts], as_input: bool, s: &[Option<i64>]) -> Option<Shape> {
    let keep = int_attr(n, "keepdims").unwrap_or(1) != 0;
    let reduced: Vec<usize> = match Arg::of(n, inputs, as_input, 1, "axes") {
        Arg::Known(v) if !v.is_empty() => axes(&v, s.len())?,
        Arg::Unknown => return keep.then(|| vec![None; s.len()]),
        _ if as_input && int_attr(n, "noop_with_empty_axes").unwrap_or(0) != 0 => {
            return Some(s.to_vec());
        }
        _ => (0..s.len()).collect(),
    };
    Some(
        (0..s.len())
            .filter_map(|j| match (reduced.contains(&j), keep) {
                (true, true) => Some(Some(1)),
                (true, false) => None,
                (false, _) => Some(s[j]),
            })
            .collect(),
    )
}

/// `Split`: sizes from `split` (an attribute before version 13, an input from it) or equal
/// parts of the axis (version 18's `num_outputs` lets the last part be smaller).
fn split_shapes(since: i64, n: &NodeProto, inputs: &[Facts]) -> Vec<Option<Shape>> {
    let k = n.output.len();
    let Some(s) = inputs.first().and_then(|f| f.shape.clone()) else {
        return vec![];
    };
    let Some(ax) = axis(int_attr(n, "axis").unwrap_or(0), s.len()) else {
        return vec![];
    };
    let sizes: Vec<Option<i64>> = match Arg::of(n, inputs, since >= 13, 1, "split") {
        Arg::Known(v) if v.len() == k => v.into_iter().map(Some).collect(),
        Arg::Absent => match s[ax] {
            Some(d) if since >= 18 && int_attr(n, "num_outputs").is_some() => {
                let (d, k) = (i128::from(d), k as i128);
                let chunk = (d + k - 1) / k;
                (0..k)
                    .map(|i| i64::try_from((d - chunk * i).clamp(0, chunk)).ok())
                    .collect()
            }
            Some(d) if d % (k as i64).max(1) == 0 => vec![Some(d / k as i64); k],
            _ => vec![None; k],
        },
        _ => vec![None; k],
    };
    sizes
        .into_iter()
        .map(|d| {
            let mut o = s.clone();
            o[ax] = d;
            Some(o)
        })
        .collect()
}

/// `LSTM`, `GRU`, `RNN`: `Y` and the final states from `X` (`layout` 1 puts batch first,
/// from version 14), `hidden_size` (or the recurrence weights' last dimension) and
/// `direction`.
fn rnn_shapes(since: i64, n: &NodeProto, x: Option<Shape>, r: Option<Shape>) -> Vec<Option<Shape>> {
    let Some(x) = x.filter(|x| x.len() == 3) else {
        return vec![];
    };
    let batch_first = since >= 14 && int_attr(n, "layout").unwrap_or(0) != 0;
    let (seq, batch) = if batch_first {
        (x[1], x[0])
    } else {
        (x[0], x[1])
    };
    let dirs = match n
        .attribute
        .iter()
        .find(|a| a.name.as_deref() == Some("direction"))
        .and_then(|a| a.s.as_deref())
    {
        Some(b"bidirectional") => 2,
        _ => 1,
    };
    let hidden =
        int_attr(n, "hidden_size").or_else(|| r.filter(|r| r.len() == 3).and_then(|r| r[2]));
    let nd = Some(dirs);
    let y = if batch_first {
        vec![batch, seq, nd, hidden]
    } else {
        vec![seq, nd, batch, hidden]
    };
    let state = if batch_first {
        vec![batch, nd, hidden]
    } else {
        vec![nd, batch, hidden]
    };
    vec![Some(y), Some(state.clone()), Some(state)]
}

/// The element count of a shape: `None` if a dimension is unknown or the count overflows.
fn product(s: &[Option<i64>]) -> Option<i64> {
    s.iter().try_fold(1i64, |a, d| a.checked_mul((*d)?))
}

/// NumPy broadcasting of two shapes; `None` when known dimensions conflict.
fn broadcast(a: &[Option<i64>], b: &[Option<i64>]) -> Option<Vec<Option<i64>>> {
    let r = a.len().max(b.len());
    let at = |s: &[Option<i64>], i: usize| {
        if i + s.len() >= r {
            s[i + s.len() - r]
        } else {
            Some(1)
        }
    };
    (0..r)
        .map(|i| match (at(a, i), at(b, i)) {
            (Some(1), y) => Some(y),
            (x, Some(1)) => Some(x),
            (Some(x), Some(y)) if x == y => Some(Some(x)),
            (Some(_), Some(_)) => None,
            (Some(x), None) | (None, Some(x)) => Some(Some(x)),
            (None, None) => Some(None),
        })
        .collect()
}

fn conv_shape(
    n: &NodeProto,
    x: Option<Vec<Option<i64>>>,
    w: Option<Vec<Option<i64>>>,
) -> Option<Vec<Option<i64>>> {
    let (x, w) = (x?, w?);
    if x.len() < 3 || w.len() != x.len() {
        return None;
    }
    let spatial = x.len() - 2;
    let auto_pad = n
        .attribute
        .iter()
        .find(|a| a.name.as_deref() == Some("auto_pad"))
        .and_then(|a| a.s.as_deref());
    if auto_pad.is_some_and(|p| p != b"NOTSET") {
        return None;
    }
    let kernel: Vec<Option<i64>> = match ints_attr(n, "kernel_shape") {
        Some(k) if k.len() == spatial => k.iter().map(|&v| Some(v)).collect(),
        _ => w[2..].to_vec(),
    };
    let get = |name: &str, len: usize, default: i64| -> Vec<i64> {
        match ints_attr(n, name) {
            Some(v) if v.len() == len => v.to_vec(),
            _ => vec![default; len],
        }
    };
    let pads = get("pads", 2 * spatial, 0);
    let strides = get("strides", spatial, 1);
    let dil = get("dilations", spatial, 1);
    let mut out = vec![x[0], w[0]];
    for i in 0..spatial {
        out.push(match (x[2 + i], kernel[i]) {
            (Some(size), Some(k)) if strides[i] > 0 => {
                let w = |v: i64| i128::from(v);
                let eff = w(dil[i]) * (w(k) - 1) + 1;
                let total = w(size) + w(pads[i]) + w(pads[i + spatial]) - eff;
                (total >= 0)
                    .then(|| i64::try_from(total / w(strides[i]) + 1).ok())
                    .flatten()
            }
            _ => None,
        });
    }
    Some(out)
}

/// A tensor's payload must match its type and shape exactly.
fn tensor_data(t: &TensorProto, graph: &str) -> Result<(), Refusal> {
    let name = t.name.as_deref().unwrap_or("");
    let bad = |m: String| {
        Refusal::new(
            RefusalCode::TensorDataInvalid,
            format!("tensor {name:?} in graph {graph:?}: {m}"),
        )
    };
    let elem = t.data_type.unwrap_or(0);
    if type_string(elem).is_none() {
        return Err(bad(format!(
            "data_type {elem} is not a tensor element type"
        )));
    }
    let count = t
        .dims
        .iter()
        .try_fold(1u64, |a, &d| {
            u64::try_from(d).ok().and_then(|d| a.checked_mul(d))
        })
        .ok_or_else(|| bad(format!("dims {:?} are negative or too large", t.dims)))?;
    if let Some(raw) = &t.raw_data {
        let Some(b) = bits(elem) else {
            return Err(bad("a string tensor cannot use raw_data".into()));
        };
        let want = count
            .checked_mul(b)
            .map(|x| x.div_ceil(8))
            .ok_or_else(|| bad("too large".into()))?;
        if raw.len() as u64 != want {
            return Err(bad(format!(
                "raw_data holds {} bytes; dims {:?} of {} need {want}",
                raw.len(),
                t.dims,
                type_string(elem).unwrap_or_default()
            )));
        }
        return Ok(());
    }
    // Typed fields: which one carries the type, and how many entries per element.
    let (held, per) = match elem {
        1 => (t.float_data.len(), 1),
        14 => (t.float_data.len(), 2),
        7 => (t.int64_data.len(), 1),
        11 => (t.double_data.len(), 1),
        15 => (t.double_data.len(), 2),
        12 | 13 => (t.uint64_data.len(), 1),
        8 => (t.string_data.len(), 1),
        _ => (t.int32_data.len(), 1),
    };
    let held = held as u64;
    // Sub-byte types pack several elements per int32 entry.
    let want = match bits(elem) {
        Some(b) if b < 8 => (count * b).div_ceil(8),
        _ => count * per,
    };
    if held != want {
        return Err(bad(format!(
            "holds {held} values; dims {:?} need {want}",
            t.dims
        )));
    }
    Ok(())
}

/// The schema table's facts `verify-fixtures` prints.
pub fn describe() -> Result<String, OnnxError> {
    let t = table()?;
    Ok(format!(
        "{SCHEMAS_PATH}: {} operator schemas generated from onnx {} by {SCHEMAS_GENERATOR}",
        t.count, t.onnx
    ))
}
