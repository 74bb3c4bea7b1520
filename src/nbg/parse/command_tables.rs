//! Command tables both families hold: the NN and TP commands (v2 sections 7 and 8, the v1 `nn`
//! and `tp` tables) read through the field map's word records, and the state buffers (v2
//! LOADSTATE, v1 `load_states`) decoded as front-end command streams (`nbg::commands`). The
//! layout of a command table is the one `holds` gives for its record size.

use crate::nbg::commands::{self, Command};
use crate::nbg::fieldmap::{Record, nn_command as nn, tp_command as tp};
use crate::nbg::read::{Data, le32};
use serde::Serialize;
use std::collections::BTreeSet;

/// State buffers (one per index-table entry) decoded as front-end command streams.
#[derive(Clone, Debug, Serialize)]
pub struct CommandStreams {
    /// Buffers (table entries).
    pub buffers: u64,
    /// Commands decoded, over every buffer.
    pub commands: u64,
    /// Of those, LOAD_STATE commands.
    pub load_states: u64,
    /// State values they write.
    pub state_values: u64,
    /// Distinct state word addresses written.
    pub distinct_states: u64,
    /// Buffers that do not decode: which entry, the file offset and why (their bytes stay
    /// opaque).
    pub errors: Vec<StreamFailure>,
    /// Whether the entries tile the section exactly, so every byte is a command's.
    pub covers_section: bool,
    /// Per buffer in file order: its table entry, file offset and commands (the round trip,
    /// the diff's names and the patch targets read them).
    #[serde(skip)]
    pub decoded: Vec<(u64, u64, Vec<Command>)>,
}

impl CommandStreams {
    /// Whether every byte of the section belongs to a decoded command.
    pub fn complete(&self) -> bool {
        self.errors.is_empty() && self.covers_section
    }

    /// The decoded commands of table entry `entry`, when it decoded.
    pub fn buffer(&self, entry: u64) -> Option<&[Command]> {
        self.decoded
            .iter()
            .find(|(e, _, _)| *e == entry)
            .map(|(_, _, c)| &c[..])
    }
}

/// A buffer that did not decode.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StreamFailure {
    /// Its index-table entry.
    pub entry: u64,
    /// File offset of the command that could not be read.
    pub offset: u64,
    /// Why.
    pub reason: &'static str,
}

/// Decode every entry of an index table (`entries`, data-relative, already bounded by the
/// `size`-byte data at file offset `at`) as a command stream.
pub fn streams(data: &Data<'_>, at: u64, size: u64, entries: &[[u64; 2]]) -> CommandStreams {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| entries[i]);
    let mut cursor = 0;
    let mut covers = true;
    for &i in &order {
        let [offset, len] = entries[i];
        covers &= offset == cursor;
        cursor = offset + len;
    }
    covers &= cursor == size;
    decode_entries(data, at, entries, order, covers)
}

/// Decode only the entries records name as their state buffers (`named`; an index past the
/// table names none): a table whose other entries hold data (the ICD, the v1 `lcd`).
pub fn named_streams(
    data: &Data<'_>,
    at: u64,
    entries: &[[u64; 2]],
    named: impl IntoIterator<Item = u32>,
) -> CommandStreams {
    let named: BTreeSet<usize> = named
        .into_iter()
        .filter_map(|i| usize::try_from(i).ok())
        .filter(|&i| i < entries.len())
        .collect();
    let mut order: Vec<usize> = named.into_iter().collect();
    order.sort_by_key(|&i| entries[i]);
    let mut out = decode_entries(data, at, entries, order, false);
    out.buffers = out.decoded.len() as u64 + out.errors.len() as u64;
    out
}

fn decode_entries(
    data: &Data<'_>,
    at: u64,
    entries: &[[u64; 2]],
    order: Vec<usize>,
    covers: bool,
) -> CommandStreams {
    let mut out = CommandStreams {
        buffers: entries.len() as u64,
        commands: 0,
        load_states: 0,
        state_values: 0,
        distinct_states: 0,
        errors: Vec::new(),
        covers_section: covers,
        decoded: Vec::new(),
    };
    let mut states = BTreeSet::new();
    for i in order {
        let [offset, len] = entries[i];
        let start = at + offset;
        // Non-empty entries were bounded by their data; an empty one holds no command,
        // wherever it points.
        let decoded = if len == 0 {
            Ok(Vec::new())
        } else {
            commands::decode(&data.range(start, start + len))
        };
        match decoded {
            Ok(list) => {
                for c in &list {
                    out.commands += 1;
                    if c.opcode == commands::LOAD_STATE {
                        out.load_states += 1;
                        out.state_values += c.values.len() as u64;
                        states.extend((0u32..).take(c.values.len()).map(|k| c.address + k));
                    }
                }
                out.decoded.push((i as u64, start, list));
            }
            Err(e) => out.errors.push(StreamFailure {
                entry: i as u64,
                offset: start + e.at,
                reason: e.reason,
            }),
        }
    }
    out.distinct_states = states.len() as u64;
    out
}

/// One NN command: the geometry fields of Mesa's layout (`fieldmap::nn_command`, or its
/// 128-byte form), and every word for the round trip.
#[derive(Clone, Debug, Serialize)]
pub struct NnCommand {
    /// Position in the section or table.
    pub index: usize,
    /// File offset.
    pub offset: u64,
    /// `kernel_xy_size`, `kernel_y_size`, `kernel_z_size`.
    pub kernel: [u64; 3],
    /// `in_image_x_size`, `in_image_y_size`.
    pub in_image: [u64; 2],
    /// `out_image_x_size`, `out_image_y_size`, `out_image_z_size`.
    pub out_image: [u64; 3],
    /// `pooling` (0 none, 1 max, 2 average, 3 first pixel).
    pub pooling: u64,
    /// `relu`.
    pub relu: u64,
    /// The record's words as stored.
    #[serde(skip)]
    pub words: Vec<u32>,
}

/// One TP command: some fields of Mesa's layout (`fieldmap::tp_command`, or its 128-byte
/// form), and every word for the round trip.
#[derive(Clone, Debug, Serialize)]
pub struct TpCommand {
    /// Position in the section or table.
    pub index: usize,
    /// File offset.
    pub offset: u64,
    /// `in_image_x_size`, `in_image_y_size`, `in_image_z_size`.
    pub in_image: [u64; 3],
    /// `alu_pwl_enable`: the operation reads a lookup table (`alu_load_pwl_lut_address`).
    pub pwl: u64,
    /// `alu_relu_enable`.
    pub relu: u64,
    /// The record's words as stored.
    #[serde(skip)]
    pub words: Vec<u32>,
}

/// A command table: its layout and its records' words.
pub struct WordRecords {
    /// File offset of the first record.
    pub at: u64,
    /// The layout the record size selected.
    pub record: Record,
    /// Every record's words.
    pub words: Vec<Vec<u32>>,
}

/// The words of every `record`-sized record in `[at, at + size)` (a one-byte record's byte as
/// its one word); `None` unless the range is whole records.
pub fn word_records(data: &Data<'_>, at: u64, size: u64, record: Record) -> Option<WordRecords> {
    let len = record.size as u64;
    if len == 0 || size % len != 0 {
        return None;
    }
    let bytes = data.range(at, at + size);
    let words = bytes
        .chunks_exact(record.size)
        .map(|r| match r {
            // A record narrower than a word (`buffer_byte`) is one zero-extended value.
            [b] => vec![u32::from(*b)],
            _ => r.chunks_exact(4).map(|c| le32(c, 0)).collect(),
        })
        .collect();
    Some(WordRecords { at, record, words })
}

/// The NN commands of a command table.
pub fn nn_commands(t: WordRecords) -> Vec<NnCommand> {
    let size = t.record.size as u64;
    t.words
        .into_iter()
        .enumerate()
        .map(|(index, w)| NnCommand {
            index,
            offset: t.at + index as u64 * size,
            kernel: [
                nn::word0::kernel_xy_size.read(&w),
                nn::word8::kernel_y_size.read(&w),
                nn::word0::kernel_z_size.read(&w),
            ],
            in_image: [
                nn::word1::in_image_x_size.read(&w),
                nn::word1::in_image_y_size.read(&w),
            ],
            out_image: [
                nn::word3::out_image_x_size.read(&w),
                nn::word3::out_image_y_size.read(&w),
                nn::word4::out_image_z_size.read(&w),
            ],
            pooling: nn::word0::pooling.read(&w),
            relu: nn::word2::relu.read(&w),
            words: w,
        })
        .collect()
}

/// The TP commands of a command table.
pub fn tp_commands(t: WordRecords) -> Vec<TpCommand> {
    let size = t.record.size as u64;
    t.words
        .into_iter()
        .enumerate()
        .map(|(index, w)| TpCommand {
            index,
            offset: t.at + index as u64 * size,
            in_image: [
                tp::word0::in_image_x_size.read(&w),
                tp::word1::in_image_y_size.read(&w),
                tp::word1::in_image_z_size.read(&w),
            ],
            pwl: tp::word6::alu_pwl_enable.read(&w),
            relu: tp::word12::alu_relu_enable.read(&w),
            words: w,
        })
        .collect()
}

/// Bytes of `record` in fields the field map names unknown.
pub fn unknown_bytes(record: &Record) -> u64 {
    record
        .fields
        .iter()
        .filter(|f| f.evidence == crate::nbg::fieldmap::Evidence::Unknown)
        .map(|f| f.width as u64)
        .sum()
}
