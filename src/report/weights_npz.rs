//! The decoded kernels of `nbg coefficients -o WEIGHTS.npz`: per buffer, named by layer,
//! operation, NN command and entry, its weights in their stored type and shape (channels, z, y,
//! x), its biases, its per-kernel extras and, for 8-bit types, its zero point.

use crate::nbg::coefficients::{Buffer, WeightType};
use crate::onnx::tensor::{Dtype, Tensor};

/// The tensors, in buffer order (deterministic: the same file gives the same archive).
pub fn tensors(buffers: &[Buffer]) -> Vec<Tensor> {
    let mut out = Vec::new();
    for b in buffers {
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
