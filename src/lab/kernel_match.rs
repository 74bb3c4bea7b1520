//! Source tensors matched to the kernels and biases decoded from an NBG's coefficient buffers
//! (`nbg::coefficients`), each with the transform that maps one to the other: the layout
//! permutation and the quantization (dynamic fixed point with its position, affine, fp16).
//!
//! A source element is *exact* when the quantization of its value, rounded half away from
//! zero, is the decoded element; *consistent* when some real number that the source's own type
//! rounds to the source value quantizes to it (a float16 source holds its network's weights only
//! to float16 precision, so this is the strongest claim such a source allows). Both are counted.
//!
//! Biases of integer kernels are stored corrected, `round(b * 2^s) + 128 * sum(q)` (Mesa
//! etnaviv_ml_nn_v8.c `calculate_bias_correction`, the vendor's encoder likewise; measured on
//! the A733 face detector), and compared so.

use crate::nbg::coefficients::{Buffer, WeightType, Weights};
use crate::onnx::tensor::{Dtype, Tensor};
use serde::Serialize;

/// One source tensor: a name, its shape and values, and the precision its type holds them to.
#[derive(Clone, Debug)]
pub struct Source {
    /// Its name in the model or archive.
    pub name: String,
    /// Its dimensions.
    pub shape: Vec<u64>,
    /// Its elements, C order.
    pub values: Vec<f64>,
    /// Float16 values (half-way to the neighbours is what they stand for).
    pub half: bool,
}

impl Source {
    /// A tensor of a model or archive; `None` for types without a numeric value.
    pub fn of(t: &Tensor) -> Option<Source> {
        Some(Source {
            name: t.name.clone(),
            shape: t.shape.clone(),
            values: t.to_f64()?,
            half: t.dtype == Dtype::F16,
        })
    }
}

/// How a source tensor's elements are ordered against the decoded (channels, z, y, x).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// [O, I, H, W] (ONNX).
    Oihw,
    /// [O, H, W, I] (TFLite kernels).
    Ohwi,
    /// [1, H, W, C] (TFLite depthwise kernels).
    OneHwc,
    /// [C]: one bias per channel.
    Channels,
}

/// The quantization that maps a source value to a decoded element.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Quantization {
    /// Dynamic fixed point: q = round(x * 2^position).
    Dfp {
        /// The fraction bits.
        position: i32,
    },
    /// Bias of a dynamic-fixed-point kernel: round(x * 2^position) + 128 * sum of the kernel.
    DfpBias {
        /// The fraction bits (the kernel's plus the input's).
        position: i32,
    },
    /// Affine: q = round(x / scale) + zero_point.
    Affine {
        /// The scale (fitted).
        scale: f64,
        /// The zero point (the NN command's `coef_zero_point`).
        zero_point: i64,
    },
    /// IEEE half, as stored.
    Fp16,
}

/// Where a source tensor is, and how well it matches.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    /// The coefficient buffer's entry.
    pub entry: usize,
    /// Its file offset.
    pub offset: u64,
    /// The NN command that reads it.
    pub command: Option<usize>,
    /// The layout permutation.
    pub layout: Layout,
    /// The quantization.
    pub quantization: Quantization,
    /// Elements that are exact.
    pub exact: u64,
    /// Elements that are consistent.
    pub consistent: u64,
}

/// One source tensor's result.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Its name.
    pub name: String,
    /// Its dimensions.
    pub shape: Vec<u64>,
    /// Its elements.
    pub elements: u64,
    /// Where it is, when a decoded tensor of its shape matches.
    pub found: Option<Found>,
}

/// Totals over every source tensor.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Summary {
    /// Source tensors.
    pub tensors: usize,
    /// Of them, found.
    pub found: usize,
    /// Source elements.
    pub elements: u64,
    /// Exact elements.
    pub exact: u64,
    /// Consistent elements.
    pub consistent: u64,
}

/// Every decoded kernel's elements as signed integers (8-bit minus the zero point) or, for
/// fp16, as values.
struct Decoded<'a> {
    buffer: &'a Buffer,
    weights: &'a Weights,
    ints: Vec<i64>,
}

fn decoded(b: &Buffer) -> Option<Decoded<'_>> {
    let w = b.weights.as_ref()?;
    let zp = w.zero_point as i64;
    let ints = w
        .kernels
        .weights
        .iter()
        .map(|&e| match w.dtype {
            WeightType::I16 | WeightType::F16 => i64::from(e as i16),
            WeightType::I8 => i64::from(e as u8 as i8),
            WeightType::U8 => i64::from(e as u8) - zp,
        })
        .collect();
    Some(Decoded {
        buffer: b,
        weights: w,
        ints,
    })
}

/// `src` reordered to (channels, z, y, x) under `layout`, when its shape fits `shape`.
fn permute(src: &Source, layout: Layout, shape: [usize; 4]) -> Option<Vec<f64>> {
    let d: Vec<usize> = src.shape.iter().map(|&x| x as usize).collect();
    let [c, z, y, x] = shape;
    let n = c * z * y * x;
    if d.len() != 4 || src.values.len() != n {
        return None;
    }
    let v = &src.values;
    match layout {
        Layout::Oihw if d == [c, z, y, x] => Some(v.clone()),
        Layout::Ohwi if d == [c, y, x, z] => Some(
            (0..n)
                .map(|i| {
                    let (o, r) = (i / (z * y * x), i % (z * y * x));
                    let (ic, h, w) = (r / (y * x), r % (y * x) / x, r % x);
                    v[((o * y + h) * x + w) * z + ic]
                })
                .collect(),
        ),
        Layout::OneHwc if z == 1 && d == [1, y, x, c] => Some(
            (0..n)
                .map(|i| {
                    let (ch, h, w) = (i / (y * x), i % (y * x) / x, i % x);
                    v[(h * x + w) * c + ch]
                })
                .collect(),
        ),
        _ => None,
    }
}

/// Round half away from zero.
fn round(x: f64) -> f64 {
    x.signum() * (x.abs() + 0.5).floor()
}

/// The interval of reals `v` stands for: half-way to its float16 neighbours, or `v` itself.
fn interval(v: f64, half: bool) -> (f64, f64) {
    if !half {
        return (v, v);
    }
    let ulp = half_ulp(v);
    (v - ulp / 2.0, v + ulp / 2.0)
}

/// The spacing of float16 values at `v` (subnormal spacing below 2^-14).
fn half_ulp(v: f64) -> f64 {
    let a = v.abs();
    if a < f64::powi(2.0, -14) {
        return f64::powi(2.0, -24);
    }
    f64::powi(2.0, a.log2().floor() as i32 - 10)
}

/// Exact and consistent counts of `q` against `src` scaled by `scale` (q = x * scale + add).
fn score(src: &[f64], half: bool, q: &[i64], scale: f64, add: &[f64]) -> (u64, u64) {
    let mut exact = 0;
    let mut consistent = 0;
    for (i, (&x, &q)) in src.iter().zip(q).enumerate() {
        let a = add.get(i).copied().unwrap_or(0.0);
        let q = q as f64 - a;
        exact += u64::from(round(x * scale) == q);
        let (lo, hi) = interval(x, half);
        consistent += u64::from(q + 0.5 >= lo * scale && q - 0.5 <= hi * scale);
    }
    (exact, consistent.max(exact))
}

/// The power of two that best maps `src` onto `q`: the median ratio's, then its neighbours.
fn positions(src: &[f64], q: &[i64]) -> Vec<i32> {
    let mut r: Vec<f64> = src
        .iter()
        .zip(q)
        .filter(|&(&x, &q)| x != 0.0 && q.unsigned_abs() >= 16)
        .map(|(&x, &q)| (q as f64 / x).abs().log2())
        .collect();
    if r.is_empty() {
        return Vec::new();
    }
    r.sort_by(f64::total_cmp);
    let m = r[r.len() / 2].round() as i32;
    vec![m - 1, m, m + 1]
}

/// Dynamic fixed point at each position `positions` proposes, with its counts.
fn dfp_tries(v: &[f64], half: bool, q: &[i64]) -> Vec<(Quantization, (u64, u64))> {
    positions(v, q)
        .into_iter()
        .map(|p| {
            let s = score(v, half, q, f64::powi(2.0, p), &[]);
            (Quantization::Dfp { position: p }, s)
        })
        .collect()
}

/// The best transform from `src` to the kernel of `d`.
fn kernel_match(src: &Source, d: &Decoded<'_>) -> Option<Found> {
    let shape = d.weights.shape;
    let mut best: Option<Found> = None;
    for layout in [Layout::Oihw, Layout::Ohwi, Layout::OneHwc] {
        let Some(v) = permute(src, layout, shape) else {
            continue;
        };
        let tries: Vec<(Quantization, (u64, u64))> = match d.weights.dtype {
            WeightType::F16 => {
                let bits = &d.weights.kernels.weights;
                let exact = v
                    .iter()
                    .zip(bits)
                    .filter(|&(&x, &b)| crate::lab::mapping::numeric::f32_to_f16(x as f32) == b)
                    .count() as u64;
                vec![(Quantization::Fp16, (exact, exact))]
            }
            WeightType::I16 => dfp_tries(&v, src.half, &d.ints),
            WeightType::U8 | WeightType::I8 => {
                let zp = d.weights.zero_point as i64;
                let mut out = dfp_tries(&v, src.half, &d.ints);
                if let Some(scale) = fitted_scale(&v, &d.ints) {
                    let s = score(&v, src.half, &d.ints, 1.0 / scale, &[]);
                    out.push((
                        Quantization::Affine {
                            scale,
                            zero_point: zp,
                        },
                        s,
                    ));
                }
                out
            }
        };
        for (quantization, (exact, consistent)) in tries {
            if best
                .as_ref()
                .is_none_or(|b| (consistent, exact) > (b.consistent, b.exact))
            {
                best = Some(Found {
                    entry: d.buffer.entry,
                    offset: d.buffer.offset,
                    command: d.buffer.command.map(|c| c.index),
                    layout,
                    quantization,
                    exact,
                    consistent,
                });
            }
        }
    }
    best
}

/// The scale of an affine map from `src` onto `q` (median of x / q over the larger elements).
fn fitted_scale(src: &[f64], q: &[i64]) -> Option<f64> {
    let mut r: Vec<f64> = src
        .iter()
        .zip(q)
        .filter(|&(_, &q)| q.unsigned_abs() >= 8)
        .map(|(&x, &q)| x / q as f64)
        .filter(|r| *r > 0.0)
        .collect();
    r.sort_by(f64::total_cmp);
    r.get(r.len() / 2).copied()
}

/// The best transform from a bias `src` to the biases of `d` (dynamic fixed point only).
fn bias_match(src: &Source, d: &Decoded<'_>) -> Option<Found> {
    let biases = d.buffer.biases.as_ref()?;
    if d.weights.dtype != WeightType::I16
        || src.shape.len() != 1
        || biases.values.len() != src.values.len()
    {
        return None;
    }
    let per = d.ints.len() / biases.values.len().max(1);
    let corr: Vec<f64> = d
        .ints
        .chunks(per.max(1))
        .map(|k| 128.0 * k.iter().sum::<i64>() as f64)
        .collect();
    let q = &biases.values;
    let lifted: Vec<i64> = q.iter().zip(&corr).map(|(&b, &c)| b - c as i64).collect();
    let mut ps = positions(&src.values, &lifted);
    if ps.is_empty() {
        // All-zero biases: any position; 0 is as good as any.
        ps.push(0);
    }
    ps.into_iter()
        .map(|p| {
            let (exact, consistent) = score(&src.values, src.half, q, f64::powi(2.0, p), &corr);
            Found {
                entry: d.buffer.entry,
                offset: d.buffer.offset,
                command: d.buffer.command.map(|c| c.index),
                layout: Layout::Channels,
                quantization: Quantization::DfpBias { position: p },
                exact,
                consistent,
            }
        })
        .max_by_key(|f| (f.consistent, f.exact))
}

/// The name a tensor shares with its layer's other tensors (up to its last `/` or `.`).
fn layer(name: &str) -> &str {
    name.rfind(['/', '.']).map_or(name, |i| &name[..i])
}

/// The sources of an ONNX model: its float initializers.
pub fn of_initializers(g: &crate::onnx::proto::GraphProto) -> Vec<Source> {
    g.initializer
        .iter()
        .filter(|t| t.data_type == Some(crate::onnx::proto::data_type::FLOAT))
        .filter_map(|t| {
            let shape: Vec<u64> = t
                .dims
                .iter()
                .map(|&d| u64::try_from(d).ok())
                .collect::<Option<_>>()?;
            let values: Vec<f64> = match t.raw_data.as_deref() {
                Some(r) => r
                    .chunks_exact(4)
                    .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                    .collect(),
                None => t.float_data.iter().map(|&x| f64::from(x)).collect(),
            };
            (values.len() as u64 == shape.iter().product::<u64>()).then(|| Source {
                name: t.name.clone().unwrap_or_default(),
                shape,
                values,
                half: false,
            })
        })
        .collect()
}

/// Match every source tensor to the decoded buffers: kernels first, then biases, a bias
/// preferring the buffer its layer's kernel matched (all-zero biases match every buffer alike).
pub fn matches(sources: &[Source], buffers: &[Buffer]) -> (Vec<Row>, Summary) {
    let dec: Vec<Decoded<'_>> = buffers.iter().filter_map(decoded).collect();
    let mut rows: Vec<Row> = sources
        .iter()
        .map(|s| Row {
            name: s.name.clone(),
            shape: s.shape.clone(),
            elements: s.values.len() as u64,
            found: if s.shape.len() == 4 {
                dec.iter()
                    .filter_map(|d| kernel_match(s, d))
                    .max_by_key(|f| (f.consistent, f.exact, std::cmp::Reverse(f.entry)))
                    .filter(|f| 2 * f.consistent > s.values.len() as u64)
            } else {
                None
            },
        })
        .collect();
    let kernel_of: Vec<(String, usize)> = rows
        .iter()
        .filter_map(|r| {
            r.found
                .as_ref()
                .map(|f| (layer(&r.name).to_string(), f.entry))
        })
        .collect();
    for (row, s) in rows.iter_mut().zip(sources) {
        if s.shape.len() != 1 {
            continue;
        }
        let sibling = kernel_of
            .iter()
            .find(|(l, _)| l == layer(&s.name))
            .map(|&(_, e)| e);
        row.found = dec
            .iter()
            .filter_map(|d| bias_match(s, d))
            .max_by_key(|f| {
                (
                    f.consistent,
                    f.exact,
                    Some(f.entry) == sibling,
                    std::cmp::Reverse(f.entry),
                )
            })
            .filter(|f| 2 * f.consistent > s.values.len() as u64);
    }
    let mut sum = Summary {
        tensors: rows.len(),
        ..Summary::default()
    };
    for r in &rows {
        sum.elements += r.elements;
        if let Some(f) = &r.found {
            sum.found += 1;
            sum.exact += f.exact;
            sum.consistent += f.consistent;
        }
    }
    (rows, sum)
}
