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

mod payload;
mod schemas;
mod shapes;

use payload::*;
pub use schemas::*;
use shapes::*;
pub use shapes::{AutoPad, shape_range, window_output};

use super::error::OnnxError;
use super::proto::{AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeValue};
use super::refusal::{Refusal, RefusalCode};
use serde::Deserialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::OnceLock;
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
            shape: t
                .shape
                .as_ref()
                .map(|s| s.dim.iter().map(super::proto::Dimension::fixed).collect()),
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

/// Every value of the main graph whose shape is static, by name: the graph's declared inputs,
/// outputs and value infos, then what inference gives every node output, then the
/// initializers' dimensions (which win).
pub fn static_shapes(model: &ModelProto) -> Result<BTreeMap<String, Vec<i64>>, Refusal> {
    let mut shapes = BTreeMap::new();
    let Some(graph) = model.graph.as_ref() else {
        return Ok(shapes);
    };
    let dims_of = |v: &super::proto::ValueInfoProto| -> Option<Vec<i64>> {
        let TypeValue::TensorType(t) = v.r#type.as_ref()?.value.as_ref()? else {
            return None;
        };
        t.shape
            .as_ref()?
            .dim
            .iter()
            .map(super::proto::Dimension::fixed)
            .collect()
    };
    for v in graph
        .input
        .iter()
        .chain(&graph.output)
        .chain(&graph.value_info)
    {
        if let (Some(name), Some(d)) = (&v.name, dims_of(v)) {
            shapes.insert(name.clone(), d);
        }
    }
    for i in infer(model)? {
        if let Some(d) = i
            .shape
            .and_then(|s| s.into_iter().collect::<Option<Vec<i64>>>())
        {
            shapes.entry(i.value).or_insert(d);
        }
    }
    for t in &graph.initializer {
        if let Some(name) = &t.name {
            shapes.insert(name.clone(), t.dims.clone());
        }
    }
    Ok(shapes)
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

/// The integer attribute `name` of a node.
pub fn int_attr(n: &NodeProto, name: &str) -> Option<i64> {
    n.attribute
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
        .and_then(|a| a.i)
}

/// The integer-list attribute `name` of a node.
pub fn ints_attr<'n>(n: &'n NodeProto, name: &str) -> Option<&'n [i64]> {
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
