//! Coefficient entries that no NN command reads: what a shader (or another operation) takes
//! as a plain array. On the A733 fp16 face detector every convolution runs on a shader and its
//! weights and biases are such entries, float16 kernels in (O, I, H, W) order and float32
//! biases (measured, `notebooks/coefficients.md`); nothing here assumes that, the entries are
//! only named by their readers and handed out as bytes for `lab::kernel_match` to test.

use super::Operation;
use crate::nbg::parse::patch_targets::{CoefficientView, Role, entry_readers};
use serde::Serialize;

/// One such entry.
#[derive(Clone, Debug, Serialize)]
pub struct Plain<'g> {
    /// Its coefficient-table entry.
    pub entry: usize,
    /// Its file offset.
    pub offset: u64,
    /// Its size.
    pub size: u64,
    /// The operations whose patches point at it, in record order.
    pub readers: Vec<Operation>,
    /// Its bytes.
    #[serde(skip)]
    pub bytes: &'g [u8],
}

/// Every coefficient entry of a graph whose role is data (no NN `kernel_address` and no TP
/// lookup-table field names it), with the operations that read it.
pub fn of<'g>(v: &CoefficientView<'g>) -> Vec<Plain<'g>> {
    let file = v.bytes;
    let readers = v.context.as_ref().map(entry_readers).unwrap_or_default();
    v.regions
        .iter()
        .filter(|r| r.role == Role::Data && r.size > 0)
        .filter_map(|r| {
            let a = usize::try_from(r.offset).ok()?;
            let b = usize::try_from(r.offset.checked_add(r.size)?).ok()?;
            let mut ops: Vec<usize> = readers
                .iter()
                .filter(|&&(_, e)| e == r.entry)
                .map(|&(k, _)| k)
                .collect();
            ops.sort_unstable();
            ops.dedup();
            Some(Plain {
                entry: r.entry,
                offset: r.offset,
                size: r.size,
                readers: ops
                    .into_iter()
                    .filter_map(|k| super::operation_at(v.records, k))
                    .collect(),
                bytes: file.get(a..b)?,
            })
        })
        .collect()
}
