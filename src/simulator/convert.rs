//! Between float and the element types an NBG stores its inputs and outputs in, as nbg's parse
//! of the I/O record describes them (`vip_buffer_format_e` and `vip_buffer_quantize_format_e`):
//! affine asymmetric (real = scale x (q - zero point)), dynamic fixed point (real = q x 2^-p),
//! float16, bfloat16, float32 and plain integers. Quantizing rounds half to even and saturates
//! to the type's range; widening is exact for every type but int32 and uint32 (float32 has 24
//! bits of mantissa).

use crate::nbg::parse::IoRecord;
use crate::nbg::parse::Quantization;
use crate::onnx::npz::Dtype;
use serde::{Deserialize, Serialize};

/// An integer element type of a stored tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Int {
    /// Unsigned 8-bit.
    U8,
    /// Signed 8-bit.
    I8,
    /// Unsigned 16-bit.
    U16,
    /// Signed 16-bit.
    I16,
    /// Signed 32-bit.
    I32,
    /// Unsigned 32-bit.
    U32,
}

impl Int {
    fn range(self) -> (f64, f64) {
        match self {
            Int::U8 => (0.0, 255.0),
            Int::I8 => (-128.0, 127.0),
            Int::U16 => (0.0, 65_535.0),
            Int::I16 => (-32_768.0, 32_767.0),
            Int::I32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
            Int::U32 => (0.0, f64::from(u32::MAX)),
        }
    }

    fn dtype(self) -> Dtype {
        match self {
            Int::U8 => Dtype::U8,
            Int::I8 => Dtype::I8,
            Int::U16 => Dtype::U16,
            Int::I16 => Dtype::I16,
            Int::I32 => Dtype::I32,
            Int::U32 => Dtype::U32,
        }
    }

    /// The element's value (little-endian `bytes` of this type's size).
    fn get(self, b: &[u8]) -> f64 {
        match self {
            Int::U8 => f64::from(b[0]),
            Int::I8 => f64::from(b[0] as i8),
            Int::U16 => f64::from(u16::from_le_bytes([b[0], b[1]])),
            Int::I16 => f64::from(i16::from_le_bytes([b[0], b[1]])),
            Int::I32 => f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            Int::U32 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        }
    }

    /// `v` (already rounded and saturated) as little-endian bytes.
    fn put(self, v: f64, out: &mut Vec<u8>) {
        match self {
            Int::U8 => out.push(v as u8),
            Int::I8 => out.push(v as i8 as u8),
            Int::U16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
            Int::I16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
            Int::I32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
            Int::U32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
        }
    }

    /// Round half to even and saturate to the type.
    fn quantize(self, v: f64, out: &mut Vec<u8>) {
        let (lo, hi) = self.range();
        self.put(v.round_ties_even().clamp(lo, hi), out);
    }
}

/// How a tensor's elements are stored.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Storage {
    /// IEEE single.
    Float32,
    /// IEEE half.
    Float16,
    /// bfloat16.
    Bfloat16,
    /// Affine asymmetric: real = scale x (q - zero_point).
    Affine {
        /// The element type.
        int: Int,
        /// The scale.
        scale: f32,
        /// The zero point.
        zero_point: i32,
    },
    /// Dynamic fixed point: real = q x 2^-position.
    DynamicFixedPoint {
        /// The element type.
        int: Int,
        /// The fixed-point position.
        position: i32,
    },
    /// A plain integer.
    Integer {
        /// The element type.
        int: Int,
    },
}

/// Why a record's storage is not one `Storage` names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unconvertible(pub String);

impl Storage {
    /// The storage nbg's parse gives `r`.
    pub fn of(r: &IoRecord) -> Result<Storage, Unconvertible> {
        let format = r.data_format_name.unwrap_or("unnamed");
        let int = match format {
            "FP32" => return float(&r.quantization, Storage::Float32, format),
            "FP16" => return float(&r.quantization, Storage::Float16, format),
            "BFP16" => return float(&r.quantization, Storage::Bfloat16, format),
            "UINT8" => Int::U8,
            "INT8" => Int::I8,
            "UINT16" => Int::U16,
            "INT16" => Int::I16,
            "INT32" => Int::I32,
            "UINT32" => Int::U32,
            _ => {
                return Err(Unconvertible(format!(
                    "buffer format {} ({format}) has no conversion",
                    r.data_format
                )));
            }
        };
        let q = &r.quantization;
        Ok(
            match (q.format_name, q.scale, q.zero_point, q.fixed_point_position) {
                (Some("AFFINE_ASYMMETRIC"), Some(scale), Some(zero_point), _) => {
                    if !(scale.is_finite() && scale > 0.0) {
                        return Err(Unconvertible(format!(
                            "affine scale {scale} is not positive"
                        )));
                    }
                    Storage::Affine {
                        int,
                        scale,
                        zero_point,
                    }
                }
                (Some("DYNAMIC_FIXED_POINT"), _, _, Some(position)) => {
                    if !(-64..=64).contains(&position) {
                        return Err(Unconvertible(format!(
                            "fixed-point position {position} is outside -64..64"
                        )));
                    }
                    Storage::DynamicFixedPoint { int, position }
                }
                (Some("NONE"), ..) => Storage::Integer { int },
                _ => {
                    return Err(Unconvertible(format!(
                        "quantization format {} on {format}",
                        q.format
                    )));
                }
            },
        )
    }

    /// The element type as an archive holds it.
    pub fn dtype(self) -> Dtype {
        match self {
            Storage::Float32 => Dtype::F32,
            Storage::Float16 => Dtype::F16,
            Storage::Bfloat16 => Dtype::BF16,
            Storage::Affine { int, .. }
            | Storage::DynamicFixedPoint { int, .. }
            | Storage::Integer { int } => int.dtype(),
        }
    }

    /// What `quantize` does.
    pub fn to_stored(self) -> Conversion {
        match self {
            Storage::Float32 => Conversion::Identity,
            Storage::Float16 => Conversion::Float16Round,
            Storage::Bfloat16 => Conversion::Bfloat16Round,
            Storage::Affine { .. } => Conversion::AffineQuantize,
            Storage::DynamicFixedPoint { .. } => Conversion::DynamicFixedPointQuantize,
            Storage::Integer { .. } => Conversion::IntegerRound,
        }
    }

    /// What `dequantize` does.
    pub fn to_float(self) -> Conversion {
        match self {
            Storage::Float32 => Conversion::Identity,
            Storage::Float16 => Conversion::Float16Widen,
            Storage::Bfloat16 => Conversion::Bfloat16Widen,
            Storage::Affine { .. } => Conversion::AffineDequantize,
            Storage::DynamicFixedPoint { .. } => Conversion::DynamicFixedPointDequantize,
            Storage::Integer { .. } => Conversion::IntegerWiden,
        }
    }

    /// Float values as stored elements (little-endian).
    pub fn quantize(self, values: &[f32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(values.len() * self.dtype().size());
        for &x in values {
            let x64 = f64::from(x);
            match self {
                Storage::Float32 => out.extend_from_slice(&x.to_le_bytes()),
                Storage::Float16 => {
                    out.extend_from_slice(&half::f16::from_f32(x).to_le_bytes());
                }
                Storage::Bfloat16 => {
                    out.extend_from_slice(&half::bf16::from_f32(x).to_le_bytes());
                }
                Storage::Affine {
                    int,
                    scale,
                    zero_point,
                } => int.quantize(
                    (x64 / f64::from(scale)).round_ties_even() + f64::from(zero_point),
                    &mut out,
                ),
                Storage::DynamicFixedPoint { int, position } => {
                    int.quantize(x64 * 2f64.powi(position), &mut out);
                }
                Storage::Integer { int } => int.quantize(x64, &mut out),
            }
        }
        out
    }

    /// Stored elements (little-endian, a whole number of them) as float values.
    pub fn dequantize(self, bytes: &[u8]) -> Vec<f32> {
        let size = self.dtype().size();
        bytes
            .chunks_exact(size)
            .map(|b| match self {
                Storage::Float32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                Storage::Float16 => half::f16::from_le_bytes([b[0], b[1]]).to_f32(),
                Storage::Bfloat16 => half::bf16::from_le_bytes([b[0], b[1]]).to_f32(),
                Storage::Affine {
                    int,
                    scale,
                    zero_point,
                } => (f64::from(scale) * (int.get(b) - f64::from(zero_point))) as f32,
                Storage::DynamicFixedPoint { int, position } => {
                    (int.get(b) * 2f64.powi(-position)) as f32
                }
                Storage::Integer { int } => int.get(b) as f32,
            })
            .collect()
    }
}

impl Storage {
    /// Share of the stored elements at the limits of their integer type (0 for floats).
    pub fn saturated(self, bytes: &[u8]) -> f64 {
        let int = match self {
            Storage::Affine { int, .. }
            | Storage::DynamicFixedPoint { int, .. }
            | Storage::Integer { int } => int,
            _ => return 0.0,
        };
        let size = self.dtype().size();
        let (lo, hi) = int.range();
        let n = bytes.len() / size;
        if n == 0 {
            return 0.0;
        }
        let at = bytes
            .chunks_exact(size)
            .filter(|b| {
                let v = int.get(b);
                v == lo || v == hi
            })
            .count();
        at as f64 / n as f64
    }
}

/// A float storage's record must say no quantization.
fn float(q: &Quantization, s: Storage, format: &str) -> Result<Storage, Unconvertible> {
    if q.format_name == Some("NONE") {
        Ok(s)
    } else {
        Err(Unconvertible(format!(
            "quantization format {} on {format}",
            q.format
        )))
    }
}

/// Which conversion a tensor went through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Conversion {
    /// The archive held the stored type: copied as it is.
    AsStored,
    /// float32 to float32.
    Identity,
    /// float32 to float16, rounding half to even.
    Float16Round,
    /// float32 to bfloat16, rounding half to even.
    Bfloat16Round,
    /// q = saturate(round_half_even(x / scale) + zero_point).
    AffineQuantize,
    /// q = saturate(round_half_even(x x 2^position)).
    DynamicFixedPointQuantize,
    /// q = saturate(round_half_even(x)).
    IntegerRound,
    /// float16 to float32 (exact).
    Float16Widen,
    /// bfloat16 to float32 (exact).
    Bfloat16Widen,
    /// x = scale x (q - zero_point).
    AffineDequantize,
    /// x = q x 2^-position.
    DynamicFixedPointDequantize,
    /// x = q.
    IntegerWiden,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every storage's quantize then dequantize returns the input wherever the input is on the
    /// storage's grid, and saturates outside its range.
    #[test]
    fn round_trips_on_the_grid_and_saturates_off_it() {
        let affine = Storage::Affine {
            int: Int::U8,
            scale: 0.5,
            zero_point: 128,
        };
        assert_eq!(
            affine.quantize(&[0.0, 1.0, -64.0, 63.5, 1000.0, -1000.0]),
            [128, 130, 0, 255, 255, 0]
        );
        assert_eq!(
            affine.dequantize(&[128, 130, 0, 255]),
            [0.0, 1.0, -64.0, 63.5]
        );
        // Half to even: 0.25 / 0.5 = 0.5 rounds to 0, 0.75 / 0.5 = 1.5 rounds to 2.
        assert_eq!(affine.quantize(&[0.25, 0.75]), [128, 130]);
        let dfp = Storage::DynamicFixedPoint {
            int: Int::I16,
            position: 15,
        };
        let q = dfp.quantize(&[0.5, -1.0, 1.0, -0.25]);
        assert_eq!(q, [0x00, 0x40, 0x00, 0x80, 0xff, 0x7f, 0x00, 0xe0]);
        assert_eq!(dfp.dequantize(&q), [0.5, -1.0, 32_767.0 / 32_768.0, -0.25]);
        let h = Storage::Float16;
        assert_eq!(
            h.dequantize(&h.quantize(&[1.5, -2.0, 65_504.0])),
            [1.5, -2.0, 65_504.0]
        );
        let b = Storage::Bfloat16;
        assert_eq!(b.dequantize(&b.quantize(&[1.5, -2.0])), [1.5, -2.0]);
        let i = Storage::Integer { int: Int::I8 };
        assert_eq!(i.quantize(&[2.5, 3.5, -300.0]), [2, 4, 0x80]);
        let f = Storage::Float32;
        assert_eq!(f.dequantize(&f.quantize(&[0.1, -7.25])), [0.1, -7.25]);
    }
}
