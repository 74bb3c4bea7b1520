//! Type and shape inference for the operators the fixtures and Silero use: unknown stays
//! unknown, and an inferred shape that contradicts a declared one is refused by the checker.

use super::*;

pub(super) fn dims(s: &[Option<i64>]) -> String {
    let v: Vec<String> = s
        .iter()
        .map(|d| d.map_or("?".to_string(), |x| x.to_string()))
        .collect();
    format!("[{}]", v.join(", "))
}

pub(super) const UNARY: [&str; 33] = [
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
pub(super) const BROADCAST: [&str; 19] = [
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
pub(super) enum Arg {
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
pub(super) fn axis(a: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if a < 0 { a + r } else { a };
    (0..r).contains(&a).then_some(a as usize)
}

/// Distinct axes in `0..rank`; `None` if any is out of range or repeated.
pub(super) fn axes(v: &[i64], rank: usize) -> Option<Vec<usize>> {
    let mut out: Vec<usize> = v.iter().map(|&a| axis(a, rank)).collect::<Option<_>>()?;
    let n = out.len();
    out.sort_unstable();
    out.dedup();
    (out.len() == n).then_some(out)
}

/// Shapes of every output; `None` where inference cannot know one statically.
pub(super) fn infer_shapes(
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
pub(super) fn infer_value(
    op: &str,
    n: &NodeProto,
    inputs: &[Facts],
    out: &Facts,
) -> Option<Vec<i64>> {
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
pub fn shape_range(n: &NodeProto, rank: usize) -> (usize, usize) {
    let r = rank as i64;
    let at = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let a = at(int_attr(n, "start").unwrap_or(0));
    let b = at(int_attr(n, "end").unwrap_or(r));
    (a, b.max(a))
}

/// Shape inference for one output of the operators the fixtures and Silero use.
/// `Ok(None)` when the shape cannot be known statically here.
pub(super) fn infer_shape(
    op: &str,
    since: i64,
    n: &NodeProto,
    inputs: &[Facts],
    label: &str,
) -> Result<Option<Shape>, Refusal> {
    let shape = |k: usize| inputs.get(k).and_then(|f| f.shape.clone());
    Ok(match op {
        // Quantize and dequantize keep their input's shape (the ONNX operator definitions).
        "Cast" | "Dropout" | "QuantizeLinear" | "DequantizeLinear" => shape(0),
        o if UNARY.contains(&o) => shape(0),
        o if BROADCAST.contains(&o) || o == "Sum" || o == "PRelu" => {
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
        "Conv" => {
            let w = shape(1);
            let channels = w.as_ref().and_then(|w| w.first().copied().flatten());
            window_shape(
                n,
                shape(0),
                channels,
                w.filter(|w| w.len() > 2).map(|w| w[2..].to_vec()),
            )
        }
        "MaxPool" | "AveragePool" | "LpPool" if n.output.len() == 1 => {
            let channels = shape(0).and_then(|x| x.get(1).copied().flatten());
            window_shape(n, shape(0), channels, None)
        }
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
            shape(0).filter(|x| x.len() >= 3).map(|x| {
                x.iter()
                    .enumerate()
                    .map(|(i, &d)| if i < 2 { d } else { Some(1) })
                    .collect()
            })
        }
        "BatchNormalization" | "LRN" | "Clip" | "InstanceNormalization" if n.output.len() == 1 => {
            shape(0)
        }
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
pub(super) fn rank_only(shape_of_shape: &[Option<i64>]) -> Option<Shape> {
    match shape_of_shape {
        [Some(r)] if (0..=MAX_KNOWN_VALUE as i64).contains(r) => Some(vec![None; *r as usize]),
        _ => None,
    }
}

pub(super) const REDUCE: [&str; 10] = [
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
pub(super) fn reshape(
    input: Option<&[Option<i64>]>,
    target: &[i64],
    allowzero: bool,
) -> Option<Shape> {
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
pub(super) fn slice_len(dim: i64, start: i64, end: i64, step: i64) -> Option<i64> {
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
pub(super) fn slice(since: i64, n: &NodeProto, inputs: &[Facts], s: &[Option<i64>]) -> Shape {
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
pub(super) fn pad(since: i64, n: &NodeProto, inputs: &[Facts], s: &[Option<i64>]) -> Shape {
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
pub(super) fn reduce(
    n: &NodeProto,
    inputs: &[Facts],
    as_input: bool,
    s: &[Option<i64>],
) -> Option<Shape> {
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
pub(super) fn split_shapes(since: i64, n: &NodeProto, inputs: &[Facts]) -> Vec<Option<Shape>> {
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
pub(super) fn rnn_shapes(
    since: i64,
    n: &NodeProto,
    x: Option<Shape>,
    r: Option<Shape>,
) -> Vec<Option<Shape>> {
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
pub(super) fn product(s: &[Option<i64>]) -> Option<i64> {
    s.iter().try_fold(1i64, |a, d| a.checked_mul((*d)?))
}

/// NumPy broadcasting of two shapes; `None` when known dimensions conflict.
pub(super) fn broadcast(a: &[Option<i64>], b: &[Option<i64>]) -> Option<Vec<Option<i64>>> {
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

/// How a windowed operator pads: ONNX's `auto_pad` (`NOTSET` takes `pads`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AutoPad {
    /// Explicit `pads`.
    NotSet,
    /// No padding.
    Valid,
    /// Output = ceil(input / stride), the odd pad at the end.
    SameUpper,
    /// Output = ceil(input / stride), the odd pad at the start.
    SameLower,
}

impl AutoPad {
    /// The node's `auto_pad`; `None` for a value ONNX does not define.
    pub fn of(n: &NodeProto) -> Option<AutoPad> {
        let s = n
            .attribute
            .iter()
            .find(|a| a.name.as_deref() == Some("auto_pad"))
            .and_then(|a| a.s.as_deref());
        Some(match s {
            None | Some(b"NOTSET") => AutoPad::NotSet,
            Some(b"VALID") => AutoPad::Valid,
            Some(b"SAME_UPPER") => AutoPad::SameUpper,
            Some(b"SAME_LOWER") => AutoPad::SameLower,
            Some(_) => return None,
        })
    }

    /// The (begin, end) pads of one spatial axis of `size` under `stride` and effective
    /// kernel `eff` (explicit pads `given` for `NotSet`).
    pub fn pads(self, size: i64, stride: i64, eff: i64, given: (i64, i64)) -> (i64, i64) {
        match self {
            AutoPad::NotSet => given,
            AutoPad::Valid => (0, 0),
            AutoPad::SameUpper | AutoPad::SameLower => {
                let out = (size + stride - 1) / stride;
                let total = ((out - 1) * stride + eff - size).max(0);
                let small = total / 2;
                if self == AutoPad::SameUpper {
                    (small, total - small)
                } else {
                    (total - small, small)
                }
            }
        }
    }
}

/// The static output shape of a Conv (`w` its weight's shape) or a pool (`w` none) over an
/// input of static shape `x`; `None` where it is not defined.
pub fn window_output(n: &NodeProto, x: &[i64], w: Option<&[i64]>) -> Option<Vec<i64>> {
    let x: Vec<Option<i64>> = x.iter().map(|&d| Some(d)).collect();
    let (channels, kernel) = match w {
        Some(w) if w.len() > 2 => (Some(w[0]), Some(w[2..].iter().map(|&d| Some(d)).collect())),
        Some(_) => return None,
        None => (x.get(1).copied().flatten(), None),
    };
    window_shape(n, Some(x), channels, kernel)?
        .into_iter()
        .collect()
}

/// The output shape of a windowed operator over `x` (N, C, spatial...): Conv (`channels` the
/// weight's first dimension, the kernel its spatial ones unless `kernel_shape` says) or a pool
/// (`channels` the input's, the kernel `kernel_shape`). Pads, strides, dilations, `auto_pad`
/// and `ceil_mode` as ONNX defines them (a ceil window that would start in the end padding is
/// dropped).
pub(super) fn window_shape(
    n: &NodeProto,
    x: Option<Vec<Option<i64>>>,
    channels: Option<i64>,
    weight_kernel: Option<Vec<Option<i64>>>,
) -> Option<Vec<Option<i64>>> {
    let x = x?;
    if x.len() < 3 {
        return None;
    }
    let spatial = x.len() - 2;
    let auto_pad = AutoPad::of(n)?;
    let kernel: Vec<Option<i64>> = match (ints_attr(n, "kernel_shape"), weight_kernel) {
        (Some(k), _) if k.len() == spatial => k.iter().map(|&v| Some(v)).collect(),
        (_, Some(w)) if w.len() == spatial => w,
        _ => return None,
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
    let ceil = n
        .attribute
        .iter()
        .any(|a| a.name.as_deref() == Some("ceil_mode") && a.i == Some(1));
    let mut out = vec![x[0], channels];
    for i in 0..spatial {
        out.push(match (x[2 + i], kernel[i]) {
            (Some(size), Some(k)) if strides[i] > 0 && k > 0 && dil[i] > 0 => {
                let w = |v: i64| i128::from(v);
                let eff = dil[i] * (k - 1) + 1;
                let (b, e) = auto_pad.pads(size, strides[i], eff, (pads[i], pads[i + spatial]));
                let total = w(size) + w(b) + w(e) - w(eff);
                let s = w(strides[i]);
                let mut o = if ceil {
                    (total + s - 1).div_euclid(s) + 1
                } else {
                    total.div_euclid(s) + 1
                };
                if ceil && (o - 1) * s >= w(size) + w(b) {
                    o -= 1;
                }
                (total >= 0).then(|| i64::try_from(o).ok()).flatten()
            }
            _ => None,
        });
    }
    Some(out)
}
