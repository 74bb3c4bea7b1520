//! The executable-graph signature: SHA-256 over a canonical JSON document of what runs.
//!
//! Covered: IR version, sorted opset imports, ordered graph inputs and outputs with types and
//! shapes, initializers (sorted by name) with payload hashes, ordered nodes with wiring,
//! domain, operator and normalized attributes, and the signatures of graph-valued attributes
//! (recursively) and hashes of tensor-valued ones. Excluded: file name, producer name and
//! version, model domain and version, metadata, graph and node names, value_info annotations,
//! and every doc string at every depth.

use super::proto::{AttributeProto, GraphProto, ModelProto, SparseTensorProto, TensorProto};
use super::types::value_type;
use crate::digest::{Hash256, hex};
use prost::Message;
use serde_json::{Value, json};

/// The executable-graph signature of `m` (see the module doc): equal for two files that run the same graph.
pub fn model_signature(m: &ModelProto) -> Hash256 {
    let mut opsets: Vec<(String, i64)> = m
        .opset_import
        .iter()
        .map(|o| (o.domain.clone().unwrap_or_default(), o.version.unwrap_or(0)))
        .collect();
    opsets.sort();
    let doc = json!({
        "schema": "nbg-onnx-graph-signature/1",
        "ir_version": m.ir_version,
        "opset_import": opsets,
        "graph": m.graph.as_ref().map(graph_doc),
    });
    Hash256::of(doc.to_string().as_bytes())
}

fn graph_doc(g: &GraphProto) -> Value {
    let values = |v: &[super::proto::ValueInfoProto]| {
        v.iter()
            .map(|x| {
                let t = value_type(x);
                json!([t.name, t.kind, t.elem_type, t.shape])
            })
            .collect::<Vec<_>>()
    };
    let mut inits: Vec<(String, String)> = g
        .initializer
        .iter()
        .map(|t| (t.name.clone().unwrap_or_default(), tensor_hash(t)))
        .collect();
    inits.sort();
    let mut sparse: Vec<String> = g.sparse_initializer.iter().map(sparse_hash).collect();
    sparse.sort();
    json!({
        "inputs": values(&g.input),
        "outputs": values(&g.output),
        "initializers": inits,
        "sparse_initializers": sparse,
        "nodes": g.node.iter().map(|n| {
            let mut attrs: Vec<Value> = n.attribute.iter().map(attribute_doc).collect();
            attrs.sort_by_key(|a| a[0].as_str().unwrap_or("").to_string());
            json!({
                "domain": n.domain.clone().unwrap_or_default(),
                "op_type": n.op_type,
                "overload": n.overload,
                "inputs": n.input,
                "outputs": n.output,
                "attributes": attrs,
            })
        }).collect::<Vec<_>>(),
    })
}

/// SHA-256 of a tensor's encoding with its name, doc string and metadata removed.
fn tensor_hash(t: &TensorProto) -> String {
    let mut t = t.clone();
    t.name = None;
    t.doc_string = None;
    t.metadata_props.clear();
    hex(&Hash256::of(&t.encode_to_vec()).0)
}

fn sparse_hash(s: &SparseTensorProto) -> String {
    let parts: Vec<String> = s.values.iter().chain(&s.indices).map(tensor_hash).collect();
    Hash256::of(json!([parts, s.dims]).to_string().as_bytes()).hex()
}

fn graph_hash(g: &GraphProto) -> String {
    Hash256::of(graph_doc(g).to_string().as_bytes()).hex()
}

fn attribute_doc(a: &AttributeProto) -> Value {
    let floats = |v: &[f32]| {
        v.iter()
            .map(|f| format!("{:08x}", f.to_bits()))
            .collect::<Vec<_>>()
    };
    json!([
        a.name.clone().unwrap_or_default(),
        a.r#type,
        {
            "f": a.f.map(|f| format!("{:08x}", f.to_bits())),
            "i": a.i,
            "s": a.s.as_deref().map(hex),
            "t": a.t.as_ref().map(tensor_hash),
            "g": a.g.as_ref().map(graph_hash),
            "floats": floats(&a.floats),
            "ints": a.ints,
            "strings": a.strings.iter().map(|s| hex(s)).collect::<Vec<_>>(),
            "tensors": a.tensors.iter().map(tensor_hash).collect::<Vec<_>>(),
            "graphs": a.graphs.iter().map(graph_hash).collect::<Vec<_>>(),
            "sparse_tensor": a.sparse_tensor.as_ref().map(sparse_hash),
            "sparse_tensors": a.sparse_tensors.iter().map(sparse_hash).collect::<Vec<_>>(),
            "tp": a.tp.as_ref().map(|t| Hash256::of(&t.encode_to_vec()).hex()),
            "type_protos": a.type_protos.iter().map(|t| Hash256::of(&t.encode_to_vec()).hex()).collect::<Vec<_>>(),
            "ref_attr_name": a.ref_attr_name,
        }
    ])
}
