//! Role keys: a quantity named by its place in the graph, not by a tensor name. The serializer
//! never sees tensor names, so a mapping keyed by a role (`scale:graph.input[0]`,
//! `zero-point:Conv.output`, `initializer:layer.weight[37]`) applies to any model where that
//! role exists, whatever its author called the tensors (`docs/differentials-and-mappings.md`).
//!
//! A role is `scope.slot`:
//! - `graph.input[i]`, `graph.output[j]`: the network's i-th input (initializers excluded) and
//!   j-th output;
//! - `Op[k].slot`, the k-th node of operator `Op` in node order (a topological order, as ONNX
//!   requires), `Op[last].slot` for the last of them, and `Op.slot` only when the graph has one
//!   `Op` node, so that `Conv.weight` in a model with two convolutions is absent, never a guess;
//! - `layer[k]`, `layer[last]` and `layer` the same over the weighted operators (`WEIGHTED`):
//!   "the weight of the one weighted layer" whether it is a Conv or a Gemm.
//!
//! Slots: a weighted operator's inputs are `input`, `weight` and `bias`; any other operator's
//! are `input[i]`; outputs are `output`, then `output[n]`. Quantize and dequantize nodes are not
//! roles: a quantized value is named by the compute nodes and graph ends around it.

use crate::onnx::proto::{GraphProto, NodeProto};
use std::collections::BTreeSet;

/// Operators whose inputs are (input, weight, bias), also counted as `layer`.
const WEIGHTED: [&str; 4] = ["Conv", "ConvTranspose", "Gemm", "MatMul"];

fn is_qdq(n: &NodeProto) -> bool {
    matches!(
        n.op_type.as_deref(),
        Some("QuantizeLinear" | "DequantizeLinear")
    )
}

fn op(n: &NodeProto) -> &str {
    n.op_type.as_deref().unwrap_or("")
}

/// The name of input `i` of operator `op`.
fn input_slot(op: &str, i: usize) -> String {
    match (WEIGHTED.contains(&op), i) {
        (true, 0) => "input".into(),
        (true, 1) => "weight".into(),
        (true, 2) => "bias".into(),
        _ => format!("input[{i}]"),
    }
}

fn output_slot(i: usize) -> String {
    if i == 0 {
        "output".into()
    } else {
        format!("output[{i}]")
    }
}

/// A graph's roles: every node's scopes, computed once.
pub struct Roles<'g> {
    g: &'g GraphProto,
    /// The scopes of each node, the indexed one first (empty for Q/DQ nodes).
    scopes: Vec<Vec<String>>,
}

/// `name[k]`, `name[last]` when `k` is the last, and `name` when there is only one.
fn scoped(name: &str, k: usize, count: usize) -> Vec<String> {
    let mut s = vec![format!("{name}[{k}]")];
    if k + 1 == count {
        s.push(format!("{name}[last]"));
    }
    if count == 1 {
        s.push(name.to_string());
    }
    s
}

impl<'g> Roles<'g> {
    /// The roles of graph `g`.
    pub fn new(g: &'g GraphProto) -> Self {
        let count = |f: &dyn Fn(&NodeProto) -> bool| g.node.iter().filter(|n| f(n)).count();
        let layers = count(&|n| WEIGHTED.contains(&op(n)));
        let (mut seen, mut layer) = (std::collections::BTreeMap::<&str, usize>::new(), 0);
        let scopes = g
            .node
            .iter()
            .map(|n| {
                if is_qdq(n) {
                    return Vec::new();
                }
                let o = op(n);
                let k = seen.entry(o).or_default();
                let mut s = scoped(o, *k, count(&|m| op(m) == o));
                *k += 1;
                if WEIGHTED.contains(&o) {
                    s.extend(scoped("layer", layer, layers));
                    layer += 1;
                }
                s
            })
            .collect();
        Roles { g, scopes }
    }

    /// Every role of the value that `tensors` hold (a value and its quantized and dequantized
    /// forms), the graph's ends first, then by node; empty when it has none.
    pub fn of_value(&self, tensors: &BTreeSet<&str>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let inputs = crate::onnx::audit::runtime_inputs(self.g).filter_map(|v| v.name.as_deref());
        for (i, name) in inputs.enumerate() {
            if tensors.contains(name) {
                out.push(format!("graph.input[{i}]"));
            }
        }
        let outputs = self.g.output.iter().filter_map(|v| v.name.as_deref());
        for (j, name) in outputs.enumerate() {
            if tensors.contains(name) {
                out.push(format!("graph.output[{j}]"));
            }
        }
        for (n, scopes) in self.g.node.iter().zip(&self.scopes) {
            let slots = n
                .output
                .iter()
                .enumerate()
                .filter(|(_, t)| tensors.contains(t.as_str()))
                .map(|(i, _)| output_slot(i))
                .chain(
                    n.input
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| tensors.contains(t.as_str()))
                        .map(|(i, _)| input_slot(op(n), i)),
                );
            for slot in slots {
                // `layer` scopes exist only on weighted nodes (`new`).
                out.extend(scopes.iter().map(|scope| format!("{scope}.{slot}")));
            }
        }
        let mut seen = BTreeSet::new();
        out.retain(|r| seen.insert(r.clone()));
        out
    }

    /// The roles of the value a Q/DQ node quantizes with initializer `name` at input `slot`
    /// (1: scale, 2: zero point): every Q/DQ node reading it, with their first inputs and
    /// outputs, is one value.
    pub fn of_quantizer(&self, name: &str, slot: usize) -> Vec<String> {
        let tensors: BTreeSet<&str> = self
            .g
            .node
            .iter()
            .filter(|n| is_qdq(n) && n.input.get(slot).is_some_and(|i| i == name))
            .flat_map(|n| n.input.first().into_iter().chain(n.output.first()))
            .map(String::as_str)
            .collect();
        if tensors.is_empty() {
            return Vec::new();
        }
        self.of_value(&tensors)
    }

    /// What the first Q/DQ node reading initializer `name` reads it as: (`scale`, 1) or
    /// (`zero-point`, 2), with the name of the value it quantizes (that node's first input).
    pub fn quantizer_slot(&self, name: &str) -> Option<(&'static str, usize, String)> {
        self.g.node.iter().filter(|n| is_qdq(n)).find_map(|n| {
            let at = n.input.iter().position(|i| i == name)?;
            let kind = match at {
                1 => "scale",
                2 => "zero-point",
                _ => return None,
            };
            Some((kind, at, n.input[0].clone()))
        })
    }

    /// The roles of initializer `name` (through the dequantize node that reads it, if any).
    pub fn of_initializer(&self, name: &str) -> Vec<String> {
        let mut tensors = BTreeSet::from([name]);
        for n in &self.g.node {
            if is_qdq(n) && n.input.first().is_some_and(|i| i == name) {
                tensors.extend(n.output.first().map(String::as_str));
            }
        }
        self.of_value(&tensors)
    }

    /// The scopes of the node at `index` (`Conv[0]`, `Conv[last]`, `Conv`, `layer[0]`, ...).
    pub fn of_node(&self, index: usize) -> &[String] {
        self.scopes.get(index).map_or(&[], Vec::as_slice)
    }
}
