//! The front-end command stream the NPU's command processor reads: the LOADSTATE buffers an
//! operation loads (v2 section 21, one per LOADSTATE_TABLE entry), decoded word by word and
//! re-encoded from the decoded fields.
//!
//! Facts from Mesa's etnaviv rules-ng database (`src/etnaviv/hw/cmdstream.xml`, MIT): a command
//! starts with a header word whose bits 31..27 are the opcode; LOAD_STATE (1) has FIXP in bit
//! 26, COUNT in bits 25..16 and the first state's word address in bits 15..0, and is followed by
//! COUNT values; STALL (9) is followed by one word holding FROM (bits 4..0) and TO (bits 12..8);
//! END (2), NOP (3), WAIT (7), LINK (8), RETURN (11) and CHIP_SELECT (13) are two words. Every
//! command occupies an even number of words (64-bit alignment): an odd LOAD_STATE is followed
//! by one pad word, which the vendor's serializer writes as a NOP header (0x18000000) or as
//! 0xdeadbeef; it is kept as it is. Measured on every LOADSTATE entry of the 96 serializer
//! controls and the A733 board files: LOAD_STATE and STALL only, every entry decoding to its end.
//! An opcode outside this list, or a command running past its buffer, ends the decoding of
//! that buffer with its offset and reason; its bytes stay opaque, never guessed. A state value
//! is named by its word address, and by its public name where Mesa's database has one.

use serde::Serialize;

/// `LOAD_STATE`: write COUNT consecutive states from a word address.
pub const LOAD_STATE: u32 = 1;
/// `END`: the end of the stream.
pub const END: u32 = 2;
/// `NOP`.
pub const NOP: u32 = 3;
/// `WAIT`: wait a number of cycles.
pub const WAIT: u32 = 7;
/// `LINK`: continue at another address.
pub const LINK: u32 = 8;
/// `STALL`: wait until one engine's token reaches another.
pub const STALL: u32 = 9;
/// `RETURN`: return from a call.
pub const RETURN: u32 = 11;
/// `CHIP_SELECT`: address a subset of the cores.
pub const CHIP_SELECT: u32 = 13;

/// Public names of the states the NPU's command streams write, by word address (the shader
/// uniforms from 0xd800 are `VIVS_SH_HALTI5_UNIFORMS`, named with their index): Mesa's rules-ng
/// database (`state.xml`, `state_3d.xml`; etnaviv/etna_viv rnndb at
/// db2902952e5bb173fc229bcffbfcc70265ac6dcb, the addresses checked against Mesa's generated
/// `state.xml.h` and `state_3d.xml.h`). Other addresses are named by their number only.
const STATE_NAMES: [(u32, &str); 14] = [
    (0x028a, "VIVS_PA_SYSTEM_MODE"),
    (0x040a, "VIVS_PS_INST_ADDR"),
    (0x0428, "VIVS_PS_NN_INST_ADDR"),
    (0x0429, "VIVS_PS_UNK10A4"),
    (0x042e, "VIVS_PS_TP_INST_ADDR"),
    (0x0e02, "VIVS_GL_SEMAPHORE_TOKEN"),
    (0x0e03, "VIVS_GL_FLUSH_CACHE"),
    (0x0e13, "VIVS_GL_API_MODE"),
    (0x0e4c, "VIVS_GL_NN_CONFIG"),
    (0x0e4f, "VIVS_GL_OCB_REMAP_START"),
    (0x0e50, "VIVS_GL_OCB_REMAP_END"),
    (0x0e53, "VIVS_GL_TP_CONFIG"),
    (0x0e54, "VIVS_GL_UNK03950"),
    (0x0f00, "VIVS_GL_STALL_TOKEN"),
];

/// `VIVS_SH_HALTI5_UNIFORMS`: 2048 words from byte 0x36000 (`state_3d.xml`, stripe `SH`).
const UNIFORMS: u32 = 0xd800;
const UNIFORM_COUNT: u32 = 2048;

/// The public name of the state at word address `address`, where the database has one.
pub fn state_name(address: u32) -> Option<&'static str> {
    STATE_NAMES
        .binary_search_by_key(&address, |&(a, _)| a)
        .ok()
        .map(|i| STATE_NAMES[i].1)
}

/// The opcode's public name, for the opcodes this decoder knows.
pub fn opcode_name(opcode: u32) -> Option<&'static str> {
    Some(match opcode {
        LOAD_STATE => "LOAD_STATE",
        END => "END",
        NOP => "NOP",
        WAIT => "WAIT",
        LINK => "LINK",
        STALL => "STALL",
        RETURN => "RETURN",
        CHIP_SELECT => "CHIP_SELECT",
        _ => return None,
    })
}

/// One decoded command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// Byte offset of the header in its buffer.
    pub at: u64,
    /// Bits 31..27 of the header.
    pub opcode: u32,
    /// LOAD_STATE: bit 26 (fixed-point conversion of the values).
    pub fixp: bool,
    /// LOAD_STATE: the first state's word address (bits 15..0).
    pub address: u32,
    /// The header's bits below the opcode that the opcode gives no field to (LOAD_STATE: none,
    /// kept zero; the others: bits 26..0), re-encoded as they are.
    pub header_rest: u32,
    /// The words after the header: LOAD_STATE's values, the second word of the two-word
    /// commands.
    pub values: Vec<u32>,
    /// The alignment word after an odd-length command, as it is.
    pub pad: Option<u32>,
}

impl Command {
    /// Bytes the command occupies.
    pub fn len(&self) -> u64 {
        4 * (1 + self.values.len() as u64 + u64::from(self.pad.is_some()))
    }

    /// Whether the command is only a header (never, for a decoded command).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The header word, encoded from the fields.
    pub fn header(&self) -> u32 {
        let base = self.opcode << 27;
        if self.opcode == LOAD_STATE {
            // COUNT 1024 is written as 0 (a 10-bit field).
            let count = (self.values.len() as u32) & 0x3ff;
            base | (u32::from(self.fixp) << 26) | (count << 16) | (self.address & 0xffff)
        } else {
            base | self.header_rest
        }
    }

    /// The command encoded again, word by word.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.header().to_le_bytes());
        for v in &self.values {
            out.extend_from_slice(&v.to_le_bytes());
        }
        if let Some(p) = self.pad {
            out.extend_from_slice(&p.to_le_bytes());
        }
    }

    /// The name of the byte at command-relative offset `rel`: the header, a state value by its
    /// word address (`0x0e4c`), the second word, or the pad.
    pub fn field_name(&self, rel: u64) -> String {
        let name = opcode_name(self.opcode).unwrap_or("?");
        let word = rel / 4;
        match word {
            0 => format!("{name}.header"),
            w if w as usize <= self.values.len() => {
                let i = w as u32 - 1;
                if self.opcode == LOAD_STATE {
                    let a = self.address + i;
                    match state_name(a) {
                        Some(n) => format!("{name}.state[0x{a:04x}].{n}"),
                        None if (UNIFORMS..UNIFORMS + UNIFORM_COUNT).contains(&a) => format!(
                            "{name}.state[0x{a:04x}].VIVS_SH_HALTI5_UNIFORMS[{}]",
                            a - UNIFORMS
                        ),
                        None => format!("{name}.state[0x{a:04x}]"),
                    }
                } else {
                    format!("{name}.argument")
                }
            }
            _ => format!("{name}.pad"),
        }
    }
}

/// Why a buffer stopped decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StreamError {
    /// Byte offset in the buffer of the command that could not be read.
    pub at: u64,
    /// What was found.
    pub reason: &'static str,
}

/// Decode `bytes` (a whole buffer) into commands. The count is bounded by the buffer: every
/// command takes at least 8 bytes, and nothing is allocated before its words are in hand.
pub fn decode(bytes: &[u8]) -> Result<Vec<Command>, StreamError> {
    let word = |i: usize| {
        bytes
            .get(4 * i..4 * i + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    if bytes.len() % 4 != 0 {
        return Err(StreamError {
            at: (bytes.len() - bytes.len() % 4) as u64,
            reason: "the buffer is not whole 32-bit words",
        });
    }
    let words = bytes.len() / 4;
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < words {
        let at = 4 * i as u64;
        let fail = |reason| Err(StreamError { at, reason });
        let Some(h) = word(i) else {
            return fail("truncated");
        };
        let opcode = h >> 27;
        let (payload, fixp, address, header_rest) = match opcode {
            LOAD_STATE => {
                let count = (h >> 16) & 0x3ff;
                let count = if count == 0 { 1024 } else { count } as usize;
                (count, h & (1 << 26) != 0, h & 0xffff, 0)
            }
            END | NOP | WAIT | LINK | STALL | RETURN | CHIP_SELECT => {
                (1, false, 0, h & 0x07ff_ffff)
            }
            _ => return fail("unknown opcode"),
        };
        let padded = (1 + payload).next_multiple_of(2);
        if i + padded > words {
            return fail("the command runs past the end of its buffer");
        }
        let values: Vec<u32> = (i + 1..i + 1 + payload).filter_map(word).collect();
        let pad = (padded > 1 + payload)
            .then(|| word(i + padded - 1))
            .flatten();
        out.push(Command {
            at,
            opcode,
            fixp,
            address,
            header_rest,
            values,
            pad,
        });
        i += padded;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_are_sorted_for_the_search() {
        assert!(STATE_NAMES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(state_name(0x0e4c), Some("VIVS_GL_NN_CONFIG"));
        assert_eq!(state_name(0x0e4d), None);
    }

    fn bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn a_load_state_and_a_stall_decode_and_encode_again() {
        let b = bytes(&[
            0x0801_0e4c,
            0x04b3_e040,
            0x0802_0e5a,
            1,
            2,
            0x1800_0000,
            0x4800_0000,
            0x701,
        ]);
        let c = decode(&b).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(
            (c[0].opcode, c[0].address, c[0].values.clone()),
            (LOAD_STATE, 0x0e4c, vec![0x04b3_e040])
        );
        assert_eq!(c[1].pad, Some(0x1800_0000));
        assert_eq!(c[1].field_name(8), "LOAD_STATE.state[0x0e5b]");
        assert_eq!((c[2].opcode, c[2].values.clone()), (STALL, vec![0x701]));
        let mut again = Vec::new();
        c.iter().for_each(|x| x.encode(&mut again));
        assert_eq!(again, b);
    }

    #[test]
    fn a_broken_buffer_names_its_offset() {
        let e = decode(&bytes(&[0x0801_0e4c, 1, 0xf800_0000, 0])).unwrap_err();
        assert_eq!((e.at, e.reason), (8, "unknown opcode"));
        let e = decode(&bytes(&[0x0803_0e4c, 1, 2])).unwrap_err();
        assert_eq!(e.at, 0);
        assert!(decode(&[1, 2, 3]).is_err());
    }
}
