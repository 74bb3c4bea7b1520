//! The coefficient locator (PoC 12A): where, if anywhere, do an ONNX model's initializers lie in
//! an NBG?
//!
//! Each initializer with at least `MIN_ELEMENTS` elements is encoded under every transform of a
//! finite, recorded registry (element order x encoding) and searched for as one exact byte
//! string in the admitted sections only (v2 COEF_DATA, NN, TP, DYNAIO; v1 `coeff_data`, `nn`,
//! `tp`, `dyna_io`). The registry is a document with its own SHA-256, reported with every
//! result, so a search can never broaden silently. A non-match is evidence, not an error.

use crate::digest::Hash256;
use crate::exit::Exit;
use crate::lab::kernel_match;
use crate::lab::layers::{Layers, Operators};
use crate::lab::mapping::numeric::{f32_to_bf16, f32_to_f16};
use crate::nbg::failure::Failure;
use crate::nbg::family::{Family, NbgFamily};
use crate::nbg::format::section;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::{Graph, parse};
use crate::onnx::audit::{self, Limits};
use crate::onnx::proto::{GraphProto, TensorProto, data_type};
use serde::Serialize;
use serde_json::json;

/// Schema tag of the locator's JSON document.
pub const SCHEMA: &str = "nbg-locate/1";
/// ONNX `TensorProto.DataType` values of the quantized element types.
const UINT8: i32 = 2;
const INT8: i32 = 3;
/// Initializers with fewer elements are skipped: short byte strings match by chance.
pub const MIN_ELEMENTS: usize = 8;
/// Most initializers searched; the rest are counted.
pub const MAX_INITIALIZERS: usize = 4096;
/// Most occurrences listed per transform (all are counted).
pub const MAX_OFFSETS: usize = 16;
/// v2 section types searched.
pub const ADMITTED_V2: [u32; 4] = [
    section::COEF_DATA,
    section::NN,
    section::TP,
    section::DYNAIO,
];
/// v1 tables searched.
pub const ADMITTED_V1: [&str; 4] = ["coeff_data", "nn", "tp", "dyna_io"];

/// Element orders: as stored (OIHW weights, NCHW data), for 4-D tensors the channels-last
/// permutation (OHWI / NHWC), for 2-D tensors the transpose (a MatMul's [K, N] constant as the
/// fully connected layer's [N, K] weights).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// The initializer's elements in ONNX order (OIHW weights, NCHW data).
    AsStored,
    /// Channels-last order (OHWI), for 4-D tensors.
    Ohwi,
    /// The transpose, for 2-D tensors.
    Transposed,
}

/// Element encodings; the quantized ones use per-tensor affine parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// The initializer's own bytes (fp32 little-endian, or int8/uint8 as stored).
    Raw,
    /// IEEE 754 half precision, little-endian.
    Fp16,
    /// bfloat16 (the high half of f32), little-endian.
    Bf16,
    /// int8, scale max|x|/127, zero point 0.
    Int8Symmetric,
    /// uint8, scale (max - min)/255 over a range that includes 0, zero point round(-min/scale).
    Uint8MinMax,
    /// int8 or uint8 with the scale and zero point of the ONNX QuantizeLinear that consumes it.
    QuantizeLinear,
}

/// Every element order tried.
pub const ORDERS: [Order; 3] = [Order::AsStored, Order::Ohwi, Order::Transposed];
/// Every encoding tried.
pub const ENCODINGS: [Encoding; 6] = [
    Encoding::Raw,
    Encoding::Fp16,
    Encoding::Bf16,
    Encoding::Int8Symmetric,
    Encoding::Uint8MinMax,
    Encoding::QuantizeLinear,
];

fn name<T: Serialize>(v: T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The registry as a document: what is searched, where, and how values are rounded.
pub fn registry() -> serde_json::Value {
    json!({
        "orders": ORDERS.map(name),
        "encodings": ENCODINGS.map(name),
        "rounding": "nearest, ties to even; quantized values saturate",
        "min_elements": MIN_ELEMENTS,
        "admitted_v2": ADMITTED_V2.map(|k| section::name(k).unwrap_or("?")),
        "admitted_v1": ADMITTED_V1,
        "match": "the whole encoded tensor as one contiguous exact byte string",
    })
}

/// SHA-256 of the transform registry's canonical JSON: a report names the registry it used.
pub fn registry_sha256() -> Hash256 {
    Hash256::of(crate::canonical::canonical(&registry()).as_bytes())
}

/// One place in the NBG where a transformed initializer was found.
#[derive(Clone, Debug, Serialize)]
pub struct Occurrence {
    /// File offset of the first byte.
    pub file_offset: u64,
    /// The admitted region holding it.
    pub owner: String,
    /// Offset from the region's start.
    pub offset_in_owner: u64,
}

/// The occurrences of one transform (order x encoding).
#[derive(Clone, Debug, Serialize)]
pub struct Match {
    /// `order/encoding`.
    pub transform: String,
    /// How many occurrences (all are counted; at most `MAX_OFFSETS` listed).
    pub count: u64,
    /// The first occurrences, in file order.
    pub occurrences: Vec<Occurrence>,
    /// The encoded bytes take fewer than two distinct values: a match says little.
    pub degenerate: bool,
    /// Length of the encoded tensor.
    pub bytes: u64,
}

/// The locator's verdict on one initializer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// At least one transform occurs in an admitted region.
    Found,
    /// No transform occurs.
    NotFound,
    /// Not searched (too few elements, an unsupported type, or beyond `MAX_INITIALIZERS`); `reason` says which.
    Skipped,
}

impl Outcome {
    /// Its name in the report (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Found => "found",
            Outcome::NotFound => "not-found",
            Outcome::Skipped => "skipped",
        }
    }
}

/// One initializer of the model and where its bytes occur in the NBG.
#[derive(Clone, Debug, Serialize)]
pub struct Initializer {
    /// The initializer's name.
    pub name: String,
    /// The ONNX element type name (`FLOAT`, `INT8`, ...).
    pub data_type: String,
    /// Its dimensions.
    pub dims: Vec<i64>,
    /// Its element count.
    pub elements: u64,
    /// The verdict.
    pub result: Outcome,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Transforms tried (0 when skipped).
    pub transforms_tried: usize,
    /// The transforms that occur, with their places.
    pub matches: Vec<Match>,
}

/// A payload the locator searches (a v2 section or v1 table of an admitted kind).
#[derive(Clone, Debug, Serialize)]
pub struct Region {
    /// The payload's name.
    pub owner: String,
    /// File offset of its first byte.
    pub start: u64,
    /// One past its last byte.
    pub end: u64,
}

/// Why a locator run stops before any initializer is searched.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    /// The model file could not be read at all (`ONNX_MODEL_UNREADABLE`; the message names
    /// the file).
    #[error("{}: {}", .refusal.code, .refusal.message)]
    ModelUnreadable {
        /// The model file as given.
        model: std::path::PathBuf,
        /// The refusal `audit::read_model` gave.
        refusal: crate::onnx::refusal::Refusal,
    },
    /// The NBG file could not be read.
    #[error(transparent)]
    NbgUnreadable(#[from] crate::files::InputError),
    /// The ONNX audit refuses the model (its `ONNX_*` code).
    #[error("{}: {}", .0.code, .0.message)]
    Model(crate::onnx::refusal::Refusal),
    /// The NBG does not parse.
    #[error("{}: at 0x{:x}: {}", .0.code, .0.offset, .0.message)]
    Parse(Failure),
    /// The NBG parses but its ledger cannot be proven.
    #[error("{}: {}", .0.code, .0.message)]
    Ledger(Failure),
    /// `--layers` with tensors and no model graph to take the layers from.
    #[error("--layers reads an ONNX model's graph; with an .npz, give its layers with --ops")]
    NoModelGraph,
    /// The operators file (`--ops`) is not an `.ops.json`.
    #[error("{}: not an operators file: {message}", .path.display())]
    Ops {
        /// The file as given.
        path: std::path::PathBuf,
        /// Why it does not read.
        message: String,
    },
}

impl LocateError {
    /// An unreadable input is a usage or I/O problem; a refused model or an invalid NBG is a
    /// failed check.
    pub fn exit_status(&self) -> Exit {
        match self {
            LocateError::ModelUnreadable { .. }
            | LocateError::NbgUnreadable(_)
            | LocateError::Ops { .. }
            | LocateError::NoModelGraph => Exit::Usage,
            LocateError::Model(_) | LocateError::Parse(_) | LocateError::Ledger(_) => Exit::Failure,
        }
    }
}

/// The admitted regions of a graph, by owner name.
fn admitted(g: &Graph<'_>) -> Vec<Region> {
    let family = g.family();
    let admitted = |name: &str| match family {
        Family::V1 => ADMITTED_V1.contains(&name),
        Family::V2 => ADMITTED_V2.iter().any(|&k| section::name(k) == Some(name)),
    };
    g.payloads()
        .into_iter()
        .filter(|p| admitted(p.name) && p.size > 0)
        .map(|p| Region {
            owner: p.name.to_string(),
            start: p.offset,
            end: p.end(),
        })
        .collect()
}

/// Element values of an initializer: f32 values, or the raw int8/uint8/int32 bytes with the
/// element width.
enum Values {
    F32(Vec<f32>),
    Bytes(Vec<u8>, usize),
}

/// Why an initializer's values are not searched (a skipped row's reason).
#[derive(Debug, thiserror::Error)]
enum ValuesError {
    /// The stored values do not match the element count.
    #[error("{found} values for {elements} elements")]
    Count { found: usize, elements: u64 },
    /// The element type is not float, uint8, int8 or int32; its ONNX name.
    #[error("data type {0} is outside the registry (float, uint8, int8, int32)")]
    DataType(&'static str),
}

fn values(t: &TensorProto, elements: u64) -> Result<Values, ValuesError> {
    let dt = t.data_type.unwrap_or(0);
    let raw = t.raw_data.as_deref();
    match dt {
        data_type::FLOAT => {
            let v: Vec<f32> = match raw {
                Some(r) => r
                    .chunks_exact(4)
                    // Invariant: `chunks_exact(4)` yields 4-byte chunks only.
                    .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                    .collect(),
                None => t.float_data.clone(),
            };
            if v.len() as u64 != elements {
                return Err(ValuesError::Count {
                    found: v.len(),
                    elements,
                });
            }
            Ok(Values::F32(v))
        }
        UINT8 | INT8 => {
            let v: Vec<u8> = match raw {
                Some(r) => r.to_vec(),
                None => t.int32_data.iter().map(|&x| x as u8).collect(),
            };
            if v.len() as u64 != elements {
                return Err(ValuesError::Count {
                    found: v.len(),
                    elements,
                });
            }
            Ok(Values::Bytes(v, 1))
        }
        data_type::INT32 => {
            let v: Vec<u8> = match raw {
                Some(r) => r.to_vec(),
                None => t.int32_data.iter().flat_map(|x| x.to_le_bytes()).collect(),
            };
            if v.len() as u64 != elements * 4 {
                return Err(ValuesError::Count {
                    found: v.len() / 4,
                    elements,
                });
            }
            Ok(Values::Bytes(v, 4))
        }
        _ => Err(ValuesError::DataType(
            data_type::name(dt).unwrap_or("unknown"),
        )),
    }
}

/// [R, C] -> [C, R] for a 2-D tensor of `n`-byte elements.
fn transposed(bytes: &[u8], dims: &[i64], n: usize) -> Option<Vec<u8>> {
    let [r, c] = <[i64; 2]>::try_from(dims).ok()?.map(|d| d as usize);
    let mut out = Vec::with_capacity(bytes.len());
    for cc in 0..c {
        for rr in 0..r {
            let at = (rr * c + cc) * n;
            out.extend_from_slice(bytes.get(at..at + n)?);
        }
    }
    Some(out)
}

/// OIHW -> OHWI (also NCHW -> NHWC) for a 4-D tensor of `n`-byte elements.
fn ohwi(bytes: &[u8], dims: &[i64], n: usize) -> Option<Vec<u8>> {
    let [o, i, h, w] = <[i64; 4]>::try_from(dims).ok()?.map(|d| d as usize);
    let mut out = Vec::with_capacity(bytes.len());
    for oo in 0..o {
        for hh in 0..h {
            for ww in 0..w {
                for ii in 0..i {
                    let at = (((oo * i + ii) * h + hh) * w + ww) * n;
                    out.extend_from_slice(bytes.get(at..at + n)?);
                }
            }
        }
    }
    Some(out)
}

fn round_even(x: f32) -> f32 {
    x.round_ties_even()
}

/// The scale and zero point of the QuantizeLinear node consuming `name`, when both are
/// initializers; (scale, zero point, signed).
fn quantize_linear(g: &GraphProto, name: &str) -> Option<(f32, i32, bool)> {
    let node = g.node.iter().find(|n| {
        n.op_type.as_deref() == Some("QuantizeLinear")
            && n.input.first().map(String::as_str) == Some(name)
    })?;
    let init = |n: &str| g.initializer.iter().find(|t| t.name.as_deref() == Some(n));
    let scale = init(node.input.get(1)?)?;
    let scale = match values(scale, 1).ok()? {
        Values::F32(v) => v[0],
        Values::Bytes(..) => return None,
    };
    let (zp, signed) = match node.input.get(2) {
        None => (0, false),
        Some(z) => {
            let t = init(z)?;
            let signed = t.data_type == Some(INT8);
            match values(t, 1).ok()? {
                Values::Bytes(b, 1) => (
                    if signed {
                        b[0] as i8 as i32
                    } else {
                        b[0] as i32
                    },
                    signed,
                ),
                _ => return None,
            }
        }
    };
    (scale > 0.0 && scale.is_finite()).then_some((scale, zp, signed))
}

/// Affine quantization with saturation, as bytes.
fn quantize(v: &[f32], scale: f32, zp: i32, signed: bool) -> Vec<u8> {
    let (lo, hi) = if signed { (-128, 127) } else { (0, 255) };
    v.iter()
        .map(|&x| {
            let q = (round_even(x / scale) as i64 + i64::from(zp)).clamp(lo, hi);
            q as u8
        })
        .collect()
}

/// Encoded bytes of the values under `encoding` (elements in stored order), or `None` when the
/// encoding does not apply (no QuantizeLinear, an all-zero tensor, bytes not floats).
fn encode(v: &Values, encoding: Encoding, q: Option<(f32, i32, bool)>) -> Option<(Vec<u8>, usize)> {
    match (v, encoding) {
        (Values::Bytes(b, n), Encoding::Raw) => Some((b.clone(), *n)),
        (Values::Bytes(..), _) => None,
        (Values::F32(f), Encoding::Raw) => {
            Some((f.iter().flat_map(|x| x.to_le_bytes()).collect(), 4))
        }
        (Values::F32(f), Encoding::Fp16) => Some((
            f.iter()
                .flat_map(|&x| f32_to_f16(x).to_le_bytes())
                .collect(),
            2,
        )),
        (Values::F32(f), Encoding::Bf16) => Some((
            f.iter()
                .flat_map(|&x| f32_to_bf16(x).to_le_bytes())
                .collect(),
            2,
        )),
        (Values::F32(f), Encoding::Int8Symmetric) => {
            let m = f.iter().fold(0f32, |m, x| m.max(x.abs()));
            (m > 0.0 && m.is_finite()).then(|| (quantize(f, m / 127.0, 0, true), 1))
        }
        (Values::F32(f), Encoding::Uint8MinMax) => {
            let lo = f.iter().fold(0f32, |m, &x| m.min(x));
            let hi = f.iter().fold(0f32, |m, &x| m.max(x));
            let scale = (hi - lo) / 255.0;
            (scale > 0.0 && scale.is_finite()).then(|| {
                let zp = round_even(-lo / scale).clamp(0.0, 255.0) as i32;
                (quantize(f, scale, zp, false), 1)
            })
        }
        (Values::F32(f), Encoding::QuantizeLinear) => {
            q.map(|(scale, zp, signed)| (quantize(f, scale, zp, signed), 1))
        }
    }
}

/// Every occurrence of `needle` in `hay`, at most `MAX_OFFSETS` listed. Knuth-Morris-Pratt:
/// linear in `hay` plus `needle` whatever the bytes (an all-zero tensor in a zero-filled
/// section costs no more than any other).
fn find_all(hay: &[u8], needle: &[u8]) -> (u64, Vec<u64>) {
    let (mut count, mut listed) = (0u64, Vec::new());
    if needle.is_empty() || needle.len() > hay.len() {
        return (0, listed);
    }
    // fail[i]: length of the longest proper border of needle[..=i].
    let mut fail = vec![0usize; needle.len()];
    let mut k = 0;
    for i in 1..needle.len() {
        while k > 0 && needle[i] != needle[k] {
            k = fail[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut k = 0;
    for (i, &b) in hay.iter().enumerate() {
        while k > 0 && b != needle[k] {
            k = fail[k - 1];
        }
        if b == needle[k] {
            k += 1;
        }
        if k == needle.len() {
            count += 1;
            if listed.len() < MAX_OFFSETS {
                listed.push((i + 1 - k) as u64);
            }
            k = fail[k - 1];
        }
    }
    (count, listed)
}

/// Where the layers the NN commands are checked against come from.
#[derive(Clone, Debug)]
pub enum LayerSource {
    /// No layer check.
    None,
    /// An operators file (`--ops`).
    Ops(Operators),
    /// The ONNX model's own graph (`--layers`).
    Model,
}

impl LayerSource {
    /// The operators to check against: the file's, or the ONNX `model`'s own graph (tensors
    /// without a model have none to give).
    fn operators(
        &self,
        model: Option<&crate::onnx::proto::ModelProto>,
    ) -> Result<Option<std::borrow::Cow<'_, Operators>>, LocateError> {
        use std::borrow::Cow;
        match (self, model) {
            (LayerSource::None, _) => Ok(None),
            (LayerSource::Ops(o), _) => Ok(Some(Cow::Borrowed(o))),
            (LayerSource::Model, Some(m)) => Operators::of_onnx(m)
                .map(|o| Some(Cow::Owned(o)))
                .map_err(LocateError::Model),
            (LayerSource::Model, None) => Err(LocateError::NoModelGraph),
        }
    }
}

/// Locate every initializer of `model` (ONNX bytes) in `nbg`, and check the NN commands against
/// the `layers` given.
pub fn locate(model: &[u8], nbg: &[u8], layers: &LayerSource) -> Result<Located, LocateError> {
    let limits = Limits::default();
    let m = audit::decode(model, &limits).map_err(LocateError::Model)?;
    let ops = layers.operators(Some(&m))?;
    let graph = m.graph.as_ref().ok_or_else(|| {
        // `decode` refuses a model without a graph first; this keeps the refusal if it did not.
        LocateError::Model(crate::onnx::refusal::Refusal::new(
            crate::onnx::refusal::RefusalCode::GraphMissing,
            "the model has no graph",
        ))
    })?;
    let g = parse(nbg).map_err(LocateError::Parse)?;
    // The ledger proves the admitted regions are owned as the parse says.
    NbgImage::new(&g).map_err(LocateError::Ledger)?;
    let regions = admitted(&g);
    let mut rows = Vec::new();
    for t in graph.initializer.iter().take(MAX_INITIALIZERS) {
        let dims = t.dims.clone();
        let elements = dims.iter().try_fold(1u64, |n, &d| {
            u64::try_from(d).ok().and_then(|d| n.checked_mul(d))
        });
        let mut row = Initializer {
            name: t.name.clone().unwrap_or_default(),
            data_type: data_type::name(t.data_type.unwrap_or(0))
                .unwrap_or("unknown")
                .to_string(),
            dims: dims.clone(),
            elements: elements.unwrap_or(0),
            result: Outcome::Skipped,
            reason: None,
            transforms_tried: 0,
            matches: Vec::new(),
        };
        let Some(elements) = elements.filter(|&e| e <= limits.tensor_bytes) else {
            row.reason = Some("dimensions out of bounds".into());
            rows.push(row);
            continue;
        };
        if (elements as usize) < MIN_ELEMENTS {
            row.reason = Some(format!("fewer than {MIN_ELEMENTS} elements"));
            rows.push(row);
            continue;
        }
        let v = match values(t, elements) {
            Ok(v) => v,
            Err(e) => {
                row.reason = Some(e.to_string());
                rows.push(row);
                continue;
            }
        };
        let q = quantize_linear(graph, &row.name);
        for order in ORDERS {
            if (order == Order::Ohwi && dims.len() != 4)
                || (order == Order::Transposed && dims.len() != 2)
            {
                continue;
            }
            for encoding in ENCODINGS {
                let Some((stored, n)) = encode(&v, encoding, q) else {
                    continue;
                };
                let needle = match order {
                    Order::AsStored => stored,
                    Order::Ohwi => match ohwi(&stored, &dims, n) {
                        Some(b) => b,
                        None => continue,
                    },
                    Order::Transposed => match transposed(&stored, &dims, n) {
                        Some(b) => b,
                        None => continue,
                    },
                };
                row.transforms_tried += 1;
                let mut distinct = [false; 256];
                needle.iter().for_each(|&b| distinct[b as usize] = true);
                let mut found = Match {
                    transform: format!("{}/{}", name(order), name(encoding)),
                    count: 0,
                    occurrences: Vec::new(),
                    degenerate: distinct.iter().filter(|&&d| d).count() < 2,
                    bytes: needle.len() as u64,
                };
                for r in &regions {
                    let hay = &nbg[r.start as usize..r.end as usize];
                    let (count, listed) = find_all(hay, &needle);
                    found.count += count;
                    for at in listed {
                        if found.occurrences.len() < MAX_OFFSETS {
                            found.occurrences.push(Occurrence {
                                file_offset: r.start + at,
                                owner: r.owner.clone(),
                                offset_in_owner: at,
                            });
                        }
                    }
                }
                if found.count > 0 {
                    row.matches.push(found);
                }
            }
        }
        row.result = if row.matches.is_empty() {
            Outcome::NotFound
        } else {
            Outcome::Found
        };
        rows.push(row);
    }
    let count = |o: Outcome| rows.iter().filter(|r| r.result == o).count();
    let summary = Counts {
        found: count(Outcome::Found),
        not_found: count(Outcome::NotFound),
        skipped: count(Outcome::Skipped),
    };
    let coverage = coverage(&regions, &rows);
    Ok(Located {
        schema: SCHEMA,
        model: ModelFacts {
            sha256: Hash256::of(model),
            initializers: Some(graph.initializer.len()),
            initializers_searched: Some(graph.initializer.len().min(MAX_INITIALIZERS)),
            tensors: None,
        },
        graph: GraphFacts {
            format: g.format(),
            sha256: g.file().sha256,
            admitted: Some(regions),
            coverage: Some(coverage),
        },
        registry: Some(Registry {
            registry: registry(),
            sha256: registry_sha256(),
        }),
        initializers: Some(rows),
        decoded: decoded_section(&g, &kernel_match::of_initializers(graph)),
        summary: Some(summary),
        layers: None,
    }
    .with_layers(&g, ops.as_deref()))
}

/// What `nbg locate` reports: the initializers found by the transform registry (ONNX models)
/// and the source tensors matched to the decoded coefficients.
#[derive(Clone, Debug, Serialize)]
pub struct Located {
    /// `SCHEMA`.
    pub schema: &'static str,
    /// The source model or tensor archive.
    pub model: ModelFacts,
    /// The graph searched.
    pub graph: GraphFacts,
    /// The transform registry used (ONNX models only).
    #[serde(flatten)]
    pub registry: Option<Registry>,
    /// Each initializer and where its bytes occur (ONNX models only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initializers: Option<Vec<Initializer>>,
    /// The source tensors against the decoded kernels and biases.
    pub decoded: Decoded,
    /// Initializers per outcome (ONNX models only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Counts>,
    /// Each NN command against the source model's layer its kernel pairs it with (`--ops`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers: Option<Layers>,
}

impl Located {
    /// The NN commands of `g` (the graph searched) against `ops`, paired through the decoded
    /// matches, when an operators file is given.
    fn with_layers(mut self, g: &Graph<'_>, ops: Option<&Operators>) -> Self {
        self.layers = ops.map(|o| {
            crate::lab::layers::check(g.coefficient_view().commands, &self.decoded.tensors, o)
        });
        self
    }

    /// Whether a paired NN command disagrees with its layer.
    pub fn disagrees(&self) -> bool {
        self.layers.as_ref().is_some_and(|l| l.disagree > 0)
    }

    /// The `--json` document (sorted keys).
    pub fn to_json(&self) -> serde_json::Value {
        // Invariant: every member derives `Serialize` over strings, integers, floats from
        // finite fits, hashes and the registry's JSON, so it always serializes.
        serde_json::to_value(self).expect("locate report serializes")
    }
}

/// The source a locator run matched.
#[derive(Clone, Debug, Serialize)]
pub struct ModelFacts {
    /// SHA-256 of the model or archive bytes.
    pub sha256: Hash256,
    /// Initializers in the ONNX model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initializers: Option<usize>,
    /// Initializers searched (at most `MAX_INITIALIZERS`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initializers_searched: Option<usize>,
    /// Tensors in the `.npz` archive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensors: Option<usize>,
}

/// The graph a locator run searched.
#[derive(Clone, Debug, Serialize)]
pub struct GraphFacts {
    /// `nbg-v1` or `nbg-v2`.
    pub format: &'static str,
    /// Its SHA-256.
    pub sha256: Hash256,
    /// The regions the registry searched (ONNX models only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admitted: Option<Vec<Region>>,
    /// How much of each the found initializers explain (ONNX models only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Vec<Coverage>>,
}

/// The transform registry a report names.
#[derive(Clone, Debug, Serialize)]
pub struct Registry {
    /// Its canonical JSON (`registry()`).
    pub registry: serde_json::Value,
    /// SHA-256 of that JSON.
    #[serde(rename = "registry_sha256")]
    pub sha256: Hash256,
}

/// Initializers per outcome.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Counts {
    /// `Outcome::Found`.
    pub found: usize,
    /// `Outcome::NotFound`.
    pub not_found: usize,
    /// `Outcome::Skipped`.
    pub skipped: usize,
}

/// The source tensors matched to the kernels and biases decoded from a graph's coefficient
/// buffers (`kernel_match`).
#[derive(Clone, Debug, Serialize)]
pub struct Decoded {
    /// NN weight buffers.
    pub buffers: usize,
    /// Entries no NN command reads, read as plain arrays.
    pub plain_entries: usize,
    /// Buffers whose streams decode into kernels.
    pub buffers_decoded: usize,
    /// Buffers whose streams do not decode.
    pub buffers_refused: usize,
    /// VIP8000 zero-run buffers, their kernels decoded.
    pub zero_run_buffers: usize,
    /// TP commands' fully-connected parts, decoded.
    pub tp_parts: usize,
    /// One per source tensor.
    pub tensors: Vec<kernel_match::Row>,
    /// Elements exact and consistent over all tensors.
    pub summary: kernel_match::Summary,
}

fn decoded_section(g: &Graph<'_>, sources: &[kernel_match::Source]) -> Decoded {
    let view = g.coefficient_view();
    let c = crate::nbg::coefficients::of(&view);
    let plain = crate::nbg::coefficients::plain::of(&view);
    let (tensors, summary) = kernel_match::matches(sources, &c, &plain);
    Decoded {
        buffers: c.buffers.len(),
        plain_entries: plain.len(),
        buffers_decoded: c.buffers.iter().filter(|b| b.weights.is_some()).count(),
        buffers_refused: c.refused.len(),
        zero_run_buffers: c.zero_run.len(),
        tp_parts: c.tp.iter().map(|b| b.parts.len()).sum(),
        tensors,
        summary,
    }
}

/// Locate every tensor of an `.npz` archive (named source tensors, such as a TFLite model's
/// constants) among the kernels and biases decoded from `nbg`.
pub fn locate_npz(npz: &[u8], nbg: &[u8], layers: &LayerSource) -> Result<Located, LocateError> {
    let ops = layers.operators(None)?;
    let limits = Limits::default();
    let tensors = crate::onnx::npz::read(npz, limits.tensor_bytes).map_err(LocateError::Model)?;
    let sources: Vec<kernel_match::Source> = tensors
        .iter()
        .filter_map(kernel_match::Source::of)
        .collect();
    let g = parse(nbg).map_err(LocateError::Parse)?;
    NbgImage::new(&g).map_err(LocateError::Ledger)?;
    Ok(Located {
        schema: SCHEMA,
        model: ModelFacts {
            sha256: Hash256::of(npz),
            initializers: None,
            initializers_searched: None,
            tensors: Some(tensors.len()),
        },
        graph: GraphFacts {
            format: g.format(),
            sha256: g.file().sha256,
            admitted: None,
            coverage: None,
        },
        registry: None,
        initializers: None,
        decoded: decoded_section(&g, &sources),
        summary: None,
        layers: None,
    }
    .with_layers(&g, ops.as_deref()))
}

/// How much of one admitted region the found initializers explain.
#[derive(Clone, Debug, Serialize)]
pub struct Coverage {
    /// The region's name.
    pub owner: String,
    /// Its size.
    pub bytes: u64,
    /// Bytes inside a listed, non-degenerate occurrence of some initializer.
    pub covered_bytes: u64,
    /// The initializers found there (with their transforms), in model order.
    pub found: Vec<String>,
}

/// Per admitted region, the bytes the listed non-degenerate occurrences cover: what is left
/// is content the registry's transforms do not explain (a COEF_DATA of computed tables, a
/// packed kernel layout).
fn coverage(regions: &[Region], rows: &[Initializer]) -> Vec<Coverage> {
    regions
        .iter()
        .map(|r| {
            let mut covered = vec![false; (r.end - r.start) as usize];
            let mut found = Vec::new();
            for row in rows {
                for m in row.matches.iter().filter(|m| !m.degenerate) {
                    let mut here = false;
                    for o in m.occurrences.iter().filter(|o| o.owner == r.owner) {
                        let s = o.offset_in_owner as usize;
                        let e = (s + m.bytes as usize).min(covered.len());
                        covered[s..e].iter_mut().for_each(|c| *c = true);
                        here = true;
                    }
                    if here {
                        found.push(format!("{} ({})", row.name, m.transform));
                    }
                }
            }
            Coverage {
                owner: r.owner.clone(),
                bytes: r.end - r.start,
                covered_bytes: covered.iter().filter(|&&c| c).count() as u64,
                found,
            }
        })
        .collect()
}

/// The operators file at `path` (`--ops`), read as a regular file.
pub fn read_ops(path: &std::path::Path) -> Result<Operators, LocateError> {
    let bytes = crate::files::read_regular(path)?;
    serde_json::from_slice(&bytes).map_err(|e| LocateError::Ops {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The locator on the files at `model` and `nbg`: the model read through the audit's bounded
/// reader, the NBG as a regular file; the NN commands checked against `layers`.
pub fn locate_files(
    model: &std::path::Path,
    nbg: &std::path::Path,
    layers: &LayerSource,
) -> Result<Located, LocateError> {
    if model.extension().is_some_and(|e| e == "npz") {
        let a = crate::files::read_regular(model)?;
        let n = crate::files::read_regular(nbg)?;
        return locate_npz(&a, &n, layers);
    }
    let m =
        audit::read_model(model, &Limits::default()).map_err(|r| LocateError::ModelUnreadable {
            model: model.to_path_buf(),
            refusal: r.0,
        })?;
    let n = crate::files::read_regular(nbg)?;
    locate(&m, &n, layers)
}

/// Seed of the synthetic pair's weights.
pub const PAIR_SEED: u64 = 0x12a;
/// Where the builder places the weights in the pair's COEF_DATA payload.
pub const PAIR_OFFSET: usize = 64;

/// The test pair nobody tuned: a Conv model whose [8, 3, 3, 3] weight and [8] bias come from
/// SplitMix64 (uniform in [-1, 1)), and a v2 graph the builder writes with the weight placed in
/// COEF_DATA at `PAIR_OFFSET` as fp16 in OHWI order (the bias is not placed).
pub fn synthetic_pair() -> Result<(Vec<u8>, Vec<u8>), crate::lab::synth::BuildError> {
    use crate::lab::synth::{GraphSpec, Rng, TensorSpec};
    use crate::onnx::fixtures::{float_tensor, model, node, tensor_value};
    use prost::Message;
    let mut rng = Rng::new(PAIR_SEED);
    let mut uniform = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| ((rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
            .collect()
    };
    let (w, b) = (uniform(8 * 3 * 3 * 3), uniform(8));
    let dims = [8i64, 3, 3, 3];
    let x = [Some(1), Some(3), Some(8), Some(8)];
    let y = [Some(1), Some(8), Some(6), Some(6)];
    let onnx = model(GraphProto {
        node: vec![node("Conv", "conv", &["x", "w", "b"], &["y"], vec![])],
        name: Some("locate_pair".into()),
        initializer: vec![float_tensor("w", &dims, &w), float_tensor("b", &[8], &b)],
        input: vec![tensor_value("x", data_type::FLOAT, &x, &[])],
        output: vec![tensor_value("y", data_type::FLOAT, &y, &[])],
        ..Default::default()
    })
    .encode_to_vec();
    let stored: Vec<u8> = w
        .iter()
        .flat_map(|&v| f32_to_f16(v).to_le_bytes())
        .collect();
    // Invariant: `dims` is the 4-D constant above, the only shape `ohwi` refuses is not 4-D.
    let placed = ohwi(&stored, &dims, 2).expect("4-D");
    let spec = GraphSpec {
        target: 0x1000_000e,
        network_name: "locate_pair".into(),
        inputs: vec![TensorSpec::new("x", &[8, 8, 3, 1], 1)],
        outputs: vec![TensorSpec::new("y", &[6, 6, 8, 1], 1)],
        layers: 4,
        operations: 5,
        ppu_bytes: 256,
        loadstate_bytes: 320,
        coef_bytes: 1024,
        memory_pool_bytes: 161_280,
        vip_sram_bytes: 262_144,
        dynaio: None,
    };
    let mut layout = spec.layout(&mut Rng::new(PAIR_SEED))?;
    let coef = layout
        .sections
        .iter_mut()
        .find(|s| s.kind == section::COEF_DATA)
        // Invariant: `GraphSpec::layout` always emits COEF_DATA (`coef_bytes` is 1024 here).
        .expect("coefficients");
    coef.payload[PAIR_OFFSET..PAIR_OFFSET + placed.len()].copy_from_slice(&placed);
    Ok((onnx, layout.emit()?))
}

#[cfg(test)]
mod tests {
    use super::find_all;

    #[test]
    fn find_all_counts_overlapping_occurrences_in_linear_time() {
        assert_eq!(find_all(b"aaaa", b"aa"), (3, vec![0, 1, 2]));
        assert_eq!(find_all(b"abcabcab", b"cab"), (2, vec![2, 5]));
        assert_eq!(find_all(b"abc", b"abcd"), (0, vec![]));
        assert_eq!(find_all(b"aabaabaaab", b"aaab"), (1, vec![6]));
        let zeros = vec![0u8; 1 << 20];
        let (n, listed) = find_all(&zeros, &zeros[..1 << 19]);
        assert_eq!(n, (1 << 19) + 1);
        assert_eq!(listed.len(), super::MAX_OFFSETS);
    }
}
