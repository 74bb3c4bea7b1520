//! An admitted ONNX model lowered to an OpenVX plan (`simulator::plan`), for the vendor's
//! serializer. Float32 models become float16 tensors (biases float32); quantized models in the
//! usual QDQ form (QuantizeLinear/DequantizeLinear pairs, per-tensor scale and zero point,
//! uint8 or int8) become affine-quantized tensors: each Q/DQ pair is folded away and its
//! parameters attach to the value it quantizes. Dimensions are ONNX's reversed (OpenVX counts
//! from the innermost), so element order is unchanged; anything outside the covered operators
//! and attributes is refused naming the node.

use super::plan::{self, Affine, Elem, Node, Plan, Role};
use crate::onnx::checker;
use crate::onnx::proto::{self, AttributeProto, ModelProto, NodeProto, TensorProto, data_type};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// Why a model cannot be lowered.
#[derive(Debug, thiserror::Error)]
#[error("{node}: {reason}")]
pub struct Unsupported {
    /// The node (or value) that cannot be lowered.
    pub node: String,
    /// Why.
    pub reason: String,
}

fn refuse<T>(node: &str, reason: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported {
        node: node.into(),
        reason: reason.into(),
    })
}

/// Operators the lowering covers (besides QuantizeLinear/DequantizeLinear).
pub const COVERED: [&str; 33] = [
    "Conv",
    "Pad",
    "Slice",
    "Resize",
    "Upsample",
    "HardSigmoid",
    "ConstantOfShape",
    "Sum",
    "Transpose",
    "PRelu",
    "BatchNormalization",
    "Clip",
    "LeakyRelu",
    "HardSwish",
    "Dropout",
    "Gemm",
    "MatMul",
    "Add",
    "Sub",
    "Div",
    "Mul",
    "Relu",
    "Sigmoid",
    "Tanh",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "Softmax",
    "Concat",
    "Reshape",
    "Flatten",
    "Identity",
    "Constant",
];

/// A node as a refusal names it: its operator and name, or (unnamed) its first output.
fn label(n: &NodeProto) -> String {
    let op = n.op_type.as_deref().unwrap_or("?");
    match n.name.as_deref().filter(|s| !s.is_empty()) {
        Some(name) => format!("{op} node {name:?}"),
        None => format!(
            "{op} node computing {:?}",
            n.output.first().map_or("", String::as_str)
        ),
    }
}

/// Most bytes of constants the lowering materializes (ConstantOfShape): the plan carries them
/// to the driver child as hex.
const MAX_FOLDED_BYTES: usize = 128 << 20;

/// Fold the nodes that only make constants (ConstantOfShape of a constant shape) into
/// initializers, so the layers reading them see weights. Returns the folded nodes' outputs.
fn fold_constants(
    graph: &proto::GraphProto,
    inits: &mut BTreeMap<String, Cow<'_, TensorProto>>,
    shapes: &mut BTreeMap<String, Vec<i64>>,
) -> Result<BTreeSet<String>, Unsupported> {
    let mut folded = BTreeSet::new();
    let mut total = 0usize;
    for n in &graph.node {
        if n.op_type.as_deref() != Some("ConstantOfShape") {
            continue;
        }
        let l = label(n);
        let (Some(shape), Some(out)) = (n.input.first(), n.output.first()) else {
            continue;
        };
        let Some(dims) = inits.get(shape).and_then(|t| values(t)) else {
            continue;
        };
        let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        let count = dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?));
        // The fill value: one element of the `value` tensor (float 0 when absent).
        let value = attr(n, "value").and_then(|a| a.t.as_ref());
        let (data_type, fill) = match value {
            None => (data_type::FLOAT, 0f32.to_le_bytes().to_vec()),
            Some(t) => match elements(t) {
                Some((_, b)) if t.data_type.is_some() => (t.data_type.unwrap_or(0), b),
                _ => return refuse(&l, "its value is not a tensor the lowering reads"),
            },
        };
        let Some(count) = count.filter(|c| {
            c.checked_mul(fill.len())
                .is_some_and(|b| total + b <= MAX_FOLDED_BYTES)
        }) else {
            return refuse(
                &l,
                format!("the constants it makes exceed {MAX_FOLDED_BYTES} bytes in all"),
            );
        };
        total += count * fill.len();
        let t = TensorProto {
            name: Some(out.clone()),
            dims: dims.clone(),
            data_type: Some(data_type),
            raw_data: Some(fill.repeat(count)),
            ..Default::default()
        };
        inits.insert(out.clone(), Cow::Owned(t));
        shapes.insert(out.clone(), dims);
        folded.insert(out.clone());
    }
    Ok(folded)
}

/// Constant nodes as the initializers they stand for: Paddle2ONNX writes every weight, batch
/// norm parameter, Clip bound and Resize scale as a Constant node, and ONNX Runtime folds them
/// when its session starts. A Constant of a tensor, a float, an int or a list of either
/// becomes an initializer named by its output; any other (sparse, strings) stays a node, which
/// the lowering refuses by name. The model is already bounded by the audit's limits.
fn constants_as_initializers(g: &mut proto::GraphProto) {
    let mut made = Vec::new();
    g.node.retain(|n| {
        let (Some("Constant"), [out], [a]) =
            (n.op_type.as_deref(), &n.output[..], &n.attribute[..])
        else {
            return true;
        };
        let t = |dims: Vec<i64>, data_type: i32| TensorProto {
            name: Some(out.clone()),
            dims,
            data_type: Some(data_type),
            ..Default::default()
        };
        let tensor = match (a.name.as_deref(), &a.t) {
            (Some("value"), Some(v)) => TensorProto {
                name: Some(out.clone()),
                ..v.clone()
            },
            (Some("value_float"), _) => TensorProto {
                float_data: vec![a.f.unwrap_or(0.0)],
                ..t(vec![], data_type::FLOAT)
            },
            (Some("value_floats"), _) => TensorProto {
                float_data: a.floats.clone(),
                ..t(vec![a.floats.len() as i64], data_type::FLOAT)
            },
            (Some("value_int"), _) => TensorProto {
                int64_data: vec![a.i.unwrap_or(0)],
                ..t(vec![], data_type::INT64)
            },
            (Some("value_ints"), _) => TensorProto {
                int64_data: a.ints.clone(),
                ..t(vec![a.ints.len() as i64], data_type::INT64)
            },
            _ => return true,
        };
        made.push(tensor);
        false
    });
    g.initializer.extend(made);
}

/// `c` (a float initializer of `dims`) broadcast to `to` as numpy broadcasts (dimensions
/// aligned on the right, a 1 repeated), as float32 bytes; `None` when it does not broadcast
/// to exactly `to` or would pass `MAX_FOLDED_BYTES`.
fn broadcast(c: &TensorProto, to: &[i64]) -> Option<Vec<u8>> {
    if c.data_type != Some(data_type::FLOAT) || c.dims.len() > to.len() {
        return None;
    }
    let v = values(c)?;
    let pad = to.len() - c.dims.len();
    let from: Vec<i64> = std::iter::repeat_n(1, pad)
        .chain(c.dims.iter().copied())
        .collect();
    if from.iter().zip(to).any(|(&f, &t)| f != 1 && f != t)
        || v.len() as i64 != from.iter().product::<i64>()
    {
        return None;
    }
    let count = to
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?))?;
    if count.checked_mul(4)? > MAX_FOLDED_BYTES {
        return None;
    }
    let mut out = Vec::with_capacity(count * 4);
    let mut index = vec![0i64; to.len()];
    for _ in 0..count {
        // The source element: each broadcast dimension held at 0.
        let at = index
            .iter()
            .zip(&from)
            .fold(0i64, |a, (&i, &f)| a * f + if f == 1 { 0 } else { i });
        out.extend_from_slice(&(v[at as usize] as f32).to_le_bytes());
        for k in (0..to.len()).rev() {
            index[k] += 1;
            if index[k] < to[k] {
                break;
            }
            index[k] = 0;
        }
    }
    Some(out)
}

/// Most passes `fold_shape_arithmetic` makes: each folds what the previous one's shapes let
/// it, and a shape computation is a short chain.
const MAX_FOLD_PASSES: usize = 16;

/// Fold every shape computation (`shape_arithmetic`) into the initializer it makes, pass by
/// pass, so the shape inference of the next pass sees the `Reshape` targets as constants.
fn fold_shape_arithmetic(model: &mut ModelProto) -> Result<(), Unsupported> {
    for _ in 0..MAX_FOLD_PASSES {
        let shapes = checker::static_shapes(model).map_err(|r| Unsupported {
            node: "model".into(),
            reason: r.to_string(),
        })?;
        let Some(g) = model.graph.as_mut() else {
            return Ok(());
        };
        let mut inits: BTreeMap<String, Cow<'_, TensorProto>> = g
            .initializer
            .iter()
            .filter_map(|t| Some((t.name.clone()?, Cow::Borrowed(t))))
            .collect();
        let mut made = Vec::new();
        let mut gone = BTreeSet::new();
        for (i, n) in g.node.iter().enumerate() {
            let (Some((dims, v)), Some(out)) =
                (shape_arithmetic(n, &inits, &shapes), n.output.first())
            else {
                continue;
            };
            let t = TensorProto {
                name: Some(out.clone()),
                dims,
                data_type: Some(data_type::INT64),
                raw_data: Some(v.iter().flat_map(|x| x.to_le_bytes()).collect()),
                ..Default::default()
            };
            inits.insert(out.clone(), Cow::Owned(t.clone()));
            made.push(t);
            gone.insert(i);
        }
        // A Resize whose scales or sizes are now constant: its output shape declared, as
        // ONNX Runtime infers it, so the next pass's inference carries it downstream.
        let declared: Vec<proto::ValueInfoProto> = g
            .node
            .iter()
            .filter(|n| n.op_type.as_deref() == Some("Resize"))
            .filter_map(|n| {
                let out = n.output.first()?;
                if shapes.contains_key(out) {
                    return None;
                }
                let dims = resized(n, &inits, &shapes)?;
                Some(crate::onnx::fixtures::tensor_value(
                    out,
                    0,
                    &dims.into_iter().map(Some).collect::<Vec<_>>(),
                    &[],
                ))
            })
            .collect();
        if made.is_empty() && declared.is_empty() {
            return Ok(());
        }
        let mut i = 0;
        g.node.retain(|_| {
            i += 1;
            !gone.contains(&(i - 1))
        });
        g.initializer.extend(made);
        g.value_info.extend(declared);
    }
    Ok(())
}

/// The output shape of a Resize of a static input by constant scales or sizes, when they are
/// constant (`resize_shape`).
fn resized(
    n: &NodeProto,
    inits: &BTreeMap<String, Cow<'_, TensorProto>>,
    shapes: &BTreeMap<String, Vec<i64>>,
) -> Option<Vec<i64>> {
    let x = shapes.get(n.input.first()?)?;
    let constant = |k: usize| {
        n.input
            .get(k)
            .filter(|s| !s.is_empty())
            .and_then(|s| values(inits.get(s)?))
            .unwrap_or_default()
    };
    resize_shape(x, &constant(2), &constant(3))
}

/// The output shape of resizing `x`: the sizes when there is one per axis, else each dimension
/// times its scale, rounded down (ONNX Resize); none when neither has one per axis.
fn resize_shape(x: &[i64], scales: &[f64], sizes: &[f64]) -> Option<Vec<i64>> {
    if sizes.len() == x.len() {
        return Some(sizes.iter().map(|&v| v as i64).collect());
    }
    (scales.len() == x.len()).then(|| {
        x.iter()
            .zip(scales)
            .map(|(&d, &f)| (d as f64 * f).floor() as i64)
            .collect()
    })
}

/// Most elements a folded shape computation holds: shapes are short lists.
const MAX_SHAPE_ELEMENTS: usize = 64;

/// The integers a shape computation makes, evaluated when everything it reads is known:
/// `Shape` of a value of static shape, and `Cast` (to an integer type), `Slice`, `Concat`,
/// `Gather`, `Unsqueeze`, `Squeeze` and integer `Add`, `Sub`, `Mul` and exact `Div` of integer
/// constants. Exporters (Paddle2ONNX, torch.onnx) compute a `Reshape`'s target so at run time;
/// ONNX Runtime evaluates it once the input shape is fixed. Returns the dimensions and values;
/// `None` leaves the node to the lowering, which refuses it by name.
fn shape_arithmetic(
    n: &NodeProto,
    inits: &BTreeMap<String, Cow<'_, TensorProto>>,
    shapes: &BTreeMap<String, Vec<i64>>,
) -> Option<(Vec<i64>, Vec<i64>)> {
    let op = n.op_type.as_deref()?;
    if !n.domain.as_deref().unwrap_or("").is_empty() || n.output.len() != 1 {
        return None;
    }
    // An integer constant input: its dimensions and values.
    let constant = |k: usize| -> Option<(Vec<i64>, Vec<i64>)> {
        let t = inits.get(n.input.get(k)?)?;
        if !matches!(t.data_type, Some(data_type::INT64 | data_type::INT32)) {
            return None;
        }
        let v = values(t)?.into_iter().map(|x| x as i64).collect::<Vec<_>>();
        (v.len() <= MAX_SHAPE_ELEMENTS).then(|| (t.dims.clone(), v))
    };
    let optional = |k: usize| {
        n.input
            .get(k)
            .filter(|s| !s.is_empty())
            .map(|_| constant(k))
    };
    let index = |i: i64, len: usize| -> Option<usize> {
        let i = if i < 0 { i + len as i64 } else { i };
        usize::try_from(i).ok().filter(|&i| i < len)
    };
    let list = |v: Vec<i64>| Some((vec![v.len() as i64], v));
    match op {
        "Shape" => {
            let s = shapes.get(n.input.first()?)?;
            let (start, end) = checker::shape_range(n, s.len());
            list(s.get(start..end)?.to_vec())
        }
        "Cast" => {
            let to = attr(n, "to").and_then(|a| a.i)?;
            (to == i64::from(data_type::INT64) || to == i64::from(data_type::INT32))
                .then(|| constant(0))
                .flatten()
        }
        "Slice" => {
            let (dims, v) = constant(0)?;
            if dims.len() != 1 {
                return None;
            }
            let (starts, ends) = (constant(1)?.1, constant(2)?.1);
            let axes = optional(3).unwrap_or(Some((vec![], vec![0])))?.1;
            let steps = optional(4).unwrap_or(Some((vec![], vec![1])))?.1;
            if starts.len() != 1 || ends.len() != 1 || axes != [0] || steps != [1] {
                return None;
            }
            let len = v.len() as i64;
            let clamp = |x: i64| (if x < 0 { x + len } else { x }).clamp(0, len) as usize;
            let (a, b) = (clamp(starts[0]), clamp(ends[0]));
            list(v[a..b.max(a)].to_vec())
        }
        "Concat" => {
            let mut out = Vec::new();
            for k in 0..n.input.len() {
                let (dims, v) = constant(k)?;
                if dims.len() != 1 {
                    return None;
                }
                out.extend(v);
            }
            (out.len() <= MAX_SHAPE_ELEMENTS).then_some(())?;
            list(out)
        }
        "Gather" => {
            let (dims, v) = constant(0)?;
            let (idims, iv) = constant(1)?;
            if dims.len() != 1 || int(n, "axis", 0) != 0 || idims.len() > 1 {
                return None;
            }
            let picked = iv
                .iter()
                .map(|&i| index(i, v.len()).map(|i| v[i]))
                .collect::<Option<Vec<_>>>()?;
            Some((idims, picked))
        }
        "Unsqueeze" | "Squeeze" => {
            let (dims, v) = constant(0)?;
            let axes = match optional(1) {
                Some(a) => a?.1,
                None => ints(n, "axes").unwrap_or_default(),
            };
            let out_rank = if op == "Unsqueeze" {
                dims.len() + axes.len()
            } else {
                dims.len().checked_sub(axes.len())?
            };
            if op == "Squeeze" && axes.is_empty() {
                return Some((dims.iter().copied().filter(|&d| d != 1).collect(), v));
            }
            let rank = if op == "Unsqueeze" {
                out_rank
            } else {
                dims.len()
            };
            let axes: Vec<usize> = axes
                .iter()
                .map(|&a| index(a, rank))
                .collect::<Option<_>>()?;
            let dims = if op == "Unsqueeze" {
                let mut rest = dims.iter().copied();
                (0..out_rank)
                    .map(|i| {
                        if axes.contains(&i) {
                            Some(1)
                        } else {
                            rest.next()
                        }
                    })
                    .collect::<Option<Vec<_>>>()?
            } else {
                if axes.iter().any(|&a| dims[a] != 1) {
                    return None;
                }
                (0..rank)
                    .filter(|i| !axes.contains(i))
                    .map(|i| dims[i])
                    .collect()
            };
            Some((dims, v))
        }
        "Add" | "Sub" | "Mul" | "Div" => {
            let ((da, a), (db, b)) = (constant(0)?, constant(1)?);
            let (dims, len) = if a.len() >= b.len() {
                (da, a.len())
            } else {
                (db, b.len())
            };
            if !(a.len() == b.len() || a.len() == 1 || b.len() == 1) {
                return None;
            }
            let at = |v: &[i64], i: usize| v[if v.len() == 1 { 0 } else { i }];
            let v = (0..len)
                .map(|i| {
                    let (x, y) = (at(&a, i), at(&b, i));
                    match op {
                        "Add" => x.checked_add(y),
                        "Sub" => x.checked_sub(y),
                        "Mul" => x.checked_mul(y),
                        _ => (y != 0 && x % y == 0).then(|| x / y),
                    }
                })
                .collect::<Option<Vec<_>>>()?;
            Some((dims, v))
        }
        _ => None,
    }
}

fn attr<'a>(n: &'a NodeProto, name: &str) -> Option<&'a AttributeProto> {
    n.attribute.iter().find(|a| a.name.as_deref() == Some(name))
}

fn ints(n: &NodeProto, name: &str) -> Option<Vec<i64>> {
    attr(n, name).map(|a| a.ints.clone())
}

fn int(n: &NodeProto, name: &str, default: i64) -> i64 {
    attr(n, name).and_then(|a| a.i).unwrap_or(default)
}

/// An initializer's element width and its elements as little-endian bytes, from `raw_data` or
/// the typed field of its type; `None` for other types or a raw length off the width.
pub(super) fn elements(t: &TensorProto) -> Option<(usize, Vec<u8>)> {
    let dt = t.data_type?;
    let width = match dt {
        data_type::FLOAT | data_type::INT32 => 4,
        data_type::UINT8 | data_type::INT8 => 1,
        data_type::INT64 => 8,
        _ => return None,
    };
    let bytes = match (&t.raw_data, dt) {
        (Some(r), _) if r.len() % width == 0 => r.clone(),
        (Some(_), _) => return None,
        (None, data_type::FLOAT) => t.float_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        (None, data_type::INT64) => t.int64_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        (None, data_type::INT32) => t.int32_data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        // 8-bit elements travel one per int32_data word.
        (None, _) => t.int32_data.iter().map(|&v| v as u8).collect(),
    };
    Some((width, bytes))
}

/// An initializer's elements as f64, whatever its numeric type.
fn values(t: &TensorProto) -> Option<Vec<f64>> {
    let dt = t.data_type?;
    let (width, bytes) = elements(t)?;
    Some(
        bytes
            .chunks_exact(width)
            .map(|c| match dt {
                data_type::FLOAT => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                data_type::INT32 => f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                data_type::UINT8 => f64::from(c[0]),
                data_type::INT8 => f64::from(c[0] as i8),
                _ => i64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f64,
            })
            .collect(),
    )
}

/// Round-to-nearest-even float32 to float16 bits.
pub fn f16_bits(v: f32) -> u16 {
    half::f16::from_f32(v).to_bits()
}

/// The per-tensor quantization a Q/DQ node states (scale and zero-point initializers).
fn qdq(
    n: &NodeProto,
    inits: &BTreeMap<String, Cow<'_, TensorProto>>,
) -> Result<(Affine, Elem), Unsupported> {
    let l = label(n);
    if attr(n, "axis").is_some()
        && n.input
            .get(1)
            .and_then(|s| inits.get(s))
            .is_some_and(|t| t.dims.iter().product::<i64>() > 1)
    {
        return refuse(&l, "per-axis quantization is not covered (per-tensor only)");
    }
    let scalar = |i: usize| -> Result<Option<(f64, i32)>, Unsupported> {
        let Some(name) = n.input.get(i).filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        let Some(t) = inits.get(name) else {
            return refuse(&l, format!("{name} is not an initializer"));
        };
        match values(t).as_deref() {
            Some([v]) => Ok(Some((*v, t.data_type.unwrap_or(0)))),
            _ => refuse(&l, format!("{name} is not one element (per-tensor only)")),
        }
    };
    let Some((scale, _)) = scalar(1)? else {
        return refuse(&l, "no scale");
    };
    let (zero_point, elem) = match scalar(2)? {
        None => (0, Elem::Uint8),
        Some((z, data_type::UINT8)) => (z as i32, Elem::Uint8),
        Some((z, data_type::INT8)) => (z as i32, Elem::Int8),
        Some((z, data_type::INT32)) => (z as i32, Elem::Int32),
        Some(_) => return refuse(&l, "zero point is not uint8, int8 or int32"),
    };
    if !(scale.is_finite() && scale > 0.0) {
        return refuse(&l, format!("scale {scale} is not a positive finite number"));
    }
    Ok((
        Affine {
            scale: scale as f32,
            zero_point,
        },
        elem,
    ))
}

/// Union-find over value names: a folded Q/DQ pair makes its input and output one tensor.
#[derive(Default)]
struct Classes {
    parent: BTreeMap<String, String>,
}

impl Classes {
    fn find(&mut self, v: &str) -> String {
        let p = self.parent.get(v).cloned();
        match p {
            Some(p) if p != v => {
                let root = self.find(&p);
                self.parent.insert(v.to_string(), root.clone());
                root
            }
            _ => v.to_string(),
        }
    }

    fn union(&mut self, a: &str, b: &str) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(rb, ra);
        }
    }
}

/// What the lowering knows of each value class.
struct Lowering<'m> {
    inits: BTreeMap<String, Cow<'m, TensorProto>>,
    shapes: BTreeMap<String, Vec<i64>>,
    classes: Classes,
    quant: BTreeMap<String, (Affine, Elem)>,
    graph_inputs: BTreeSet<String>,
    graph_outputs: BTreeSet<String>,
    plan: Plan,
    made: BTreeMap<String, usize>,
    quantized: bool,
    /// MatMul nodes (by index) fused with the Add after them: the bias and the Add's output.
    fused: BTreeMap<usize, (String, String)>,
    /// Outputs of the Add nodes a fused MatMul computes.
    skipped: BTreeSet<String>,
}

impl Lowering<'_> {
    /// Whether the graph is a float graph (no Q/DQ).
    fn quantized_free(&self) -> bool {
        !self.quantized
    }

    /// A one-dimensional constant of `values` (float16 in a float graph, float32 for `wide`),
    /// for per-channel parameters.
    fn channel_constant(&mut self, name: &str, values: &[f64], wide: bool) -> usize {
        let (elem, data) = if wide {
            (
                Elem::Float32,
                values
                    .iter()
                    .flat_map(|&x| (x as f32).to_le_bytes())
                    .collect(),
            )
        } else {
            (
                Elem::Float16,
                values
                    .iter()
                    .flat_map(|&x| f16_bits(x as f32).to_le_bytes())
                    .collect(),
            )
        };
        let i = self.plan.tensors.len();
        self.plan.tensors.push(plan::Tensor {
            name: name.to_string(),
            dims: vec![values.len() as u32],
            elem,
            quant: None,
            role: Role::Constant(data),
        });
        i
    }

    /// A reshape of plan tensor `from` to `dims` (ONNX order, outermost first) into a new
    /// intermediate tensor of the same element type and quantization: the driver's per-channel
    /// and softmax layers take the channel or the reduced axis where a 4-D or 2-D layout puts it.
    fn reshaped(&mut self, name: &str, from: usize, dims: &[i64]) -> usize {
        let t = self.plan.tensors[from].clone();
        let dims: Vec<u32> = dims.iter().rev().map(|&d| d as u32).collect();
        let to = self.plan.tensors.len();
        self.plan.tensors.push(plan::Tensor {
            name: name.to_string(),
            dims: dims.clone(),
            elem: t.elem,
            quant: t.quant,
            role: Role::Virtual,
        });
        let shape = self.dims_constant(name, &dims);
        self.plan.nodes.push(Node::Reshape {
            input: from,
            shape,
            output: to,
        });
        to
    }

    /// An intermediate tensor shaped and typed like plan tensor `like`, with `dims` (ONNX
    /// order).
    fn intermediate(&mut self, name: &str, like: usize, dims: &[i64]) -> usize {
        let t = self.plan.tensors[like].clone();
        let i = self.plan.tensors.len();
        self.plan.tensors.push(plan::Tensor {
            name: name.to_string(),
            dims: dims.iter().rev().map(|&d| d as u32).collect(),
            elem: t.elem,
            quant: t.quant,
            role: Role::Virtual,
        });
        i
    }

    /// An initializer's values, or why it is not one.
    fn constant_values(&self, node: &str, v: &str) -> Result<Vec<f64>, Unsupported> {
        self.inits
            .get(v)
            .and_then(|t| values(t))
            .ok_or_else(|| Unsupported {
                node: node.into(),
                reason: format!("{v} is not a constant the lowering reads"),
            })
    }

    /// The static shape of `v`, or of another value of its class (a folded Q/DQ keeps it).
    fn shape(&mut self, node: &str, v: &str) -> Result<Vec<i64>, Unsupported> {
        let class = self.classes.find(v);
        let known: Vec<(String, Vec<i64>)> = self
            .shapes
            .iter()
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        let found = std::iter::once(self.shapes.get(v).cloned())
            .chain(
                known
                    .into_iter()
                    .filter(|(k, _)| self.classes.find(k) == class)
                    .map(|(_, s)| Some(s)),
            )
            .flatten()
            .find(|s| s.iter().all(|&d| d > 0));
        match found {
            Some(s) => {
                self.shapes.insert(v.to_string(), s.clone());
                Ok(s)
            }
            None => refuse(node, format!("the shape of {v} is not static")),
        }
    }

    /// The plan tensor of value `v` (created on first use), `bias` for a Conv/Gemm bias.
    fn tensor(&mut self, node: &str, v: &str, bias: bool) -> Result<usize, Unsupported> {
        let class = self.classes.find(v);
        if let Some(&i) = self.made.get(&class) {
            return Ok(i);
        }
        let shape = self.shape(node, v)?;
        let dims: Vec<u32> = shape.iter().rev().map(|&d| d as u32).collect();
        let q = self.quant.get(&class).copied();
        let names: Vec<String> = self
            .shapes
            .keys()
            .chain(self.inits.keys())
            .cloned()
            .collect();
        let members: Vec<String> = names
            .into_iter()
            .filter(|m| self.classes.find(m) == class)
            .collect();
        let init = members.iter().find_map(|m| self.inits.get(m)).cloned();
        let role = if let Some(t) = &init {
            let vals = values(t).ok_or(Unsupported {
                node: node.into(),
                reason: format!("initializer {v} has an element type the lowering does not read"),
            })?;
            Role::Constant(match (q, t.data_type) {
                (Some((_, Elem::Uint8)), Some(data_type::UINT8)) => {
                    vals.iter().map(|&x| x as u8).collect()
                }
                (Some((_, Elem::Int8)), Some(data_type::INT8)) => {
                    vals.iter().map(|&x| x as i8 as u8).collect()
                }
                (Some((_, Elem::Int32)), Some(data_type::INT32)) => vals
                    .iter()
                    .flat_map(|&x| (x as i32).to_le_bytes())
                    .collect(),
                (None, Some(data_type::FLOAT)) if !self.quantized && bias => vals
                    .iter()
                    .flat_map(|&x| (x as f32).to_le_bytes())
                    .collect(),
                (None, Some(data_type::FLOAT)) if !self.quantized => vals
                    .iter()
                    .flat_map(|&x| f16_bits(x as f32).to_le_bytes())
                    .collect(),
                _ => {
                    return refuse(
                        node,
                        format!(
                            "initializer {v} is not stored as its graph needs (float in a float graph, quantized through DequantizeLinear in a QDQ graph)"
                        ),
                    );
                }
            })
        } else if members.iter().any(|m| self.graph_inputs.contains(m)) {
            Role::Input
        } else if members.iter().any(|m| self.graph_outputs.contains(m)) {
            Role::Output
        } else {
            Role::Virtual
        };
        let elem = match (q, self.quantized) {
            (Some((_, e)), _) => e,
            (None, false) if bias && init.is_some() => Elem::Float32,
            (None, false) => Elem::Float16,
            (None, true) => return refuse(node, format!("{v} has no quantization in a QDQ graph")),
        };
        let i = self.plan.tensors.len();
        self.plan.tensors.push(plan::Tensor {
            name: class.clone(),
            dims,
            elem,
            quant: q.map(|(a, _)| a),
            role: role.clone(),
        });
        self.made.insert(class, i);
        match role {
            Role::Input => self.plan.inputs.push(i),
            Role::Output => self.plan.outputs.push(i),
            _ => {}
        }
        Ok(i)
    }

    /// Whether `v`'s class holds an initializer.
    fn is_constant(&mut self, v: &str) -> bool {
        let class = self.classes.find(v);
        let names: Vec<String> = self.inits.keys().cloned().collect();
        names.iter().any(|k| self.classes.find(k) == class)
    }

    /// An INT32 constant of dimensions (innermost first), for a reshape.
    fn dims_constant(&mut self, name: &str, dims: &[u32]) -> usize {
        let i = self.plan.tensors.len();
        self.plan.tensors.push(plan::Tensor {
            name: format!("{name}/shape"),
            dims: vec![dims.len() as u32],
            elem: Elem::Int32,
            quant: None,
            role: Role::Constant(
                dims.iter()
                    .flat_map(|&d| (d as i32).to_le_bytes())
                    .collect(),
            ),
        });
        i
    }

    /// A float initializer transposed from [K, N] to [N, K] (Gemm without transB, MatMul):
    /// OpenVX's fully connected weights are [K, N] innermost K, ONNX's [N, K] row-major.
    fn transposed(&mut self, node: &str, v: &str) -> Result<(), Unsupported> {
        let Some(t) = self.inits.get(v).cloned() else {
            return refuse(
                node,
                format!("{v} is not an initializer (weights must be constant)"),
            );
        };
        let [k, n] = t.dims[..] else {
            return refuse(node, format!("{v} is not two-dimensional"));
        };
        let (k, n) = (k as usize, n as usize);
        let Some((width, raw)) = elements(&t).filter(|_| {
            matches!(
                t.data_type,
                Some(data_type::FLOAT | data_type::UINT8 | data_type::INT8)
            )
        }) else {
            return refuse(node, format!("{v}: unsupported weight type"));
        };
        if raw.len() != k * n * width {
            return refuse(node, format!("{v}: data does not match its shape"));
        }
        let mut out = vec![0u8; raw.len()];
        for r in 0..k {
            for c in 0..n {
                let (from, to) = ((r * n + c) * width, (c * k + r) * width);
                out[to..to + width].copy_from_slice(&raw[from..from + width]);
            }
        }
        let transposed = TensorProto {
            dims: vec![n as i64, k as i64],
            raw_data: Some(out),
            float_data: vec![],
            ..t.into_owned()
        };
        self.inits.insert(v.to_string(), Cow::Owned(transposed));
        self.shapes.insert(v.to_string(), vec![n as i64, k as i64]);
        Ok(())
    }
}

/// The constants' lifetime the model asks for (`plan::LIFETIME_KEY`); another value is refused.
fn lifetime(model: &ModelProto) -> Result<plan::Lifetime, Unsupported> {
    match model
        .metadata_props
        .iter()
        .find(|e| e.key.as_deref() == Some(plan::LIFETIME_KEY))
        .map(|e| e.value.as_deref().unwrap_or(""))
    {
        None => Ok(plan::Lifetime::Unset),
        Some("static") => Ok(plan::Lifetime::Static),
        Some(other) => refuse(
            plan::LIFETIME_KEY,
            format!("{other:?} is not a lifetime (static is)"),
        ),
    }
}

/// Lower `model` (already admitted by the ONNX audit).
pub fn lower(model: &ModelProto) -> Result<Plan, Unsupported> {
    lower_fixed(model, &[])
}

/// `model` with the dimensions of the graph inputs `fixed` names set to the given shape
/// (outermost first): symbolic batch or spatial dimensions fixed by the input a run gives.
/// A fixed dimension must equal the given one, and the rank must agree.
pub fn with_input_shapes(
    model: &ModelProto,
    fixed: &[(String, Vec<u64>)],
) -> Result<ModelProto, Unsupported> {
    let mut m = model.clone();
    let Some(graph) = m.graph.as_mut() else {
        return refuse("model", "no graph");
    };
    for (name, shape) in fixed {
        let Some(v) = graph
            .input
            .iter_mut()
            .find(|v| v.name.as_ref() == Some(name))
        else {
            return refuse(name, "not a graph input");
        };
        let Some(proto::TypeValue::TensorType(t)) =
            v.r#type.as_mut().and_then(|t| t.value.as_mut())
        else {
            return refuse(name, "not a tensor");
        };
        let dims = &mut t.shape.get_or_insert_with(Default::default).dim;
        if !dims.is_empty() && dims.len() != shape.len() {
            return refuse(
                name,
                format!(
                    "rank {} given, the model declares {}",
                    shape.len(),
                    dims.len()
                ),
            );
        }
        dims.resize_with(shape.len(), Default::default);
        for (i, (d, &n)) in dims.iter_mut().zip(shape).enumerate() {
            let n = i64::try_from(n).unwrap_or(i64::MAX);
            if let Some(v) = d.fixed()
                && v != n
            {
                return refuse(name, format!("dimension {i} is {v}, {n} was given"));
            }
            d.value = Some(proto::DimensionValue::DimValue(n));
        }
    }
    Ok(m)
}

/// `lower` with the graph inputs' shapes fixed (`with_input_shapes`).
pub fn lower_fixed(model: &ModelProto, fixed: &[(String, Vec<u64>)]) -> Result<Plan, Unsupported> {
    // Initializers a model also lists as graph inputs (IR < 4) are weights, not inputs a run
    // feeds (the audit's rule): without them in the inputs, inference knows their contents.
    let mut owned = with_input_shapes(model, fixed)?;
    if let Some(g) = owned.graph.as_mut() {
        let inits: BTreeSet<String> = g
            .initializer
            .iter()
            .filter_map(|t| t.name.clone())
            .collect();
        g.input
            .retain(|v| v.name.as_ref().is_none_or(|n| !inits.contains(n)));
        constants_as_initializers(g);
    }
    fold_shape_arithmetic(&mut owned)?;
    let model = &owned;
    let Some(graph) = model.graph.as_ref() else {
        return refuse("model", "no graph");
    };
    let mut shapes = checker::static_shapes(model).map_err(|r| Unsupported {
        node: "model".into(),
        reason: r.to_string(),
    })?;
    let mut inits: BTreeMap<String, Cow<'_, TensorProto>> = graph
        .initializer
        .iter()
        .filter_map(|t| Some((t.name.clone()?, Cow::Borrowed(t))))
        .collect();
    let folded = fold_constants(graph, &mut inits, &mut shapes)?;
    let mut l = Lowering {
        quantized: graph.node.iter().any(|n| {
            matches!(
                n.op_type.as_deref(),
                Some("QuantizeLinear" | "DequantizeLinear")
            )
        }),
        inits,
        shapes,
        classes: Classes::default(),
        quant: BTreeMap::new(),
        graph_inputs: graph.input.iter().filter_map(|v| v.name.clone()).collect(),
        graph_outputs: graph.output.iter().filter_map(|v| v.name.clone()).collect(),
        plan: Plan {
            tensors: vec![],
            nodes: vec![],
            inputs: vec![],
            outputs: vec![],
            constants: lifetime(model)?,
        },
        made: BTreeMap::new(),
        fused: BTreeMap::new(),
        skipped: folded,
    };
    // A MatMul whose only reader adds a one-dimensional constant of its width is one fully
    // connected layer with that bias: the Add's output is the layer's.
    for (i, n) in graph.node.iter().enumerate() {
        if n.op_type.as_deref() != Some("MatMul") || !l.quantized_free() {
            continue;
        }
        let (Some(out), Some(w)) = (n.output.first(), n.input.get(1)) else {
            continue;
        };
        let readers: Vec<&NodeProto> = graph
            .node
            .iter()
            .filter(|m| m.input.iter().any(|x| x == out))
            .collect();
        let [add] = readers[..] else { continue };
        if add.op_type.as_deref() != Some("Add")
            || graph.output.iter().any(|o| o.name.as_ref() == Some(out))
        {
            continue;
        }
        let Some(bias) = add.input.iter().find(|x| *x != out) else {
            continue;
        };
        let width = l.inits.get(w).and_then(|t| t.dims.get(1).copied());
        let fits = l
            .inits
            .get(bias)
            .is_some_and(|b| b.dims.len() == 1 && Some(b.dims[0]) == width);
        if fits && let Some(add_out) = add.output.first() {
            l.fused.insert(i, (bias.clone(), add_out.clone()));
            l.skipped.insert(add_out.clone());
        }
    }
    // Fold Q/DQ (and Identity, Dropout at inference): each joins its input and output into
    // one tensor.
    let mut stated: Vec<(String, Affine, Elem, String)> = Vec::new();
    for n in &graph.node {
        let op = n.op_type.as_deref().unwrap_or("");
        if !matches!(
            op,
            "QuantizeLinear" | "DequantizeLinear" | "Identity" | "Dropout"
        ) {
            continue;
        }
        let (Some(x), Some(y)) = (n.input.first(), n.output.first()) else {
            return refuse(&label(n), "missing input or output");
        };
        l.classes.union(x, y);
        if matches!(op, "QuantizeLinear" | "DequantizeLinear") {
            let (a, e) = qdq(n, &l.inits)?;
            stated.push((x.clone(), a, e, label(n)));
        }
    }
    for (v, a, e, node) in stated {
        let class = l.classes.find(&v);
        match l.quant.get(&class) {
            Some(&(b, f)) if (b, f) != (a, e) => {
                return refuse(
                    &node,
                    format!("{v} is quantized twice, differently ({b:?} and {a:?})"),
                );
            }
            _ => {
                l.quant.insert(class, (a, e));
            }
        }
    }
    // Graph inputs first, in the model's order (so `Plan::inputs` follows it).
    for v in &graph.input {
        let Some(name) = &v.name else { continue };
        if !l.inits.contains_key(name) {
            l.tensor("graph input", name, false)?;
        }
    }
    for (i, n) in graph.node.iter().enumerate() {
        lower_node(&mut l, i, n)?;
    }
    // Outputs in the model's order.
    let mut outputs = Vec::new();
    for v in &graph.output {
        let Some(name) = &v.name else { continue };
        let class = l.classes.find(name);
        match l.made.get(&class) {
            Some(&i) => outputs.push(i),
            None => return refuse(name, "the graph output is not computed by a covered node"),
        }
    }
    l.plan.outputs = outputs;
    Ok(l.plan)
}

/// The window of a convolution as the Conv lowering checked it: OpenVX pads (left, right, top,
/// bottom), strides (x, y) and dilations (x, y, 1 = none).
struct Window {
    pads: [u32; 4],
    strides: [u32; 2],
    dil: [u32; 2],
}

/// A grouped convolution (neither plain nor depthwise) as `group` convolutions over `window`:
/// each reads its slice of the input channels (`vxTensorStrideSliceNode`) with its slice of
/// the weights and biases, and the outputs are concatenated along the channels.
fn grouped(
    l: &mut Lowering<'_>,
    n: &NodeProto,
    node: &str,
    group: i64,
    window: &Window,
) -> Result<(), Unsupported> {
    let (x, w, out) = (&n.input[0], &n.input[1], &n.output[0]);
    let bias = n.input.get(2).filter(|b| !b.is_empty()).cloned();
    let xs = l.shape(node, x)?;
    let ws = l.shape(node, w)?;
    let os = match l.shape(node, out) {
        Ok(s) => s,
        Err(e) => {
            let s = checker::window_output(n, &xs, Some(&ws)).ok_or(e)?;
            l.shapes.insert(out.clone(), s.clone());
            s
        }
    };
    let (c, oc) = (xs[1] / group, ws[0] / group);
    let cut = |l: &Lowering<'_>, v: &str, k: i64, rows: i64| -> Result<TensorProto, Unsupported> {
        let t = l.inits.get(v).ok_or_else(|| Unsupported {
            node: node.into(),
            reason: format!("{v} is not a constant"),
        })?;
        let (width, bytes) = elements(t).ok_or_else(|| Unsupported {
            node: node.into(),
            reason: format!("{v} has an element type the lowering does not read"),
        })?;
        let per_row = bytes.len() / t.dims[0] as usize;
        let start = (k * rows) as usize * per_row;
        let mut dims = t.dims.clone();
        dims[0] = rows;
        debug_assert!(per_row % width == 0);
        Ok(TensorProto {
            name: Some(format!("{v}/group{k}")),
            dims,
            raw_data: Some(bytes[start..start + rows as usize * per_row].to_vec()),
            float_data: vec![],
            int32_data: vec![],
            int64_data: vec![],
            ..t.as_ref().clone()
        })
    };
    let input = l.tensor(node, x, false)?;
    let output = l.tensor(node, out, false)?;
    let mut parts = Vec::with_capacity(group as usize);
    for k in 0..group {
        let part_shape = [xs[0], c, xs[2], xs[3]];
        let xk = l.intermediate(&format!("{out}/group{k}/in"), input, &part_shape);
        let vx = |v: [i64; 4]| -> Vec<u32> { v.iter().rev().map(|&d| d as u32).collect() };
        let begin = l.dims_constant(&format!("{out}/group{k}/begin"), &vx([0, k * c, 0, 0]));
        let end = l.dims_constant(
            &format!("{out}/group{k}/end"),
            &vx([xs[0], (k + 1) * c, xs[2], xs[3]]),
        );
        let stride = l.dims_constant(&format!("{out}/group{k}/stride"), &vx([1, 1, 1, 1]));
        l.plan.nodes.push(Node::Slice {
            input,
            begin,
            end,
            stride,
            output: xk,
        });
        let wk = cut(l, w, k, oc)?;
        let wname = wk.name.clone().unwrap_or_default();
        l.shapes.insert(wname.clone(), wk.dims.clone());
        l.inits.insert(wname.clone(), Cow::Owned(wk));
        let weights = l.tensor(node, &wname, false)?;
        let bias = match &bias {
            Some(b) => {
                let bk = cut(l, b, k, oc)?;
                let bname = bk.name.clone().unwrap_or_default();
                l.shapes.insert(bname.clone(), bk.dims.clone());
                l.inits.insert(bname.clone(), Cow::Owned(bk));
                Some(l.tensor(node, &bname, true)?)
            }
            None => None,
        };
        let yk = l.intermediate(
            &format!("{out}/group{k}/out"),
            output,
            &[os[0], oc, os[2], os[3]],
        );
        l.plan.nodes.push(Node::Conv {
            input: xk,
            weights,
            bias,
            pads: window.pads,
            strides: window.strides,
            dilation: [window.dil[0] - 1, window.dil[1] - 1],
            depth_multiplier: 0,
            output: yk,
        });
        parts.push(yk);
    }
    l.plan.nodes.push(Node::Concat {
        inputs: parts,
        axis: 2,
        output,
    });
    Ok(())
}

fn lower_node(l: &mut Lowering<'_>, index: usize, n: &NodeProto) -> Result<(), Unsupported> {
    let op = n.op_type.as_deref().unwrap_or("");
    let node = label(n);
    if matches!(
        op,
        "QuantizeLinear" | "DequantizeLinear" | "Identity" | "Dropout"
    ) || n.output.first().is_some_and(|o| l.skipped.contains(o))
    {
        return Ok(());
    }
    if !n.domain.as_deref().unwrap_or("").is_empty() {
        return refuse(
            &node,
            "operators outside the default ONNX domain are not covered",
        );
    }
    let input = |k: usize| -> Result<String, Unsupported> {
        n.input
            .get(k)
            .filter(|s| !s.is_empty())
            .cloned()
            .ok_or(Unsupported {
                node: node.clone(),
                reason: format!("input {k} is missing"),
            })
    };
    let Some(out) = n.output.first().cloned() else {
        return refuse(&node, "no output");
    };
    let rank = |l: &mut Lowering<'_>, v: &str| l.shape("", v).map_or(0, |s| s.len());
    let spatial = |name: &str, default: [i64; 2]| -> Result<[u32; 2], Unsupported> {
        match ints(n, name).as_deref() {
            None => Ok([default[1] as u32, default[0] as u32]),
            Some([h, w]) if *h > 0 && *w > 0 => Ok([*w as u32, *h as u32]),
            Some(_) => refuse(&node, format!("{name} must be two positive values")),
        }
    };
    // The pads of a 2-D window over `x` with `kernel` (H, W) and `strides` (x, y): explicit,
    // or as `auto_pad` computes them from the input size.
    let pads = |l: &mut Lowering<'_>,
                x: &str,
                kernel: [i64; 2],
                strides: [u32; 2],
                dil: [u32; 2]|
     -> Result<[u32; 4], Unsupported> {
        let given = match ints(n, "pads").as_deref() {
            None => [0; 4],
            Some([t, lft, b, r]) if [t, lft, b, r].iter().all(|&&p| p >= 0) => [*t, *lft, *b, *r],
            Some(_) => return refuse(&node, "pads must be four non-negative values"),
        };
        let Some(auto) = checker::AutoPad::of(n) else {
            return refuse(
                &node,
                "auto_pad is not NOTSET, VALID, SAME_UPPER or SAME_LOWER",
            );
        };
        let s = l.shape(&node, x)?;
        // ONNX: begin H, begin W, end H, end W; OpenVX: left, right, top, bottom.
        let (t, b) = auto.pads(
            s[2],
            i64::from(strides[1]),
            i64::from(dil[1]) * (kernel[0] - 1) + 1,
            (given[0], given[2]),
        );
        let (lft, r) = auto.pads(
            s[3],
            i64::from(strides[0]),
            i64::from(dil[0]) * (kernel[1] - 1) + 1,
            (given[1], given[3]),
        );
        let u = |v: i64| u32::try_from(v).unwrap_or(0);
        Ok([u(lft), u(r), u(t), u(b)])
    };
    let four_d = |l: &mut Lowering<'_>, v: &str| -> Result<(), Unsupported> {
        if rank(l, v) == 4 {
            Ok(())
        } else {
            refuse(&node, format!("{v} must be 4-D (NCHW)"))
        }
    };
    let lowered = match op {
        "Conv" => {
            let (x, w) = (input(0)?, input(1)?);
            four_d(l, &x)?;
            if !l.is_constant(&w) {
                return refuse(&node, "the weight is not constant");
            }
            let ws = l.shape(&node, &w)?;
            let channels = l.shape(&node, &x)?[1];
            let group = int(n, "group", 1);
            // Depthwise: one group per input channel, `depth_multiplier` outputs each; `None`:
            // grouped.
            let depth_multiplier = match group {
                1 => Some(0),
                g if g == channels && ws[1] == 1 && ws[0] % g == 0 => Some((ws[0] / g) as u32),
                g if g > 1 && channels % g == 0 && ws[0] % g == 0 && ws[1] == channels / g => None,
                _ => return refuse(&node, "the group does not divide the channels"),
            };
            let dil = spatial("dilations", [1, 1])?;
            let strides = spatial("strides", [1, 1])?;
            let pads = pads(l, &x, [ws[2], ws[3]], strides, dil)?;
            let Some(depth_multiplier) = depth_multiplier else {
                let window = Window { pads, strides, dil };
                return grouped(l, n, &node, group, &window);
            };
            if l.shape(&node, &out).is_err() {
                // Weights folded from constants: the output shape from the window arithmetic.
                let xs = l.shape(&node, &x)?;
                if let Some(s) = checker::window_output(n, &xs, Some(&ws)) {
                    l.shapes.insert(out.clone(), s);
                }
            }
            let input = l.tensor(&node, &x, false)?;
            let weights = l.tensor(&node, &w, false)?;
            let bias = match n.input.get(2).filter(|s| !s.is_empty()) {
                Some(b) => Some(l.tensor(&node, b, true)?),
                None => None,
            };
            let output = l.tensor(&node, &out, false)?;
            Node::Conv {
                input,
                weights,
                bias,
                pads,
                strides,
                dilation: [dil[0] - 1, dil[1] - 1],
                depth_multiplier,
                output,
            }
        }
        "Gemm" | "MatMul" => {
            let (x, w) = (input(0)?, input(1)?);
            if rank(l, &x) != 2 {
                return refuse(&node, format!("{x} must be 2-D [batch, features]"));
            }
            if op == "Gemm"
                && (int(n, "transA", 0) != 0
                    || attr(n, "alpha").and_then(|a| a.f).is_some_and(|v| v != 1.0)
                    || attr(n, "beta").and_then(|a| a.f).is_some_and(|v| v != 1.0))
            {
                return refuse(&node, "only transA = 0, alpha = 1, beta = 1 are covered");
            }
            if op == "MatMul" || int(n, "transB", 0) == 0 {
                if l.quantized {
                    return refuse(
                        &node,
                        "a quantized weight must be stored [N, K] (transB = 1)",
                    );
                }
                l.transposed(&node, &w)?;
            }
            let input = l.tensor(&node, &x, false)?;
            let weights = l.tensor(&node, &w, false)?;
            let fused = l.fused.get(&index).cloned();
            let bias = match (
                n.input.get(2).filter(|s| !s.is_empty() && op == "Gemm"),
                &fused,
            ) {
                (Some(b), _) | (None, Some((b, _))) => Some(l.tensor(&node, b, true)?),
                (None, None) => None,
            };
            if let Some((_, add_out)) = &fused {
                l.classes.union(&out, add_out);
                if let Ok(s) = l.shape(&node, add_out) {
                    l.shapes.insert(out.clone(), s);
                }
            }
            let output = l.tensor(&node, &out, false)?;
            Node::FullyConnected {
                input,
                weights,
                bias,
                output,
            }
        }
        "Add" | "Mul" | "Sum" | "Sub" | "Div" => {
            if op == "Sum" && n.input.len() != 2 {
                return refuse(&node, "Sum of other than two inputs is not covered");
            }
            let (a, mut b) = (input(0)?, input(1)?);
            // A constant divisor or subtrahend is folded into a constant factor or addend:
            // x / c as x * (1 / c), x - c as x + (-c).
            if matches!(op, "Sub" | "Div") {
                let Some(c) = l.inits.get(&b).map(|t| t.as_ref().clone()) else {
                    return refuse(
                        &node,
                        format!(
                            "{op} of a computed second operand is not covered (only a constant one)"
                        ),
                    );
                };
                let Some(v) = values(&c).filter(|_| c.data_type == Some(data_type::FLOAT)) else {
                    return refuse(
                        &node,
                        format!("{op} by a constant that is not float32 is not covered"),
                    );
                };
                if op == "Div" && v.contains(&0.0) {
                    return refuse(&node, "division by a constant holding zero");
                }
                let folded: Vec<u8> = v
                    .iter()
                    .flat_map(|&x| (if op == "Div" { 1.0 / x } else { -x } as f32).to_le_bytes())
                    .collect();
                let name = format!("{b}@{}", if op == "Div" { "reciprocal" } else { "negated" });
                let t = TensorProto {
                    name: Some(name.clone()),
                    dims: c.dims.clone(),
                    data_type: Some(data_type::FLOAT),
                    raw_data: Some(folded),
                    ..Default::default()
                };
                l.shapes.insert(name.clone(), c.dims.clone());
                l.inits.insert(name.clone(), Cow::Owned(t));
                b = name;
            }
            let (sa, sb) = (l.shape(&node, &a)?, l.shape(&node, &b)?);
            // A constant of another shape is broadcast to the other operand's shape, as a
            // constant of that shape (the elementwise nodes take equal shapes).
            let (a, b) = if sa == sb {
                (a, b)
            } else {
                let spread = |l: &mut Lowering<'_>, c: &str, to: &[i64]| -> Option<String> {
                    let bytes = broadcast(l.inits.get(c)?, to)?;
                    let name = format!("{c}@broadcast:{out}");
                    let t = TensorProto {
                        name: Some(name.clone()),
                        dims: to.to_vec(),
                        data_type: Some(data_type::FLOAT),
                        raw_data: Some(bytes),
                        ..Default::default()
                    };
                    l.shapes.insert(name.clone(), to.to_vec());
                    l.inits.insert(name.clone(), Cow::Owned(t));
                    Some(name)
                };
                // Two computed operands of one rank where each dimension of one is the
                // other's or 1 (a squeeze-excitation gate, [N, C, H, W] x [N, C, 1, 1]) go to
                // the driver's elementwise node as they are: OpenVX's tensor arithmetic
                // broadcasts a dimension of 1 (Khronos OpenVX 1.2, vxTensorMultiplyNode).
                let onto = |x: &[i64], y: &[i64]| {
                    x.len() == y.len() && x.iter().zip(y).all(|(&p, &q)| p == q || q == 1)
                };
                match (spread(l, &b, &sa), spread(l, &a, &sb)) {
                    (Some(b), _) => (a, b),
                    (None, Some(a)) => (a, b),
                    (None, None) if onto(&sa, &sb) => (a, b),
                    (None, None) if onto(&sb, &sa) => (b, a),
                    (None, None) => {
                        return refuse(
                            &node,
                            "operands of different shapes (broadcasting) are covered for a float constant operand, or one of the same rank whose every dimension is the other's or 1",
                        );
                    }
                }
            };
            let a = l.tensor(&node, &a, false)?;
            let b = l.tensor(&node, &b, false)?;
            let output = l.tensor(&node, &out, false)?;
            if matches!(op, "Mul" | "Div") {
                Node::Mul { a, b, output }
            } else {
                Node::Add { a, b, output }
            }
        }
        "Relu" | "Sigmoid" | "Tanh" => {
            let input = l.tensor(&node, &input(0)?, false)?;
            let output = l.tensor(&node, &out, false)?;
            Node::Activation {
                function: match op {
                    "Relu" => plan::Activation::Relu,
                    "Sigmoid" => plan::Activation::Logistic,
                    _ => plan::Activation::Tanh,
                },
                input,
                output,
            }
        }
        "MaxPool" | "AveragePool" => {
            let x = input(0)?;
            four_d(l, &x)?;
            if int(n, "ceil_mode", 0) != 0 || n.output.len() > 1 {
                return refuse(&node, "ceil_mode and the indices output are not covered");
            }
            let Some(k) = ints(n, "kernel_shape").filter(|k| k.len() == 2) else {
                return refuse(&node, "kernel_shape must hold two values");
            };
            let size = [k[1] as u32, k[0] as u32];
            let strides = spatial("strides", [1, 1])?;
            let pads = pads(l, &x, [k[0], k[1]], strides, [1, 1])?;
            if op == "AveragePool" && int(n, "count_include_pad", 0) != 0 && pads != [0; 4] {
                return refuse(&node, "count_include_pad with padding is not covered");
            }
            if l.shape(&node, &out).is_err() {
                let xs = l.shape(&node, &x)?;
                if let Some(s) = checker::window_output(n, &xs, None) {
                    l.shapes.insert(out.clone(), s);
                }
            }
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            Node::Pool {
                kind: if op == "MaxPool" {
                    plan::PoolKind::Max
                } else {
                    plan::PoolKind::Avg
                },
                input,
                size,
                pads,
                strides,
                output,
            }
        }
        "GlobalAveragePool" => {
            let x = input(0)?;
            four_d(l, &x)?;
            let s = l.shape(&node, &x)?;
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            Node::Pool {
                kind: plan::PoolKind::Avg,
                input,
                size: [s[3] as u32, s[2] as u32],
                pads: [0; 4],
                strides: [1, 1],
                output,
            }
        }
        "Softmax" => {
            let x = input(0)?;
            let r = rank(l, &x) as i64;
            let axis = int(n, "axis", -1);
            if axis != -1 && axis != r - 1 {
                return refuse(
                    &node,
                    "softmax over an axis other than the last is not covered",
                );
            }
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            if r <= 2 {
                Node::Softmax { input, output }
            } else {
                // Over the last axis of a 2-D view [rows, last] and back (measured: on a 4-D
                // tensor the layer reduces another axis).
                let s = l.shape(&node, &x)?;
                let last = s[s.len() - 1];
                let view = [s.iter().product::<i64>() / last.max(1), last];
                let a = l.reshaped(&format!("{out}/softmax-in"), input, &view);
                let b = l.intermediate(&format!("{out}/softmax-out"), output, &view);
                l.plan.nodes.push(Node::Softmax {
                    input: a,
                    output: b,
                });
                let shape = l.dims_constant(
                    &format!("{out}/softmax-back"),
                    &l.plan.tensors[output].dims.clone(),
                );
                Node::Reshape {
                    input: b,
                    shape,
                    output,
                }
            }
        }
        "Concat" => {
            let r = rank(l, &out) as i64;
            let axis = int(n, "axis", 0);
            let axis = if axis < 0 { axis + r } else { axis };
            if !(0..r).contains(&axis) {
                return refuse(&node, "axis out of range");
            }
            let mut inputs = Vec::new();
            for v in n.input.iter().filter(|s| !s.is_empty()) {
                inputs.push(l.tensor(&node, v, false)?);
            }
            let output = l.tensor(&node, &out, false)?;
            Node::Concat {
                inputs,
                axis: (r - 1 - axis) as u32,
                output,
            }
        }
        "Transpose" => {
            let x = input(0)?;
            let r = rank(l, &x);
            let perm: Vec<i64> = ints(n, "perm").unwrap_or_else(|| (0..r as i64).rev().collect());
            let mut seen = perm.clone();
            seen.sort_unstable();
            if seen != (0..r as i64).collect::<Vec<_>>() {
                return refuse(&node, "perm is not a permutation of the input's axes");
            }
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            // ONNX output axis i is input axis perm[i], outermost first; in OpenVX's order
            // (innermost first) output dimension j is input dimension r-1-perm[r-1-j].
            let perm = (0..r)
                .map(|j| (r - 1 - perm[r - 1 - j] as usize) as u32)
                .collect();
            Node::Permute {
                input,
                perm,
                output,
            }
        }
        "PRelu" => {
            if l.quantized {
                return refuse(&node, "PRelu in a quantized graph is not covered");
            }
            let (x, slope) = (input(0)?, input(1)?);
            let s = l.shape(&node, &x)?;
            let channels = if s.len() >= 2 { s[1] } else { 0 };
            let slopes = l.constant_values(&node, &slope)?;
            // One slope per channel (dimension 1), however the slope tensor is shaped.
            let per_channel: Vec<f64> = match slopes.len() as i64 {
                1 => vec![slopes[0]; channels as usize],
                c if c == channels => slopes,
                _ => return refuse(&node, "the slope is not one value per channel"),
            };
            let input = l.tensor(&node, &x, false)?;
            let alpha = l.channel_constant(&format!("{slope}/channels"), &per_channel, false);
            let output = l.tensor(&node, &out, false)?;
            if s.len() == 4 {
                Node::PRelu {
                    input,
                    alpha,
                    output,
                }
            } else {
                // The layer takes the channel where NCHW puts it: view the input as
                // [N, C, rest, 1] and the result back (measured: on a 2-D input it applies
                // the slopes along another axis).
                let rest: i64 = s.iter().skip(2).product();
                let view = [s[0], channels, rest, 1];
                let a = l.reshaped(&format!("{out}/prelu-in"), input, &view);
                let b = l.intermediate(&format!("{out}/prelu-out"), output, &view);
                l.plan.nodes.push(Node::PRelu {
                    input: a,
                    alpha,
                    output: b,
                });
                let shape = l.dims_constant(
                    &format!("{out}/prelu-back"),
                    &l.plan.tensors[output].dims.clone(),
                );
                Node::Reshape {
                    input: b,
                    shape,
                    output,
                }
            }
        }
        "BatchNormalization" => {
            if l.quantized || n.output.len() > 1 {
                return refuse(
                    &node,
                    "training outputs and quantized graphs are not covered",
                );
            }
            let x = input(0)?;
            four_d(l, &x)?;
            let eps = attr(n, "epsilon").and_then(|a| a.f).unwrap_or(1e-5);
            let mut channel = |k: usize, what: &str| -> Result<usize, Unsupported> {
                let v = input(k)?;
                let values = l.constant_values(&node, &v)?;
                Ok(l.channel_constant(&format!("{v}/{what}"), &values, true))
            };
            let (gamma, beta, mean, variance) = (
                channel(1, "gamma")?,
                channel(2, "beta")?,
                channel(3, "mean")?,
                channel(4, "variance")?,
            );
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            Node::BatchNorm {
                input,
                eps,
                mean,
                variance,
                gamma,
                beta,
                output,
            }
        }
        "HardSigmoid" => {
            // max(0, min(1, alpha x + beta)) as a 1x1 depthwise convolution (weight alpha, bias
            // beta) and min(1, max(0, .)): the driver refuses its own hard-sigmoid activation
            // at verify (VX_ERROR_NOT_SUPPORTED, measured).
            let x = input(0)?;
            four_d(l, &x)?;
            if l.quantized {
                return refuse(&node, "HardSigmoid in a quantized graph is not covered");
            }
            let alpha = attr(n, "alpha").and_then(|a| a.f).unwrap_or(0.2);
            let beta = attr(n, "beta").and_then(|a| a.f).unwrap_or(0.5);
            let s = l.shape(&node, &x)?;
            let c = s[1] as usize;
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            let weights =
                l.channel_constant(&format!("{out}/alpha"), &vec![f64::from(alpha); c], false);
            l.plan.tensors[weights].dims = vec![1, 1, 1, c as u32];
            let bias = l.channel_constant(&format!("{out}/beta"), &vec![f64::from(beta); c], true);
            let affine = l.intermediate(&format!("{out}/affine"), output, &s);
            l.plan.nodes.push(Node::Conv {
                input,
                weights,
                bias: Some(bias),
                pads: [0; 4],
                strides: [1, 1],
                dilation: [0, 0],
                depth_multiplier: 1,
                output: affine,
            });
            Node::Activation {
                function: plan::Activation::BoundedRelu { upper: 1.0 },
                input: affine,
                output,
            }
        }
        "Clip" | "LeakyRelu" | "HardSwish" => {
            let function = match op {
                "LeakyRelu" => plan::Activation::LeakyRelu {
                    alpha: attr(n, "alpha").and_then(|a| a.f).unwrap_or(0.01),
                },
                "HardSwish" => plan::Activation::HardSwish,
                _ => {
                    // Bounds from the attributes (opset < 11) or the constant inputs.
                    let bound = |k: usize, name: &str| -> Result<Option<f64>, Unsupported> {
                        if let Some(v) = attr(n, name).and_then(|a| a.f) {
                            return Ok(Some(f64::from(v)));
                        }
                        match n.input.get(k).filter(|s| !s.is_empty()) {
                            Some(v) => match l.constant_values(&node, v)?.as_slice() {
                                [x] => Ok(Some(*x)),
                                _ => refuse(&node, format!("{v} is not one value")),
                            },
                            None => Ok(None),
                        }
                    };
                    match (bound(1, "min")?, bound(2, "max")?) {
                        (Some(lo), Some(hi)) if lo == 0.0 && hi > 0.0 => {
                            plan::Activation::BoundedRelu { upper: hi as f32 }
                        }
                        (Some(0.0), None) => plan::Activation::Relu,
                        _ => return refuse(&node, "only Clip(0, max) and Clip(0) are covered"),
                    }
                }
            };
            let input = l.tensor(&node, &input(0)?, false)?;
            let output = l.tensor(&node, &out, false)?;
            Node::Activation {
                function,
                input,
                output,
            }
        }
        "Pad" => {
            let x = input(0)?;
            let s = l.shape(&node, &x)?;
            let r = s.len();
            let mode = attr(n, "mode").and_then(|a| a.s.clone());
            if mode.is_some_and(|m| m != b"constant") {
                return refuse(&node, "only the constant mode is covered");
            }
            // Opset 11 moved pads and the value from attributes to constant inputs.
            let pads: Vec<i64> = match ints(n, "pads") {
                Some(p) => p,
                None => l
                    .constant_values(&node, &input(1)?)?
                    .iter()
                    .map(|&v| v as i64)
                    .collect(),
            };
            if pads.len() != 2 * r || pads.iter().any(|&p| p < 0) {
                return refuse(&node, "pads must be two non-negative values per axis");
            }
            if n.input.get(3).is_some_and(|a| !a.is_empty()) {
                return refuse(&node, "pads over chosen axes are not covered");
            }
            let value = match (
                attr(n, "value").and_then(|a| a.f),
                n.input.get(2).filter(|v| !v.is_empty()),
            ) {
                (Some(v), _) => v,
                (None, Some(v)) => match l.constant_values(&node, v)?.as_slice() {
                    [x] => *x as f32,
                    _ => return refuse(&node, "the constant value is not one value"),
                },
                (None, None) => 0.0,
            };
            if l.shape(&node, &out).is_err() {
                let o: Vec<i64> = (0..r).map(|i| s[i] + pads[i] + pads[r + i]).collect();
                l.shapes.insert(out.clone(), o);
            }
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            let vx = |k: usize| (0..r).map(|j| pads[k + r - 1 - j] as i32).collect();
            Node::Pad {
                input,
                front: vx(0),
                back: vx(r),
                value,
                output,
            }
        }
        "Slice" => {
            let x = input(0)?;
            let s = l.shape(&node, &x)?;
            let r = s.len();
            // Opset 10 moved starts, ends, axes and steps to constant inputs.
            let list =
                |l: &Lowering<'_>, k: usize, name: &str| -> Result<Option<Vec<i64>>, Unsupported> {
                    if let Some(v) = ints(n, name) {
                        return Ok(Some(v));
                    }
                    match n.input.get(k).filter(|v| !v.is_empty()) {
                        Some(v) => Ok(Some(
                            l.constant_values(&node, v)?
                                .iter()
                                .map(|&x| x as i64)
                                .collect(),
                        )),
                        None => Ok(None),
                    }
                };
            let (Some(starts), Some(ends)) = (list(l, 1, "starts")?, list(l, 2, "ends")?) else {
                return refuse(&node, "starts and ends must be constant");
            };
            let axes = list(l, 3, "axes")?.unwrap_or_else(|| (0..starts.len() as i64).collect());
            let steps = list(l, 4, "steps")?.unwrap_or_else(|| vec![1; starts.len()]);
            if axes.len() != starts.len()
                || ends.len() != starts.len()
                || steps.len() != starts.len()
            {
                return refuse(&node, "starts, ends, axes and steps differ in length");
            }
            let (mut begin, mut end, mut stride) = (vec![0i64; r], s.clone(), vec![1i64; r]);
            for k in 0..starts.len() {
                let a = if axes[k] < 0 {
                    axes[k] + r as i64
                } else {
                    axes[k]
                };
                let Some(a) = usize::try_from(a).ok().filter(|&a| a < r) else {
                    return refuse(&node, "an axis is out of range");
                };
                if steps[k] <= 0 {
                    return refuse(&node, "only positive steps are covered");
                }
                let clamp = |v: i64| (if v < 0 { v + s[a] } else { v }).clamp(0, s[a]);
                (begin[a], end[a], stride[a]) = (clamp(starts[k]), clamp(ends[k]), steps[k]);
            }
            if l.shape(&node, &out).is_err() {
                let o = (0..r)
                    .map(|i| ((end[i] - begin[i]).max(0) + stride[i] - 1) / stride[i])
                    .collect();
                l.shapes.insert(out.clone(), o);
            }
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            let mut int32 = |what: &str, v: &[i64]| {
                let dims: Vec<u32> = (0..r).map(|j| v[r - 1 - j] as u32).collect();
                l.dims_constant(&format!("{out}/{what}"), &dims)
            };
            let (begin, end, stride) = (
                int32("begin", &begin),
                int32("end", &end),
                int32("stride", &stride),
            );
            Node::Slice {
                input,
                begin,
                end,
                stride,
                output,
            }
        }
        "Resize" | "Upsample" => {
            let x = input(0)?;
            let s = l.shape(&node, &x)?;
            let mode = attr(n, "mode")
                .and_then(|a| a.s.clone())
                .unwrap_or_else(|| b"nearest".to_vec());
            if mode != b"nearest" {
                return refuse(&node, "only nearest-neighbour resizing is covered");
            }
            // The scales (Upsample's second input; Resize's third) or Resize's sizes.
            let scales_at = if op == "Upsample" { 1 } else { 2 };
            let scales = match n.input.get(scales_at).filter(|v| !v.is_empty()) {
                Some(v) => l.constant_values(&node, v)?,
                None => vec![],
            };
            let sizes = match n.input.get(3).filter(|v| !v.is_empty() && op == "Resize") {
                Some(v) => l.constant_values(&node, v)?,
                None => vec![],
            };
            let Some(o) = resize_shape(&s, &scales, &sizes) else {
                return refuse(&node, "scales or sizes must be constant, one per axis");
            };
            if s.len() != 4 || o[0] != s[0] || o[1] != s[1] || o[2] % s[2] != 0 || o[3] % s[3] != 0
            {
                return refuse(
                    &node,
                    "only whole-number spatial upscaling of a 4-D tensor is covered",
                );
            }
            if l.shape(&node, &out).is_err() {
                l.shapes.insert(out.clone(), o);
            }
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            Node::ResizeNearest { input, output }
        }
        "Reshape" | "Flatten" => {
            let x = input(0)?;
            let input = l.tensor(&node, &x, false)?;
            let output = l.tensor(&node, &out, false)?;
            let dims = l.plan.tensors[output].dims.clone();
            let shape = l.dims_constant(&node, &dims);
            Node::Reshape {
                input,
                shape,
                output,
            }
        }
        // One `constants_as_initializers` left: a sparse or string value.
        "Constant" => {
            return refuse(
                &node,
                "a Constant of a sparse tensor or of strings is not covered (a tensor, a float or an int is)",
            );
        }
        _ => {
            return refuse(
                &node,
                format!(
                    "not covered by the lowering (covered: {}, QuantizeLinear, DequantizeLinear)",
                    COVERED.join(", ")
                ),
            );
        }
    };
    l.plan.nodes.push(lowered);
    Ok(())
}
