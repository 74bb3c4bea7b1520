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
    /// The header's `precode`: each 8-bit element of a v7 stream is stored as the difference
    /// to the one before it, from 0 at each stream's start ([VE] `fillinKernelBufferHuffman`;
    /// measured: the kernel counts of the public files' precode buffers come out right only
    /// so).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub precode: bool,
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
    /// v7: each kernel's inline 32-bit bias and z offset, in channel order.
    pub inline: Vec<[u32; 2]>,
    /// v7: the element order the streams were read in.
    pub order: Option<Order>,
}

/// The element order of a v7 stream over a group's kernels, chosen by the part's dot-product
/// features ([VE] `reorderWeightBiasBufferForHuffman`): ZDP for 1x1 kernels (input slices in
/// chunks of twice 3 or 6, each kernel's chunk in turn), XYDP for the others (x by 3 and y by 3
/// or 2 blocks, slices 2 or 1 at a time), else slice by slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Slice by slice: each kernel's slice, y then x.
    Plain,
    /// ZDP3: chunks of 6 slices.
    Zdp3,
    /// ZDP6: chunks of 12 slices.
    Zdp6,
    /// XYDP6: 3x2 blocks, one slice at a time.
    Xydp6,
    /// XYDP9: 3x3 blocks, two slices at a time.
    Xydp9,
}

/// A part's dot-product features, as far as they choose the v7 order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    /// ZDP3 or ZDP6 (`Order::Zdp3`, `Order::Zdp6`), if any.
    pub zdp: Option<Order>,
    /// XYDP6 or XYDP9, if any.
    pub xydp: Option<Order>,
}

impl Features {
    /// The features of a part by its PID, where a public feature database names them: Mesa's
    /// Amlogic `gc_feature_database.h` (sailfishos-mirror/mesa 609bbcc1: 0x99 vippico_v3, 0x88
    /// and 0xa1 vipnano-qi with ZDP3 and XYDP6, 0x7d vipnano-qi without either) and ST's
    /// (STMicroelectronics/gcnano-binaries bbaae49a: 0x15 GCNANOULTRA31_VIP2, ZDP3 and XYDP6).
    /// Measured on the simulator's compiles for 0x99, 0x15 and 0x88: 1x1 kernels in ZDP3
    /// order, 5x5 in XYDP6.
    pub fn of_target(pid: u32) -> Option<Features> {
        match pid {
            0x99 | 0x15 | 0x88 | 0xa1 => Some(Features {
                zdp: Some(Order::Zdp3),
                xydp: Some(Order::Xydp6),
            }),
            0x7d => Some(Features {
                zdp: None,
                xydp: None,
            }),
            _ => None,
        }
    }

    /// Every combination the vendor's encoder knows, the part's own first when `known`.
    pub fn candidates(known: Option<Features>) -> Vec<Features> {
        let all = [
            (Some(Order::Zdp3), Some(Order::Xydp6)),
            (Some(Order::Zdp6), Some(Order::Xydp9)),
            (Some(Order::Zdp3), Some(Order::Xydp9)),
            (Some(Order::Zdp6), Some(Order::Xydp6)),
            (Some(Order::Zdp3), None),
            (Some(Order::Zdp6), None),
            (None, Some(Order::Xydp6)),
            (None, Some(Order::Xydp9)),
            (None, None),
        ];
        match known {
            Some(f) => vec![f],
            None => all
                .into_iter()
                .map(|(zdp, xydp)| Features { zdp, xydp })
                .collect(),
        }
    }

    /// The order of an 8-bit kernel of `kernel` (x, y, z) on such a part.
    pub fn order(self, kernel: [usize; 3]) -> Order {
        match (self.zdp, self.xydp) {
            (Some(z), _) if kernel[0] == 1 && kernel[1] == 1 => z,
            (_, Some(xy)) => xy,
            _ => Order::Plain,
        }
    }
}

impl Order {
    /// `each`'s pairs, collected.
    pub(super) fn walk(self, kernel: [usize; 3], n: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        self.each(kernel, n, |j, e| out.push((j, e)));
        out
    }

    /// (kernel position in the group, element index z, y, x flattened) of every weight of `n`
    /// kernels of `kernel` (x, y, z), in stream order, each handed to `f`.
    pub(super) fn each(self, kernel: [usize; 3], n: usize, mut f: impl FnMut(usize, usize)) {
        let [kx, ky, kz] = kernel;
        let (xs, ys, zs) = match self {
            Order::Plain => (kx, ky, 1),
            Order::Zdp3 => (1, 1, 6),
            Order::Zdp6 => (1, 1, 12),
            Order::Xydp6 => (3, 2, 1),
            Order::Xydp9 => (3, 3, 2),
        };
        let (xs, ys) = (xs.max(1), ys.max(1));
        for z0 in (0..kz).step_by(zs) {
            let z1 = (z0 + zs).min(kz);
            for j in 0..n {
                for y0 in (0..ky).step_by(ys) {
                    let y1 = (y0 + ys).min(ky);
                    for x0 in (0..kx).step_by(xs) {
                        let x1 = (x0 + xs).min(kx);
                        for z in z0..z1 {
                            for y in y0..y1 {
                                let row = (z * ky + y) * kx;
                                for x in x0..x1 {
                                    f(j, row + x);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
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
                    // Round i of the group deals one kernel to each core in reverse core
                    // order; a last, short round deals its r kernels to cores 0..r, reversed
                    // too (measured: 28 channels on the A733 face detector, 13 over 8 cores in
                    // one-kernel groups on the simulator's 0x1000003b).
                    (0..share[c])
                        .map(|i| {
                            let round = base + i * cores;
                            let r = cores.min(self.channels - round);
                            round + (r - 1 - c)
                        })
                        .collect()
                } else {
                    let start = base + share[..c].iter().sum::<usize>();
                    (start..start + share[c]).collect()
                }
            })
            .collect()
    }

    /// The elements of a v7 stream as the encoder had them before coding: the deltas summed
    /// (`precode`, 8-bit) and `avg_bias` added back.
    fn v7_values(&self, v: &[u16]) -> Vec<u16> {
        let mut prev = 0u16;
        v.iter()
            .map(|&e| {
                let e = if self.precode {
                    prev = (prev + e) & 0xff;
                    prev
                } else {
                    e
                };
                e.wrapping_add(self.avg_bias) & 0xff
            })
            .collect()
    }

    /// The kernels of `streams` (each core's elements, its kernel count first); a v7 layout
    /// read in the order of the first of `features` whose inline z offsets name every kernel
    /// once (refused when two such orders put the kernels together differently).
    pub fn assemble(
        &self,
        streams: &[Vec<u16>],
        features: &[Features],
    ) -> Result<Kernels, (usize, StreamError)> {
        if self.inline > 0 {
            let values: Vec<Vec<u16>> = streams.iter().map(|v| self.v7_values(v)).collect();
            self.check_counts(&values)?;
            return self.assemble_v7(&values, features);
        }
        self.check_counts(streams)?;
        let (len, blocks) = (self.kernel_len(), self.blocks());
        let mut flat = vec![0u16; self.channels * blocks * BLOCK];
        let mut seen = vec![false; self.channels];
        for (c, v) in streams.iter().enumerate() {
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
            inline: Vec::new(),
            order: None,
        })
    }

    /// Every stream opens with its core's kernel count and holds the elements its kernels take.
    fn check_counts(&self, streams: &[Vec<u16>]) -> Result<(), (usize, StreamError)> {
        let blocks = self.blocks();
        for (c, v) in streams.iter().enumerate() {
            let want = self.count(c);
            let stored = |i: usize| {
                let e = v.get(i).copied().unwrap_or(0);
                if self.inline > 0 {
                    e
                } else {
                    e.wrapping_add(self.avg_bias)
                }
            };
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
        }
        Ok(())
    }

    /// A v7 buffer's kernels (`values`: each core's elements before coding, counts checked):
    /// each core's kernels group by group (`kernels_per_core` a group, the last group what is
    /// left), each kernel's 32-bit bias before its first weight and its z offset after its
    /// last ([VE]); which kernel each is, its z offset says (`stride * kernel`, the vendor's
    /// balancing plan deals kernels to cores in an order the file does not give otherwise).
    fn assemble_v7(
        &self,
        values: &[Vec<u16>],
        features: &[Features],
    ) -> Result<Kernels, (usize, StreamError)> {
        let mut found: Option<Kernels> = None;
        let mut tried = Vec::new();
        for f in features {
            let order = f.order(self.kernel);
            if tried.contains(&order) {
                continue;
            }
            tried.push(order);
            let Some(k) = self.read_v7(values, order) else {
                continue;
            };
            match &found {
                None => found = Some(k),
                Some(first) if first.weights == k.weights && first.inline == k.inline => {}
                Some(first) => {
                    let first = first.order.map_or("?".into(), |o| format!("{o:?}"));
                    return Err((
                        0,
                        StreamError::new(
                            StreamCode::CoefKernelOrder,
                            0,
                            format!(
                                "v7 layout: the {first} and {order:?} orders both name every \
                                 kernel once and put them together differently"
                            ),
                        ),
                    ));
                }
            }
        }
        found.ok_or_else(|| {
            (
                0,
                StreamError::new(
                    StreamCode::CoefKernelOrder,
                    0,
                    format!(
                        "v7 layout (bias and z offset inline, {} elements per kernel): in no \
                         order of {tried:?} do the z offsets name every kernel once",
                        self.kernel_len() + self.inline
                    ),
                ),
            )
        })
    }

    /// The kernels in `order`, when the z offsets name each kernel exactly once.
    fn read_v7(&self, values: &[Vec<u16>], order: Order) -> Option<Kernels> {
        let len = self.kernel_len();
        let word = |v: &[u16], at: usize| -> Option<u32> {
            let b = v.get(at..at + 4)?;
            Some(
                b.iter()
                    .rev()
                    .fold(0u32, |a, &e| a << 8 | u32::from(e & 0xff)),
            )
        };
        // (position in a core's stream, kernel elements, bias, z offset) per kernel read.
        let mut read: Vec<(Vec<u16>, u32, u32)> = Vec::with_capacity(self.channels);
        for (c, v) in values.iter().enumerate() {
            let count = self.count(c);
            let groups = count.div_ceil(self.group.max(1));
            let mut at = self.head;
            for g in 0..groups {
                let n = if g + 1 < groups {
                    self.group
                } else {
                    count - g * self.group
                };
                let mut kernels = vec![(vec![0u16; len], 0u32, 0u32); n];
                let mut started = vec![false; n];
                let mut left = vec![len; n];
                let mut short = false;
                order.each(self.kernel, n, |j, e| {
                    if short {
                        return;
                    }
                    if !started[j] {
                        match word(v, at) {
                            Some(b) => kernels[j].1 = b,
                            None => short = true,
                        }
                        at += 4;
                        started[j] = true;
                    }
                    match v.get(at) {
                        Some(&x) => kernels[j].0[e] = x,
                        None => short = true,
                    }
                    at += 1;
                    left[j] -= 1;
                    if left[j] == 0 {
                        match word(v, at) {
                            Some(z) => kernels[j].2 = z,
                            None => short = true,
                        }
                        at += 4;
                    }
                });
                if short {
                    return None;
                }
                read.extend(kernels);
            }
            if at != v.len() {
                return None;
            }
        }
        // The z offsets: a stride times each kernel's number, every number once.
        let stride = read.iter().fold(0u32, |a, k| gcd(a, k.2));
        let mut by_channel: Vec<Option<(Vec<u16>, u32, u32)>> = vec![None; self.channels];
        for k in read {
            let f = k.2.checked_div(stride).unwrap_or(0) as usize;
            let slot = by_channel.get_mut(f)?;
            if slot.is_some() {
                return None;
            }
            *slot = Some(k);
        }
        let mut weights = Vec::with_capacity(self.channels * len);
        let mut inline = Vec::with_capacity(self.channels);
        for k in by_channel {
            let (w, bias, z) = k?;
            weights.extend(w);
            inline.push([bias, z]);
        }
        let [x, y, z] = self.kernel;
        Some(Kernels {
            shape: [self.channels, z, y, x],
            weights,
            extras: Vec::new(),
            padding_zero: true,
            inline,
            order: Some(order),
        })
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
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
            precode: false,
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
        // 13 in groups of 1 (the simulator's 0x1000003b): the short second round's 5 kernels
        // go to cores 0..5 in reverse.
        let s = Layout {
            channels: 13,
            group: 1,
            ..d
        };
        let firsts: Vec<Vec<Vec<usize>>> = (0..8).map(|c| s.plan(c)).collect();
        assert_eq!(firsts[0], [vec![7], vec![12]]);
        assert_eq!(firsts[4], [vec![3], vec![8]]);
        assert_eq!(firsts[5], [vec![2], vec![]]);
        for l in [l, d, s] {
            let kernel = |f: usize| (0..l.kernel_len()).map(|i| (f * 100 + i) as u16).collect();
            let k = l.assemble(&lay(&l, kernel), &[]).unwrap();
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
            precode: false,
            cores: 2,
        };
        let mut s = lay(&l, |_| vec![1; 12]);
        let k = l.assemble(&s, &[]).unwrap();
        assert_eq!((k.shape, k.extras.len()), ([3, 1, 3, 3], 9));
        s[1].push(0);
        assert_eq!(
            l.assemble(&s, &[]).unwrap_err().1.code,
            StreamCode::CoefElementCount
        );
        s[1][0] = 5;
        assert_eq!(
            l.assemble(&s, &[]).unwrap_err(),
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
            precode: false,
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
            l.assemble(&ok, &[]).unwrap_err().1.code,
            StreamCode::CoefKernelOrder
        );
        let bad = [stream(3, 26), stream(1, 14)];
        assert_eq!(
            l.assemble(&bad, &[]).unwrap_err().1.code,
            StreamCode::CoefKernelCount
        );
        let short = [stream(2, 25), stream(1, 14)];
        assert_eq!(
            l.assemble(&short, &[]).unwrap_err().1.code,
            StreamCode::CoefElementCount
        );
    }

    /// v7 streams of `kernels` (numbered by the stride-4 z offset), in `order`, each
    /// core's kernels in groups of `group`, bias before and z offset after each kernel.
    fn v7_streams(
        l: &Layout,
        order: Order,
        plan: &[Vec<usize>],
        kernels: &[Vec<u16>],
    ) -> Vec<Vec<u16>> {
        let bytes = |v: u32| (0..4).map(move |i| ((v >> (8 * i)) & 0xff) as u16);
        plan.iter()
            .map(|core| {
                let mut s = vec![core.len() as u16, 0];
                for group in core.chunks(l.group) {
                    let mut started = vec![false; group.len()];
                    let mut left = vec![l.kernel_len(); group.len()];
                    order.each(l.kernel, group.len(), |j, e| {
                        let f = group[j];
                        if !started[j] {
                            s.extend(bytes(1000 + f as u32));
                            started[j] = true;
                        }
                        s.push(kernels[f][e]);
                        left[j] -= 1;
                        if left[j] == 0 {
                            s.extend(bytes(4 * f as u32));
                        }
                    });
                }
                s
            })
            .collect()
    }

    #[test]
    fn v7_kernels_are_read_in_their_order_and_named_by_their_z_offsets() {
        let l = Layout {
            channels: 5,
            kernel: [1, 1, 9],
            group: 2,
            depthwise: false,
            extras: 0,
            head: 2,
            sign_lowest: false,
            inline: 8,
            avg_bias: 0,
            precode: false,
            cores: 2,
        };
        let kernels: Vec<Vec<u16>> = (0..5)
            .map(|f| (0..9).map(|i| ((f * 9 + i) * 7 % 251) as u16).collect())
            .collect();
        // Core 0 takes 3 kernels (a balancing plan: not in number order), core 1 takes 2.
        let plan = [vec![4, 0, 2], vec![1, 3]];
        let zdp3 = Features {
            zdp: Some(Order::Zdp3),
            xydp: Some(Order::Xydp6),
        };
        let streams = v7_streams(&l, Order::Zdp3, &plan, &kernels);
        let k = l.assemble(&streams, &[zdp3]).unwrap();
        assert_eq!((k.order, k.shape), (Some(Order::Zdp3), [5, 9, 1, 1]));
        assert_eq!(k.weights, kernels.concat());
        assert_eq!(k.inline[3], [1003, 12]);
        // Read in another order the z offsets name no kernel set: refused, with the orders
        // tried named. (Where a 1x1 kernel's last chunk of slices is the same in two orders,
        // the z offsets cannot tell them apart: the part's features, `Features::of_target`,
        // choose, and two orders that both fit but differ are refused.)
        let plain = Features {
            zdp: None,
            xydp: None,
        };
        let e = l.assemble(&streams, &[plain]).unwrap_err().1;
        assert_eq!(e.code, StreamCode::CoefKernelOrder);
        assert!(e.message.contains("[Plain]"), "{}", e.message);
        // Every candidate: ZDP3 is the one that fits.
        let k = l.assemble(&streams, &Features::candidates(None)).unwrap();
        assert_eq!(k.order, Some(Order::Zdp3));
    }
}
