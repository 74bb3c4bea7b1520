//! Where each kernel's elements sit in the per-core streams, and the kernels put back together.
//!
//! Facts (Mesa etnaviv_ml_nn_v8.c `fill_weights`, `encode_superblock`; the vendor's encoder
//! `reorderKernelBufferV8Huffman`, `reorderDepthWiseKernelBufferV8Huffman`):
//! - core c of `cores` takes floor(OC/cores) kernels, one more when c < OC mod cores; its stream
//!   starts with that count;
//! - kernels go in groups of `kernels_per_core` per core (the last group shares what is left,
//!   the first cores one more); in a group, core c takes a contiguous run of kernels, and its
//!   stream holds, for each 9-element block of the flattened kernel, that block of each kernel;
//! - a depthwise group interleaves kernels across cores in reverse core order, and each kernel
//!   goes whole;
//! - a kernel is flattened input channel outermost, then y, then x, and padded to whole blocks.
//!
//! Proved on the A733 face detector: the 37 buffers' kernels come out as its source model's
//! 37 kernels (`notebooks/coefficients.md`).

use super::stream_error::{StreamCode, StreamError};
use serde::Serialize;

/// Elements per block.
pub const BLOCK: usize = 9;

/// How one buffer's kernels are laid over its streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// Output channels: one kernel each.
    pub channels: usize,
    /// Kernel x, y and z (input channels; 1 when depthwise).
    pub kernel: [usize; 3],
    /// `kernels_per_core`: kernels per core in a group.
    pub group: usize,
    /// Depthwise: kernels interleaved across cores, each whole.
    pub depthwise: bool,
    /// Elements after each kernel's weights (the fp32 bias in three 16-bit parts of fp16 and
    /// bf16 kernels, in the vendor's encoder).
    pub extras: usize,
    /// Elements of the kernel count that opens a stream: 1 (16-bit) or 2 (8-bit, low first).
    pub head: usize,
    /// fp16 elements, the kernel count included, carry their sign in the lowest bit (the
    /// vendor's encoder, `gc_vx_nn_encoder.c`; measured: the serializer's fp16 convolution and
    /// depthwise buffers on 0x1000000e open with 4 = 2 << 1 where 2 kernels follow).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sign_lowest: bool,
    /// Elements each kernel carries inline in the v7 layout, which the vendor's encoder writes
    /// without a bias block after the streams: its 32-bit bias before its weights and its
    /// 32-bit z offset after them, 8 elements of an 8-bit kernel, no block padding
    /// ([VE] `reorderWeightBiasBufferForHuffman`); 0 in the v8 layout.
    pub inline: usize,
    /// The header's `avg_bias`, which the encoder subtracts from every element, the kernel
    /// count included ([VE]; Mesa `encode_uint16`); 0 in every v8 buffer measured.
    pub avg_bias: u16,
    /// Streams: cores used.
    pub cores: usize,
}

/// The kernels of one buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernels {
    /// Channels, z, y, x.
    pub shape: [usize; 4],
    /// Every weight element in shape order.
    pub weights: Vec<u16>,
    /// Each kernel's extra elements, `extras` per channel.
    pub extras: Vec<u16>,
    /// Whether every element that pads a kernel to whole blocks is zero.
    pub padding_zero: bool,
}

impl Layout {
    /// Elements of one kernel with its extras.
    fn kernel_len(&self) -> usize {
        self.kernel.iter().product::<usize>() + self.extras
    }

    /// Blocks per kernel.
    fn blocks(&self) -> usize {
        self.kernel_len().div_ceil(BLOCK)
    }

    /// Kernels of core `c`.
    pub fn count(&self, c: usize) -> usize {
        self.channels / self.cores + usize::from(c < self.channels % self.cores)
    }

    /// Elements the stream of core `c` holds.
    pub fn elements(&self, c: usize) -> usize {
        let per = if self.inline > 0 {
            self.kernel_len() + self.inline
        } else {
            self.blocks() * BLOCK
        };
        self.head + self.count(c) * per
    }

    /// Checked: at least one core and kernel, a group, no more cores than kernels, and no more
    /// elements than `budget` (what the streams' bits could hold) before anything is allocated.
    pub fn check(&self, budget: u64) -> Result<(), StreamError> {
        let bad = |m: String| Err(StreamError::new(StreamCode::CoefNoLayout, 0, m));
        if self.cores == 0 || self.group == 0 || self.channels < self.cores {
            return bad(format!(
                "{} channels, {} per core in a group, {} streams: no layout",
                self.channels, self.group, self.cores
            ));
        }
        let total = (self.kernel_len() as u64)
            .checked_mul(self.channels as u64)
            .filter(|&t| t <= budget);
        if total.is_none() {
            return bad(format!(
                "{} kernels of {} elements: more than the streams' bits can hold",
                self.channels,
                self.kernel_len()
            ));
        }
        Ok(())
    }

    /// Core `c`'s kernels in stream order, group by group.
    fn plan(&self, c: usize) -> Vec<Vec<usize>> {
        let (cores, g) = (self.cores, self.group);
        let groups = self.channels.div_ceil(cores).div_ceil(g);
        (0..groups)
            .map(|k| {
                let base = k * cores * g;
                let share: Vec<usize> = if k + 1 < groups {
                    vec![g; cores]
                } else {
                    let left = self.channels - base;
                    (0..cores)
                        .map(|i| left / cores + usize::from(i < left % cores))
                        .collect()
                };
                if self.depthwise {
                    let short = self.channels % cores;
                    (0..share[c])
                        .map(|i| base + (cores - 1 - c) + i * cores)
                        .map(|f| {
                            if short != 0 && f >= self.channels {
                                f - (cores - short)
                            } else {
                                f
                            }
                        })
                        .collect()
                } else {
                    let start = base + share[..c].iter().sum::<usize>();
                    (start..start + share[c]).collect()
                }
            })
            .collect()
    }

    /// The kernels of `streams` (each core's elements, its kernel count first).
    pub fn assemble(&self, streams: &[Vec<u16>]) -> Result<Kernels, (usize, StreamError)> {
        let (len, blocks) = (self.kernel_len(), self.blocks());
        let mut flat = vec![0u16; self.channels * blocks * BLOCK];
        let mut seen = vec![false; self.channels];
        for (c, v) in streams.iter().enumerate() {
            let want = self.count(c);
            let stored = |i: usize| v.get(i).copied().unwrap_or(0).wrapping_add(self.avg_bias);
            let count = match self.head {
                1 if self.sign_lowest => usize::from(stored(0).rotate_right(1)),
                1 => usize::from(stored(0)),
                _ => usize::from(stored(0) & 0xff) | usize::from(stored(1) & 0xff) << 8,
            };
            if count != want {
                return Err((
                    c,
                    StreamError::new(
                        StreamCode::CoefKernelCount,
                        0,
                        format!(
                            "the stream opens with kernel count {count}; core {c} of {} takes {want}",
                            self.cores
                        ),
                    ),
                ));
            }
            if v.len() != self.elements(c) {
                return Err((
                    c,
                    StreamError::new(
                        StreamCode::CoefElementCount,
                        0,
                        format!(
                            "{} elements; {want} kernels of {blocks} blocks take {}",
                            v.len(),
                            self.elements(c)
                        ),
                    ),
                ));
            }
            if self.inline > 0 {
                continue;
            }
            let mut at = self.head;
            for group in self.plan(c) {
                if self.depthwise {
                    for &f in &group {
                        flat[f * blocks * BLOCK..(f + 1) * blocks * BLOCK]
                            .copy_from_slice(&v[at..at + blocks * BLOCK]);
                        at += blocks * BLOCK;
                    }
                } else {
                    for b in 0..blocks {
                        for &f in &group {
                            let to = f * blocks * BLOCK + b * BLOCK;
                            flat[to..to + BLOCK].copy_from_slice(&v[at..at + BLOCK]);
                            at += BLOCK;
                        }
                    }
                }
                for f in group {
                    seen[f] = true;
                }
            }
        }
        if self.inline > 0 {
            // Counts and kernel counts hold; the order depends on the part's dot-product
            // features ([VE]), which the file does not name.
            return Err((
                0,
                StreamError::new(
                    StreamCode::CoefKernelOrder,
                    0,
                    format!(
                        "v7 layout (bias and z offset inline, {} elements per kernel): every \
                         stream's count checks, the element order over kernels is not decoded",
                        len + self.inline
                    ),
                ),
            ));
        }
        if let Some(f) = seen.iter().position(|&s| !s) {
            return Err((
                0,
                StreamError::new(
                    StreamCode::CoefNoLayout,
                    0,
                    format!("no stream holds kernel {f}"),
                ),
            ));
        }
        let weights_len = len - self.extras;
        let mut weights = Vec::with_capacity(self.channels * weights_len);
        let mut extras = Vec::with_capacity(self.channels * self.extras);
        let mut padding_zero = true;
        for k in flat.chunks_exact(blocks * BLOCK) {
            weights.extend_from_slice(&k[..weights_len]);
            extras.extend_from_slice(&k[weights_len..len]);
            padding_zero &= k[len..].iter().all(|&e| e == 0);
        }
        let [x, y, z] = self.kernel;
        Ok(Kernels {
            shape: [self.channels, z, y, x],
            weights,
            extras,
            padding_zero,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streams of `kernels` (each `len` elements, numbered) laid out by `l`, written from
    /// the rules in the module comment independently of `plan`.
    fn lay(l: &Layout, kernel: impl Fn(usize) -> Vec<u16>) -> Vec<Vec<u16>> {
        let mut streams: Vec<Vec<u16>> = (0..l.cores).map(|c| vec![l.count(c) as u16]).collect();
        for (c, stream) in streams.iter_mut().enumerate() {
            for group in l.plan(c) {
                let ks: Vec<Vec<u16>> = group
                    .iter()
                    .map(|&f| {
                        let mut k = kernel(f);
                        k.resize(l.blocks() * BLOCK, 0);
                        k
                    })
                    .collect();
                if l.depthwise {
                    ks.iter().for_each(|k| stream.extend(k));
                } else {
                    for b in 0..l.blocks() {
                        ks.iter()
                            .for_each(|k| stream.extend(&k[b * BLOCK..(b + 1) * BLOCK]));
                    }
                }
            }
        }
        streams
    }

    #[test]
    fn cores_take_contiguous_runs_per_group_and_depthwise_interleaves_in_reverse() {
        let l = Layout {
            channels: 28,
            kernel: [1, 1, 24],
            group: 2,
            depthwise: false,
            extras: 0,
            head: 1,
            sign_lowest: false,
            inline: 0,
            avg_bias: 0,
            cores: 8,
        };
        // 28 over 8 cores: 4 or 3 each; groups of 2: [0,1],[16,17] for core 0.
        assert_eq!(l.plan(0), [vec![0, 1], vec![16, 17]]);
        assert_eq!(l.plan(7), [vec![14, 15], vec![27]]);
        let d = Layout {
            depthwise: true,
            kernel: [3, 3, 1],
            group: 4,
            ..l
        };
        assert_eq!(d.plan(7), [vec![0, 8, 16]]);
        assert_eq!(d.plan(0), [vec![7, 15, 23, 27]]);
        for l in [l, d] {
            let kernel = |f: usize| (0..l.kernel_len()).map(|i| (f * 100 + i) as u16).collect();
            let k = l.assemble(&lay(&l, kernel)).unwrap();
            for f in 0..l.channels {
                assert_eq!(
                    k.weights[f * l.kernel_len()..(f + 1) * l.kernel_len()],
                    kernel(f)[..]
                );
            }
            assert!(k.padding_zero);
        }
    }

    #[test]
    fn a_wrong_count_or_length_is_an_error_with_its_core() {
        let l = Layout {
            channels: 3,
            kernel: [3, 3, 1],
            group: 1,
            depthwise: false,
            extras: 3,
            head: 1,
            sign_lowest: false,
            inline: 0,
            avg_bias: 0,
            cores: 2,
        };
        let mut s = lay(&l, |_| vec![1; 12]);
        let k = l.assemble(&s).unwrap();
        assert_eq!((k.shape, k.extras.len()), ([3, 1, 3, 3], 9));
        s[1].push(0);
        assert_eq!(
            l.assemble(&s).unwrap_err().1.code,
            StreamCode::CoefElementCount
        );
        s[1][0] = 5;
        assert_eq!(
            l.assemble(&s).unwrap_err(),
            (
                1,
                StreamError::new(
                    StreamCode::CoefKernelCount,
                    0,
                    "the stream opens with kernel count 5; core 1 of 2 takes 1",
                )
            )
        );
        assert!(Layout { cores: 4, ..l }.check(1000).is_err());
        assert!(l.check(10).is_err());
    }

    #[test]
    fn a_v7_stream_is_counted_with_its_inline_biases_and_its_count_less_avg_bias() {
        // 3 kernels of 1x1x4 over 2 cores, 8-bit: core 0 takes 2, core 1 takes 1.
        let l = Layout {
            channels: 3,
            kernel: [1, 1, 4],
            group: 2,
            depthwise: false,
            extras: 0,
            head: 2,
            sign_lowest: false,
            inline: 8,
            avg_bias: 0x7a,
            cores: 2,
        };
        assert_eq!((l.elements(0), l.elements(1)), (2 + 2 * 12, 2 + 12));
        // The count, as the encoder writes it: each byte less avg_bias.
        let stream = |n: u16, len: usize| {
            let mut v = vec![n.wrapping_sub(0x7a) & 0xff, 0u16.wrapping_sub(0x7a) & 0xff];
            v.resize(len, 0);
            v
        };
        let ok = [stream(2, 26), stream(1, 14)];
        assert_eq!(
            l.assemble(&ok).unwrap_err().1.code,
            StreamCode::CoefKernelOrder
        );
        let bad = [stream(3, 26), stream(1, 14)];
        assert_eq!(
            l.assemble(&bad).unwrap_err().1.code,
            StreamCode::CoefKernelCount
        );
        let short = [stream(2, 25), stream(1, 14)];
        assert_eq!(
            l.assemble(&short).unwrap_err().1.code,
            StreamCode::CoefElementCount
        );
    }
}
