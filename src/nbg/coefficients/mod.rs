//! NN coefficient buffers of VIP9000-class parts, cut into what they hold and decoded: the
//! 64-byte header (`fieldmap::coef_header_v8`, Mesa's `etna_nn_header_v8`), one weight stream
//! per NN core, each padded to 512 bits, then one bias per output channel.
//!
//! The cut is Mesa's (etnaviv_ml_nn_v8.c: `fill_weights` writes the streams one after the other
//! from byte 64, `encoder_flush` pads each to 64 bytes, `fill_biases` follows). The bias width
//! is the serializer's, measured: 4 bytes in Mesa's 8-bit writer, 6 bytes (signed 48-bit) in
//! the A733 files' 16-bit buffers.
//!
//! Each stream is decoded in three steps, each proved by its inverse: bits to codes (`code`,
//! re-written to the same bits), codes to elements (`element`, each re-encoded to the same code),
//! elements to kernels (`kernels`, by the NN command that reads the buffer).

mod code;
mod element;
pub mod images;
pub mod kernels;
pub mod plain;
pub mod stream_error;
pub mod tables;
pub mod tp;
pub mod zero_run;

use crate::nbg::fieldmap::{Overflow, View, Writer, coef_header_v8 as h};
use crate::nbg::parse::patch_targets::CoefficientView;
use crate::nbg::parse::records::Records;
use element::{CodeTable, Element, Scheme};
use serde::Serialize;
use stream_error::{StreamCode, StreamError};

/// Bytes of the header (`align(sizeof(etna_nn_header_v8), 64)`).
pub const HEADER_BYTES: u64 = 64;
/// Streams are padded to this many bits (`encoder_flush`).
const STREAM_ALIGN_BITS: u64 = 512;

/// The decoded header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Header {
    /// `precode`.
    pub precode: bool,
    /// `bit16`: 16-bit weights.
    pub bit16: bool,
    /// `fp16`.
    pub fp16: bool,
    /// `reserved1`.
    pub reserved1: u8,
    /// `version` (Mesa writes 1).
    pub version: u8,
    /// `run_length_size` (0: no zero-run-length code).
    pub run_length_size: u8,
    /// `run_length_table`.
    pub run_length_table: Vec<u8>,
    /// `symbol_map`: the bit length of each of the 8 symbols.
    pub symbol_bits: [u8; 8],
    /// `avg_bias`.
    pub avg_bias: u16,
    /// `reserved2`.
    pub reserved2: u16,
    /// `stream_size`: the bits of each core's stream, up to the first zero word.
    pub stream_bits: Vec<u32>,
    /// The `stream_size` words from the first zero one on, as stored.
    pub trailing_words: Vec<u32>,
}

impl Header {
    /// Decode the first 64 bytes of a buffer.
    pub fn read(bytes: &[u8]) -> Option<Header> {
        let v = View::new(&h::RECORD, bytes.get(..HEADER_BYTES as usize)?)?;
        let flags = v.uint(&h::flags);
        let map = v.uint(&h::symbol_map);
        let word6 = v.uint(&h::word6);
        let words = v.words(&h::stream_size);
        let used = words.iter().take_while(|&&w| w != 0).count();
        Some(Header {
            precode: h::flags::precode.get(flags) != 0,
            bit16: h::flags::bit16.get(flags) != 0,
            fp16: h::flags::fp16.get(flags) != 0,
            reserved1: h::flags::reserved1.get_as(flags),
            version: h::flags::version.get_as(flags),
            run_length_size: v.uint(&h::run_length_size) as u8,
            run_length_table: v.bytes(&h::run_length_table).to_vec(),
            symbol_bits: [
                h::symbol_map::symbol0_bits,
                h::symbol_map::symbol1_bits,
                h::symbol_map::symbol2_bits,
                h::symbol_map::symbol3_bits,
                h::symbol_map::symbol4_bits,
                h::symbol_map::symbol5_bits,
                h::symbol_map::symbol6_bits,
                h::symbol_map::symbol7_bits,
            ]
            .map(|p| p.get_as(map)),
            avg_bias: h::word6::avg_bias.get_as(word6),
            reserved2: h::word6::reserved2.get_as(word6),
            stream_bits: words[..used].to_vec(),
            trailing_words: words[used..].to_vec(),
        })
    }

    /// The 64 bytes this header is stored as, written through the field map (a value that
    /// does not fit its field is refused, never truncated).
    pub fn encode(&self) -> Result<Vec<u8>, Overflow> {
        let flags = [
            u64::from(self.precode),
            u64::from(self.bit16),
            u64::from(self.fp16),
            u64::from(self.reserved1),
            u64::from(self.version),
        ];
        let words: Vec<u32> = self
            .stream_bits
            .iter()
            .chain(&self.trailing_words)
            .copied()
            .collect();
        let mut w = Writer::new(h::SIZE);
        w.put_parts(&h::flags, &flags)
            .put_uint(&h::run_length_size, u64::from(self.run_length_size))
            .put_bytes(&h::run_length_table, &self.run_length_table)
            .put_parts(&h::symbol_map, &self.symbol_bits.map(u64::from))
            .put_parts(
                &h::word6,
                &[u64::from(self.avg_bias), u64::from(self.reserved2)],
            )
            .put_words(&h::stream_size, &words);
        w.finish()
    }
}

/// One core's weight stream.
#[derive(Clone, Debug, Serialize)]
pub struct Stream {
    /// The NN core it feeds (its `stream_size` word).
    pub core: usize,
    /// File offset.
    pub offset: u64,
    /// Bits of code (`stream_size`).
    pub bits: u64,
    /// Bytes it occupies, padding to 512 bits included.
    pub bytes: u64,
    /// Whether the padding after its code is zero, as Mesa's `encoder_flush` writes it.
    pub padding_zero: bool,
    /// What its code holds, when it decodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoded: Option<Decoded>,
    /// Why it does not decode, and at which bit of the stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_decoded: Option<StreamError>,
    /// Its bytes written again from the decoded codes, padding included (when they re-encode).
    #[serde(skip)]
    pub rewritten: Option<Vec<u8>>,
}

/// What a decoded stream holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Decoded {
    /// Coded elements before the flush.
    pub codes: u64,
    /// Elements they stand for (zero runs expanded), the kernel count included.
    pub elements: u64,
    /// Codes that are zero runs.
    pub runs: u64,
    /// Codes sent through the raw escape.
    pub raw_escapes: u64,
    /// Whether the last code is the encoder's dummy (an odd count, flush 100).
    pub dummy: bool,
    /// Whether the codes, written again, give the stream's bits.
    pub reencoded: bool,
}

/// The type of a buffer's weight elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WeightType {
    /// Unsigned 8-bit, affine with the command's `coef_zero_point`.
    U8,
    /// Signed 8-bit.
    I8,
    /// Signed 16-bit (dynamic fixed point).
    I16,
    /// IEEE half.
    F16,
}

impl WeightType {
    /// The type an NN command's 3-bit `kernel_data_type` names, as the vendor's NN command
    /// builder writes it (`getHWDataFormat`, flycat0101/gpu-viv6-andy `gc_vx_nn_command.c` at
    /// 04c7e500: UINT8 0, FLOAT16 1, INT8 2, INT16 4). Measured: an 8-bit kernel of type 0 is
    /// stored unsigned, affine with the command's `coef_zero_point` (the serializer's int8
    /// models' kernels with zero point 128; ST's blazeface, whose 36 kernels less their zero
    /// points correlate 0.999 with its float source model's, `notebooks/coefficients.md`).
    pub fn of_code(code: u64) -> Option<WeightType> {
        match code {
            0 => Some(WeightType::U8),
            1 => Some(WeightType::F16),
            2 => Some(WeightType::I8),
            4 => Some(WeightType::I16),
            _ => None,
        }
    }

    /// Whether the header's `bit16` and `fp16` flags say the same.
    fn agrees(self, h: &Header) -> bool {
        match self {
            WeightType::U8 | WeightType::I8 => !h.bit16 && !h.fp16,
            WeightType::I16 => h.bit16 && !h.fp16,
            WeightType::F16 => h.bit16 && h.fp16,
        }
    }
}

/// The biases after the streams.
#[derive(Clone, Debug, Serialize)]
pub struct Biases {
    /// File offset.
    pub offset: u64,
    /// Bytes per bias.
    pub width: u64,
    /// One signed value per output channel.
    pub values: Vec<i64>,
    /// With `per_channel_post_mul`: after each channel's bias, its positive and negative
    /// float32 post-multipliers (measured: the A733 face landmark detector's 35 such buffers,
    /// 6 + 8 bytes per channel; the vendor's encoder writes a per-filter post-multiplier after
    /// the bias, then a negative one for PReLU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_multipliers: Option<Vec<[f32; 2]>>,
    /// Bytes after the last bias up to the end of the buffer, and whether they are zero.
    pub tail_bytes: u64,
    /// Whether the tail is zero.
    pub tail_zero: bool,
}

/// A buffer's kernels, decoded.
#[derive(Clone, Debug, Serialize)]
pub struct Weights {
    /// Their element type.
    pub dtype: WeightType,
    /// The layout the NN command gives.
    pub layout: kernels::Layout,
    /// Channels, z, y, x.
    pub shape: [usize; 4],
    /// The command's `coef_zero_point` (8-bit types).
    pub zero_point: u64,
    /// SHA-256 of the weights as stored elements (little-endian, 1 or 2 bytes each).
    pub sha256: String,
    /// Whether the elements that pad each kernel to whole blocks are zero.
    pub padding_zero: bool,
    /// v7: the element order the streams were read in (the part's dot-product features).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<kernels::Order>,
    /// The kernels.
    #[serde(skip)]
    pub kernels: kernels::Kernels,
}

/// One coefficient buffer, cut.
#[derive(Clone, Debug, Serialize)]
pub struct Buffer {
    /// Its entry in the coefficient table.
    pub entry: usize,
    /// File offset.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// The NN command whose `kernel_address` points at it, with its kernel sizes
    /// (`kernel_xy_size`, `kernel_y_size`, `kernel_z_size`) and output channels.
    pub command: Option<Command>,
    /// The operation that runs that command, and its layer.
    pub operation: Option<Operation>,
    /// The header, decoded.
    pub header: Header,
    /// Whether the header re-encodes to its stored bytes.
    pub header_reencoded: bool,
    /// The streams, in core order.
    pub streams: Vec<Stream>,
    /// The biases, when the streams end inside the buffer and the command names the channels.
    pub biases: Option<Biases>,
    /// The kernels, when every stream decodes and the command gives their layout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<Weights>,
    /// Why the kernels are not put together, with the stream (core) where that showed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights_error: Option<WeightsError>,
    /// An NN_LUT operation's lookup table, after the biases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookup: Option<Lookup>,
    /// Without a bias block: the bytes after the last stream, and whether they are zero
    /// (measured: some public v7 buffers end with 64 zero bytes).
    pub stream_tail: (u64, bool),
}

/// A lookup table an NN_LUT or SP operation's buffer carries after its biases, from the next
/// 64 bytes on to the buffer's end (measured: the A733 int16 face blendshapes' last layer,
/// 1027 words as in its standalone NN_LUT tables, then zeros to 64 bytes; the simulator's
/// uint8 convolutions followed by Sigmoid or Tanh on 0x1000003b, 1025 words of two different
/// tables in 4160 bytes, as the public uint8 YOLOv8n build ends most buffers). Its words, as stored, are named unknown as the
/// standalone tables' are (`tables`).
#[derive(Clone, Debug, Serialize)]
pub struct Lookup {
    /// File offset.
    pub offset: u64,
    /// Every word to the buffer's end, as stored.
    pub words: Vec<u32>,
}

/// The operation whose NN command reads a buffer.
#[derive(Clone, Debug, Serialize)]
pub struct Operation {
    /// Its index in the operation table.
    pub index: usize,
    /// Its type (NN, NN_LUT, SP, NT).
    pub kind: &'static str,
    /// Its layer's index in the layer table.
    pub layer: u32,
    /// Its layer's name.
    pub layer_name: String,
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
        let nn = self
            .command
            .map_or("no-nn".to_string(), |c| format!("nn{}", c.index));
        format!("{op}.{nn}.entry{}", self.entry)
    }
}

/// A decoded tensor of a weight buffer: what a mapping targets and a diff compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tensor {
    /// The kernels, in their decoded shape order (channels, z, y, x).
    Weights,
    /// One bias per output channel.
    Biases,
}

crate::canonical::names! {
    Tensor {
        Weights => "weights",
        Biases => "biases",
    }
}

/// A part of a coefficient entry that the ledger owns on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// The 64-byte header.
    Header,
    /// Core `n`'s stream, padding included.
    Stream(usize),
    /// The biases and the zero bytes after them.
    Biases,
    /// The lookup table after the biases.
    Lookup,
    /// The zeros after the last stream of a buffer without a bias block.
    Tail,
    /// A whole table.
    Table,
    /// A whole image a shader reads.
    Image,
    /// The part of a TP buffer that starts at this byte of the entry.
    TpPart(u64),
    /// A whole zero-run buffer.
    ZeroRun,
}

impl Part {
    /// Its name in an owner's label.
    pub fn label(self) -> String {
        match self {
            Part::Header => "header".into(),
            Part::Stream(n) => format!("stream {n}"),
            Part::Biases => "biases".into(),
            Part::Lookup => "lookup table".into(),
            Part::Tail => "zero tail".into(),
            Part::Table => "table".into(),
            Part::Image => "image".into(),
            Part::TpPart(at) => format!("tp part +0x{at:x}"),
            Part::ZeroRun => "zero-run streams".into(),
        }
    }
}

/// One part the ledger owns: its file range and its bytes written again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerPart {
    /// First file offset.
    pub start: u64,
    /// One past the last.
    pub end: u64,
    /// Which part.
    pub part: Part,
    /// Its bytes, written again from what was decoded.
    pub bytes: Vec<u8>,
}

impl Buffer {
    /// The decoded elements of `tensor` as stored, with their width in bits: kernel elements
    /// unsigned in 8 or 16 bits, biases as signed values. `None` when it is not decoded.
    pub fn elements(&self, tensor: Tensor) -> Option<(Vec<i64>, u32)> {
        match tensor {
            Tensor::Weights => {
                let w = self.weights.as_ref()?;
                let bits = match w.dtype {
                    WeightType::U8 | WeightType::I8 => 8,
                    WeightType::I16 | WeightType::F16 => 16,
                };
                let mask = (1i64 << bits) - 1;
                let values = w.kernels.weights.iter().map(|&x| i64::from(x) & mask);
                Some((values.collect(), bits))
            }
            Tensor::Biases => {
                let b = self.biases.as_ref()?;
                Some((b.values.clone(), 8 * b.width as u32))
            }
        }
    }

    /// The parts the ledger owns, each with its file range and its bytes written again from
    /// what was decoded: `None` unless every part re-encodes (header, streams and their zero
    /// padding, biases and their zero tail) and together they cover the entry. The kernels
    /// need not be put together: a stream whose codes re-encode bit for bit is decoded.
    pub fn ledger_parts(&self) -> Option<Vec<LedgerPart>> {
        if !self.header_reencoded {
            return None;
        }
        let part = |start, end, part, bytes| LedgerPart {
            start,
            end,
            part,
            bytes,
        };
        let mut parts = vec![part(
            self.offset,
            self.offset + HEADER_BYTES,
            Part::Header,
            self.header.encode().ok()?,
        )];
        for st in &self.streams {
            if !st.padding_zero {
                return None;
            }
            let bytes = st.rewritten.clone()?;
            parts.push(part(
                st.offset,
                st.offset + st.bytes,
                Part::Stream(st.core),
                bytes,
            ));
        }
        match &self.biases {
            Some(b) if b.tail_zero => {
                let width = b.width as usize;
                let mut bytes = Vec::new();
                for (i, v) in b.values.iter().enumerate() {
                    bytes.extend_from_slice(&v.to_le_bytes()[..width]);
                    if let Some(m) = &b.post_multipliers {
                        bytes.extend(m[i].iter().flat_map(|x| x.to_le_bytes()));
                    }
                }
                bytes.resize(bytes.len() + b.tail_bytes as usize, 0);
                let end = b.offset + bytes.len() as u64;
                parts.push(part(b.offset, end, Part::Biases, bytes));
                if let Some(l) = &self.lookup {
                    let words = l.words.iter().flat_map(|w| w.to_le_bytes()).collect();
                    parts.push(part(l.offset, self.offset + self.size, Part::Lookup, words));
                }
            }
            // No bias block: the biases ride in the streams (each fp16 kernel's extra elements,
            // the v7 layout's inline elements), and zeros, if anything, end the buffer. The
            // streams are owned as decoded once their codes re-encode, whether or not the
            // kernels are put together.
            None => match self.stream_tail {
                (0, _) => {}
                (n, true) => {
                    let at = self.offset + self.size - n;
                    parts.push(part(at, at + n, Part::Tail, vec![0; n as usize]));
                }
                (_, false) => return None,
            },
            Some(_) => return None,
        }
        let covers = parts.windows(2).all(|w| w[0].end == w[1].start)
            && parts
                .last()
                .is_some_and(|p| p.end == self.offset + self.size)
            && parts
                .iter()
                .all(|p| p.bytes.len() as u64 == p.end - p.start);
        covers.then_some(parts)
    }
}

impl Buffer {
    /// Read the bytes after the biases (`bytes`, the buffer) as an NN_LUT operation's lookup
    /// table: zeros to the next 64 bytes, then the table's words to the buffer's end.
    fn take_lookup(&mut self, bytes: &[u8]) {
        let Some(b) = self.biases.as_mut().filter(|b| !b.tail_zero) else {
            return;
        };
        // The biases end where their tail starts (relative to the buffer).
        let end = self.size - b.tail_bytes;
        let at = end.next_multiple_of(64);
        let (Some(gap), Some(table)) = (
            bytes.get(end as usize..at as usize),
            bytes.get(at as usize..),
        ) else {
            return;
        };
        if !gap.iter().all(|&x| x == 0) || table.is_empty() || table.len() % 4 != 0 {
            return;
        }
        b.tail_bytes = at - end;
        b.tail_zero = true;
        self.lookup = Some(Lookup {
            offset: self.offset + at,
            words: table
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        });
    }
}

/// Why a buffer's kernels are not put together.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WeightsError {
    /// The stream (core) where it showed.
    pub core: usize,
    /// What and where.
    pub error: StreamError,
}

/// What the NN command that reads a buffer says about it.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Command {
    /// Its index in the NN command table.
    pub index: usize,
    /// `kernel_xy_size`, `kernel_y_size`, `kernel_z_size` (with `kernel_z_size2`).
    pub kernel: [u64; 3],
    /// `out_image_z_size`: output channels, one kernel and one bias each.
    pub output_channels: u64,
    /// `kernels_per_core`.
    pub kernels_per_core: u64,
    /// `depthwise`.
    pub depthwise: bool,
    /// `kernel_data_type` with `kernel_data_type_bit_2`.
    pub kernel_data_type: u64,
    /// `coef_zero_point`.
    pub coef_zero_point: u64,
    /// `per_channel_post_mul`.
    pub per_channel_post_mul: bool,
}

/// Why a buffer could not be cut, with the byte offset inside it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CutError {
    /// Stable kebab-case code.
    pub code: CutCode,
    /// Byte offset inside the buffer.
    pub at: u64,
}

/// The reasons a buffer is not cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CutCode {
    /// Fewer than 64 bytes.
    CoefHeaderTruncated,
    /// The header names no stream.
    CoefNoStreams,
    /// A stream ends past the buffer.
    CoefStreamOutOfBounds,
    /// A table holds fewer bytes than its command's channels need.
    CoefTableShort,
    /// No reader gives the entry's layout: no NN command reads it and no shader describes it.
    CoefNoLayout,
    /// A shader's descriptor names no single-channel element type the decoder knows, or the
    /// state buffer leaves one of its words unwritten.
    CoefImageFormat,
    /// A descriptor whose dimensions are zero or whose rows or slices are shorter than their
    /// elements.
    CoefImageGeometry,
    /// A descriptor whose image ends past its entry.
    CoefImageOutOfBounds,
    /// Two shaders read the entry as images of different shapes or types.
    CoefImageReadersDisagree,
    /// A TP command that reads the entry is not a fully-connected command (its inputs and
    /// outputs do not give a kernel).
    CoefTpCommand,
    /// A TP command's part reads in neither of the vendor's TP kernel layouts.
    CoefTpLayout,
    /// A size table where the coefficient header would be, but the streams do not read as
    /// the zero-run buffer its command describes.
    CoefZeroRun,
}

impl CutCode {
    /// The code as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            CutCode::CoefHeaderTruncated => "coef-header-truncated",
            CutCode::CoefNoStreams => "coef-no-streams",
            CutCode::CoefStreamOutOfBounds => "coef-stream-out-of-bounds",
            CutCode::CoefTableShort => "coef-table-short",
            CutCode::CoefNoLayout => "coef-no-layout",
            CutCode::CoefImageFormat => "coef-image-format",
            CutCode::CoefImageGeometry => "coef-image-geometry",
            CutCode::CoefImageOutOfBounds => "coef-image-out-of-bounds",
            CutCode::CoefImageReadersDisagree => "coef-image-readers-disagree",
            CutCode::CoefTpCommand => "coef-tp-command",
            CutCode::CoefTpLayout => "coef-tp-layout",
            CutCode::CoefZeroRun => "coef-zero-run",
        }
    }
}

/// Bytes per bias: Mesa's 8-bit writer stores a u32; the vendor's 16-bit buffers a signed
/// 48-bit value (measured, `notebooks/coefficients.md`).
fn bias_width(h: &Header) -> u64 {
    if h.bit16 { 6 } else { 4 }
}

/// Elements a run-length code can stand for per bit at most (a 3-bit run of 256 zeros): the
/// bound on what a stream's bits can hold, checked before anything is allocated.
pub(super) const ELEMENTS_PER_BIT: u64 = 86;

/// One stream decoded: its summary and, when a layout asks for them, its elements (at most
/// `limit`).
fn decode_stream(
    lookup: &CodeTable,
    body: &[u8],
    bits: u64,
    limit: Option<usize>,
    collect: bool,
) -> Result<(Decoded, Vec<u16>, Vec<u8>), StreamError> {
    let bound = bits.saturating_mul(ELEMENTS_PER_BIT);
    let mut values = Vec::with_capacity(
        limit
            .filter(|_| collect)
            .unwrap_or(0)
            .min(usize::try_from(bound).unwrap_or(usize::MAX)),
    );
    let mut d = Decoded {
        codes: 0,
        elements: 0,
        runs: 0,
        raw_escapes: 0,
        dummy: false,
        reencoded: false,
    };
    // Each code's element, checked to re-encode to it; counted one code late, since the last
    // may be the encoder's dummy (known at the flush).
    let mut last: Option<(Element, u64)> = None;
    let mut count = |e: Element, at: u64, d: &mut Decoded| -> Result<(), StreamError> {
        let (n, v) = match e {
            Element::Value(v) => (1, v),
            Element::Raw(v) => {
                d.raw_escapes += 1;
                (1, v)
            }
            Element::Run { zeros, .. } => {
                d.runs += 1;
                (u64::from(zeros), 0)
            }
        };
        d.elements += n;
        if let Some(limit) = limit {
            if d.elements > limit as u64 {
                return Err(StreamError::new(
                    StreamCode::CoefElementCount,
                    at,
                    format!("more than the {limit} elements its core's kernels take"),
                ));
            }
            if collect {
                values.extend(std::iter::repeat_n(v, n as usize));
            }
        }
        Ok(())
    };
    let (flush, codes) = code::decode(
        body,
        bits,
        |p0, p1| lookup.value_bits(p0, p1),
        |c| {
            let e = lookup.element(c)?;
            if let Some((e, at)) = last.replace((e, c.at)) {
                count(e, at, &mut d)?;
            }
            Ok(())
        },
    )?;
    d.codes = codes;
    d.dummy = flush == 4;
    if let Some((e, at)) = last {
        if d.dummy {
            // The dummy that evens the count: a zero (Mesa `encode_byte(0)`, the vendor's
            // class-0 or escape zero).
            if !matches!(e, Element::Value(0) | Element::Raw(0)) {
                return Err(StreamError::new(
                    StreamCode::CoefStreamFlush,
                    at,
                    format!("the flush says the last code is a dummy, but it is {e:?}"),
                ));
            }
        } else {
            count(e, at, &mut d)?;
        }
    }
    // Every code is the one its element re-encodes to, and `code::write` lays codes out in the
    // order `code::decode` read them: the stream written again is its own bits, those past
    // `stream_size` cleared.
    let mut written = masked(body, bits);
    written.resize(body.len(), 0);
    d.reencoded = true;
    Ok((d, values, written))
}

/// The first `bits` bits of `body`, the bits after them in the last byte cleared.
fn masked(body: &[u8], bits: u64) -> Vec<u8> {
    let mut v = body[..bits.div_ceil(8) as usize].to_vec();
    if bits % 8 != 0 {
        if let Some(last) = v.last_mut() {
            *last &= (1u8 << (bits % 8)) - 1;
        }
    }
    v
}

/// The layout and element type of a buffer's kernels, from the command that reads it.
fn layout_of(
    h: &Header,
    c: Option<Command>,
    cores: usize,
) -> Result<(kernels::Layout, WeightType), StreamError> {
    let Some(c) = c else {
        return Err(StreamError::new(
            StreamCode::CoefNoLayout,
            0,
            "no NN command reads the buffer: its channels, kernel size and group are unknown",
        ));
    };
    let dtype = WeightType::of_code(c.kernel_data_type)
        .filter(|t| t.agrees(h))
        .ok_or_else(|| {
            StreamError::new(
                StreamCode::CoefKernelType,
                0,
                format!(
                    "kernel_data_type {} with header bit16 {} fp16 {}: no known weight type",
                    c.kernel_data_type,
                    u8::from(h.bit16),
                    u8::from(h.fp16)
                ),
            )
        })?;
    let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    let z = if c.depthwise { 1 } else { size(c.kernel[2]) };
    // A `kernel_y_size` of 0 read as a square kernel (inferred: Mesa writes the field for
    // non-square kernels only; the public a733-vpm_run file's 3x0 depthwise commands then
    // decode and put together, every stream ending on its bits).
    let y = match c.kernel[1] {
        0 => size(c.kernel[0]),
        y => size(y),
    };
    Ok((
        kernels::Layout {
            channels: size(c.output_channels),
            kernel: [size(c.kernel[0]), y, z],
            group: size(c.kernels_per_core),
            depthwise: c.depthwise,
            extras: if dtype == WeightType::F16 { 3 } else { 0 },
            head: if h.bit16 { 1 } else { 2 },
            sign_lowest: dtype == WeightType::F16,
            inline: 0,
            avg_bias: h.avg_bias,
            precode: h.precode,
            cores,
        },
        dtype,
    ))
}

/// Decode every stream of a cut buffer, and put its kernels together (a v7 buffer in the
/// order of the first of `features` that names every kernel).
fn decode(b: &mut Buffer, bytes: &[u8], features: &[kernels::Features], depth: Depth) {
    let h = &b.header;
    let scheme = Scheme::of(
        h.bit16,
        h.run_length_size,
        &h.run_length_table,
        h.symbol_bits,
    )
    .map(|s| s.code_table());
    let budget: u64 = b.streams.iter().map(|s| s.bits).sum::<u64>() * ELEMENTS_PER_BIT;
    let layout = layout_of(h, b.command, b.streams.len())
        .and_then(|(l, t)| l.check(budget).map(|()| (l, t)));
    // An 8-bit buffer with no room for a bias block after its streams may be in the v7 layout,
    // its biases inline (`kernels::Layout::inline`): tried when the v8 layout does not fit.
    let v7 = layout.as_ref().ok().and_then(|&(l, t)| {
        (b.biases.is_none() && !h.bit16 && !h.fp16)
            .then_some((kernels::Layout { inline: 2 * 4, ..l }, t))
    });
    let mut values = Vec::with_capacity(b.streams.len());
    let mut first_error = None;
    for st in &mut b.streams {
        let at = (st.offset - b.offset) as usize;
        let body = &bytes[at..at + st.bytes as usize];
        let limit = layout.as_ref().ok().map(|(l, _)| {
            let v7 = v7.map_or(0, |(l, _)| l.elements(st.core));
            l.elements(st.core).max(v7)
        });
        match scheme
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|s| decode_stream(s, body, st.bits, limit, depth == Depth::Kernels))
        {
            Ok((d, v, written)) => {
                st.decoded = Some(d);
                st.rewritten = d.reencoded.then_some(written);
                values.push(v);
            }
            Err(e) => {
                first_error.get_or_insert((st.core, e.clone()));
                st.not_decoded = Some(e);
            }
        }
    }
    if depth == Depth::Streams {
        return;
    }
    let assembled = match (first_error, layout) {
        (Some((core, error)), _) => Err(WeightsError { core, error }),
        (None, Err(error)) => Err(WeightsError { core: 0, error }),
        (None, Ok((l, t))) => {
            let v8 = || l.assemble(&values, &[]).map(|k| (l, t, k));
            // Without a bias block the v7 reading comes first: a v7 kernel whose length plus 8
            // is a multiple of 9 also fits the v8 counts (measured: 16 public ksnn and st
            // buffers, their v8 block padding not zero). Where the v7 counts do not check,
            // the v8 reading is the one reported.
            match v7 {
                Some((l7, t7)) => match l7.assemble(&values, features) {
                    Ok(k) => Ok((l7, t7, k)),
                    Err(e) if e.1.code == StreamCode::CoefKernelOrder => Err(e),
                    Err(_) => v8(),
                },
                None => v8(),
            }
            .map_err(|(core, error)| WeightsError { core, error })
        }
    };
    match assembled {
        Ok((layout, dtype, mut k)) => {
            if dtype == WeightType::F16 {
                // The vendor's encoder moves an fp16 weight's sign to the lowest bit
                // (`gc_vx_nn_encoder.c`). Measured: a decoded fp16 kernel element is its
                // value's bits rotated left by two, where the kernel count is rotated by one
                // (`kernels::Layout::sign_lowest`); rotated back, the elements of four
                // serializer buffers on 0x1000000e (conv 8x4x3x3 and 16x4x3x3, depthwise
                // 8x1x3x3, Gemm 8x16: 1,064 elements) are exactly their models' weights as
                // float16.
                k.weights.iter_mut().for_each(|e| *e = e.rotate_right(2));
            }
            b.weights = Some(Weights {
                dtype,
                layout,
                shape: k.shape,
                zero_point: b.command.map_or(0, |c| c.coef_zero_point),
                sha256: sha256_of(&k.weights, h.bit16),
                padding_zero: k.padding_zero,
                order: k.order,
                kernels: k,
            })
        }
        Err(e) => b.weights_error = Some(e),
    }
}

/// SHA-256 (hex) of elements stored as 1 or 2 little-endian bytes.
fn sha256_of(v: &[u16], wide: bool) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for &e in v {
        if wide {
            h.update(e.to_le_bytes());
        } else {
            h.update([e as u8]);
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Cut the buffer `bytes`, stored at file offset `offset` as entry `entry`, and decode it; a
/// v7 buffer in the order `features` gives (`kernels::Features::candidates`).
pub fn cut(
    entry: usize,
    offset: u64,
    bytes: &[u8],
    command: Option<Command>,
    features: &[kernels::Features],
) -> Result<Buffer, CutError> {
    cut_to(entry, offset, bytes, command, features, Depth::Kernels)
}

/// `cut`, decoded to `depth`.
fn cut_to(
    entry: usize,
    offset: u64,
    bytes: &[u8],
    command: Option<Command>,
    features: &[kernels::Features],
    depth: Depth,
) -> Result<Buffer, CutError> {
    let size = bytes.len() as u64;
    let header = Header::read(bytes).ok_or(CutError {
        code: CutCode::CoefHeaderTruncated,
        at: 0,
    })?;
    if header.stream_bits.is_empty() {
        return Err(CutError {
            code: CutCode::CoefNoStreams,
            at: 28,
        });
    }
    let header_reencoded = header
        .encode()
        .is_ok_and(|b| b[..] == bytes[..HEADER_BYTES as usize]);
    let mut at = HEADER_BYTES;
    let mut streams = Vec::with_capacity(header.stream_bits.len());
    for (core, &bits) in header.stream_bits.iter().enumerate() {
        let bits = u64::from(bits);
        let len = bits.div_ceil(STREAM_ALIGN_BITS) * (STREAM_ALIGN_BITS / 8);
        let end = at + len;
        if end > size {
            return Err(CutError {
                code: CutCode::CoefStreamOutOfBounds,
                at,
            });
        }
        let body = &bytes[at as usize..end as usize];
        streams.push(Stream {
            core,
            offset: offset + at,
            bits,
            bytes: len,
            padding_zero: padding_zero(body, bits),
            decoded: None,
            not_decoded: None,
            rewritten: None,
        });
        at = end;
    }
    let width = bias_width(&header);
    let biases = command.and_then(|c| {
        let n = c.output_channels;
        let entry = width + if c.per_channel_post_mul { 8 } else { 0 };
        let end = at.checked_add(n.checked_mul(entry)?)?;
        (end <= size).then(|| {
            let rows = bytes[at as usize..end as usize].chunks_exact(entry as usize);
            let f = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            Biases {
                offset: offset + at,
                width,
                values: rows.clone().map(|r| signed(&r[..width as usize])).collect(),
                post_multipliers: c.per_channel_post_mul.then(|| {
                    rows.map(|r| [f(&r[width as usize..]), f(&r[width as usize + 4..])])
                        .collect()
                }),
                tail_bytes: size - end,
                tail_zero: bytes[end as usize..].iter().all(|&b| b == 0),
            }
        })
    });
    let mut b = Buffer {
        entry,
        offset,
        size,
        command,
        operation: None,
        header,
        header_reencoded,
        streams,
        biases,
        weights: None,
        weights_error: None,
        lookup: None,
        stream_tail: (size - at, bytes[at as usize..].iter().all(|&x| x == 0)),
    };
    decode(&mut b, bytes, features, depth);
    Ok(b)
}

/// One entry of the coefficient table that could not be cut.
#[derive(Clone, Debug, Serialize)]
pub struct Refused {
    /// Its entry in the coefficient table.
    pub entry: usize,
    /// File offset of the buffer.
    pub offset: u64,
    /// Why, and where inside the buffer.
    pub error: CutError,
}

/// What the coefficient entries hold, cut: the weight buffers and tables NN commands read,
/// the images shaders read, and the entries that could not be cut.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coefficients {
    /// Weight buffers (a v8 header, streams, biases).
    pub buffers: Vec<Buffer>,
    /// Tables of plain values (`tables`).
    pub tables: Vec<tables::Table>,
    /// Entries shaders read as images (`images`).
    pub images: Vec<images::Image>,
    /// Entries TP fully-connected commands read (`tp`).
    pub tp: Vec<tp::Buffer>,
    /// NN buffers of VIP8000-class parts without coefficient compression (`zero_run`).
    pub zero_run: Vec<zero_run::Buffer>,
    /// Entries that could not be cut, with their reason.
    pub refused: Vec<Refused>,
}

/// Every coefficient entry of a graph (either family, `NbgFamily::coefficient_view`), cut by
/// what reads it: an entry an NN `kernel_address` points at as a table (`tables::kind`) or a
/// weight buffer, a data entry as the image its shaders' descriptors give. The entries are read
/// from the graph's bytes in memory.
pub fn of(v: &CoefficientView<'_>) -> Coefficients {
    let file = v.bytes;
    of_with(
        v,
        None,
        &|at, len| {
            let a = usize::try_from(at).ok()?;
            let b = usize::try_from(at.checked_add(len)?).ok()?;
            file.get(a..b).map(std::borrow::Cow::Borrowed)
        },
        Depth::Kernels,
    )
}

/// How far an NN buffer is decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Its streams decoded and written again (and counted against what its kernels take):
    /// what the ledger owns.
    Streams,
    /// Its kernels put together as well.
    Kernels,
}

/// `of` with each entry read by `read(offset, size)` (a file read by positioned reads, the
/// ledger's source), for every entry or `only` the one named, NN buffers decoded to `depth`.
pub fn of_with<'a>(
    v: &CoefficientView<'_>,
    only: Option<usize>,
    read: &dyn Fn(u64, u64) -> Option<std::borrow::Cow<'a, [u8]>>,
    depth: Depth,
) -> Coefficients {
    use crate::nbg::parse::patch_targets::Role;
    let commands = v.commands;
    let readers = v
        .context
        .as_ref()
        .map(crate::nbg::parse::patch_targets::kernel_entries)
        .unwrap_or_default();
    let uniforms = v
        .context
        .as_ref()
        .map(crate::nbg::parse::patch_targets::uniform_reads)
        .unwrap_or_default();
    let tp_reads = v
        .context
        .as_ref()
        .map(crate::nbg::parse::patch_targets::tp_reads)
        .unwrap_or_default();
    let features = kernels::Features::candidates(kernels::Features::of_target(v.target));
    // The entries are read in table order, then decoded in parallel (each decode is a pure
    // function of its bytes and readers) and listed in table order again.
    let mut jobs = Vec::new();
    for r in v.regions {
        if only.is_some_and(|e| e != r.entry) {
            continue;
        }
        let job = match r.role {
            Role::Data if r.size > 0 => Job::Image(
                uniforms
                    .iter()
                    .filter(|u| u.entry == r.entry)
                    .map(|u| (*u, operation_at(v.records, u.operation)))
                    .collect(),
            ),
            Role::TpBuffer if r.size > 0 => Job::Tp(
                tp_reads
                    .iter()
                    .filter(|t| t.entry == r.entry)
                    .map(|t| {
                        let shape = v.tp.get(t.command).and_then(tp::Shape::of);
                        (shape, operation_at(v.records, t.operation), t.src_offset)
                    })
                    .collect(),
            ),
            Role::Coefficients => {
                let command = readers
                    .iter()
                    .find(|&&(_, e)| e == r.entry)
                    .and_then(|&(k, _)| commands.get(k))
                    .map(command_of);
                let operation = command.and_then(|c| operation_of(v.records, c.index));
                Job::Nn(command, operation)
            }
            _ => continue,
        };
        let data = read(r.offset, r.size).unwrap_or_default();
        jobs.push((r.entry, r.offset, r.size, data, job));
    }
    use rayon::prelude::*;
    let outcomes: Vec<Outcome> = jobs
        .into_par_iter()
        .map(|(entry, offset, size, data, job)| {
            run(entry, offset, size, &data, job, &features, depth)
        })
        .collect();
    let mut out = Coefficients::default();
    for o in outcomes {
        match o {
            Outcome::Buffer(b) => out.buffers.push(*b),
            Outcome::Table(t) => out.tables.push(t),
            Outcome::Image(i) => out.images.push(i),
            Outcome::Tp(t) => out.tp.push(t),
            Outcome::ZeroRun(z) => out.zero_run.push(z),
            Outcome::Refused(r) => out.refused.push(r),
        }
    }
    out
}

/// What an entry's readers say about it, for its decoder.
enum Job {
    /// The shaders' uniform reads of a data entry.
    Image(
        Vec<(
            crate::nbg::parse::patch_targets::UniformRead,
            Option<Operation>,
        )>,
    ),
    /// The TP commands that read it (their shapes, operations and parts' offsets).
    Tp(Vec<(Option<tp::Shape>, Option<Operation>, u64)>),
    /// The NN command that reads it, and its operation.
    Nn(Option<Command>, Option<Operation>),
}

/// An entry decoded, or refused.
enum Outcome {
    Buffer(Box<Buffer>),
    Table(tables::Table),
    Image(images::Image),
    Tp(tp::Buffer),
    ZeroRun(zero_run::Buffer),
    Refused(Refused),
}

/// Decode entry `entry` (`bytes`, at file offset `offset`) as its readers say.
fn run(
    entry: usize,
    offset: u64,
    size: u64,
    bytes: &[u8],
    job: Job,
    features: &[kernels::Features],
    depth: Depth,
) -> Outcome {
    let refuse = |code, at| {
        Outcome::Refused(Refused {
            entry,
            offset,
            error: CutError { code, at },
        })
    };
    match job {
        Job::Image(reads) if reads.is_empty() => refuse(CutCode::CoefNoLayout, 0),
        Job::Image(reads) => {
            let reads: Vec<_> = reads.iter().map(|(u, o)| (u, o.clone())).collect();
            match images::read(entry, offset, bytes, &reads) {
                Ok(i) => Outcome::Image(i),
                Err((code, at)) => refuse(code, at),
            }
        }
        Job::Tp(parts) => match tp::cut(entry, offset, bytes, &parts) {
            Ok(b) => Outcome::Tp(b),
            Err((code, at)) => refuse(code, at),
        },
        Job::Nn(command, operation) => {
            let table = command.and_then(|c| Some((c, tables::kind(&c, operation.as_ref())?)));
            if let Some((c, post_multipliers)) = table {
                return match tables::cut(bytes, &c, post_multipliers) {
                    Ok(contents) => Outcome::Table(tables::Table {
                        entry,
                        offset,
                        size,
                        command: c,
                        operation,
                        contents,
                    }),
                    Err(e) => refuse(CutCode::CoefTableShort, e.needed.min(size)),
                };
            }
            // A size table where the coefficient header would be: the zero-run buffer.
            if let Some(c) = command.filter(|_| zero_run::looks_like(bytes)) {
                return match zero_run::cut(entry, offset, bytes, c, features) {
                    Ok(mut b) => {
                        b.operation = operation;
                        Outcome::ZeroRun(b)
                    }
                    Err(e) => refuse(CutCode::CoefZeroRun, e.at),
                };
            }
            match cut_to(entry, offset, bytes, command, features, depth) {
                Ok(mut b) => {
                    // An activation run by the stream processor after the convolution (`SP`)
                    // keeps its table there too (measured: the simulator's Sigmoid and Tanh
                    // after a uint8 convolution on 0x1000003b, two different tables).
                    if operation
                        .as_ref()
                        .is_some_and(|o| matches!(o.kind, "NN_LUT" | "SP"))
                    {
                        b.take_lookup(bytes);
                    }
                    b.operation = operation;
                    Outcome::Buffer(Box::new(b))
                }
                Err(error) => Outcome::Refused(Refused {
                    entry,
                    offset,
                    error,
                }),
            }
        }
    }
}

/// The NN operation that runs NN command `nn`, with its layer.
fn operation_of(r: &Records, nn: usize) -> Option<Operation> {
    let ops = r.operations.as_deref()?;
    let k = ops.iter().position(|o| {
        crate::nbg::format::records::operation_type::is_nn_engine(o.kind())
            && o.engine_index() as usize == nn
    })?;
    operation_at(r, k)
}

/// The operation record at position `k`, with its layer.
fn operation_at(r: &Records, k: usize) -> Option<Operation> {
    let op = r.operations.as_deref()?.get(k)?;
    let layer = r.layers.as_deref()?.get(op.layer_id() as usize)?;
    Some(Operation {
        index: op.index,
        kind: op.type_name().unwrap_or("unknown"),
        layer: op.layer_id(),
        layer_name: layer.name().to_string(),
    })
}

/// What an NN command says about the buffer it reads.
fn command_of(c: &crate::nbg::parse::command_tables::NnCommand) -> Command {
    use crate::nbg::fieldmap::nn_command as nn;
    let w = &c.words;
    Command {
        index: c.index,
        kernel: [
            c.kernel[0],
            c.kernel[1],
            c.kernel[2] | nn::word5::kernel_z_size2.read(w) << 14,
        ],
        output_channels: c.out_image[2],
        kernels_per_core: nn::word0::kernels_per_core.read(w),
        depthwise: nn::word22::depthwise.read(w) != 0,
        kernel_data_type: nn::word1::kernel_data_type.read(w)
            | nn::word15::kernel_data_type_bit_2.read(w) << 2,
        coef_zero_point: nn::word22::coef_zero_point.read(w),
        per_channel_post_mul: nn::word18::per_channel_post_mul.read(w) != 0,
    }
}

/// Whether every bit of `body` from `bits` on is zero.
fn padding_zero(body: &[u8], bits: u64) -> bool {
    let byte = (bits / 8) as usize;
    let rem = bits % 8;
    let partial = match body.get(byte) {
        Some(&b) if rem != 0 => b >> rem == 0,
        _ => true,
    };
    let rest = byte + usize::from(rem != 0);
    partial && body.get(rest..).is_none_or(|r| r.iter().all(|&b| b == 0))
}

/// A little-endian signed integer of 1 to 8 bytes.
fn signed(b: &[u8]) -> i64 {
    let mut buf = [0u8; 8];
    buf[..b.len()].copy_from_slice(b);
    let shift = 64 - 8 * b.len() as u32;
    (i64::from_le_bytes(buf) << shift) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(bits: &[u32], tail: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[0] = 0x12;
        for (i, w) in bits.iter().enumerate() {
            b[28 + 4 * i..32 + 4 * i].copy_from_slice(&w.to_le_bytes());
        }
        for &w in bits {
            let mut s = vec![0u8; (u64::from(w).div_ceil(512) * 64) as usize];
            s[0] = 0xff;
            b.extend(s);
        }
        b.extend(tail);
        b
    }

    #[test]
    fn cuts_streams_and_signed_48_bit_biases() {
        let mut tail = (-5i64).to_le_bytes()[..6].to_vec();
        tail.extend(&7i64.to_le_bytes()[..6]);
        tail.extend([0u8; 52]);
        let bytes = buffer(&[10, 600], &tail);
        let c = Command {
            index: 0,
            kernel: [1, 1, 1],
            output_channels: 2,
            kernels_per_core: 1,
            depthwise: false,
            kernel_data_type: 4,
            coef_zero_point: 0,
            per_channel_post_mul: false,
        };
        let b = cut(3, 1000, &bytes, Some(c), &[]).unwrap();
        assert!(b.header.bit16 && b.header.version == 1 && b.header_reencoded);
        assert_eq!(b.streams.len(), 2);
        assert_eq!((b.streams[1].offset, b.streams[1].bytes), (1000 + 128, 128));
        assert!(b.streams.iter().all(|s| s.padding_zero));
        let biases = b.biases.unwrap();
        assert_eq!(biases.values, [-5, 7]);
        assert_eq!((biases.tail_bytes, biases.tail_zero), (52, true));
    }

    #[test]
    fn refuses_out_of_bounds_streams_and_short_headers() {
        let mut bytes = buffer(&[10, 600], &[]);
        bytes.truncate(64 + 64 + 100);
        let e = cut(0, 0, &bytes, None, &[]).unwrap_err();
        assert_eq!((e.code, e.at), (CutCode::CoefStreamOutOfBounds, 128));
        assert_eq!(
            cut(0, 0, &bytes[..63], None, &[]).unwrap_err().code,
            CutCode::CoefHeaderTruncated
        );
        assert_eq!(
            cut(0, 0, &[0u8; 64], None, &[]).unwrap_err().code,
            CutCode::CoefNoStreams
        );
    }

    #[test]
    fn words_after_the_first_zero_stream_size_re_encode_in_place() {
        let mut bytes = buffer(&[10], &[]);
        bytes[36..40].copy_from_slice(&7u32.to_le_bytes());
        let b = cut(0, 0, &bytes, None, &[]).unwrap();
        assert_eq!(b.header.stream_bits, [10]);
        assert_eq!(b.header.trailing_words[..2], [0, 7]);
        assert!(b.header_reencoded);
    }

    /// A buffer written from `kernels` (channels x 9 int16 weights, one group, contiguous
    /// per core) by the inverses: `Scheme::code`, `code::write`, `Header::encode`.
    fn written(kernels: &[[u16; 9]], cores: usize) -> Vec<u8> {
        let scheme = Scheme::of(true, 0, &[0; 18], [3, 2, 4, 1, 5, 0, 6, 7]).unwrap();
        let per = kernels.len() / cores;
        let mut streams = Vec::new();
        let mut sizes = Vec::new();
        for c in 0..cores {
            let mut elements = vec![per as u16];
            kernels[c * per..(c + 1) * per]
                .iter()
                .for_each(|k| elements.extend(k));
            let flush = if elements.len() % 2 == 1 {
                elements.push(0);
                4
            } else {
                0
            };
            let codes = elements
                .iter()
                .map(|&v| scheme.code(Element::Value(v), 0).unwrap())
                .collect();
            let (mut bytes, bits) = code::write(&code::Codes { codes, flush });
            bytes.resize(bits.div_ceil(512) as usize * 64, 0);
            streams.extend(bytes);
            sizes.push(bits as u32);
        }
        let mut stream_size = sizes.clone();
        stream_size.resize(9, 0);
        let h = Header {
            precode: false,
            bit16: true,
            fp16: false,
            reserved1: 0,
            version: 1,
            run_length_size: 0,
            run_length_table: vec![0; 18],
            symbol_bits: [3, 2, 4, 1, 5, 0, 6, 7],
            avg_bias: 0,
            reserved2: 0,
            stream_bits: sizes,
            trailing_words: stream_size[cores..].to_vec(),
        };
        let mut b = h.encode().unwrap();
        b.extend(streams);
        b.extend(vec![0u8; kernels.len() * 6]);
        b.resize(b.len().next_multiple_of(64), 0);
        b
    }

    #[test]
    fn kernels_written_by_the_inverses_decode_back() {
        let kernels: Vec<[u16; 9]> = (0..6u16)
            .map(|k| std::array::from_fn(|i| (k * 9 + i as u16).wrapping_mul(0x9e37) ^ 0x00ff))
            .collect();
        let bytes = written(&kernels, 2);
        let c = Command {
            index: 0,
            kernel: [3, 3, 1],
            output_channels: 6,
            kernels_per_core: 3,
            depthwise: false,
            kernel_data_type: 4,
            coef_zero_point: 0,
            per_channel_post_mul: false,
        };
        let b = cut(0, 0, &bytes, Some(c), &[]).unwrap();
        assert!(
            b.streams
                .iter()
                .all(|s| s.decoded.is_some_and(|d| d.reencoded))
        );
        let w = b.weights.expect("put together");
        assert_eq!((w.dtype, w.shape), (WeightType::I16, [6, 1, 3, 3]));
        assert_eq!(w.kernels.weights, kernels.concat());
        // One flipped bit inside a stream: an error with its code and bit, never a panic.
        let mut bad = bytes.clone();
        bad[64 + 5] ^= 0x10;
        let b = cut(0, 0, &bad, Some(c), &[]).unwrap();
        let decoded_or_reported = b
            .streams
            .iter()
            .all(|s| s.decoded.is_some() != s.not_decoded.is_some());
        assert!(decoded_or_reported);
        assert!(b.weights.is_some() || b.weights_error.is_some());
        if let Some(w) = b.weights {
            assert_ne!(w.kernels.weights, kernels.concat());
        }
    }

    #[test]
    fn nonzero_padding_is_reported() {
        let mut bytes = buffer(&[10], &[]);
        bytes[64 + 2] = 1;
        assert!(!cut(0, 0, &bytes, None, &[]).unwrap().streams[0].padding_zero);
    }
}
