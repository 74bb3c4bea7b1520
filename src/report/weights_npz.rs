//! The decoded tensors of `nbg coefficients -o WEIGHTS.npz`: per NN buffer, named by layer,
//! operation, NN command and entry, its weights in their stored type and shape (channels, z, y,
//! x), its biases, its per-kernel extras and, for 8-bit types, its zero point; per image a
//! shader reads, named by layer, operation, uniform and entry, its elements in their stored
//! type and shape (depth, height, width, elements per pixel); per TP fully-connected part,
//! named by layer, operation and TP command, its weights as stored (outputs, inputs) and its
//! int32 biases.

use crate::nbg::coefficients::images::ElementType;
use crate::nbg::coefficients::{Coefficients, WeightType};
use crate::onnx::tensor::{Dtype, Tensor};

/// Elements as float32, little-endian.
fn f32s(v: impl Iterator<Item = f32>) -> Vec<u8> {
    v.flat_map(f32::to_le_bytes).collect()
}

/// An element of `dtype` stored in `bytes` as float32: floats widened, integers as they are.
fn element_f32(dtype: ElementType, b: &[u8]) -> f32 {
    let u16le = || u16::from_le_bytes([b[0], b[1]]);
    let u32le = || u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    match dtype {
        ElementType::F32 => f32::from_bits(u32le()),
        ElementType::F16 => crate::lab::mapping::numeric::f16_to_f32(u16le()),
        ElementType::BF16 => f32::from_bits(u32::from(u16le()) << 16),
        ElementType::I32 => u32le() as i32 as f32,
        ElementType::U32 => u32le() as f32,
        ElementType::I16 => u16le() as i16 as f32,
        ElementType::U16 => f32::from(u16le()),
        ElementType::I8 => f32::from(b[0] as i8),
        ElementType::U8 => f32::from(b[0]),
    }
}

/// The tensors, images, TP parts, zero-run buffers then NN buffers (deterministic: the same file
/// gives the same archive). With `float`, every weight tensor is float32 as far as the file
/// says: floats widened, 8-bit weights less their stored zero point, 16-bit ones as signed
/// integers. The files store no scale or fixed-point position of a kernel (the NN and TP
/// commands fold them into their output multipliers), so integer weights stay in units of
/// their quantization step; biases stay integers.
pub fn tensors(c: &Coefficients, float: bool) -> Vec<Tensor> {
    let mut out = Vec::new();
    for i in &c.images {
        let (dtype, data) = if float {
            let n = i.dtype.bytes() as usize;
            let v = i.elements.chunks_exact(n).map(|b| element_f32(i.dtype, b));
            (Dtype::F32, f32s(v))
        } else {
            let dtype = match i.dtype {
                ElementType::F32 => Dtype::F32,
                ElementType::F16 => Dtype::F16,
                ElementType::BF16 => Dtype::BF16,
                ElementType::I32 => Dtype::I32,
                ElementType::I16 => Dtype::I16,
                ElementType::I8 => Dtype::I8,
                ElementType::U32 => Dtype::U32,
                ElementType::U16 => Dtype::U16,
                ElementType::U8 => Dtype::U8,
            };
            (dtype, i.elements.clone())
        };
        out.push(Tensor {
            name: i.name(),
            dtype,
            shape: i.shape.to_vec(),
            data,
        });
    }
    for b in &c.tp {
        for p in &b.parts {
            let name = p.name();
            let zp = f32::from(p.shape.coef_zp);
            let (dtype, data) = match (float, p.weight_bits()) {
                (true, 8) => (
                    Dtype::F32,
                    f32s(p.weights.iter().map(|&e| f32::from(e) - zp)),
                ),
                (true, _) => (
                    Dtype::F32,
                    f32s(p.weights.iter().map(|&e| f32::from(e as i16))),
                ),
                (false, 8) => (Dtype::U8, p.weights.iter().map(|&e| e as u8).collect()),
                (false, _) => (Dtype::I16, le(&p.weights)),
            };
            out.push(Tensor {
                name: format!("{name}.weights"),
                dtype,
                shape: vec![p.shape.filters, p.shape.slices],
                data,
            });
            out.push(Tensor {
                name: format!("{name}.biases"),
                dtype: Dtype::I32,
                shape: vec![p.biases.len() as u64],
                data: p.biases.iter().flat_map(|v| v.to_le_bytes()).collect(),
            });
        }
    }
    for z in &c.zero_run {
        let name = z.name();
        let zp = z.command.coef_zero_point as f32;
        let (dtype, data) = if float {
            (
                Dtype::F32,
                f32s(z.weights.iter().map(|&e| f32::from(e) - zp)),
            )
        } else {
            (Dtype::U8, z.weights.clone())
        };
        out.push(Tensor {
            name: format!("{name}.weights"),
            dtype,
            shape: z.shape.iter().map(|&d| d as u64).collect(),
            data,
        });
        out.push(Tensor {
            name: format!("{name}.biases"),
            dtype: Dtype::I32,
            shape: vec![z.inline.len() as u64],
            data: z.inline.iter().flat_map(|b| b[0].to_le_bytes()).collect(),
        });
    }
    for b in &c.buffers {
        let Some(w) = &b.weights else { continue };
        let name = b.name();
        let k = &w.kernels;
        let zp = w.zero_point as f32;
        let (dtype, data): (Dtype, Vec<u8>) = match (float, w.dtype) {
            (true, WeightType::U8) => (
                Dtype::F32,
                f32s(k.weights.iter().map(|&e| f32::from(e as u8) - zp)),
            ),
            (true, WeightType::I8) => (
                Dtype::F32,
                f32s(k.weights.iter().map(|&e| f32::from(e as u8 as i8))),
            ),
            (true, WeightType::I16) => (
                Dtype::F32,
                f32s(k.weights.iter().map(|&e| f32::from(e as i16))),
            ),
            (true, WeightType::F16) => (
                Dtype::F32,
                f32s(
                    k.weights
                        .iter()
                        .map(|&e| crate::lab::mapping::numeric::f16_to_f32(e)),
                ),
            ),
            (false, WeightType::U8) => (Dtype::U8, k.weights.iter().map(|&e| e as u8).collect()),
            (false, WeightType::I8) => (Dtype::I8, k.weights.iter().map(|&e| e as u8).collect()),
            (false, WeightType::I16) => (Dtype::I16, le(&k.weights)),
            (false, WeightType::F16) => (Dtype::F16, le(&k.weights)),
        };
        out.push(Tensor {
            name: format!("{name}.weights"),
            dtype,
            shape: w.shape.iter().map(|&d| d as u64).collect(),
            data,
        });
        // The bias block's values, or the v7 layout's inline biases.
        let biases: Option<Vec<i64>> = match &b.biases {
            Some(x) => Some(x.values.clone()),
            None if !k.inline.is_empty() => {
                Some(k.inline.iter().map(|b| i64::from(b[0] as i32)).collect())
            }
            None => None,
        };
        if let Some(v) = biases {
            out.push(Tensor {
                name: format!("{name}.biases"),
                dtype: Dtype::I64,
                shape: vec![v.len() as u64],
                data: v.iter().flat_map(|v| v.to_le_bytes()).collect(),
            });
        }
        if w.layout.extras > 0 {
            out.push(Tensor {
                name: format!("{name}.extras"),
                dtype: Dtype::U16,
                shape: vec![w.shape[0] as u64, w.layout.extras as u64],
                data: le(&k.extras),
            });
        }
        if matches!(w.dtype, WeightType::U8 | WeightType::I8) {
            out.push(Tensor {
                name: format!("{name}.zero_point"),
                dtype: Dtype::I64,
                shape: vec![1],
                data: (w.zero_point as i64).to_le_bytes().to_vec(),
            });
        }
    }
    out
}

fn le(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|e| e.to_le_bytes()).collect()
}
