//! Coefficient entries an NN command reads that are not weight streams: tables of plain values,
//! each cut by what the command that reads it says.
//!
//! - A per-channel post-multiplier table: the NN command has `per_channel_post_mul` and a
//!   1x1x1 depthwise kernel, and the entry holds, per output channel, two float32: the
//!   multiplier of the positive and of the negative side (the vendor's encoder writes a float
//!   post-multiplier per filter where the part has NN_FLOAT_POST_MULT, then a negative one for
//!   PReLU: `gc_vx_nn_encoder.c`, "non compressed biases & Z_OFFSET & perFilterPostMul").
//!   Measured: the A733 face landmark detector's 34 PReLU layers, each entry exactly
//!   align(channels x 8, 64) bytes.
//! - A lookup table read by an NN_LUT operation with a 1x1x1 depthwise kernel: 32-bit
//!   entries, as stored; what an entry
//!   encodes is unknown (`unknown_entry_b0_31`). Measured: the A733 face blendshapes' 18
//!   activation tables, 4108 bytes each.

use super::{Command, Operation};
use serde::Serialize;

/// Entries of a lookup table read as 32-bit words.
const WORD: usize = 4;

/// What a table holds.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Contents {
    /// Per output channel: the positive and the negative side's float32 multiplier.
    PostMultipliers {
        /// `[positive, negative]` per channel.
        values: Vec<[f32; 2]>,
        /// Bytes after the last channel, and whether they are zero.
        tail_bytes: u64,
        /// Whether they are zero.
        tail_zero: bool,
    },
    /// A lookup table's 32-bit entries (`unknown_entry_b0_31`).
    Lookup {
        /// Every word, as stored.
        words: Vec<u32>,
        /// Bytes after the last whole word.
        tail_bytes: u64,
    },
}

/// One table.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    /// Its entry in the coefficient table.
    pub entry: usize,
    /// File offset.
    pub offset: u64,
    /// Bytes.
    pub size: u64,
    /// The NN command that reads it.
    pub command: Command,
    /// The operation that runs the command.
    pub operation: Option<Operation>,
    /// What it holds.
    pub contents: Contents,
}

impl Table {
    /// Its bytes written again from its values (a tail of zeros), when the tail is zero.
    pub fn rewritten(&self) -> Option<Vec<u8>> {
        let mut out: Vec<u8> = match &self.contents {
            Contents::PostMultipliers {
                values,
                tail_zero: true,
                ..
            } => values
                .iter()
                .flat_map(|[p, n]| [p.to_le_bytes(), n.to_le_bytes()].concat())
                .collect(),
            Contents::Lookup {
                words,
                tail_bytes: 0,
            } => words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            _ => return None,
        };
        out.resize(self.size as usize, 0);
        Some(out)
    }
}

/// Why an entry the command calls a table is not one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NotATable {
    /// Bytes the command's channels need.
    pub needed: u64,
}

/// Whether the command reading an entry makes it a table, and which: a 1x1x1 depthwise
/// kernel (one weight per channel, no stream) read by an NN_LUT operation is a lookup table
/// (`Some(false)`), with `per_channel_post_mul` a post-multiplier table (`Some(true)`).
pub fn kind(command: &Command, operation: Option<&Operation>) -> Option<bool> {
    if !command.depthwise || command.kernel != [1, 1, 1] {
        return None;
    }
    if operation.is_some_and(|o| o.kind == "NN_LUT") {
        return Some(false);
    }
    command.per_channel_post_mul.then_some(true)
}

/// Cut `bytes` as the table `post_multipliers` says.
pub fn cut(bytes: &[u8], command: &Command, post_multipliers: bool) -> Result<Contents, NotATable> {
    if !post_multipliers {
        let whole = bytes.len() / WORD * WORD;
        return Ok(Contents::Lookup {
            words: bytes[..whole]
                .chunks_exact(WORD)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            tail_bytes: (bytes.len() - whole) as u64,
        });
    }
    let needed = command.output_channels.saturating_mul(8);
    let n = usize::try_from(needed)
        .ok()
        .filter(|&n| n <= bytes.len())
        .ok_or(NotATable { needed })?;
    let f = |c: &[u8]| f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    Ok(Contents::PostMultipliers {
        values: bytes[..n]
            .chunks_exact(8)
            .map(|c| [f(&c[..4]), f(&c[4..])])
            .collect(),
        tail_bytes: (bytes.len() - n) as u64,
        tail_zero: bytes[n..].iter().all(|&b| b == 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(channels: u64) -> Command {
        Command {
            index: 4,
            kernel: [1, 1, 1],
            output_channels: channels,
            kernels_per_core: 1,
            depthwise: true,
            kernel_data_type: 4,
            coef_zero_point: 0,
            per_channel_post_mul: true,
        }
    }

    #[test]
    fn post_multipliers_are_float_pairs_per_channel() {
        let mut b: Vec<u8> = [1.0f32, -0.5, 2.0, 0.25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        b.resize(64, 0);
        let c = command(2);
        assert_eq!(kind(&c, None), Some(true));
        let Contents::PostMultipliers {
            values,
            tail_bytes,
            tail_zero,
        } = cut(&b, &c, true).unwrap()
        else {
            panic!("not a post-multiplier table")
        };
        assert_eq!(values, [[1.0, -0.5], [2.0, 0.25]]);
        assert_eq!((tail_bytes, tail_zero), (48, true));
        assert_eq!(
            cut(&b, &command(9), true).unwrap_err(),
            NotATable { needed: 72 }
        );
    }
}
