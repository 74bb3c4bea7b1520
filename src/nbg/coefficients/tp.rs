//! The kernel buffers of fully-connected layers that run on the TP engine, cut by the TP
//! commands that read them and decoded, each part re-encoded bit for bit.
//!
//! Facts (flycat0101/gpu-viv6-andy, the vendor's OpenVX driver; read by a helper session,
//! nothing copied):
//! - `gc_vx_nn_command.c` (04c7e500) `_fill_TP_SINGLE_FC_Command`: a TP fully-connected command
//!   reads S = `in_image_z_size` inputs (slices) and writes F = `out_loop_4_count` outputs
//!   (filters), with `alu_horz_proc_count` = (F - 1) & 63 and `alu_vert_proc_count` =
//!   (F - 1) >> 6, and `alu_load_pwl_lut_address` pointing at its kernel buffer.
//! - `gc_vx_nn_encoder.c` (1eb0dc99) writes that buffer in one of two layouts, by a hardware
//!   feature the file does not name (`TP_COMPRESSION_ENHANCEMENT`):
//!   - *zero-run* (`fillinTPKernelBuffer`): S 5-bit stream sizes in units of 64 bytes, padded
//!     to 64 bytes; F 32-bit biases, padded; per slice a stream: a 4-bit run width z, then for
//!     the filters codes of a z-bit run of skip values (the command's `coef_zp`) and an 8- or
//!     16-bit weight, a code emitted when the run is full, the weight is not the skip value or
//!     the filter is the last; each stream padded to 64 bytes;
//!   - *Huffman* (`fillinTPKernelBufferHuffman`): the 28 bytes of the NN coefficient header
//!     (flags, run-length table, symbol map, `avg_bias`), S 14-bit stream sizes in bits, padded
//!     to 64 bytes; F 32-bit biases, padded; per slice one stream in the NN streams' pair code
//!     (`code`, `element`) holding the slice's F weights less `avg_bias` (the difference to the
//!     previous one with `precode`); each stream padded to 64 bytes, the buffer too.
//!
//!   Weights go slice by slice (`reorderTPKernelBufferHuffman`): element (s, f) is the weight
//!   of input s for output f.
//!
//! Measured (`notebooks/coefficients.md`, "TP fully-connected buffers"): over the public v1
//! files' 42 TP parts (6.56 MB) each reads in exactly one layout and re-encodes; the A733
//! toolkit's Huffman streams (0x00010016) start on the next byte instead of the next 64 bytes,
//! which no public source says (both are tried, the one that ends on the part's end kept);
//! MediaPipe's hand landmark heads come back exactly from `ameba-hand_landmark_lite_int16`.

use super::code::{self, Writer};
use super::element::Scheme;
use super::{CutCode, HEADER_BYTES, Header, Operation, decode_stream};
use crate::nbg::fieldmap::tp_command as tp;
use crate::nbg::parse::command_tables::TpCommand;
use serde::Serialize;

/// Bytes of the Huffman layout's header (the NN coefficient header up to `stream_size`).
const HUFFMAN_HEADER: u64 = 28;

/// What a TP fully-connected command says about its part of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shape {
    /// The TP command's position in its table.
    pub command: usize,
    /// S: inputs (`in_image_z_size`).
    pub slices: u64,
    /// F: outputs (`out_loop_4_count`).
    pub filters: u64,
    /// The skip value of the zero-run layout (`coef_zp`).
    pub coef_zp: u16,
}

impl Shape {
    /// The shape `c` gives, when it is a fully-connected command: S and F non-zero and F - 1
    /// split over `alu_horz_proc_count` and `alu_vert_proc_count` as the vendor writes it.
    pub fn of(c: &TpCommand) -> Option<Shape> {
        let w = &c.words;
        let slices = tp::word1::in_image_z_size.read(w);
        let filters = tp::word22::out_loop_4_count.read(w);
        let horz = tp::word6::alu_horz_proc_count.read(w);
        let vert = tp::word6::alu_vert_proc_count.read(w);
        let fc = slices > 0 && filters > 0 && (filters - 1) == (vert << 6 | horz);
        fc.then(|| Shape {
            command: c.index,
            slices,
            filters,
            coef_zp: tp::word29::coef_zp.read(w) as u16,
        })
    }
}

/// The 28-byte header of the Huffman layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HuffmanHeader {
    /// `precode`: each 8-bit weight coded as the difference to the previous one.
    pub precode: bool,
    /// `bit16`: 16-bit weights.
    pub bit16: bool,
    /// `fp16`.
    pub fp16: bool,
    /// `reserved1`.
    pub reserved1: u8,
    /// `version`.
    pub version: u8,
    /// `run_length_size`.
    pub run_length_size: u8,
    /// `run_length_table`.
    pub run_length_table: Vec<u8>,
    /// `symbol_map`.
    pub symbol_bits: [u8; 8],
    /// `avg_bias`: subtracted from every weight before coding.
    pub avg_bias: u16,
    /// `reserved2`.
    pub reserved2: u16,
}

impl HuffmanHeader {
    fn of(h: Header) -> HuffmanHeader {
        HuffmanHeader {
            precode: h.precode,
            bit16: h.bit16,
            fp16: h.fp16,
            reserved1: h.reserved1,
            version: h.version,
            run_length_size: h.run_length_size,
            run_length_table: h.run_length_table,
            symbol_bits: h.symbol_bits,
            avg_bias: h.avg_bias,
            reserved2: h.reserved2,
        }
    }

    /// The 28 bytes, through the NN header's field map.
    fn encode(&self) -> Option<Vec<u8>> {
        let h = Header {
            precode: self.precode,
            bit16: self.bit16,
            fp16: self.fp16,
            reserved1: self.reserved1,
            version: self.version,
            run_length_size: self.run_length_size,
            run_length_table: self.run_length_table.clone(),
            symbol_bits: self.symbol_bits,
            avg_bias: self.avg_bias,
            reserved2: self.reserved2,
            stream_bits: Vec::new(),
            trailing_words: vec![0; 9],
        };
        let mut b = h.encode().ok()?;
        b.truncate(HUFFMAN_HEADER as usize);
        Some(b)
    }
}

/// How a part is laid out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Layout {
    /// `fillinTPKernelBuffer`.
    ZeroRun {
        /// Each slice's run width z.
        run_widths: Vec<u8>,
        /// Bits per weight: 8 or 16.
        weight_bits: u8,
    },
    /// `fillinTPKernelBufferHuffman`.
    Huffman {
        /// The header.
        header: HuffmanHeader,
        /// Each slice's stream, in bits.
        stream_bits: Vec<u32>,
        /// The bytes a stream starts on: 64, or 1 (the A733 toolkit's).
        stream_align: u64,
    },
}

/// One command's part of a TP buffer, decoded.
#[derive(Clone, Debug, Serialize)]
pub struct Part {
    /// What the command says.
    pub shape: Shape,
    /// The operation that runs it, and its layer.
    pub operation: Option<Operation>,
    /// File offset.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// The layout it reads in.
    pub layout: Layout,
    /// One 32-bit bias per filter, as stored.
    pub biases: Vec<u32>,
    /// The weights in (filter, slice) order: the fully-connected matrix, output by input.
    #[serde(skip)]
    pub weights: Vec<u16>,
    /// Its bytes written again from what was decoded.
    #[serde(skip)]
    pub rewritten: Vec<u8>,
}

impl Part {
    /// Bits per weight.
    pub fn weight_bits(&self) -> u8 {
        match &self.layout {
            Layout::ZeroRun { weight_bits, .. } => *weight_bits,
            Layout::Huffman { header, .. } => 8 << u8::from(header.bit16),
        }
    }

    /// The name its tensors go by: layer, operation, TP command.
    pub fn name(&self) -> String {
        let op = self
            .operation
            .as_ref()
            .map_or("no-operation".to_string(), |o| {
                format!("layer{}.{}.op{}", o.layer, o.layer_name, o.index)
            });
        format!("{op}.tp{}", self.shape.command)
    }
}

/// A coefficient entry TP commands read, cut into their parts.
#[derive(Clone, Debug, Serialize)]
pub struct Buffer {
    /// Its coefficient-table entry.
    pub entry: usize,
    /// File offset.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// The parts, in offset order.
    pub parts: Vec<Part>,
}

impl Buffer {
    /// Whether every part re-encodes to its bytes and the parts tile the entry.
    pub fn reencoded(&self, bytes: &[u8]) -> bool {
        let tiles = self.parts.first().is_some_and(|p| p.offset == self.offset)
            && self
                .parts
                .windows(2)
                .all(|w| w[0].offset + w[0].size == w[1].offset)
            && self.parts.last().map(|p| p.offset + p.size) == Some(self.offset + self.size);
        tiles
            && self.parts.iter().all(|p| {
                let at = (p.offset - self.offset) as usize;
                bytes.get(at..at + p.size as usize) == Some(&p.rewritten[..])
            })
    }
}

/// Rounded up to a multiple of 64.
fn al64(n: u64) -> u64 {
    n.div_ceil(64) * 64
}

/// Whether every byte of `b` is zero.
fn zero(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0)
}

/// Cut entry `entry` (`bytes`, at file offset `offset`) into the parts its commands read
/// (`parts`: each command's shape, operation and `src_offset`) and decode each. The first part
/// that reads in neither layout refuses the entry, with its code and offset in the entry.
pub fn cut(
    entry: usize,
    offset: u64,
    bytes: &[u8],
    parts: &[(Option<Shape>, Option<Operation>, u64)],
) -> Result<Buffer, (CutCode, u64)> {
    let size = bytes.len() as u64;
    let mut sorted: Vec<_> = parts.to_vec();
    sorted.sort_by_key(|p| p.2);
    sorted.dedup_by_key(|p| p.2);
    let mut out = Vec::with_capacity(sorted.len());
    for (i, (shape, operation, start)) in sorted.iter().enumerate() {
        let end = sorted.get(i + 1).map_or(size, |n| n.2);
        let Some(shape) = shape else {
            return Err((CutCode::CoefTpCommand, *start));
        };
        if *start >= end || end > size {
            return Err((CutCode::CoefStreamOutOfBounds, *start));
        }
        let b = &bytes[*start as usize..end as usize];
        let (layout, biases, weights, rewritten) = huffman(b, shape)
            .or_else(|| zero_run(b, shape, 8))
            .or_else(|| zero_run(b, shape, 16))
            .ok_or((CutCode::CoefTpLayout, *start))?;
        out.push(Part {
            shape: *shape,
            operation: operation.clone(),
            offset: offset + start,
            size: end - start,
            layout,
            biases,
            weights,
            rewritten,
        });
    }
    Ok(Buffer {
        entry,
        offset,
        size,
        parts: out,
    })
}

/// A decoded part: its layout, biases, weights in (filter, slice) order and its bytes again.
type Decoded = (Layout, Vec<u32>, Vec<u16>, Vec<u8>);

/// The biases at `at` (F words) and where the streams start; `None` past the part.
fn biases(b: &[u8], at: u64, filters: u64) -> Option<(Vec<u32>, u64)> {
    let end = at.checked_add(filters.checked_mul(4)?)?;
    let bytes = b.get(at as usize..end as usize)?;
    let next = at + al64(filters * 4);
    zero(b.get(end as usize..next as usize)?).then(|| {
        let v = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        (v, next)
    })
}

/// Slices by filters, bounded by the part: every weight takes at least a bit.
fn elements(b: &[u8], s: &Shape) -> Option<usize> {
    let n = s.slices.checked_mul(s.filters)?;
    (n <= 8 * b.len() as u64).then_some(n as usize)
}

/// (filter, slice) order from slice-major weights.
fn transposed(slice_major: &[u16], s: &Shape) -> Vec<u16> {
    let (sl, f) = (s.slices as usize, s.filters as usize);
    let mut out = vec![0u16; slice_major.len()];
    // Element i is (slice i / f, filter i % f): a row per slice, without a division each.
    for (slice, row) in slice_major.chunks(f.max(1)).enumerate() {
        for (filter, &w) in row.iter().enumerate() {
            out[filter * sl + slice] = w;
        }
    }
    out
}

/// The zero-run layout with `weight_bits`-bit weights.
fn zero_run(b: &[u8], s: &Shape, weight_bits: u8) -> Option<Decoded> {
    let n = elements(b, s)?;
    let (sl, f) = (s.slices, s.filters);
    let sizes_end = al64((5 * sl).div_ceil(32) * 4);
    if sizes_end > b.len() as u64 {
        return None;
    }
    let (bias, mut at) = biases(b, sizes_end, f)?;
    let skip = s.coef_zp;
    let mut slice_major = Vec::with_capacity(n);
    let mut widths = Vec::with_capacity(sl as usize);
    let mut body = Vec::with_capacity(b.len());
    let mut sizes = Writer::with_capacity(sizes_end as usize);
    for k in 0..sl {
        let units = u64::from(code::get(b, 5 * k, 5));
        let len = units * 64;
        let stream = b.get(at as usize..(at + len) as usize)?;
        let mut pos = 4u64;
        let z = code::get(stream, 0, 4) as u8;
        let mut got = 0u64;
        while got < f {
            let run = if z > 0 { code::get(stream, pos, z) } else { 0 };
            pos += u64::from(z);
            let w = code::get(stream, pos, weight_bits) as u16;
            pos += u64::from(weight_bits);
            got += u64::from(run) + 1;
            if got > f || pos > 8 * len {
                return None;
            }
            slice_major.extend(std::iter::repeat_n(skip, run as usize));
            slice_major.push(w);
        }
        // Written again by the vendor's rule, the stream must give these bytes.
        let again = zero_run_stream(&slice_major[(k * f) as usize..], z, weight_bits, skip);
        if again.len() as u64 != len || again != stream {
            return None;
        }
        body.extend_from_slice(&again);
        sizes.put(units as u32, 5);
        widths.push(z);
        at += len;
    }
    if at != b.len() as u64 {
        return None;
    }
    let mut out = padded_words(sizes, sizes_end);
    out.extend(bias.iter().flat_map(|v| v.to_le_bytes()));
    out.resize(al64(out.len() as u64) as usize, 0);
    out.extend(body);
    (out == b).then(|| {
        (
            Layout::ZeroRun {
                run_widths: widths,
                weight_bits,
            },
            bias,
            transposed(&slice_major, s),
            out,
        )
    })
}

/// One zero-run stream of a slice's weights (its first `F` of `weights`), padded to 64 bytes.
fn zero_run_stream(weights: &[u16], z: u8, weight_bits: u8, skip: u16) -> Vec<u8> {
    let max = (1u32 << z) - 1;
    let mut w = Writer::with_capacity(weights.len() * 2);
    w.put(u32::from(z), 4);
    let mut run = 0u32;
    let last = weights.len().saturating_sub(1);
    for (i, &v) in weights.iter().enumerate() {
        if run == max || v != skip || i == last {
            if z > 0 {
                w.put(run, z);
            }
            w.put(u32::from(v), weight_bits);
            run = 0;
        } else {
            run += 1;
        }
    }
    let (mut bytes, _) = w.finish();
    bytes.resize(al64(bytes.len() as u64) as usize, 0);
    bytes
}

/// `w`'s bytes, word-aligned and zero-padded to `to` bytes.
fn padded_words(w: Writer, to: u64) -> Vec<u8> {
    let (mut bytes, _) = w.finish();
    bytes.resize(to as usize, 0);
    bytes
}

/// The Huffman layout, its streams starting every 64 bytes or on the next byte.
fn huffman(b: &[u8], s: &Shape) -> Option<Decoded> {
    let mut head = b.get(..HUFFMAN_HEADER as usize)?.to_vec();
    head.resize(HEADER_BYTES as usize, 0);
    let h = HuffmanHeader::of(Header::read(&head)?);
    if h.version != 1 || h.reserved1 != 0 || h.reserved2 != 0 || h.fp16 || h.run_length_size > 18 {
        return None;
    }
    if h.encode()? != b[..HUFFMAN_HEADER as usize] {
        return None;
    }
    let n = elements(b, s)?;
    let (sl, f) = (s.slices, s.filters);
    let sizes_end = al64((8 * HUFFMAN_HEADER + 14 * sl).div_ceil(32) * 4);
    if sizes_end > b.len() as u64 {
        return None;
    }
    let bits: Vec<u32> = (0..sl)
        .map(|k| code::get(b, 8 * HUFFMAN_HEADER + 14 * k, 14))
        .collect();
    let (bias, start) = biases(b, sizes_end, f)?;
    let scheme = Scheme::of(
        h.bit16,
        h.run_length_size,
        &h.run_length_table,
        h.symbol_bits,
    )
    .ok()?
    .code_table();
    [64u64, 1].into_iter().find_map(|align| {
        let mut at = start;
        let mut body = Vec::with_capacity(b.len());
        let mut slice_major = Vec::with_capacity(n);
        for &nbits in &bits {
            let len = u64::from(nbits).div_ceil(8).next_multiple_of(align);
            let stream = b.get(at as usize..(at + len) as usize)?;
            let (_, coded, written) =
                decode_stream(&scheme, stream, u64::from(nbits), Some(f as usize), true).ok()?;
            if coded.len() as u64 != f || written != stream {
                return None;
            }
            let mut prev = 0u16;
            let mask = if h.bit16 { 0xffff } else { 0xff };
            slice_major.extend(coded.iter().map(|&c| {
                let c = if h.precode && !h.bit16 {
                    prev = (c + prev) & 0xff;
                    prev
                } else {
                    c
                };
                c.wrapping_add(h.avg_bias) & mask
            }));
            body.extend_from_slice(&written);
            at += len;
        }
        if al64(at) != b.len() as u64 || !zero(&b[at as usize..]) {
            return None;
        }
        let mut sizes = Writer::with_capacity(sizes_end as usize);
        for &nbits in &bits {
            sizes.put(nbits, 14);
        }
        let mut out = h.encode()?;
        let (sz, _) = sizes.finish();
        // The sizes follow the header's 224 bits: whole bytes, since 224 is.
        out.extend(sz);
        out.resize(sizes_end as usize, 0);
        out.extend(bias.iter().flat_map(|v| v.to_le_bytes()));
        out.resize(al64(out.len() as u64) as usize, 0);
        out.extend(body);
        out.resize(b.len(), 0);
        (out == b).then(|| {
            (
                Layout::Huffman {
                    header: h.clone(),
                    stream_bits: bits.clone(),
                    stream_align: align,
                },
                bias.clone(),
                transposed(&slice_major, s),
                out,
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(slices: u64, filters: u64, coef_zp: u16) -> Shape {
        Shape {
            command: 0,
            slices,
            filters,
            coef_zp,
        }
    }

    /// A zero-run part of `weights[s][f]`, written by the vendor's rule.
    fn zero_run_part(weights: &[Vec<u16>], z: u8, biases: &[u32], skip: u16) -> Vec<u8> {
        let streams: Vec<Vec<u8>> = weights
            .iter()
            .map(|w| zero_run_stream(w, z, 8, skip))
            .collect();
        let mut sizes = Writer::with_capacity(64);
        for s in &streams {
            sizes.put((s.len() / 64) as u32, 5);
        }
        let mut out = padded_words(sizes, al64((5 * weights.len() as u64).div_ceil(32) * 4));
        out.extend(biases.iter().flat_map(|v| v.to_le_bytes()));
        out.resize(al64(out.len() as u64) as usize, 0);
        out.extend(streams.concat());
        out
    }

    #[test]
    fn a_zero_run_part_decodes_to_its_matrix_and_rewrites() {
        // Three inputs, four outputs; skip value 7 runs.
        let w = vec![vec![7, 7, 9, 7], vec![1, 2, 3, 4], vec![7, 7, 7, 7]];
        let b = zero_run_part(&w, 2, &[10, 20, 30, 40], 7);
        let s = shape(3, 4, 7);
        let p = cut(5, 1000, &b, &[(Some(s), None, 0)]).unwrap();
        let part = &p.parts[0];
        assert!(matches!(
            part.layout,
            Layout::ZeroRun { weight_bits: 8, .. }
        ));
        assert_eq!(part.biases, [10, 20, 30, 40]);
        // (filter, slice) order.
        assert_eq!(part.weights, [7, 1, 7, 7, 2, 7, 9, 3, 7, 7, 4, 7]);
        assert!(p.reencoded(&b));
        // A flipped weight bit still reads, to other weights; a flipped size does not.
        let mut bad = b.clone();
        bad[0] ^= 1;
        assert_eq!(
            cut(5, 1000, &bad, &[(Some(s), None, 0)]).unwrap_err().0,
            CutCode::CoefTpLayout
        );
    }

    #[test]
    fn parts_are_cut_at_their_commands_offsets_and_checked() {
        let w = vec![vec![1, 2], vec![3, 4]];
        let one = zero_run_part(&w, 0, &[5, 6], 0);
        let mut b = one.clone();
        b.extend(&one);
        let s = shape(2, 2, 0);
        let len = one.len() as u64;
        let p = cut(0, 0, &b, &[(Some(s), None, len), (Some(s), None, 0)]).unwrap();
        assert_eq!(p.parts.len(), 2);
        assert_eq!((p.parts[1].offset, p.parts[1].size), (len, len));
        assert!(p.reencoded(&b));
        // A command that is not fully connected, a part past the entry.
        assert_eq!(
            cut(0, 0, &b, &[(None, None, 0)]).unwrap_err().0,
            CutCode::CoefTpCommand
        );
        assert_eq!(
            cut(0, 0, &b, &[(Some(s), None, 10 * len)]).unwrap_err().0,
            CutCode::CoefStreamOutOfBounds
        );
        // Slices by filters past what the bytes can hold.
        assert_eq!(
            cut(0, 0, &b, &[(Some(shape(u64::MAX, u64::MAX, 0)), None, 0)])
                .unwrap_err()
                .0,
            CutCode::CoefTpLayout
        );
    }
}
