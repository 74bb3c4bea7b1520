//! Source tensors matched to the kernels and biases decoded from an NBG's coefficient buffers
//! (`nbg::coefficients`), each with the transform that maps one to the other: the layout
//! permutation and the quantization (dynamic fixed point with its position, affine, fp16).
//!
//! A source element is *exact* when the quantization of its value, rounded half to even, is
//! the decoded element; *consistent* when some real number that the source's own type
//! rounds to the source value quantizes to it (a float16 source holds its network's weights only
//! to float16 precision, so this is the strongest claim such a source allows). Both are counted.
//!
//! Biases of integer kernels are stored corrected, `round(b * 2^s) + 128 * sum(q)` (Mesa
//! etnaviv_ml_nn_v8.c `calculate_bias_correction`, the vendor's encoder likewise; measured on
//! the A733 face detector), and compared so.
//!
//! A transform may also name `decimals`: the source rounded to that many decimal places first,
//! in float32 with ties to even, a result of zero as +0. ACUITY 6.30 does this before it
//! quantizes or stores a weight (measured on the A733 face detector: with 5 decimals every
//! kernel and bias element of the int16 build and of its fp16 twin, without, 86-97 %); each
//! count in `DECIMALS` is tried and named only when it matches more elements than none.
//!
//! Besides the NN weight buffers, entries that no NN command reads (`coefficients::plain`,
//! a shader's weights and biases) are tested as plain float16, bfloat16 and float32 arrays.

use crate::nbg::coefficients::plain::Plain;
use crate::nbg::coefficients::tp::Part as TpPart;
use crate::nbg::coefficients::zero_run::Buffer as ZeroRunBuffer;
use crate::nbg::coefficients::{Buffer, Coefficients, WeightType};
use crate::onnx::tensor::{Dtype, Tensor};
use serde::Serialize;
use std::borrow::Cow;

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
    /// Integers a QDQ model already quantized (its uint8/int8 weights, int32 biases): matched
    /// as stored (`Quantization::Stored`), not through a scale.
    pub integer: bool,
}

impl Source {
    /// A tensor of a model or archive; `None` for types without a numeric value.
    pub fn of(t: &Tensor) -> Option<Source> {
        Some(Source {
            name: t.name.clone(),
            shape: t.shape.clone(),
            values: t.to_f64()?,
            half: t.dtype == Dtype::F16,
            integer: false,
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
    /// [O, 1, 1, I] or [O, I] against a kernel of another shape holding as many elements in the
    /// same order (measured: the Ameba hand landmark's 1x1 convolutions on re-tiled images,
    /// stored as 1x4x4 kernels of 16 inputs).
    Flat,
    /// A depthwise kernel ([1, H, W, C] or [C, 1, H, W]) stored dense: on the diagonal of a
    /// (C, C, H, W) kernel whose other taps are the zero point (measured: the v7 ST files', the
    /// Ameba hand landmark's and the simulator's 0x88 depthwise layers); only the diagonal is
    /// compared.
    OneHwcDiagonal,
    /// A stride-2 kernel ([O, I, H, W] or [O, H, W, I]) folded into four stride-1 phases: an
    /// (O, 4I, ceil(H/2), ceil(W/2)) kernel whose input z = 4i + 2py + px holds taps
    /// (2y + py, 2x + px), zero past the kernel (measured: the simulator's 3x3 and 5x5 stride-2
    /// convolutions on 0x9f and 0x88, and a 1-channel depthwise one; 0x1000003b does not fold);
    /// only the kernel's own taps are compared.
    StrideFold,
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
    /// A v7 kernel's inline 32-bit bias: the QDQ bias less the input zero point times the
    /// kernel's sum less its zero point (the input's zero point folded into the bias; the
    /// vendor's encoder, `reorderWeightBiasBufferForHuffman`; measured on the simulator's 0x88
    /// compiles).
    InlineBias {
        /// The input zero point (found: the most common per channel).
        input_zero_point: i64,
    },
    /// IEEE half, as stored.
    Fp16,
    /// bfloat16 (the top half of a float32, rounded to nearest even), as stored.
    Bf16,
    /// IEEE single, as stored.
    F32,
    /// An integer as stored, less `less` (a QDQ kernel's zero point; Mesa's
    /// `etnaviv_ml_nn_v8.c` writes weight less zero point), wrapped to the element's width.
    Stored {
        /// Subtracted before it is stored (found: the most common difference).
        less: i64,
    },
}

impl Layout {
    /// Its name in the report (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Oihw => "oihw",
            Layout::Ohwi => "ohwi",
            Layout::OneHwc => "one-hwc",
            Layout::OneHwcDiagonal => "one-hwc-diagonal",
            Layout::Flat => "flat",
            Layout::StrideFold => "stride-fold",
            Layout::Channels => "channels",
        }
    }
}

impl Quantization {
    /// Its type's name in the report (as serialized), and the fraction bits of a dynamic
    /// fixed point.
    pub fn name(&self) -> (&'static str, Option<i32>) {
        match *self {
            Quantization::Dfp { position } => ("dfp", Some(position)),
            Quantization::DfpBias { position } => ("dfp-bias", Some(position)),
            Quantization::Affine { .. } => ("affine", None),
            Quantization::Fp16 => ("fp16", None),
            Quantization::Bf16 => ("bf16", None),
            Quantization::F32 => ("f32", None),
            Quantization::Stored { .. } => ("stored", None),
            Quantization::InlineBias { .. } => ("inline-bias", None),
        }
    }
}

/// How the matched elements are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Storage {
    /// Decoded from an NN weight buffer's streams (`coefficients`).
    NnStream,
    /// A plain array: an entry no NN command reads (`coefficients::plain`).
    Plain,
    /// Decoded from a VIP8000 zero-run buffer (`coefficients::zero_run`).
    ZeroRun,
    /// A TP command's fully-connected part (`coefficients::tp`).
    Tp,
}

/// The decimal places tried before quantizing (`None` first: named only when it helps).
const DECIMALS: [Option<u8>; 5] = [None, Some(4), Some(5), Some(6), Some(7)];

/// `x` rounded as the toolkit does, to `decimals` places in float32 (ties to even, zero as
/// +0), or as it is.
fn toolkit(x: f64, decimals: Option<u8>) -> f64 {
    match decimals {
        None => x,
        Some(d) => {
            let f = 10f32.powi(i32::from(d));
            f64::from(((x as f32) * f).round_ties_even() / f + 0.0)
        }
    }
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
    /// The operation that reads it (for a plain entry, the first of its readers).
    pub operation: Option<usize>,
    /// How its elements are stored.
    pub storage: Storage,
    /// The layout permutation.
    pub layout: Layout,
    /// The quantization.
    pub quantization: Quantization,
    /// The decimal places the source was rounded to first, when that matched more.
    pub decimals: Option<u8>,
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

/// One decoded set of kernels, wherever it was decoded from (an NN buffer's streams, a
/// VIP8000 zero-run buffer, a TP command's part): the elements as stored and as signed
/// integers (8-bit minus the zero point) or, for fp16, as values.
struct Decoded<'a> {
    at: Where,
    /// Channels, z, y, x.
    shape: [usize; 4],
    dtype: WeightType,
    zero_point: i64,
    /// The elements as stored, masked to `bits`.
    stored: Vec<i64>,
    bits: u32,
    ints: Vec<i64>,
    /// One bias per channel, as stored, where the buffer carries them.
    biases: Option<Cow<'a, [i64]>>,
    /// Whether the biases are v7 inline ones, the input zero point folded in.
    inline: bool,
}

impl<'a> Decoded<'a> {
    fn new(
        at: Where,
        shape: [usize; 4],
        dtype: WeightType,
        zero_point: u64,
        elements: impl Iterator<Item = u16>,
        biases: Option<Cow<'a, [i64]>>,
    ) -> Decoded<'a> {
        let bits = match dtype {
            WeightType::U8 | WeightType::I8 => 8,
            WeightType::I16 | WeightType::F16 => 16,
        };
        let zp = zero_point as i64;
        let stored: Vec<i64> = elements.map(|e| i64::from(e) & ((1 << bits) - 1)).collect();
        let ints = stored
            .iter()
            .map(|&e| match dtype {
                WeightType::I16 | WeightType::F16 => i64::from(e as u16 as i16),
                WeightType::I8 => i64::from(e as u8 as i8),
                WeightType::U8 => e - zp,
            })
            .collect();
        Decoded {
            at,
            shape,
            dtype,
            zero_point: zp,
            stored,
            bits,
            ints,
            biases,
            inline: false,
        }
    }

    /// With v7 inline biases (each kernel's first 32-bit word, as a signed value).
    fn with_inline(self, inline: &[[u32; 2]]) -> Decoded<'a> {
        if inline.is_empty() {
            return self;
        }
        let biases = inline.iter().map(|w| i64::from(w[0] as i32)).collect();
        Decoded {
            biases: Some(Cow::Owned(biases)),
            inline: true,
            ..self
        }
    }
}

fn decoded(b: &Buffer) -> Option<Decoded<'_>> {
    let w = b.weights.as_ref()?;
    Some(
        Decoded::new(
            Where::of_buffer(b),
            w.shape,
            w.dtype,
            w.zero_point,
            w.kernels.weights.iter().copied(),
            b.biases.as_ref().map(|b| Cow::Borrowed(&b.values[..])),
        )
        .with_inline(&w.kernels.inline),
    )
}

/// A VIP8000 zero-run buffer's kernels (8-bit, typed by the command's `kernel_data_type`).
fn decoded_zero_run(z: &ZeroRunBuffer) -> Option<Decoded<'_>> {
    let dtype = WeightType::of_code(z.command.kernel_data_type)
        .filter(|t| matches!(t, WeightType::U8 | WeightType::I8))?;
    let at = Where {
        entry: z.entry,
        offset: z.offset,
        command: Some(z.command.index),
        operation: z.operation.as_ref().map(|o| o.index),
        storage: Storage::ZeroRun,
    };
    Some(
        Decoded::new(
            at,
            z.shape,
            dtype,
            z.command.coef_zero_point,
            z.weights.iter().map(|&e| u16::from(e)),
            None,
        )
        .with_inline(&z.inline),
    )
}

/// A TP command's fully-connected matrix, as (filters, slices, 1, 1) kernels: 8-bit weights
/// affine with the command's `coef_zp`, 16-bit ones dynamic fixed point.
fn decoded_tp(entry: usize, p: &TpPart) -> Decoded<'_> {
    let (dtype, zp) = match p.weight_bits() {
        8 => (WeightType::U8, u64::from(p.shape.coef_zp)),
        _ => (WeightType::I16, 0),
    };
    let at = Where {
        entry,
        offset: p.offset,
        command: Some(p.shape.command),
        operation: p.operation.as_ref().map(|o| o.index),
        storage: Storage::Tp,
    };
    let shape = [p.shape.filters as usize, p.shape.slices as usize, 1, 1];
    Decoded::new(at, shape, dtype, zp, p.weights.iter().copied(), None)
}

/// `src` reordered to (channels, z, y, x) under `layout`, when its shape fits `shape`.
fn permute(src: &Source, layout: Layout, shape: [usize; 4]) -> Option<Vec<f64>> {
    let d: Vec<usize> = src.shape.iter().map(|&x| x as usize).collect();
    let [c, z, y, x] = shape;
    let n = c * z * y * x;
    if !(d.len() == 4 || d.len() == 2) || src.values.len() != n {
        return None;
    }
    let v = &src.values;
    match layout {
        Layout::Oihw if d == [c, z, y, x] => Some(v.clone()),
        // A fully connected layer's [O, I] matrix: its rows are the kernels, in order
        // (measured: the QDQ Gemm on 0x1000003b and 0x9f, kernel 8x2x1 of 16 inputs).
        Layout::Oihw if d.len() == 2 && d == [c, z * y * x] => Some(v.clone()),
        Layout::Ohwi if d == [c, y, x, z] => Some(
            (0..n)
                .map(|i| {
                    let (o, r) = (i / (z * y * x), i % (z * y * x));
                    let (ic, h, w) = (r / (y * x), r % (y * x) / x, r % x);
                    v[((o * y + h) * x + w) * z + ic]
                })
                .collect(),
        ),
        // A 1x1 kernel or a matrix row: its inputs are its elements, whatever shape the
        // command gives them.
        Layout::Flat
            if d[0] == c
                && (d.len() == 2 || (d.len() == 4 && d[1] == 1 && d[2] == 1))
                && d != [c, z, y, x] =>
        {
            Some(v.clone())
        }
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

/// Exact and consistent counts of `q` against `src` scaled by `scale` (q = x * scale + add),
/// the source rounded to `decimals` first for the exact count.
fn score(
    src: &[f64],
    half: bool,
    q: &[i64],
    (scale, decimals): (f64, Option<u8>),
    add: &[f64],
) -> (u64, u64) {
    let mut exact = 0;
    let mut consistent = 0;
    for (i, (&x, &q)) in src.iter().zip(q).enumerate() {
        let a = add.get(i).copied().unwrap_or(0.0);
        let q = q as f64 - a;
        exact += u64::from((toolkit(x, decimals) * scale).round_ties_even() == q);
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

/// One candidate transform: quantization, decimals, (exact, consistent).
type Try = (Quantization, Option<u8>, (u64, u64));

/// Dynamic fixed point at each position `positions` proposes, with its counts.
fn dfp_tries(v: &[f64], half: bool, q: &[i64]) -> Vec<Try> {
    let mut out = Vec::new();
    for p in positions(v, q) {
        for d in DECIMALS {
            let s = score(v, half, q, (f64::powi(2.0, p), d), &[]);
            out.push((Quantization::Dfp { position: p }, d, s));
        }
    }
    out
}

/// A float storage's exact count, per decimals: each source value, rounded, converted to the
/// stored type, against the stored bits (a float has nothing wider to be consistent with).
fn float_tries(v: &[f64], stored: &[u32], q: Quantization) -> Vec<Try> {
    let convert = |x: f64| -> u32 {
        let f = x as f32;
        match q {
            Quantization::Fp16 => u32::from(crate::lab::mapping::numeric::f32_to_f16(f)),
            Quantization::Bf16 => bf16(f),
            _ => f.to_bits(),
        }
    };
    DECIMALS
        .iter()
        .map(|&d| {
            let exact = v
                .iter()
                .zip(stored)
                .filter(|&(&x, &b)| convert(toolkit(x, d)) == b)
                .count() as u64;
            (q, d, (exact, exact))
        })
        .collect()
}

/// An integer source as stored: the most common difference `less` (mod 2^bits) between
/// source and stored element, with the elements that differ by exactly it.
fn stored_tries(v: &[f64], q: &[i64], bits: u32) -> Vec<Try> {
    let m = 1i64 << bits;
    let diff = |(&x, &q): (&f64, &i64)| (x as i64 - q).rem_euclid(m);
    let mut counts = std::collections::BTreeMap::<i64, u64>::new();
    for d in v.iter().zip(q).map(diff) {
        *counts.entry(d).or_default() += 1;
    }
    // The most common difference, the smallest of equals; written signed for 8 bits.
    let Some((&less, &n)) = counts
        .iter()
        .max_by_key(|&(d, n)| (*n, std::cmp::Reverse(*d)))
    else {
        return Vec::new();
    };
    let less = if less >= m / 2 { less - m } else { less };
    vec![(Quantization::Stored { less }, None, (n, n))]
}

/// bfloat16 of `f`, rounded to nearest even (NaN kept quiet).
fn bf16(f: f32) -> u32 {
    let b = f.to_bits();
    if f.is_nan() {
        return (b >> 16) | 0x40;
    }
    (b + 0x7fff + ((b >> 16) & 1)) >> 16
}

/// A stride-2 kernel against its four-phase fold of `shape`: the source's taps in the order
/// `at` gives, and where each is in the folded kernel.
fn stride_fold(src: &Source, shape: [usize; 4]) -> Option<(Vec<f64>, Vec<usize>)> {
    let [o, z, fy, fx] = shape;
    let d: Vec<usize> = src.shape.iter().map(|&x| x as usize).collect();
    if z % 4 != 0 || d.len() != 4 || d[0] != o {
        return None;
    }
    let c = z / 4;
    // The kernel's height and width, as OIHW or OHWI gives them.
    let (ky, kx) = if d[1] == c {
        (d[2], d[3])
    } else {
        (d[1], d[2])
    };
    let folds = |k: usize, f: usize| k > 1 && k.div_ceil(2) == f;
    if !folds(ky, fy) || !folds(kx, fx) {
        return None;
    }
    let base = permute(src, Layout::Oihw, [o, c, ky, kx])
        .or_else(|| permute(src, Layout::Ohwi, [o, c, ky, kx]))?;
    let (mut v, mut at) = (Vec::new(), Vec::new());
    for oi in 0..o {
        for ci in 0..c {
            for (y, x) in (0..ky).flat_map(|y| (0..kx).map(move |x| (y, x))) {
                v.push(base[((oi * c + ci) * ky + y) * kx + x]);
                let zi = ci * 4 + (y % 2) * 2 + x % 2;
                at.push(((oi * z + zi) * fy + y / 2) * fx + x / 2);
            }
        }
    }
    Some((v, at))
}

/// A [1, H, W, C] or [C, 1, H, W] depthwise kernel against a dense (C, C, H, W) one: the
/// source in (C, 1, H, W) order and the decoded elements on the diagonal it is compared with.
fn diagonal(src: &Source, shape: [usize; 4]) -> Option<(Vec<f64>, Vec<usize>)> {
    let [c, z, y, x] = shape;
    if z != c || c < 2 {
        return None;
    }
    // A TFLite depthwise kernel (1, H, W, C), or an ONNX one (C, 1, H, W).
    let v = permute(src, Layout::OneHwc, [c, 1, y, x])
        .or_else(|| permute(src, Layout::Oihw, [c, 1, y, x]))?;
    let at = (0..c * y * x)
        .map(|i| {
            let (ch, r) = (i / (y * x), i % (y * x));
            (ch * z + ch) * y * x + r
        })
        .collect();
    Some((v, at))
}

/// The best transform from `src` to the kernel of `d`.
fn kernel_match(src: &Source, d: &Decoded<'_>) -> Option<Found> {
    let shape = d.shape;
    let mut best: Option<Found> = None;
    for layout in [
        Layout::Oihw,
        Layout::Ohwi,
        Layout::OneHwc,
        Layout::OneHwcDiagonal,
        Layout::Flat,
        Layout::StrideFold,
    ] {
        // The source in the decoded order, and which decoded elements it stands for (all, but
        // for a kernel on a diagonal or folded).
        let (v, at) = match layout {
            Layout::OneHwcDiagonal => match diagonal(src, shape) {
                Some((v, at)) => (v, Some(at)),
                None => continue,
            },
            Layout::StrideFold => match stride_fold(src, shape) {
                Some((v, at)) => (v, Some(at)),
                None => continue,
            },
            _ => match permute(src, layout, shape) {
                Some(v) => (v, None),
                None => continue,
            },
        };
        let pick = |all: &[i64]| -> Vec<i64> {
            at.as_ref()
                .map_or_else(|| all.to_vec(), |at| at.iter().map(|&i| all[i]).collect())
        };
        let ints = pick(&d.ints);
        let tries: Vec<Try> = match d.dtype {
            // Against the elements as stored, whatever the type reads.
            WeightType::U8 | WeightType::I8 if src.integer => {
                stored_tries(&v, &pick(&d.stored), d.bits)
            }
            _ if src.integer => Vec::new(),
            WeightType::F16 => {
                let bits: Vec<u32> = pick(&d.stored).iter().map(|&b| b as u32).collect();
                float_tries(&v, &bits, Quantization::Fp16)
            }
            WeightType::I16 => dfp_tries(&v, src.half, &ints),
            WeightType::U8 | WeightType::I8 => {
                let zp = d.zero_point;
                let mut out = dfp_tries(&v, src.half, &ints);
                if let Some(scale) = fitted_scale(&v, &ints) {
                    for dec in DECIMALS {
                        let s = score(&v, src.half, &ints, (1.0 / scale, dec), &[]);
                        let q = Quantization::Affine {
                            scale,
                            zero_point: zp,
                        };
                        out.push((q, dec, s));
                    }
                }
                out
            }
        };
        for t in tries {
            keep_best(&mut best, d.at.found(layout, t));
        }
    }
    best
}

/// Where a match is: the entry and who reads it.
#[derive(Clone, Copy)]
struct Where {
    entry: usize,
    offset: u64,
    command: Option<usize>,
    operation: Option<usize>,
    storage: Storage,
}

impl Where {
    fn of_buffer(b: &Buffer) -> Where {
        Where {
            entry: b.entry,
            offset: b.offset,
            command: b.command.map(|c| c.index),
            operation: b.operation.as_ref().map(|o| o.index),
            storage: Storage::NnStream,
        }
    }

    /// A plain entry, named by its reader `prefer` when that is one of its readers (an entry the
    /// toolkit shares, such as one all-zero bias, has several), else by its first.
    fn of_plain(p: &Plain, prefer: Option<usize>) -> Where {
        let named = prefer.filter(|&k| p.readers.iter().any(|o| o.index == k));
        Where {
            entry: p.entry,
            offset: p.offset,
            command: None,
            operation: named.or(p.readers.first().map(|o| o.index)),
            storage: Storage::Plain,
        }
    }

    fn found(self, layout: Layout, (quantization, decimals, (exact, consistent)): Try) -> Found {
        Found {
            entry: self.entry,
            offset: self.offset,
            command: self.command,
            operation: self.operation,
            storage: self.storage,
            layout,
            quantization,
            decimals,
            exact,
            consistent,
        }
    }
}

/// `f` in `best` when it is better: more consistent, then more exact (the first of equals).
fn keep_best(best: &mut Option<Found>, f: Found) {
    if best
        .as_ref()
        .is_none_or(|b| (f.consistent, f.exact) > (b.consistent, b.exact))
    {
        *best = Some(f);
    }
}

/// The (C, Z, Y, X) a source of `shape` has under each layout (a plain entry has no shape of
/// its own).
fn layouts(shape: &[u64]) -> Vec<(Layout, [usize; 4])> {
    let Ok(&[a, b, c, d]) = <&[u64; 4]>::try_from(shape) else {
        return Vec::new();
    };
    let [a, b, c, d] = [a, b, c, d].map(|x| usize::try_from(x).unwrap_or(0));
    // A depthwise kernel's (1, H, W, C) is named as one; its other readings are the same order.
    let depthwise = (a == 1).then_some((Layout::OneHwc, [d, 1, b, c]));
    depthwise
        .into_iter()
        .chain([(Layout::Oihw, [a, b, c, d]), (Layout::Ohwi, [a, d, b, c])])
        .collect()
}

/// The stored types a plain entry of `bytes` may hold `n` elements in, with the elements.
fn plain_views(bytes: &[u8], n: usize) -> Vec<(Quantization, Vec<u32>)> {
    let mut out = Vec::new();
    if n > 0 && bytes.len() == 2 * n {
        let v: Vec<u32> = bytes
            .chunks_exact(2)
            .map(|c| u32::from(u16::from_le_bytes([c[0], c[1]])))
            .collect();
        out.push((Quantization::Fp16, v.clone()));
        out.push((Quantization::Bf16, v));
    }
    if n > 0 && bytes.len() == 4 * n {
        let v = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        out.push((Quantization::F32, v));
    }
    out
}

/// The best transform from `src` (a kernel or a bias) to a plain entry `p`, named by its
/// reader `prefer` where it is one.
fn plain_match(src: &Source, p: &Plain, prefer: Option<usize>) -> Option<Found> {
    if src.integer {
        return plain_integers(src, p, prefer);
    }
    let views = plain_views(p.bytes, src.values.len());
    if views.is_empty() {
        return None;
    }
    let at = Where::of_plain(p, prefer);
    let mut best = None;
    let orders: Vec<(Layout, Vec<f64>)> = if src.shape.len() == 1 {
        vec![(Layout::Channels, src.values.clone())]
    } else {
        layouts(&src.shape)
            .into_iter()
            .filter_map(|(l, shape)| Some((l, permute(src, l, shape)?)))
            .collect()
    };
    for (layout, v) in &orders {
        for (q, stored) in &views {
            for t in float_tries(v, stored, *q) {
                keep_best(&mut best, at.found(*layout, t));
            }
        }
    }
    best
}

/// A QDQ model's integers against a plain entry of exactly as many of them: 8-bit weights as
/// stored less their most common difference (a shader convolution's kernels, one row each;
/// measured on the simulator's 0x1000001e, whose uint8 convolutions run on shaders), 32-bit
/// biases as they are.
fn plain_integers(src: &Source, p: &Plain, prefer: Option<usize>) -> Option<Found> {
    let n = src.values.len();
    let at = Where::of_plain(p, prefer);
    if n > 0 && p.bytes.len() == 4 * n && src.shape.len() == 1 {
        let exact = p
            .bytes
            .chunks_exact(4)
            .zip(&src.values)
            .filter(|&(c, &x)| f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])) == x)
            .count() as u64;
        let t = (Quantization::Stored { less: 0 }, None, (exact, exact));
        return Some(at.found(Layout::Channels, t));
    }
    if n == 0 || p.bytes.len() != n {
        return None;
    }
    let q: Vec<i64> = p.bytes.iter().map(|&b| i64::from(b)).collect();
    let mut best = None;
    for (layout, shape) in layouts(&src.shape) {
        if let Some(v) = permute(src, layout, shape) {
            for t in stored_tries(&v, &q, 8) {
                keep_best(&mut best, at.found(layout, t));
            }
        }
    }
    best
}

/// A QDQ model's int32 bias against a shader's plain bias entry that folds the input zero
/// point in: stored = b - z * (sum(w) - K * zw), for a kernel found in a plain entry its
/// operation also reads (measured on the simulator's 0x1000001e uint8 convolutions, kernel zero
/// points 10 and 128, z = 128; the v7 inline bias's rule). z and K * zw are fitted from the
/// first two channels of different sums and every channel is checked.
fn folded_bias(src: &Source, p: &Plain, kernels: &[(Vec<f64>, Option<usize>)]) -> Option<Found> {
    let n = src.values.len();
    if !src.integer || n < 2 || p.bytes.len() != 4 * n {
        return None;
    }
    let stored: Vec<f64> = p
        .bytes
        .chunks_exact(4)
        .map(|c| f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    let mut best = None;
    for (sums, op) in kernels.iter().filter(|(s, _)| s.len() == n) {
        let Some(op) = op.filter(|&op| p.readers.iter().any(|o| o.index == op)) else {
            continue;
        };
        // diff = -z * sum + z * K * zw: a line in the kernel sums.
        let diff: Vec<f64> = stored.iter().zip(&src.values).map(|(q, b)| q - b).collect();
        let Some(j) = (1..n).find(|&j| sums[j] != sums[0]) else {
            continue;
        };
        let slope = (diff[j] - diff[0]) / (sums[j] - sums[0]);
        // No slope: nothing folded, the stored bias (`plain_integers`) says so.
        if slope.fract() != 0.0 || slope == 0.0 {
            continue;
        }
        let offset = diff[0] - slope * sums[0];
        let exact = (0..n)
            .filter(|&c| diff[c] == slope * sums[c] + offset)
            .count() as u64;
        let q = Quantization::InlineBias {
            input_zero_point: -slope as i64,
        };
        let at = Where::of_plain(p, Some(op));
        keep_best(
            &mut best,
            at.found(Layout::Channels, (q, None, (exact, exact))),
        );
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
    let biases = d.biases.as_deref()?;
    if src.shape.len() != 1 || biases.len() != src.values.len() {
        return None;
    }
    if src.integer && d.inline {
        return Some(d.at.found(Layout::Channels, inline_bias(src, d, biases)));
    }
    if src.integer {
        // A QDQ model's int32 bias, as stored.
        let exact = src
            .values
            .iter()
            .zip(biases)
            .filter(|&(&x, &b)| x == b as f64)
            .count() as u64;
        let t = (Quantization::Stored { less: 0 }, None, (exact, exact));
        return Some(d.at.found(Layout::Channels, t));
    }
    if d.dtype != WeightType::I16 || d.inline {
        return None;
    }
    let per = d.ints.len() / biases.len().max(1);
    let corr: Vec<f64> = d
        .ints
        .chunks(per.max(1))
        .map(|k| 128.0 * k.iter().sum::<i64>() as f64)
        .collect();
    let q = biases;
    let lifted: Vec<i64> = q.iter().zip(&corr).map(|(&b, &c)| b - c as i64).collect();
    let mut ps = positions(&src.values, &lifted);
    if ps.is_empty() {
        // All-zero biases: any position; 0 is as good as any.
        ps.push(0);
    }
    let mut best = None;
    for p in ps {
        for dec in DECIMALS {
            let s = score(&src.values, src.half, q, (f64::powi(2.0, p), dec), &corr);
            let t = (Quantization::DfpBias { position: p }, dec, s);
            keep_best(&mut best, d.at.found(Layout::Channels, t));
        }
    }
    best
}

/// A QDQ bias against v7 inline biases: stored = b - z * sum(kernel less its zero point),
/// with the input zero point z the most common one the channels give.
fn inline_bias(src: &Source, d: &Decoded<'_>, stored: &[i64]) -> Try {
    let per = d.ints.len() / stored.len().max(1);
    let sums: Vec<i64> = d.ints.chunks(per.max(1)).map(|k| k.iter().sum()).collect();
    let mut zs: Vec<i64> = src
        .values
        .iter()
        .zip(stored)
        .zip(&sums)
        .filter(|&(_, &s)| s != 0)
        .filter_map(|((&b, &q), &s)| {
            let diff = b as i64 - q;
            (diff % s == 0).then_some(diff / s)
        })
        .collect();
    zs.sort_unstable();
    let z = zs
        .chunk_by(|a, b| a == b)
        .max_by_key(|run| run.len())
        .map_or(0, |run| run[0]);
    let exact = src
        .values
        .iter()
        .zip(stored)
        .zip(&sums)
        .filter(|&((&b, &q), &s)| b as i64 - z * s == q)
        .count() as u64;
    let q = Quantization::InlineBias {
        input_zero_point: z,
    };
    (q, None, (exact, exact))
}

/// The name a tensor shares with its layer's other tensors (up to its last `/` or `.`).
fn layer(name: &str) -> &str {
    name.rfind(['/', '.']).map_or(name, |i| &name[..i])
}

/// The sources of an ONNX model: its float initializers, and the integers a QDQ model
/// quantized (uint8 and int8 weights, int32 biases), raw or in the proto's typed fields.
pub fn of_initializers(g: &crate::onnx::proto::GraphProto) -> Vec<Source> {
    use crate::onnx::proto::data_type;
    g.initializer
        .iter()
        .filter_map(|t| {
            let code = t.data_type?;
            let integer = match code {
                data_type::FLOAT => false,
                data_type::UINT8 | data_type::INT8 | data_type::INT32 => true,
                _ => return None,
            };
            let dtype = Dtype::from_onnx(code)?;
            // The element bytes: raw, else the typed field ONNX keeps them in (float_data;
            // int32_data, which also holds 8-bit elements one per entry).
            let data: Vec<u8> = match t.raw_data.as_deref() {
                Some(r) => r.to_vec(),
                None if code == data_type::FLOAT => {
                    t.float_data.iter().flat_map(|x| x.to_le_bytes()).collect()
                }
                None => t
                    .int32_data
                    .iter()
                    .flat_map(|&x| x.to_le_bytes()[..dtype.size()].to_vec())
                    .collect(),
            };
            let shape: Vec<u64> = t
                .dims
                .iter()
                .map(|&d| u64::try_from(d).ok())
                .collect::<Option<_>>()?;
            let tensor = Tensor {
                name: t.name.clone().unwrap_or_default(),
                dtype,
                shape,
                data,
            };
            let source = Source::of(&tensor)?;
            (source.values.len() as u64 == tensor.shape.iter().product::<u64>())
                .then_some(Source { integer, ..source })
        })
        .collect()
}

/// Whether `f` holds most of `s`'s elements (less is a coincidence of shape, not a match).
fn enough(s: &Source, f: &Found) -> bool {
    2 * f.consistent > s.values.len() as u64
}

/// Match every source tensor to the decoded buffers: kernels first, then biases, a bias
/// preferring the buffer its layer's kernel matched (all-zero biases match every buffer alike).
pub fn matches(sources: &[Source], c: &Coefficients, plain: &[Plain]) -> (Vec<Row>, Summary) {
    let dec: Vec<Decoded<'_>> = c
        .buffers
        .iter()
        .filter_map(decoded)
        .chain(c.zero_run.iter().filter_map(decoded_zero_run))
        .chain(
            c.tp.iter()
                .flat_map(|b| b.parts.iter().map(|p| decoded_tp(b.entry, p))),
        )
        .collect();
    let mut rows: Vec<Row> = sources
        .iter()
        .map(|s| Row {
            name: s.name.clone(),
            shape: s.shape.clone(),
            elements: s.values.len() as u64,
            found: if s.shape.len() == 4 || s.shape.len() == 2 {
                dec.iter()
                    .filter_map(|d| kernel_match(s, d))
                    .chain(plain.iter().filter_map(|p| plain_match(s, p, None)))
                    .max_by_key(|f| (f.consistent, f.exact, std::cmp::Reverse(f.entry)))
                    .filter(|f| enough(s, f))
            } else {
                None
            },
        })
        .collect();
    let kernel_of: Vec<(String, usize, Option<usize>)> = rows
        .iter()
        .filter_map(|r| {
            r.found
                .as_ref()
                .map(|f| (layer(&r.name).to_string(), f.entry, f.operation))
        })
        .collect();
    // Each integer kernel found in a plain entry: its per-channel sums and its reader, for
    // the biases a shader stores with the input zero point folded in.
    let plain_kernels: Vec<(Vec<f64>, Option<usize>)> = rows
        .iter()
        .zip(sources)
        .filter(|(_, s)| s.integer && s.shape.len() == 4)
        .filter_map(|(r, s)| {
            let f = r.found.as_ref().filter(|f| f.storage == Storage::Plain)?;
            let per = s.values.len() / (s.shape[0] as usize).max(1);
            let sums = s
                .values
                .chunks(per.max(1))
                .map(|k| k.iter().sum())
                .collect();
            Some((sums, f.operation))
        })
        .collect();
    for (row, s) in rows.iter_mut().zip(sources) {
        if s.shape.len() != 1 {
            continue;
        }
        let sibling = kernel_of.iter().find(|(l, ..)| l == layer(&s.name));
        // Read by the kernel's operation, or in the kernel's own entry.
        let beside = |f: &Found| {
            sibling.is_some_and(|&(_, e, op)| f.entry == e || (op.is_some() && f.operation == op))
        };
        row.found = dec
            .iter()
            .filter_map(|d| bias_match(s, d))
            .chain(
                plain
                    .iter()
                    .filter_map(|p| plain_match(s, p, sibling.and_then(|k| k.2))),
            )
            .chain(
                plain
                    .iter()
                    .filter_map(|p| folded_bias(s, p, &plain_kernels)),
            )
            .max_by_key(|f| (f.consistent, f.exact, beside(f), std::cmp::Reverse(f.entry)))
            .filter(|f| enough(s, f));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn source(name: &str, shape: Vec<u64>, values: Vec<f64>) -> Source {
        Source {
            name: name.into(),
            shape,
            values,
            half: false,
            integer: false,
        }
    }

    #[test]
    fn initializers_are_read_raw_or_from_their_typed_fields() {
        use crate::onnx::proto::{GraphProto, TensorProto, data_type};
        let t = |name: &str, dt, dims: Vec<i64>| TensorProto {
            name: Some(name.into()),
            data_type: Some(dt),
            dims,
            ..Default::default()
        };
        let g = GraphProto {
            initializer: vec![
                TensorProto {
                    float_data: vec![0.5, -1.0],
                    ..t("f", data_type::FLOAT, vec![2])
                },
                TensorProto {
                    int32_data: vec![-128, 7],
                    ..t("i8", data_type::INT8, vec![2])
                },
                TensorProto {
                    raw_data: Some(vec![200, 3]),
                    ..t("u8", data_type::UINT8, vec![2])
                },
                TensorProto {
                    int32_data: vec![-70000],
                    ..t("i32", data_type::INT32, vec![1])
                },
                // A count that is not the shape's: left out.
                TensorProto {
                    raw_data: Some(vec![1]),
                    ..t("short", data_type::UINT8, vec![2])
                },
                // A type it does not read (INT64).
                t("s", 7, vec![]),
            ],
            ..Default::default()
        };
        let got: Vec<(String, Vec<f64>, bool)> = of_initializers(&g)
            .into_iter()
            .map(|s| (s.name, s.values, s.integer))
            .collect();
        assert_eq!(
            got,
            vec![
                ("f".into(), vec![0.5, -1.0], false),
                ("i8".into(), vec![-128.0, 7.0], true),
                ("u8".into(), vec![200.0, 3.0], true),
                ("i32".into(), vec![-70000.0], true),
            ]
        );
    }

    #[test]
    fn stored_integers_are_found_less_their_most_common_difference() {
        // uint8 source, stored less 10 in 8 bits (wrapping below 10), one element off.
        let v: Vec<f64> = [0.0, 9.0, 10.0, 200.0, 255.0].to_vec();
        let q: Vec<i64> = [-10, -1, 0, 190 - 256, 245 - 256 - 1].to_vec();
        let t = stored_tries(&v, &q, 8);
        assert_eq!(t, vec![(Quantization::Stored { less: 10 }, None, (4, 4))]);
        // int8 source, stored as is; a difference of 246 reads as -10.
        let t = stored_tries(&[-128.0, 5.0], &[-128 + 10, 5 + 10], 8);
        assert_eq!(t[0].0, Quantization::Stored { less: -10 });
        assert!(stored_tries(&[], &[], 8).is_empty());
    }

    #[test]
    fn the_toolkit_rounds_in_float32_to_even_and_zero_is_positive() {
        // Values of the face detector's conv2d: float16 0x13c3 becomes 0x13c8 in the fp16 build.
        let x = f64::from(crate::lab::mapping::numeric::f16_to_f32(0x13c3));
        let r = toolkit(x, Some(5)) as f32;
        assert_eq!(crate::lab::mapping::numeric::f32_to_f16(r), 0x13c8);
        assert_eq!(toolkit(x, None), x);
        let z = toolkit(-1.07e-6, Some(5));
        assert!(z == 0.0 && z.is_sign_positive());
        // Ties to even in the scaled float32.
        assert_eq!(toolkit(0.125, Some(2)), f64::from(0.12f32));
    }

    #[test]
    fn bfloat16_rounds_to_nearest_even() {
        assert_eq!(bf16(1.0), 0x3f80);
        assert_eq!(bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
        assert_eq!(bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(bf16(f32::from_bits(0x3f80_8001)), 0x3f81);
    }

    #[test]
    fn a_plain_entry_is_found_in_its_layout_and_type_and_only_there() {
        // A [2, 1, 2, 3] OHWI kernel stored (O, I, H, W) as float16, its reader op 7.
        let v: Vec<f64> = (0..12).map(|i| f64::from(i as i8 - 5) / 8.0).collect();
        let src = source("k", vec![2, 1, 2, 3], v.clone());
        let mut bytes = Vec::new();
        for o in 0..2 {
            for i in 0..3 {
                for w in 0..2 {
                    let x = v[(o * 2 + w) * 3 + i] as f32;
                    bytes.extend(crate::lab::mapping::numeric::f32_to_f16(x).to_le_bytes());
                }
            }
        }
        let reader = crate::nbg::coefficients::Operation {
            index: 7,
            kind: "ShaderLayer",
            layer: 3,
            layer_name: "conv".into(),
        };
        let plain = |bytes: &[u8]| {
            plain_match(
                &src,
                &Plain {
                    entry: 4,
                    offset: 0x100,
                    size: bytes.len() as u64,
                    readers: vec![reader.clone()],
                    bytes,
                },
                None,
            )
        };
        let f = plain(&bytes).unwrap();
        assert_eq!(
            (f.layout, f.quantization),
            (Layout::Ohwi, Quantization::Fp16)
        );
        assert_eq!((f.exact, f.operation, f.decimals), (12, Some(7), None));
        // One element changed: one fewer exact.
        bytes[2] ^= 1;
        assert_eq!(plain(&bytes).unwrap().exact, 11);
        // Another size holds no view of 12 elements.
        bytes.push(0);
        assert!(plain(&bytes).is_none());
    }

    #[test]
    fn a_depthwise_kernel_is_compared_on_the_diagonal_of_a_dense_one() {
        // [1, 2, 1, 3]: three channels of 2x1 taps, stored as a (3, 3, 2, 1) kernel.
        let v: Vec<f64> = (0..6).map(f64::from).collect();
        let (got, at) = diagonal(&source("dw", vec![1, 2, 1, 3], v), [3, 3, 2, 1]).unwrap();
        // Channel-major: channel 0's two taps, then channel 1's, then channel 2's.
        assert_eq!(got, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        // Output channel c, input channel c: (c * 3 + c) * 2 + tap.
        assert_eq!(at, vec![0, 1, 8, 9, 16, 17]);
        // A kernel of one input channel is not dense.
        assert!(diagonal(&source("dw", vec![1, 2, 1, 3], vec![0.0; 6]), [3, 1, 2, 1]).is_none());
    }

    #[test]
    fn a_flat_kernel_keeps_its_order_under_another_shape() {
        // A 1x1 convolution of 16 inputs ([2, 1, 1, 16]) stored as 2 kernels of 1x4x4.
        let v: Vec<f64> = (0..32).map(f64::from).collect();
        let src = source("pw", vec![2, 1, 1, 16], v.clone());
        assert_eq!(permute(&src, Layout::Flat, [2, 1, 4, 4]), Some(v.clone()));
        // Its own shape is not another shape: OHWI reads it.
        assert_eq!(permute(&src, Layout::Flat, [2, 1, 1, 16]), None);
        // A different count of outputs is not this kernel.
        assert_eq!(permute(&src, Layout::Flat, [4, 1, 2, 4]), None);
    }
}
