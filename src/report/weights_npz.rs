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

/// The tensors, buffers then images (deterministic: the same file gives the same archive).
pub fn tensors(c: &Coefficients) -> Vec<Tensor> {
    let mut out = Vec::new();
    for i in &c.images {
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
        out.push(Tensor {
            name: i.name(),
            dtype,
            shape: i.shape.to_vec(),
            data: i.elements.clone(),
        });
    }
    for z in &c.zero_run {
        let name = z.name();
        out.push(Tensor {
            name: format!("{name}.weights"),
            dtype: Dtype::U8,
            shape: z.shape.iter().map(|&d| d as u64).collect(),
            data: z.weights.clone(),
        });
        out.push(Tensor {
            name: format!("{name}.biases"),
            dtype: Dtype::I32,
            shape: vec![z.inline.len() as u64],
            data: z.inline.iter().flat_map(|b| b[0].to_le_bytes()).collect(),
        });
    }
    for b in &c.tp {
        for p in &b.parts {
            let name = p.name();
            let (dtype, data) = if p.weight_bits() == 8 {
                (Dtype::U8, p.weights.iter().map(|&e| e as u8).collect())
            } else {
                (Dtype::U16, le(&p.weights))
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
    for b in &c.buffers {
        let Some(w) = &b.weights else { continue };
        let name = b.name();
        let k = &w.kernels;
        let (dtype, data): (Dtype, Vec<u8>) = match w.dtype {
            WeightType::U8 => (Dtype::U8, k.weights.iter().map(|&e| e as u8).collect()),
            WeightType::I8 => (Dtype::I8, k.weights.iter().map(|&e| e as u8).collect()),
            WeightType::I16 => (Dtype::I16, le(&k.weights)),
            WeightType::F16 => (Dtype::F16, le(&k.weights)),
        };
        out.push(Tensor {
            name: format!("{name}.weights"),
            dtype,
            shape: w.shape.iter().map(|&d| d as u64).collect(),
            data,
        });
        if let Some(x) = &b.biases {
            out.push(Tensor {
                name: format!("{name}.biases"),
                dtype: Dtype::I64,
                shape: vec![x.values.len() as u64],
                data: x.values.iter().flat_map(|v| v.to_le_bytes()).collect(),
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
