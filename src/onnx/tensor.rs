//! Tensors at the run boundary: their element types, bytes and the facts evidence keeps.
//! A leaf of the ONNX layer: the archive reader and the session types both take them.

use crate::digest::Hash256;
use serde::Serialize;

/// Element types the boundary accepts (every numeric tensor type ONNX Runtime's CPU provider
/// takes), with their ONNX code and NPY descriptor. NumPy has no bfloat16: it travels as the
/// two-byte void `|V2` (what `ml_dtypes` writes) and is accepted where the model declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Dtype {
    /// 32-bit IEEE float (ONNX FLOAT, NPY `<f4`).
    F32,
    /// 64-bit IEEE float (ONNX DOUBLE, NPY `<f8`).
    F64,
    /// 16-bit IEEE float (ONNX FLOAT16, NPY `<f2`).
    F16,
    /// bfloat16 (ONNX BFLOAT16, NPY `|V2`).
    BF16,
    /// Signed 8-bit integer (ONNX INT8, NPY `|i1`).
    I8,
    /// Signed 16-bit integer (ONNX INT16, NPY `<i2`).
    I16,
    /// Signed 32-bit integer (ONNX INT32, NPY `<i4`).
    I32,
    /// Signed 64-bit integer (ONNX INT64, NPY `<i8`).
    I64,
    /// Unsigned 8-bit integer (ONNX UINT8, NPY `|u1`).
    U8,
    /// Unsigned 16-bit integer (ONNX UINT16, NPY `<u2`).
    U16,
    /// Unsigned 32-bit integer (ONNX UINT32, NPY `<u4`).
    U32,
    /// Unsigned 64-bit integer (ONNX UINT64, NPY `<u8`).
    U64,
    /// Boolean, one byte of 0 or 1 (ONNX BOOL, NPY `|b1`).
    Bool,
    /// Strings, as NumPy's fixed-width `<U{width}`: `width` UTF-32LE code units per element,
    /// NUL-padded. ONNX Runtime receives them as UTF-8 strings (trailing NULs removed).
    Str(u32),
}

impl Dtype {
    const ALL: [(Dtype, i32, &'static str, usize); 13] = [
        (Dtype::F32, 1, "<f4", 4),
        (Dtype::U8, 2, "|u1", 1),
        (Dtype::I8, 3, "|i1", 1),
        (Dtype::U16, 4, "<u2", 2),
        (Dtype::I16, 5, "<i2", 2),
        (Dtype::I32, 6, "<i4", 4),
        (Dtype::I64, 7, "<i8", 8),
        (Dtype::Bool, 9, "|b1", 1),
        (Dtype::F16, 10, "<f2", 2),
        (Dtype::F64, 11, "<f8", 8),
        (Dtype::U32, 12, "<u4", 4),
        (Dtype::U64, 13, "<u8", 8),
        (Dtype::BF16, 16, "|V2", 2),
    ];

    /// The fixed-size type of an ONNX element type (strings have no fixed width).
    pub fn from_onnx(code: i32) -> Option<Dtype> {
        Self::ALL.iter().find(|r| r.1 == code).map(|r| r.0)
    }

    pub(super) fn from_descr(d: &str) -> Option<Dtype> {
        if let Some(w) = d.strip_prefix("<U") {
            // At most 64 Ki code points per string.
            return w
                .parse::<u32>()
                .ok()
                .filter(|&w| (1..=65_536).contains(&w))
                .map(Dtype::Str);
        }
        // NumPy spells the two-byte void `<V2` or `|V2` depending on how it was made.
        let d = if d == "<V2" { "|V2" } else { d };
        Self::ALL.iter().find(|r| r.2 == d).map(|r| r.0)
    }

    fn row(self) -> Option<(Dtype, i32, &'static str, usize)> {
        Self::ALL.iter().find(|r| r.0 == self).copied()
    }

    /// The ONNX element type code (8 for strings).
    pub fn onnx(self) -> i32 {
        match self {
            Dtype::Str(_) => 8,
            d => d.row().map_or(0, |r| r.1),
        }
    }

    /// The NPY descriptor.
    pub fn descr(self) -> String {
        match self {
            Dtype::Str(w) => format!("<U{w}"),
            d => d.row().map_or("", |r| r.2).to_string(),
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::Str(w) => 4 * w as usize,
            d => d.row().map_or(0, |r| r.3),
        }
    }

    /// Every accepted element type.
    pub fn all() -> impl Iterator<Item = Dtype> {
        Self::ALL.iter().map(|r| r.0)
    }
}

/// One named tensor: C-order little-endian raw bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// The tensor's name: the graph input or output it is, the archive member without `.npy`.
    pub name: String,
    /// Its element type.
    pub dtype: Dtype,
    /// Its dimensions, outermost first.
    pub shape: Vec<u64>,
    /// Its elements, C order, little-endian, `elements() * dtype.size()` bytes.
    pub data: Vec<u8>,
}

/// What evidence records of a tensor: never its values.
#[derive(Clone, Debug, Serialize)]
pub struct TensorFacts {
    /// The tensor's name.
    pub name: String,
    /// Its NPY descriptor (`<f4`, ...).
    pub dtype: String,
    /// Its dimensions, outermost first.
    pub shape: Vec<u64>,
    /// SHA-256 of its raw element bytes (C order, little-endian).
    pub sha256: Hash256,
}

impl Tensor {
    /// An F32 tensor holding `values` (C order).
    pub fn from_f32(name: &str, shape: &[u64], values: &[f32]) -> Tensor {
        Tensor {
            name: name.into(),
            dtype: Dtype::F32,
            shape: shape.to_vec(),
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    /// An F32 tensor's elements; `None` for other types.
    pub fn f32_values(&self) -> Option<Vec<f32>> {
        (self.dtype == Dtype::F32).then(|| {
            self.data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
    }

    /// Every element as f64 (bool as 0/1; 64-bit integers beyond 2^53 round); `None` for
    /// strings.
    pub fn to_f64(&self) -> Option<Vec<f64>> {
        let d = &self.data;
        let n = self.dtype.size();
        if matches!(self.dtype, Dtype::Str(_)) || d.len() % n != 0 {
            return None;
        }
        Some(
            d.chunks_exact(n)
                .map(|c| match self.dtype {
                    Dtype::F32 => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    Dtype::F64 => {
                        f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                    }
                    Dtype::F16 => f64::from(f16_to_f32(u16::from_le_bytes([c[0], c[1]]))),
                    Dtype::BF16 => f64::from(f32::from_bits(
                        u32::from(u16::from_le_bytes([c[0], c[1]])) << 16,
                    )),
                    Dtype::I8 => f64::from(c[0] as i8),
                    Dtype::U8 | Dtype::Bool => f64::from(c[0]),
                    Dtype::I16 => f64::from(i16::from_le_bytes([c[0], c[1]])),
                    Dtype::U16 => f64::from(u16::from_le_bytes([c[0], c[1]])),
                    Dtype::I32 => f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    Dtype::U32 => f64::from(u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    Dtype::I64 => {
                        i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as f64
                    }
                    Dtype::U64 => {
                        u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as f64
                    }
                    Dtype::Str(_) => f64::NAN,
                })
                .collect(),
        )
    }

    /// A string tensor's elements (NUL padding removed); `None` for other types or invalid
    /// code points.
    pub fn strings(&self) -> Option<Vec<String>> {
        let Dtype::Str(w) = self.dtype else {
            return None;
        };
        self.data
            .chunks_exact(4 * w as usize)
            .map(|c| {
                c.chunks_exact(4)
                    .map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]]))
                    .take_while(|&u| u != 0)
                    .map(char::from_u32)
                    .collect::<Option<String>>()
            })
            .collect()
    }

    /// A string tensor, as fixed-width UTF-32LE of the longest element (at least 1).
    pub fn from_strings(name: &str, shape: &[u64], values: &[String]) -> Tensor {
        let w = values
            .iter()
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut data = Vec::with_capacity(values.len() * 4 * w);
        for s in values {
            let n = s.chars().count();
            data.extend(s.chars().flat_map(|c| u32::from(c).to_le_bytes()));
            data.extend(std::iter::repeat_n(0u8, 4 * (w - n)));
        }
        Tensor {
            name: name.into(),
            dtype: Dtype::Str(w as u32),
            shape: shape.to_vec(),
            data,
        }
    }

    /// The number of elements (the product of the dimensions; 1 for a scalar).
    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Whether every float value is finite (integers always are).
    pub fn finite(&self) -> bool {
        match self.dtype {
            Dtype::F32 => self
                .data
                .chunks_exact(4)
                .all(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite()),
            Dtype::F64 => self.data.chunks_exact(8).all(|c| {
                f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]).is_finite()
            }),
            // An all-ones exponent is infinity or NaN.
            Dtype::F16 => self
                .data
                .chunks_exact(2)
                .all(|c| u16::from_le_bytes([c[0], c[1]]) & 0x7c00 != 0x7c00),
            Dtype::BF16 => self
                .data
                .chunks_exact(2)
                .all(|c| u16::from_le_bytes([c[0], c[1]]) & 0x7f80 != 0x7f80),
            _ => true,
        }
    }

    /// What evidence records of it: name, descriptor, shape and the hash of its bytes.
    pub fn facts(&self) -> TensorFacts {
        TensorFacts {
            name: self.name.clone(),
            dtype: self.dtype.descr(),
            shape: self.shape.clone(),
            sha256: Hash256::of(&self.data),
        }
    }
}

/// IEEE half to single precision (exact: every half is a single).
pub(super) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = (h >> 10) & 0x1f;
    let frac = u32::from(h & 0x3ff);
    let bits = match exp {
        0 if frac == 0 => sign,
        0 => {
            // Subnormal: value = frac * 2^-24.
            let v = frac as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        0x1f => sign | 0x7f80_0000 | (frac << 13),
        e => sign | ((u32::from(e) + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}
