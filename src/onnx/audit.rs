//! Admission: a bounded, fail-closed audit of one ONNX model. It reads at most `limit + 1`
//! bytes, decodes the protobuf, refuses what it cannot account for (unknown fields, external
//! data, model-local functions, training info), walks every GRAPH and GRAPHS attribute
//! depth-first under whole-tree limits, and reports the recursive inventory, typed inputs and
//! outputs, per-node placement with refusal reasons, and deterministic top-level partitions.
//! Every node is `cpu` while the approval registry is empty.

use super::policy::Policy;
use super::proto::{self, AttributeProto, GraphProto, ModelProto, TensorProto, ValueInfoProto};
pub use super::refusal::{Refusal, RefusalCode};
use super::signature;
pub use super::types::{Classification, Device, Limits, MAX_TENSOR_BYTES, ValueType, value_type};
use crate::digest::Hash256;
use prost::Message;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What the audit counted over the whole graph tree (subgraphs included).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Inventory {
    /// Graphs walked: the top-level graph and every GRAPH/GRAPHS attribute.
    pub graphs: u64,
    /// Deepest subgraph nesting (0: no subgraphs).
    pub max_depth: u64,
    /// Nodes of the top-level graph.
    pub top_level_nodes: u64,
    /// Nodes inside subgraphs.
    pub nested_nodes: u64,
    /// All nodes (top-level and nested).
    pub total_nodes: u64,
    /// Dense and sparse initializers, across the tree.
    pub initializers: u64,
    /// Tensor and sparse-tensor attribute values, across the tree.
    pub attribute_tensors: u64,
    /// Protobuf-encoded bytes of every constant tensor, summed.
    pub encoded_constant_bytes: u64,
}

/// Where one top-level node runs and, when not on the NPU, why.
#[derive(Clone, Debug, Serialize)]
pub struct Placement {
    /// The node's name, or `node_{index}` when it has none.
    pub node: String,
    /// The operator.
    pub op_type: String,
    /// The operator's domain (empty: the default ONNX domain).
    pub domain: String,
    /// The device it is placed on (always the CPU today).
    pub placement: Device,
    /// Why it is not an NPU candidate; empty when nothing but the missing NPU session
    /// keeps it on the CPU.
    pub reasons: Vec<RefusalCode>,
}

/// A run of consecutive top-level nodes with the same placement.
#[derive(Clone, Debug, Serialize)]
pub struct Partition {
    /// Position in graph order, from 0.
    pub index: usize,
    /// The device its nodes are placed on.
    pub placement: Device,
    /// Its nodes' names, in graph order.
    pub nodes: Vec<String>,
    /// Values it reads from outside itself (subgraph captures included), sorted.
    pub inputs: Vec<String>,
    /// Values it produces that a later node or the graph outputs read, sorted.
    pub outputs: Vec<String>,
}

/// The admission audit of one model: the evidence `nbg onnx audit` prints.
#[derive(Clone, Debug, Serialize)]
pub struct Audit {
    /// Always `audit`.
    pub mode: &'static str,
    /// Audit mode creates no session: always `audit-no-session`.
    pub classification: Classification,
    /// The model file's size and hash.
    pub source: Source,
    /// The model's `ir_version` (0 when absent).
    pub ir_version: i64,
    /// Each operator set import as (domain, version), in file order.
    pub opset_import: Vec<(String, i64)>,
    /// What the walk over the graph tree counted.
    pub inventory: Inventory,
    /// The graph signature (`signature::model_signature`).
    pub signature: Hash256,
    /// The inputs a run supplies (graph inputs that are not initializers).
    pub inputs: Vec<ValueType>,
    /// The graph outputs.
    pub outputs: Vec<ValueType>,
    /// Per top-level node placement, in graph order.
    pub placement: Vec<Placement>,
    /// The partitions the placement forms.
    pub partitions: Vec<Partition>,
    /// The policy the audit was made under.
    pub policy: PolicySummary,
}

/// The audited file.
#[derive(Clone, Debug, Serialize)]
pub struct Source {
    /// Its size in bytes.
    pub bytes: u64,
    /// SHA-256 of its bytes.
    pub sha256: Hash256,
}

/// What evidence records of the policy.
#[derive(Clone, Debug, Serialize)]
pub struct PolicySummary {
    /// SHA-256 of the policy file.
    pub sha256: Hash256,
    /// Whether the NPU compiler profile is qualified.
    pub compiler_qualified: bool,
    /// How many (signature, target) pairs are approved for the NPU.
    pub approved_npu_signatures: usize,
    /// The targets this model's signature is approved on.
    pub approved_targets: Vec<String>,
}

/// A model file that could not be read at all (`ONNX_MODEL_UNREADABLE`): a usage or I/O
/// problem (exit 2), unlike a refusal of the bytes read (exit 1).
#[derive(Clone, Debug)]
pub struct Unreadable(pub Refusal);

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Read at most `limit + 1` bytes of a regular file.
pub fn read_model(path: &Path, limits: &Limits) -> Result<Vec<u8>, Unreadable> {
    let mut bytes = Vec::new();
    crate::files::read_regular_limited(path, &mut bytes, limits.model_bytes + 1)
        .map_err(|e| Unreadable(Refusal::new(RefusalCode::ModelUnreadable, e.to_string())))?;
    Ok(bytes)
}

/// Decode and check the envelope: size, protobuf, schema round trip, graph, no functions or
/// training info.
pub fn decode(bytes: &[u8], limits: &Limits) -> Result<ModelProto, Refusal> {
    if bytes.is_empty() {
        return Err(Refusal::new(
            RefusalCode::ModelEmpty,
            "the model file is empty",
        ));
    }
    if bytes.len() as u64 > limits.model_bytes {
        return Err(Refusal::new(
            RefusalCode::ModelTooLarge,
            format!("the model exceeds {} bytes", limits.model_bytes),
        ));
    }
    let model = ModelProto::decode(bytes).map_err(|e| {
        Refusal::new(
            RefusalCode::ProtobufInvalid,
            format!("not an ONNX ModelProto: {e}"),
        )
    })?;
    let again = model.encode_to_vec();
    if again != bytes {
        let at = crate::nbg::image::first_difference(&again, bytes).unwrap_or(0);
        return Err(Refusal::new(
            RefusalCode::UnknownFields,
            format!(
                "re-encoding the decoded model differs from the file at byte {at}: it holds fields (or encodings) this schema does not know; refusing rather than dropping them"
            ),
        ));
    }
    if model.graph.is_none() {
        return Err(graph_missing());
    }
    if !model.functions.is_empty() {
        return Err(Refusal::new(
            RefusalCode::FunctionsUnsupported,
            format!("{} model-local functions", model.functions.len()),
        ));
    }
    if !model.training_info.is_empty() {
        return Err(Refusal::new(
            RefusalCode::TrainingInfo,
            "the model carries training information",
        ));
    }
    Ok(model)
}

/// A model without a graph (`decode` refuses it; `audit` says the same).
fn graph_missing() -> Refusal {
    Refusal::new(RefusalCode::GraphMissing, "the model has no graph")
}

/// The whole admission audit.
pub fn audit(bytes: &[u8], limits: &Limits, policy: &Policy) -> Result<Audit, Refusal> {
    audit_on(bytes, limits, policy, None)
}

/// `audit`, placing the graph for `target` (a driver configuration name): an approval on
/// another target places nothing. Without a target, an approval on any target places it.
pub fn audit_on(
    bytes: &[u8],
    limits: &Limits,
    policy: &Policy,
    target: Option<&str>,
) -> Result<Audit, Refusal> {
    let model = decode(bytes, limits)?;
    let Some(graph) = model.graph.as_ref() else {
        return Err(graph_missing());
    };
    let mut walk = Walk {
        limits,
        inv: Inventory::default(),
    };
    walk.graph(graph, 0)?;
    let inv = walk.inv;
    // Bounded first, then checked: the checker walks a tree the limits admitted.
    super::checker::check(&model)?;
    // Older IRs list initializers as graph inputs too; those are weights, not inputs a run
    // supplies.
    let inputs: Vec<ValueType> = runtime_inputs(graph).map(value_type).collect();
    let outputs: Vec<ValueType> = graph.output.iter().map(value_type).collect();
    for v in inputs.iter().chain(&outputs) {
        check_shape(v, limits)?;
    }
    let sig = signature::model_signature(&model);
    let placement = place(
        graph,
        policy.approves(&sig, target),
        policy.compiler_qualified,
    );
    let partitions = partitions(graph, &placement);
    Ok(Audit {
        mode: "audit",
        classification: Classification::AuditNoSession,
        source: Source {
            bytes: bytes.len() as u64,
            sha256: Hash256::of(bytes),
        },
        ir_version: model.ir_version.unwrap_or(0),
        opset_import: model
            .opset_import
            .iter()
            .map(|o| (o.domain.clone().unwrap_or_default(), o.version.unwrap_or(0)))
            .collect(),
        inventory: inv,
        signature: sig,
        inputs,
        outputs,
        placement,
        partitions,
        policy: PolicySummary {
            sha256: policy.sha256,
            compiler_qualified: policy.compiler_qualified,
            approved_npu_signatures: policy.approved.len(),
            approved_targets: policy
                .approved
                .iter()
                .filter(|a| a.signature == sig.hex())
                .map(|a| a.target.clone())
                .collect(),
        },
    })
}

struct Walk<'a> {
    limits: &'a Limits,
    inv: Inventory,
}

impl Walk<'_> {
    fn graph(&mut self, g: &GraphProto, depth: u64) -> Result<(), Refusal> {
        let l = self.limits;
        self.inv.graphs += 1;
        self.inv.max_depth = self.inv.max_depth.max(depth);
        let name = g.name.as_deref().unwrap_or("");
        let inputs = runtime_inputs(g).count();
        if inputs as u64 > l.graph_inputs || g.output.len() as u64 > l.graph_outputs {
            return Err(limit(format!(
                "graph {name:?} has {} inputs (not counting initializers) and {} outputs (at most {} and {})",
                inputs,
                g.output.len(),
                l.graph_inputs,
                l.graph_outputs
            )));
        }
        check_duplicates(g)?;
        for t in &g.initializer {
            self.inv.initializers += 1;
            self.constant(t, name)?;
        }
        for s in &g.sparse_initializer {
            self.inv.initializers += 1;
            for t in s.values.iter().chain(&s.indices) {
                self.constant(t, name)?;
            }
        }
        for node in &g.node {
            if depth == 0 {
                self.inv.top_level_nodes += 1;
            } else {
                self.inv.nested_nodes += 1;
            }
            self.inv.total_nodes += 1;
            if self.inv.total_nodes > l.nodes {
                return Err(limit(format!(
                    "more than {} nodes across the graph tree",
                    l.nodes
                )));
            }
            for a in &node.attribute {
                self.attribute(a, name, depth)?;
            }
        }
        Ok(())
    }

    fn attribute(&mut self, a: &AttributeProto, graph: &str, depth: u64) -> Result<(), Refusal> {
        for t in a.t.iter().chain(&a.tensors) {
            self.inv.attribute_tensors += 1;
            self.constant(t, graph)?;
        }
        for s in a.sparse_tensor.iter().chain(&a.sparse_tensors) {
            self.inv.attribute_tensors += 1;
            for t in s.values.iter().chain(&s.indices) {
                self.constant(t, graph)?;
            }
        }
        for g in a.g.iter().chain(&a.graphs) {
            self.graph(g, depth + 1)?;
        }
        Ok(())
    }

    fn constant(&mut self, t: &TensorProto, graph: &str) -> Result<(), Refusal> {
        let l = self.limits;
        let name = t.name.as_deref().unwrap_or("");
        if t.data_location == Some(1) || !t.external_data.is_empty() {
            return Err(Refusal::new(
                RefusalCode::ExternalData,
                format!("tensor {name:?} in graph {graph:?} refers to external data"),
            ));
        }
        if self.inv.initializers + self.inv.attribute_tensors > l.constant_tensors {
            return Err(limit(format!(
                "more than {} constant tensors",
                l.constant_tensors
            )));
        }
        let len = t.encoded_len() as u64;
        if len > l.constant_bytes {
            return Err(limit(format!(
                "tensor {name:?} encodes {len} bytes (at most {})",
                l.constant_bytes
            )));
        }
        self.inv.encoded_constant_bytes += len;
        if self.inv.encoded_constant_bytes > l.total_constant_bytes {
            return Err(limit(format!(
                "more than {} constant bytes in total",
                l.total_constant_bytes
            )));
        }
        if t.dims.len() as u64 > l.rank || t.dims.iter().any(|&d| d < 0 || d > l.dimension) {
            return Err(Refusal::new(
                RefusalCode::ShapeLimit,
                format!(
                    "tensor {name:?} has dims {:?} (rank at most {}, each 0..={})",
                    t.dims, l.rank, l.dimension
                ),
            ));
        }
        Ok(())
    }
}

/// Graph inputs that are not initializers.
pub fn runtime_inputs(g: &GraphProto) -> impl Iterator<Item = &ValueInfoProto> {
    let inits: BTreeSet<&str> = g
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    g.input
        .iter()
        .filter(move |v| !inits.contains(v.name.as_deref().unwrap_or("")))
}

fn limit(message: String) -> Refusal {
    Refusal::new(RefusalCode::LimitExceeded, message)
}

/// Names must be unique per graph: inputs, outputs, initializers and produced values (node
/// names are diagnostic labels in ONNX and may repeat).
fn check_duplicates(g: &GraphProto) -> Result<(), Refusal> {
    let graph = g.name.as_deref().unwrap_or("");
    let dup = |what: &str, names: Vec<&str>| -> Result<(), Refusal> {
        let mut seen = BTreeSet::new();
        for n in names.into_iter().filter(|n| !n.is_empty()) {
            if !seen.insert(n) {
                return Err(Refusal::new(
                    RefusalCode::DuplicateName,
                    format!("{what} name {n:?} appears twice in graph {graph:?}"),
                ));
            }
        }
        Ok(())
    };
    fn names(v: &[ValueInfoProto]) -> Vec<&str> {
        v.iter().map(|x| x.name.as_deref().unwrap_or("")).collect()
    }
    dup("input", names(&g.input))?;
    dup("output", names(&g.output))?;
    dup(
        "initializer",
        g.initializer
            .iter()
            .map(|t| t.name.as_deref().unwrap_or(""))
            .collect(),
    )?;
    // A value is produced once: by a graph input or initializer (older IRs list initializers as
    // inputs too) or by exactly one node output.
    let mut produced: BTreeSet<&str> = g
        .input
        .iter()
        .filter_map(|v| v.name.as_deref())
        .chain(g.initializer.iter().filter_map(|t| t.name.as_deref()))
        .collect();
    for n in &g.node {
        for o in n.output.iter().filter(|o| !o.is_empty()) {
            if !produced.insert(o.as_str()) {
                return Err(Refusal::new(
                    RefusalCode::DuplicateName,
                    format!("value {o:?} is produced twice in graph {graph:?}"),
                ));
            }
        }
    }
    Ok(())
}

fn check_shape(v: &ValueType, l: &Limits) -> Result<(), Refusal> {
    let Some(shape) = &v.shape else { return Ok(()) };
    let bad = |m: String| {
        Err(Refusal::new(
            RefusalCode::ShapeLimit,
            format!("{}: {m}", v.name),
        ))
    };
    if shape.len() as u64 > l.rank {
        return bad(format!("rank {} exceeds {}", shape.len(), l.rank));
    }
    let known: Vec<i64> = shape.iter().filter_map(serde_json::Value::as_i64).collect();
    if known.iter().any(|&d| d < 0 || d > l.dimension) {
        return bad(format!("dimension outside 0..={}", l.dimension));
    }
    let elements = known
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    let bits = v.elem_type.and_then(proto::data_type::bits).unwrap_or(8);
    match elements.and_then(|e| e.checked_mul(bits)) {
        Some(b) if b / 8 <= l.tensor_bytes => Ok(()),
        _ => bad(format!("estimated size exceeds {} bytes", l.tensor_bytes)),
    }
}

/// Operators the audit would consider for a future NPU partition (diagnostic only: naming an
/// operator here is not evidence of NPU support).
const CANDIDATE_OPS: [&str; 19] = [
    "Add",
    "AveragePool",
    "BatchNormalization",
    "Clip",
    "Concat",
    "Conv",
    "Gemm",
    "GlobalAveragePool",
    "Identity",
    "MatMul",
    "MaxPool",
    "Mul",
    "Relu",
    "Reshape",
    "Sigmoid",
    "Softmax",
    "Sub",
    "Tanh",
    "Transpose",
];
/// Element types a future partition could carry: FLOAT, UINT8, INT8, FLOAT16.
const CANDIDATE_TYPES: [i32; 4] = [1, 2, 3, 10];

/// Each node's placement. An approved signature (a qualification record shows the whole graph
/// compiled and run on the simulator within tolerance of the oracle) places every node on the
/// NPU; otherwise every node stays on the CPU with its reasons.
fn place(g: &GraphProto, approved: bool, compiler_qualified: bool) -> Vec<Placement> {
    let mut types: BTreeMap<&str, ValueType> = BTreeMap::new();
    for v in g.input.iter().chain(&g.output).chain(&g.value_info) {
        types.insert(v.name.as_deref().unwrap_or(""), value_type(v));
    }
    let inits: BTreeMap<&str, &TensorProto> = g
        .initializer
        .iter()
        .map(|t| (t.name.as_deref().unwrap_or(""), t))
        .collect();
    g.node
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let op = n.op_type.clone().unwrap_or_default();
            let domain = n.domain.clone().unwrap_or_default();
            let mut reasons = Vec::new();
            if approved {
                return Placement {
                    node: node_name(n, i),
                    op_type: op,
                    domain,
                    placement: Device::Npu,
                    reasons: vec![],
                };
            }
            if !compiler_qualified {
                reasons.push(RefusalCode::CompilerDependencyMismatch);
            }
            if !approved {
                reasons.push(RefusalCode::PartitionNotPreflighted);
            }
            if !(domain.is_empty() || domain == "ai.onnx") {
                reasons.push(RefusalCode::DomainUnsupported);
            }
            if !CANDIDATE_OPS.contains(&op.as_str()) {
                reasons.push(RefusalCode::OperatorUnsupported);
            }
            if n.op_type.as_deref().is_some_and(|o| o.contains("Quantize")) {
                reasons.push(RefusalCode::QuantizationUnsupported);
            }
            let mut static_shapes = true;
            let mut tensor_types = true;
            for name in n.input.iter().chain(&n.output).filter(|x| !x.is_empty()) {
                if let Some(t) = inits.get(name.as_str()) {
                    tensor_types &= t.data_type.is_some_and(|d| CANDIDATE_TYPES.contains(&d));
                    continue;
                }
                match types.get(name.as_str()) {
                    Some(v) => {
                        static_shapes &= v.static_dims().is_some();
                        tensor_types &= v.kind == super::types::ValueKind::Tensor
                            && v.elem_type.is_some_and(|d| CANDIDATE_TYPES.contains(&d));
                    }
                    None => static_shapes = false,
                }
            }
            if !tensor_types {
                reasons.push(RefusalCode::TypeUnsupported);
            }
            if !static_shapes {
                reasons.push(RefusalCode::ShapeUnsupported);
            }
            Placement {
                node: node_name(n, i),
                op_type: op,
                domain,
                // Without an approval the whole graph has no NPU session to run in.
                placement: Device::Cpu,
                reasons,
            }
        })
        .collect()
}

/// A node's name, or `node_I` where it has none.
fn node_name(n: &super::proto::NodeProto, i: usize) -> String {
    n.name
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("node_{i}"))
}

/// Consecutive nodes with the same placement form a partition; its boundary tensors are the
/// values it consumes from outside and the values it produces for outside or the graph.
fn partitions(g: &GraphProto, placement: &[Placement]) -> Vec<Partition> {
    // Each partition with the indices of its nodes.
    let mut out: Vec<(Partition, Vec<usize>)> = Vec::new();
    for (i, p) in placement.iter().enumerate() {
        match out.last_mut() {
            Some((last, members)) if last.placement == p.placement => {
                last.nodes.push(p.node.clone());
                members.push(i);
            }
            _ => {
                out.push((
                    Partition {
                        index: out.len(),
                        placement: p.placement,
                        nodes: vec![p.node.clone()],
                        inputs: vec![],
                        outputs: vec![],
                    },
                    vec![i],
                ));
            }
        }
    }
    let graph_outputs: BTreeSet<&str> = g.output.iter().filter_map(|o| o.name.as_deref()).collect();
    for (part, idx) in &mut out {
        let idx: &[usize] = idx;
        let produced: BTreeSet<&str> = idx
            .iter()
            .flat_map(|&i| g.node[i].output.iter().map(String::as_str))
            .collect();
        let mut inputs = BTreeSet::new();
        for &i in idx {
            let n = &g.node[i];
            // Subgraphs read outer values by name without listing them as node inputs.
            let captured = n
                .attribute
                .iter()
                .flat_map(|a| a.g.iter().chain(&a.graphs))
                .flat_map(captures);
            for x in n.input.iter().cloned().chain(captured) {
                if !x.is_empty() && !produced.contains(x.as_str()) {
                    inputs.insert(x);
                }
            }
        }
        let used_outside: BTreeSet<&str> = g
            .node
            .iter()
            .enumerate()
            .filter(|(j, _)| !idx.contains(j))
            .flat_map(|(_, n)| n.input.iter().map(String::as_str))
            .collect();
        part.inputs = inputs.into_iter().collect();
        part.outputs = produced
            .iter()
            .filter(|p| !p.is_empty() && (used_outside.contains(*p) || graph_outputs.contains(*p)))
            .map(|p| p.to_string())
            .collect();
    }
    out.into_iter().map(|(p, _)| p).collect()
}

/// Names a graph (and its subgraphs) reads from enclosing scopes.
fn captures(g: &GraphProto) -> BTreeSet<String> {
    let mut defined: BTreeSet<&str> = g
        .input
        .iter()
        .filter_map(|v| v.name.as_deref())
        .chain(g.initializer.iter().filter_map(|t| t.name.as_deref()))
        .collect();
    let mut out = BTreeSet::new();
    for n in &g.node {
        let nested = n
            .attribute
            .iter()
            .flat_map(|a| a.g.iter().chain(&a.graphs))
            .flat_map(captures);
        for x in n.input.iter().cloned().chain(nested) {
            if !x.is_empty() && !defined.contains(x.as_str()) {
                out.insert(x);
            }
        }
        defined.extend(n.output.iter().map(String::as_str));
    }
    out
}
