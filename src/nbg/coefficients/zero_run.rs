//! NN coefficient buffers of VIP8000-class parts without coefficient compression (0x88): a
//! size table, then per NN core a stream of zero-run tokens, decoded and re-encoded bit for bit.
//!
//! Facts (Mesa `etnaviv_ml_nn_v7.c` at bminor/mesa-mesa bb06e082: `etna_ml_create_coeffs_v7`,
//! `write_core_*`, `wb_stream_*`; the vendor's encoder `gc_vx_nn_encoder.c` at
//! flycat0101/gpu-viv6-andy 0171b49f: `calculateWeightBiasBufferSizeForZeroRunLen`,
//! `reorderWeightBiasBufferForHuffman`; read by a helper session, nothing copied):
//! - bytes `[0, 64)`: one 32-bit word per NN core, its stream's bytes (a multiple of 64, 0 for
//!   an unused core), then zeros; the streams follow one after the other;
//! - a stream, bits LSB first: 8 bits run width `zrl`, 16 bits the core's kernel count, then
//!   its kernels group by group in the element order of the part's dot-product features
//!   (`kernels::Order`), as tokens of a `zrl`-bit run of zero-point weights and an 8-bit value;
//!   each kernel's 32-bit bias right after its first token in its first input slice, its 32-bit
//!   z offset right after the token of its last weight; zeros to 32 bits, then to 64 bytes;
//! - a token is written where the weight is not the zero point, where the run is as long as
//!   `zrl` bits hold and at the kernel's last weight; the vendor's encoder forces more where a
//!   slice ends (measured on the simulator's compiles, not fully recovered), so the tokens are
//!   kept as read and the buffer is written again from them.
//!
//! Measured on the simulator's compiles for 0x88 (twelve uint8 models: 1x1, 3x3 and 5x5 kernels,
//! depthwise, run widths 0 to 5: every weight, bias and z offset) and on the public
//! `alike-a311d-network_binary-0009` (int8, 13 buffers). The z offsets (`stride * kernel`) name
//! each kernel: the vendor's balancing plan deals kernels to cores in an order the file does not
//! give otherwise.

use super::code::{self, Writer};
use super::kernels::{Features, Order};
use super::{Command, Operation};
use serde::Serialize;

/// Bytes of the size table.
const TABLE: u64 = 64;

/// One core's stream.
#[derive(Clone, Debug, Serialize)]
pub struct Stream {
    /// Its core.
    pub core: usize,
    /// File offset.
    pub offset: u64,
    /// Bytes (its size-table word).
    pub bytes: u64,
    /// Its run width.
    pub zrl: u8,
    /// Its kernels.
    pub kernels: u16,
    /// Bits of tokens, biases and z offsets, from the stream's start.
    pub bits: u64,
}

/// A zero-run buffer, decoded.
#[derive(Clone, Debug, Serialize)]
pub struct Buffer {
    /// Its entry in the coefficient table.
    pub entry: usize,
    /// File offset.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// The NN command that reads it.
    pub command: Command,
    /// The operation that runs that command.
    pub operation: Option<Operation>,
    /// The streams, in core order (unused cores left out).
    pub streams: Vec<Stream>,
    /// The order the kernels were read in.
    pub order: Order,
    /// Channels, z, y, x.
    pub shape: [usize; 4],
    /// Every weight as stored (8-bit), in shape order.
    #[serde(skip)]
    pub weights: Vec<u8>,
    /// Each kernel's 32-bit bias and z offset, in channel order.
    #[serde(skip)]
    pub inline: Vec<[u32; 2]>,
    /// Whether the buffer, written again from what was decoded, gives its bytes.
    pub reencoded: bool,
    /// Its bytes written again.
    #[serde(skip)]
    pub rewritten: Vec<u8>,
}

/// Why a buffer does not read as a zero-run buffer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotZeroRun {
    /// Byte offset in the buffer where it showed.
    pub at: u64,
    /// What.
    pub message: String,
}

fn not(at: u64, message: impl Into<String>) -> NotZeroRun {
    NotZeroRun {
        at,
        message: message.into(),
    }
}

/// Whether `bytes` starts with a size table rather than a coefficient header: the coefficient
/// headers' version nibble is 1, a size word's low six bits are zero.
pub fn looks_like(bytes: &[u8]) -> bool {
    bytes.len() as u64 > TABLE
        && bytes[0] & 0x3f == 0
        && bytes[..TABLE as usize]
            .chunks_exact(4)
            .any(|w| w.iter().any(|&b| b != 0))
}

/// One kernel as read: weights in (z, y, x) order, bias, z offset.
type Read = (Vec<u8>, u32, u32);

/// Every kernel's weights in channel order, and each one's bias and z offset.
type Kernels = (Vec<u8>, Vec<[u32; 2]>);

/// Decode `bytes` (entry `entry` at file offset `offset`) read by `command`, in the order of
/// the first of `features` whose z offsets name every kernel once.
pub fn cut(
    entry: usize,
    offset: u64,
    bytes: &[u8],
    command: Command,
    features: &[Features],
) -> Result<Buffer, NotZeroRun> {
    let size = bytes.len() as u64;
    if size <= TABLE {
        return Err(not(0, "no room for streams after the size table"));
    }
    let sizes: Vec<u64> = bytes[..TABLE as usize]
        .chunks_exact(4)
        .map(|w| u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
        .collect();
    let cores = sizes.iter().rposition(|&s| s != 0).map_or(0, |i| i + 1);
    let mut at = TABLE;
    let mut streams = Vec::with_capacity(cores);
    for (core, &len) in sizes.iter().enumerate().take(cores) {
        if len % 64 != 0 || at + len > size {
            return Err(not(
                4 * core as u64,
                format!("core {core}'s size {len} does not fit"),
            ));
        }
        if len > 0 {
            streams.push((core, at, len));
        }
        at += len;
    }
    // Zeros, if anything, after the last stream (measured: alike-a311d's small buffers end
    // with up to 384 zero bytes).
    let tail_zero = at <= size && bytes[at as usize..].iter().all(|&b| b == 0);
    if !tail_zero || bytes[(4 * cores)..TABLE as usize].iter().any(|&b| b != 0) {
        return Err(not(
            at.min(size),
            "the streams are not followed by zeros to the buffer's end",
        ));
    }
    let size_of = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    let kernel = [
        size_of(command.kernel[0]),
        size_of(command.kernel[1]),
        if command.depthwise {
            1
        } else {
            size_of(command.kernel[2])
        },
    ];
    let channels = size_of(command.output_channels);
    let group = size_of(command.kernels_per_core);
    let len = kernel.iter().try_fold(1usize, |a, &k| a.checked_mul(k));
    // The most elements the streams can stand for, bounded before anything is allocated: a
    // token of `zrl` + 8 bits stands for at most 2^zrl of them (a dense depthwise kernel of
    // 67 channels is 40,401 elements in 3,848 bytes, measured on 0x88), and never more than
    // the NN streams' bound per bit.
    let budget: u64 = streams
        .iter()
        .map(|&(_, at, len)| {
            let zrl = u64::from(bytes[at as usize].min(16));
            ((len * 8 / (zrl + 8)) << zrl).min(len * 8 * super::ELEMENTS_PER_BIT)
        })
        .sum();
    let len = len
        .filter(|&l| l > 0 && channels > 0 && group > 0)
        .filter(|&l| (l as u64).saturating_mul(channels as u64) <= budget)
        .ok_or_else(|| not(0, "the command's kernels do not fit the buffer"))?;
    let zp = command.coef_zero_point as u8;
    let mut tried = Vec::new();
    let mut last = not(0, "no order");
    for f in features {
        let order = f.order(kernel);
        if tried.contains(&order) {
            continue;
        }
        tried.push(order);
        match read(bytes, &streams, kernel, len, group, channels, zp, order) {
            Ok((kernels, heads)) => {
                let shape = [channels, kernel[2], kernel[1], kernel[0]];
                let (weights, inline) = kernels;
                let rewritten = write(&heads, &inline, kernel, len, group, order).map(|mut w| {
                    w.resize(w.len().max(bytes.len()), 0);
                    w
                });
                let reencoded = rewritten.as_deref() == Some(bytes);
                return Ok(Buffer {
                    entry,
                    offset,
                    size,
                    command,
                    operation: None,
                    streams: heads
                        .iter()
                        .map(|h| Stream {
                            core: h.core,
                            offset: offset + h.at,
                            bytes: h.len,
                            zrl: h.zrl,
                            kernels: h.count,
                            bits: h.bits,
                        })
                        .collect(),
                    order,
                    shape,
                    weights,
                    inline,
                    reencoded,
                    rewritten: rewritten.unwrap_or_default(),
                });
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

impl Buffer {
    /// The name its tensors go by: layer, operation, NN command and entry.
    pub fn name(&self) -> String {
        let op = self
            .operation
            .as_ref()
            .map_or("no-operation".to_string(), |o| {
                format!("layer{}.{}.op{}", o.layer, o.layer_name, o.index)
            });
        format!("{op}.nn{}.entry{}", self.command.index, self.entry)
    }
}

/// A stream's head and where its kernels went.
struct Head {
    core: usize,
    at: u64,
    len: u64,
    zrl: u8,
    count: u16,
    bits: u64,
    /// Kernel numbers in stream order.
    kernels: Vec<usize>,
    /// The tokens as read: a run of zero points and a value.
    tokens: Vec<(u32, u8)>,
}

/// Every stream read in `order`: the weights by kernel number and each kernel's bias and z
/// offset, with each stream's head.
#[allow(clippy::too_many_arguments)]
fn read(
    bytes: &[u8],
    streams: &[(usize, u64, u64)],
    kernel: [usize; 3],
    len: usize,
    group: usize,
    channels: usize,
    zp: u8,
    order: Order,
) -> Result<(Kernels, Vec<Head>), NotZeroRun> {
    let slice = kernel[0] * kernel[1];
    let mut read: Vec<Read> = Vec::with_capacity(channels);
    let mut heads = Vec::with_capacity(streams.len());
    for &(core, at, n) in streams {
        let s = &bytes[at as usize..(at + n) as usize];
        let bits = 8 * n;
        let mut pos = 24u64;
        let zrl = code::get(s, 0, 8) as u8;
        let count = code::get(s, 8, 16) as u16;
        if zrl > 16 {
            return Err(not(at, format!("core {core}: run width {zrl}")));
        }
        let take = |n: u8, pos: &mut u64| -> Result<u32, NotZeroRun> {
            if *pos + u64::from(n) > bits {
                return Err(not(at, format!("core {core}: past its stream")));
            }
            let v = code::get(s, *pos, n);
            *pos += u64::from(n);
            Ok(v)
        };
        let first = read.len();
        if first + usize::from(count) > channels {
            return Err(not(
                at,
                format!("core {core}: {count} kernels, more than the command's"),
            ));
        }
        let (mut pending, mut value) = (0u32, None::<u8>);
        let mut tokens = Vec::new();
        let groups = usize::from(count).div_ceil(group);
        for g in 0..groups {
            let n = if g + 1 < groups {
                group
            } else {
                usize::from(count) - g * group
            };
            let mut ks: Vec<Read> = vec![(vec![zp; len], 0, 0); n];
            let mut biased = vec![false; n];
            let mut left = vec![len; n];
            for (j, e) in order.walk(kernel, n) {
                if pending == 0 && value.is_none() {
                    pending = take(zrl, &mut pos)?;
                    value = Some(take(8, &mut pos)? as u8);
                    tokens.push((pending, value.unwrap_or(0)));
                }
                let token = match pending {
                    0 => value.take(),
                    _ => {
                        pending -= 1;
                        None
                    }
                };
                if let Some(v) = token {
                    ks[j].0[e] = v;
                }
                left[j] -= 1;
                if token.is_some() && !biased[j] && e / slice == 0 {
                    ks[j].1 = take(32, &mut pos)?;
                    biased[j] = true;
                }
                if left[j] == 0 {
                    if token.is_none() || !biased[j] {
                        return Err(not(
                            at,
                            format!("core {core}: a kernel ends without its token"),
                        ));
                    }
                    ks[j].2 = take(32, &mut pos)?;
                }
            }
            read.extend(ks);
        }
        if pending != 0 || value.is_some() {
            return Err(not(
                at,
                format!("core {core}: a token runs past its kernels"),
            ));
        }
        let end = pos.next_multiple_of(32);
        let tail_zero = (pos..end).all(|b| code::get(s, b, 1) == 0)
            && s[(end / 8) as usize..].iter().all(|&b| b == 0);
        if end.div_ceil(512) * 64 != n || !tail_zero {
            return Err(not(
                at,
                format!("core {core}: {pos} bits do not end its stream"),
            ));
        }
        heads.push(Head {
            core,
            at,
            len: n,
            zrl,
            count,
            bits: pos,
            kernels: (first..first + usize::from(count)).collect(),
            tokens,
        });
    }
    if read.len() != channels {
        return Err(not(
            0,
            format!("{} kernels, the command says {channels}", read.len()),
        ));
    }
    // The z offsets: a stride times each kernel's number, every number once.
    let stride = read.iter().fold(0u32, |a, k| gcd(a, k.2));
    let mut number = vec![0usize; read.len()];
    let mut seen = vec![false; channels];
    for (i, k) in read.iter().enumerate() {
        let f = k.2.checked_div(stride).unwrap_or(0) as usize;
        if f >= channels || seen[f] {
            return Err(not(0, "the z offsets do not name every kernel once"));
        }
        seen[f] = true;
        number[i] = f;
    }
    let mut weights = vec![0u8; channels * len];
    let mut inline = vec![[0u32; 2]; channels];
    for (i, (w, b, z)) in read.into_iter().enumerate() {
        let f = number[i];
        weights[f * len..(f + 1) * len].copy_from_slice(&w);
        inline[f] = [b, z];
    }
    for h in &mut heads {
        h.kernels = h.kernels.iter().map(|&i| number[i]).collect();
    }
    Ok(((weights, inline), heads))
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The buffer written again from its streams' heads, tokens and kernels' biases and z
/// offsets, in the order they were read. The tokens are kept as read: which zero points the
/// vendor's encoder forces into a token (where a slice ends, measured on the simulator's
/// compiles) is not fully recovered, so the weights alone do not give them back.
fn write(
    heads: &[Head],
    inline: &[[u32; 2]],
    kernel: [usize; 3],
    len: usize,
    group: usize,
    order: Order,
) -> Option<Vec<u8>> {
    let slice = kernel[0] * kernel[1];
    let mut table = vec![0u8; TABLE as usize];
    let mut body = Vec::new();
    for h in heads {
        let mut w = Writer::with_capacity(h.len as usize);
        w.put(u32::from(h.zrl), 8);
        w.put(u32::from(h.count), 16);
        let mut tokens = h.tokens.iter();
        let (mut pending, mut value) = (0u32, false);
        let groups = h.kernels.len().div_ceil(group);
        for g in 0..groups {
            let ks = &h.kernels[g * group..((g + 1) * group).min(h.kernels.len())];
            let mut biased = vec![false; ks.len()];
            let mut left = vec![len; ks.len()];
            for (j, e) in order.walk(kernel, ks.len()) {
                if pending == 0 && !value {
                    let &(run, v) = tokens.next()?;
                    w.put(run, h.zrl);
                    w.put(u32::from(v), 8);
                    (pending, value) = (run, true);
                }
                let token = if pending > 0 {
                    pending -= 1;
                    false
                } else {
                    value = false;
                    true
                };
                let f = ks[j];
                left[j] -= 1;
                if token && !biased[j] && e / slice == 0 {
                    w.put(inline.get(f)?[0], 32);
                    biased[j] = true;
                }
                if left[j] == 0 {
                    w.put(inline.get(f)?[1], 32);
                }
            }
        }
        let (mut bytes, bits) = w.finish();
        bytes.resize((bits.next_multiple_of(32) / 8) as usize, 0);
        bytes.resize(bytes.len().next_multiple_of(64), 0);
        let n = u32::try_from(bytes.len()).ok()?;
        table
            .get_mut(4 * h.core..4 * h.core + 4)?
            .copy_from_slice(&n.to_le_bytes());
        body.extend(bytes);
    }
    table.extend(body);
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(kernel: [u64; 3], channels: u64, group: u64, zp: u64) -> Command {
        Command {
            index: 0,
            kernel,
            output_channels: channels,
            kernels_per_core: group,
            depthwise: false,
            kernel_data_type: 0,
            coef_zero_point: zp,
            per_channel_post_mul: false,
        }
    }

    /// One core's stream: run width `zrl`, one 1x1x2 kernel as the tokens `tokens` (run,
    /// value), its bias after the first and its z offset after the last.
    fn stream(zrl: u8, tokens: &[(u32, u8)], bias: u32, zoff: u32) -> Vec<u8> {
        let mut w = Writer::with_capacity(64);
        w.put(u32::from(zrl), 8);
        w.put(1, 16);
        for (i, &(run, v)) in tokens.iter().enumerate() {
            w.put(run, zrl);
            w.put(u32::from(v), 8);
            if i == 0 {
                w.put(bias, 32);
            }
        }
        w.put(zoff, 32);
        let (mut b, _) = w.finish();
        b.resize(64, 0);
        b
    }

    #[test]
    fn kernels_come_back_named_by_their_z_offsets() {
        // Two cores; core 0 holds kernel 1 (z offset 16), core 1 kernel 0 (z offset 0).
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(&64u32.to_le_bytes());
        b[4..8].copy_from_slice(&64u32.to_le_bytes());
        b.extend(stream(0, &[(0, 7), (0, 9)], 100, 16));
        b.extend(stream(0, &[(0, 1), (0, 2)], 200, 0));
        let c = command([1, 1, 2], 2, 1, 0);
        let z = cut(4, 4096, &b, c, &Features::candidates(None)).unwrap();
        assert_eq!(z.shape, [2, 2, 1, 1]);
        assert_eq!(z.weights, [1, 2, 7, 9]);
        assert_eq!(z.inline, [[200, 0], [100, 16]]);
        assert!(z.reencoded);
        assert_eq!(z.rewritten, b);
    }

    #[test]
    fn a_run_of_zero_points_and_a_zero_tail_read_back() {
        // One core, run width 2, a 1x1x3 kernel [3, 5, 5] with zero point 5: the value 3,
        // then a run of one zero point ended by the last weight's token (the zero point).
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(&64u32.to_le_bytes());
        b.extend(stream(2, &[(0, 3), (1, 5)], 42, 0));
        b.extend([0u8; 128]);
        let c = command([1, 1, 3], 1, 1, 5);
        let z = cut(0, 0, &b, c, &Features::candidates(None)).unwrap();
        assert_eq!(z.weights, [3, 5, 5]);
        assert_eq!(z.inline, [[42, 0]]);
        assert!(z.reencoded);
    }

    #[test]
    fn broken_buffers_are_refused_not_read() {
        let c = command([1, 1, 2], 2, 1, 0);
        let f = Features::candidates(None);
        // A size past the buffer, a non-zero tail, two kernels both named 0.
        let mut b = vec![0u8; 128];
        b[..4].copy_from_slice(&128u32.to_le_bytes());
        assert!(cut(0, 0, &b, c, &f).is_err());
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(&64u32.to_le_bytes());
        b[4..8].copy_from_slice(&64u32.to_le_bytes());
        b.extend(stream(0, &[(0, 7), (0, 9)], 100, 0));
        b.extend(stream(0, &[(0, 1), (0, 2)], 200, 0));
        assert!(cut(0, 0, &b, c, &f).is_err());
        b.push(1);
        assert!(cut(0, 0, &b, c, &f).is_err());
        assert!(!looks_like(&[0x12; 100]));
    }
}
