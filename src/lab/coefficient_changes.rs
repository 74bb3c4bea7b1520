//! The decoded coefficient elements two graphs differ in. A coefficient stream's bytes move
//! with every value (its codes, symbol map and sizes change), so a byte range names nothing;
//! a diff names the element instead, by the NN command whose buffer holds it
//! (`NN[0].weights[37] 111 -> 0`, as stored: a uint8 kernel less its zero point).

use crate::nbg::coefficients::{self, Buffer, Tensor};
use crate::nbg::family::NbgFamily;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::Graph;
use serde::Serialize;

/// Most element changes listed per tensor; the rest are only counted.
pub const MAX_ELEMENTS: usize = 16;

/// One element that differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ElementChange {
    /// The element, in decoded order.
    pub index: u64,
    /// A's stored value.
    pub a: i64,
    /// B's stored value.
    pub b: i64,
}

/// A decoded tensor that differs between A and B.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TensorChange {
    /// The NN command whose buffer holds it.
    pub nn: usize,
    /// The kernels or the biases.
    pub tensor: Tensor,
    /// Its elements (the same on both sides).
    pub elements: u64,
    /// How many differ.
    pub changed: u64,
    /// The first `MAX_ELEMENTS` that differ.
    pub first: Vec<ElementChange>,
}

impl TensorChange {
    /// Its name in a diff: `NN[0].weights`.
    pub fn name(&self) -> String {
        format!("NN[{}].{}", self.nn, self.tensor.as_str())
    }
}

/// Every weight buffer of `g`, read through its image.
fn buffers(g: &Graph<'_>, image: &NbgImage<'_>) -> Vec<Buffer> {
    coefficients::of_with(
        &g.coefficient_view(),
        None,
        &|at, len| Some(image.range(at, at.saturating_add(len))),
        coefficients::Depth::Kernels,
    )
    .buffers
}

/// The decoded tensors that differ, in A's buffer order, where both sides' buffers for the
/// same NN command decode to tensors of one length (a buffer whose geometry changed is named
/// by the NN command's own fields).
pub fn changes(
    a: &Graph<'_>,
    ia: &NbgImage<'_>,
    b: &Graph<'_>,
    ib: &NbgImage<'_>,
) -> Vec<TensorChange> {
    let (xa, xb) = (buffers(a, ia), buffers(b, ib));
    let mut out = Vec::new();
    for x in &xa {
        let Some(nn) = x.command.map(|c| c.index) else {
            continue;
        };
        let Some(y) = xb.iter().find(|y| y.command.is_some_and(|c| c.index == nn)) else {
            continue;
        };
        for tensor in [Tensor::Weights, Tensor::Biases] {
            let (Some((ea, _)), Some((eb, _))) = (x.elements(tensor), y.elements(tensor)) else {
                continue;
            };
            if ea.len() != eb.len() {
                continue;
            }
            let differing = ea.iter().zip(&eb).enumerate().filter(|(_, (p, q))| p != q);
            let changed = differing.clone().count() as u64;
            if changed == 0 {
                continue;
            }
            out.push(TensorChange {
                nn,
                tensor,
                elements: ea.len() as u64,
                changed,
                first: differing
                    .take(MAX_ELEMENTS)
                    .map(|(i, (&a, &b))| ElementChange {
                        index: i as u64,
                        a,
                        b,
                    })
                    .collect(),
            });
        }
    }
    out
}
