//! A controlled differential on the real serializer: the one source quantity two ONNX models
//! differ in (an initializer element, a node attribute, a Q/DQ scale or zero point, a tensor
//! name), found by comparing the models, never declared by hand; two models that differ in
//! more than one are refused. The capture set's `differential.json` names it with its A and B
//! values and the bytes the source holds (`a_source`, `b_source`: the element as the graph
//! stores it, float16 for a float weight of a float graph). Quantities are keyed by their role in
//! the graph (`super::roles`), with the further roles as aliases and the tensor name as a note.

use super::roles::Roles;
use super::{Compiled, Config, Sdk};
use crate::lab::differential::CaptureSpec;
use crate::lab::mapping::{Quantity, Value};
use crate::onnx::proto::{ModelProto, TensorProto, data_type};
use prost::Message as _;
use std::collections::BTreeMap;

/// The one quantity two models differ in.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// Its key: its first role (`initializer:Conv[0].weight[37]`, `scale:graph.input[0]`,
    /// `zero-point:graph.output[0]`, `attribute:Conv[0].strides[0]`), or, for a quantity the
    /// graph gives no role, its tensor's name (`scale:x`); `name:y->z` and `graph-name` name
    /// themselves.
    pub key: String,
    /// Its further roles (`scale:Conv.input`, ...).
    pub aliases: Vec<String>,
    /// The tensor it belongs to, as the model names it (a note): the value a scale or zero point
    /// quantizes, the initializer of an element, the node of an attribute.
    pub tensor: String,
    /// Value in A.
    pub a: Value,
    /// Value in B.
    pub b: Value,
    /// The source bytes in A and B, as the compiled graph stores them.
    pub a_source: Vec<u8>,
    /// See `a_source`.
    pub b_source: Vec<u8>,
}

/// An initializer's element width and elements, one byte vector each.
fn elements(t: &TensorProto) -> Option<(usize, Vec<Vec<u8>>)> {
    let (width, bytes) = super::lower::elements(t)?;
    Some((width, bytes.chunks(width).map(<[u8]>::to_vec).collect()))
}

fn value_of(dt: i32, bytes: &[u8]) -> Value {
    let w4 = || [bytes[0], bytes[1], bytes[2], bytes[3]];
    match dt {
        data_type::FLOAT => Value::Float(f64::from(f32::from_le_bytes(w4()))),
        data_type::INT32 => Value::Signed(i64::from(i32::from_le_bytes(w4()))),
        data_type::UINT8 => Value::Unsigned(u64::from(bytes[0])),
        data_type::INT8 => Value::Signed(i64::from(bytes[0] as i8)),
        _ => Value::Bytes(bytes.to_vec()),
    }
}

/// The difference between models `a` and `b`, or why there is not exactly one.
pub fn difference(a: &[u8], b: &[u8]) -> Result<Difference, String> {
    let mut found = differences(a, b)?;
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err("the models do not differ in any quantity the comparison reads".into()),
        n => Err(format!(
            "the models differ in {n} quantities ({}); a capture changes exactly one",
            found
                .iter()
                .map(|d| d.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Every quantity models `a` and `b` differ in (initializer elements, Q/DQ scales and zero
/// points, attributes, value names, the graph name), or why they cannot be compared.
pub fn differences(a: &[u8], b: &[u8]) -> Result<Vec<Difference>, String> {
    let decode = |m: &[u8], which: &str| {
        ModelProto::decode(m).map_err(|e| format!("model {which} is not ONNX: {e}"))
    };
    let (ma, mb) = (decode(a, "A")?, decode(b, "B")?);
    let (Some(ga), Some(gb)) = (&ma.graph, &mb.graph) else {
        return Err("a model has no graph".into());
    };
    let mut found: Vec<Difference> = Vec::new();
    let roles = Roles::new(ga);
    // Initializers, element by element.
    let ia: BTreeMap<_, _> = ga.initializer.iter().map(|t| (t.name.clone(), t)).collect();
    let ib: BTreeMap<_, _> = gb.initializer.iter().map(|t| (t.name.clone(), t)).collect();
    if ia.keys().ne(ib.keys()) {
        return Err("the models hold different initializers".into());
    }
    let quantized = ga.node.iter().any(|n| {
        matches!(
            n.op_type.as_deref(),
            Some("QuantizeLinear" | "DequantizeLinear")
        )
    });
    for (name, ta) in &ia {
        let tb = ib[name];
        if ta.dims != tb.dims || ta.data_type != tb.data_type {
            return Err(format!("initializer {name:?} changes shape or type"));
        }
        let name = name.clone().unwrap_or_default();
        let (Some((width, ea)), Some((_, eb))) = (elements(ta), elements(tb)) else {
            if *ta != tb {
                return Err(format!(
                    "initializer {name:?} has a type the comparison does not read"
                ));
            }
            continue;
        };
        let dt = ta.data_type.unwrap_or(0);
        // What a Q/DQ node reads this initializer as.
        let role = quantizer_keys(&roles, &name);
        for (i, (x, y)) in ea.iter().zip(&eb).enumerate() {
            if x == y {
                continue;
            }
            let (key, aliases, tensor) = match &role {
                Some(keys) => keys.clone(),
                None => {
                    let (k, a) = keyed(
                        "initializer",
                        roles.of_initializer(&name),
                        &name,
                        &format!("[{i}]"),
                    );
                    (k, a, name.clone())
                }
            };
            // A float weight of a float graph is stored as float16.
            let stored = |bytes: &[u8]| -> Vec<u8> {
                if dt == data_type::FLOAT && !quantized && role.is_none() && width == 4 {
                    let f = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                    super::lower::f16_bits(f).to_le_bytes().to_vec()
                } else {
                    bytes.to_vec()
                }
            };
            found.push(Difference {
                key,
                aliases,
                tensor,
                a: value_of(dt, x),
                b: value_of(dt, y),
                a_source: stored(x),
                b_source: stored(y),
            });
        }
    }
    // Node attributes.
    if ga.node.len() != gb.node.len() {
        return Err("the models have different node counts".into());
    }
    for (index, (na, nb)) in ga.node.iter().zip(&gb.node).enumerate() {
        if na.op_type != nb.op_type || na.attribute.len() != nb.attribute.len() {
            return Err(format!(
                "node {:?} changes its operator or attributes",
                na.name
            ));
        }
        for (x, y) in na.attribute.iter().zip(&nb.attribute) {
            if x == y {
                continue;
            }
            let node = na.name.clone().unwrap_or_default();
            let attr = x.name.clone().unwrap_or_default();
            // The node's scopes (`Conv[0]`, `Conv[last]`, `Conv`), or its name.
            let node_roles: Vec<String> = roles
                .of_node(index)
                .iter()
                .map(|s| format!("{s}.{attr}"))
                .collect();
            let diffs: Vec<usize> = (0..x.ints.len().max(y.ints.len()))
                .filter(|&k| x.ints.get(k) != y.ints.get(k))
                .collect();
            // One element of a list attribute, or the one integer.
            let (suffix, p, q) = match (diffs.as_slice(), x.i, y.i) {
                ([k], _, _) if x.ints.len() == y.ints.len() => {
                    (format!("[{k}]"), x.ints[*k], y.ints[*k])
                }
                ([], Some(p), Some(q)) if p != q => (String::new(), p, q),
                _ => {
                    return Err(format!(
                        "attribute {attr:?} of {node:?} changes in more than one value"
                    ));
                }
            };
            let (key, aliases) = keyed("attribute", node_roles, &format!("{node}.{attr}"), &suffix);
            found.push(Difference {
                key,
                aliases,
                tensor: node,
                a: Value::Signed(p),
                b: Value::Signed(q),
                a_source: p.to_le_bytes().to_vec(),
                b_source: q.to_le_bytes().to_vec(),
            });
        }
        if na.input != nb.input || na.output != nb.output {
            found.push(rename(
                na.input.iter().chain(&na.output),
                nb.input.iter().chain(&nb.output),
            )?);
        }
    }
    // Graph input and output names (a rename shows in the nodes too: one difference).
    let names = |g: &crate::onnx::proto::GraphProto| -> Vec<String> {
        g.input
            .iter()
            .chain(&g.output)
            .filter_map(|v| v.name.clone())
            .collect()
    };
    if names(ga) != names(gb) && !found.iter().any(|d| d.key.starts_with("name:")) {
        found.push(rename(names(ga).iter(), names(gb).iter())?);
    }
    found.dedup_by(|x, y| x.key == y.key && x.key.starts_with("name:"));
    // The graph name: a capture compiles it in as the network name.
    if ga.name != gb.name {
        let (x, y) = (graph_name(&ma), graph_name(&mb));
        // The source bytes as a fixed name field holds them: NUL-padded to one length.
        let n = x.len().max(y.len());
        let padded = |s: &str| {
            let mut v = s.as_bytes().to_vec();
            v.resize(n, 0);
            v
        };
        found.push(Difference {
            key: GRAPH_NAME_KEY.into(),
            aliases: Vec::new(),
            tensor: String::new(),
            a: Value::Bytes(x.as_bytes().to_vec()),
            b: Value::Bytes(y.as_bytes().to_vec()),
            a_source: padded(&x),
            b_source: padded(&y),
        });
    }
    Ok(found)
}

/// The key of a graph-name difference.
pub const GRAPH_NAME_KEY: &str = "graph-name";

/// A model's graph name (empty when it has none or is not ONNX): the network name a capture
/// compiles in.
pub fn graph_name(m: &ModelProto) -> String {
    m.graph
        .as_ref()
        .and_then(|g| g.name.clone())
        .unwrap_or_default()
}

/// A quantity a model holds fixed that computed values read: its key, its aliases, its
/// tensor and its value.
pub struct Held {
    /// Its key (its first role).
    pub key: String,
    /// Its further roles.
    pub aliases: Vec<String>,
    /// The value it quantizes, as the model names it.
    pub tensor: String,
    /// Its value.
    pub value: Value,
}

/// The quantities a model holds fixed that computed values read: every per-tensor Q/DQ scale
/// (`scale:ROLE`) and zero point (`zero-point:ROLE`), each initializer once, keyed as
/// `difference` keys it.
pub fn context(model: &[u8]) -> Vec<Held> {
    let Ok(m) = ModelProto::decode(model) else {
        return Vec::new();
    };
    let Some(g) = &m.graph else {
        return Vec::new();
    };
    let roles = Roles::new(g);
    let mut out = Vec::new();
    for t in &g.initializer {
        let Some(name) = &t.name else { continue };
        let Some((key, aliases, tensor)) = quantizer_keys(&roles, name) else {
            continue;
        };
        if let Some((_, e)) = elements(t).filter(|(_, e)| e.len() == 1) {
            out.push(Held {
                key,
                aliases,
                tensor,
                value: value_of(t.data_type.unwrap_or(0), &e[0]),
            });
        }
    }
    out
}

/// The keys of a quantity of kind `kind` (`scale`, `initializer`, ...): `kind:ROLE` plus
/// `suffix` for each role, the first its key and the rest its aliases; `kind:fallback` when
/// the graph gives it no role.
fn keyed(kind: &str, roles: Vec<String>, fallback: &str, suffix: &str) -> (String, Vec<String>) {
    let mut keys: Vec<String> = roles
        .iter()
        .map(|r| format!("{kind}:{r}{suffix}"))
        .collect();
    if keys.is_empty() {
        keys.push(format!("{kind}:{fallback}{suffix}"));
    }
    let first = keys.remove(0);
    (first, keys)
}

/// What the first Q/DQ node reading initializer `name` reads it as: the keys of a scale
/// (input 1) or zero point (input 2) of the value it quantizes; the fallback names the
/// node's first input.
fn quantizer_keys(roles: &Roles, name: &str) -> Option<(String, Vec<String>, String)> {
    let (kind, slot, value) = roles.quantizer_slot(name)?;
    let (key, aliases) = keyed(kind, roles.of_quantizer(name, slot), &value, "");
    Some((key, aliases, value))
}

/// One value renamed from `a` to `b` (the lists differ at positions that all hold the same
/// old and new name).
fn rename<'x>(
    a: impl Iterator<Item = &'x String>,
    b: impl Iterator<Item = &'x String>,
) -> Result<Difference, String> {
    let pairs: Vec<(&String, &String)> = a.zip(b).filter(|(x, y)| x != y).collect();
    match pairs.first() {
        Some(&(x, y)) if pairs.iter().all(|p| *p == (x, y)) => Ok(Difference {
            key: format!("name:{x}->{y}"),
            aliases: Vec::new(),
            tensor: x.clone(),
            a: Value::Bytes(x.as_bytes().to_vec()),
            b: Value::Bytes(y.as_bytes().to_vec()),
            a_source: x.as_bytes().to_vec(),
            b_source: y.as_bytes().to_vec(),
        }),
        _ => Err("more than one value is renamed".into()),
    }
}

/// The capture set's `differential.json`.
pub fn spec(d: &Difference, a: &Compiled, b: &Compiled, config: &Config, sdk: &Sdk) -> CaptureSpec {
    CaptureSpec {
        context: BTreeMap::new(),
        a_source: d.a_source.clone(),
        b_source: d.b_source.clone(),
        provenance: Some(format!(
            "nbg vendor capture: {} ({}), {}; model A sha256 {}, model B sha256 {}; B changes {}",
            sdk.wheel, sdk.build, config.name, a.model_sha256, b.model_sha256, d.key
        )),
        quantities: BTreeMap::from([(
            d.key.clone(),
            Quantity {
                a: d.a.clone(),
                b: d.b.clone(),
            },
        )]),
        aliases: BTreeMap::new(),
        tensors: BTreeMap::new(),
    }
    .with_note(&d.key, &d.aliases, &d.tensor)
}

/// Record `key`'s aliases and tensor in `spec` (none for an empty list or name).
pub trait Notes {
    /// `self` with the notes added.
    fn with_note(self, key: &str, aliases: &[String], tensor: &str) -> Self;
    /// The model's held quantities as `context`, without those `skip` names.
    fn with_context(self, held: Vec<Held>, skip: &dyn Fn(&str) -> bool) -> Self;
}

impl Notes for CaptureSpec {
    fn with_note(mut self, key: &str, aliases: &[String], tensor: &str) -> Self {
        if !aliases.is_empty() {
            self.aliases.insert(key.to_string(), aliases.to_vec());
        }
        if !tensor.is_empty() {
            self.tensors.insert(key.to_string(), tensor.to_string());
        }
        self
    }

    fn with_context(mut self, held: Vec<Held>, skip: &dyn Fn(&str) -> bool) -> Self {
        for h in held.into_iter().filter(|h| !skip(&h.key)) {
            self.context.insert(h.key.clone(), h.value);
            self = self.with_note(&h.key, &h.aliases, &h.tensor);
        }
        self
    }
}
