//! The pair code of a VIP9000 coefficient stream, as bits: which bits belong to which coded
//! element, read and written in the same order.
//!
//! Facts (Mesa etnaviv_ml_nn_v8.c `emit_pair`, `encoder_flush`, `huffman_code`; the vendor's
//! encoder `gc_vx_nn_encoder.c` `OutputAt`, `addDummy`; both LSB first in little-endian words):
//! every element has a 3-bit first part, a 2-bit second part when the first is the escape
//! 0b010, and value bits. Elements go in pairs, three deep: after the first parts of pair n come
//! the second parts of pair n-1, then the value bits of pair n-2. The stream ends with two
//! flush pairs whose four first parts are 000 (an even element count) or 100 (odd: the last
//! element is a dummy), and `stream_size` counts the bits up to there.
//!
//! Proved on the real files: the three A733 files' 1,321 streams read this way end exactly on
//! their `stream_size` (`notebooks/coefficients.md`).

use super::stream_error::{StreamCode, StreamError};

/// The first part that announces a second part.
pub const ESCAPE: u8 = 0b010;

/// One coded element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code {
    /// Bit of the stream where its first part starts.
    pub at: u64,
    /// The 3-bit first part.
    pub part0: u8,
    /// The 2-bit second part, present when `part0` is `ESCAPE`.
    pub part1: Option<u8>,
    /// The value bits, first read in the lowest bit.
    pub value: u32,
    /// How many value bits.
    pub value_bits: u8,
}

/// The symbol a first and second part name, and its free bit. Symbols 0 and 1 (2-bit codes)
/// and 5 (a 4-bit code) are one bit short of a whole part: that bit is free and carries the
/// value's first bit (Mesa `huffman_code`, the vendor's `huffCode`/`sizeCodeLen`).
pub fn symbol(part0: u8, part1: Option<u8>) -> (u8, Option<u8>) {
    match (part0 & 3, part0, part1.unwrap_or(0)) {
        (0, _, _) => (0, Some(part0 >> 2)),
        (1, _, _) => (1, Some(part0 >> 2)),
        (_, 7, _) => (2, None),
        (_, 3, _) => (3, None),
        (_, 6, _) => (4, None),
        (_, _, p1) if p1 & 1 == 1 => (5, Some(p1 >> 1)),
        (_, _, 2) => (6, None),
        _ => (7, None),
    }
}

/// The first and second part of `symbol` with its free bit (0 when it has none): `symbol`'s
/// inverse.
pub fn parts(symbol: u8, free: u8) -> (u8, Option<u8>) {
    let free = free & 1;
    match symbol {
        0 => (free << 2, None),
        1 => (1 | free << 2, None),
        2 => (7, None),
        3 => (3, None),
        4 => (6, None),
        5 => (ESCAPE, Some(1 | free << 1)),
        6 => (ESCAPE, Some(2)),
        _ => (ESCAPE, Some(0)),
    }
}

/// Whether `symbol` has a free bit.
pub fn has_free_bit(symbol: u8) -> bool {
    matches!(symbol, 0 | 1 | 5)
}

/// A stream's codes: the elements, then what the flush says (`read` and `write`, which the
/// tests hold `decode` against).
#[cfg(test)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Codes {
    /// Every coded element before the flush pairs.
    pub codes: Vec<Code>,
    /// The flush pairs' first part: 0 (even count) or 4 (odd: the last code is a dummy).
    pub flush: u8,
}

/// LSB-first reader over the first `bits` bits of `bytes`.
struct Reader<'a> {
    bytes: &'a [u8],
    bits: u64,
    pos: u64,
}

impl Reader<'_> {
    #[inline]
    fn read(&mut self, n: u8) -> Result<u32, StreamError> {
        let end = self.pos + u64::from(n);
        if end > self.bits {
            return Err(self.overrun(n));
        }
        let v = get(self.bytes, self.pos, n);
        self.pos = end;
        Ok(v)
    }

    #[cold]
    fn overrun(&self, n: u8) -> StreamError {
        StreamError::new(
            StreamCode::CoefStreamOverrun,
            self.pos,
            format!("a {n}-bit part runs past stream_size ({} bits)", self.bits),
        )
    }
}

/// `n` (at most 32) bits at bit `pos`, LSB first; bits past the end of `bytes` read as zero.
#[inline]
pub(super) fn get(bytes: &[u8], pos: u64, n: u8) -> u32 {
    if n == 0 {
        return 0;
    }
    let first = usize::try_from(pos / 8).unwrap_or(usize::MAX);
    // Eight bytes hold any 32 bits at any bit offset; near the end they are zero-filled.
    let window = match bytes.get(first..first.saturating_add(8)) {
        Some(w) => u64::from_le_bytes(w.try_into().expect("eight bytes")),
        None if first >= bytes.len() => 0,
        None => {
            let mut w = [0u8; 8];
            let avail = bytes.len().saturating_sub(first).min(8);
            w[..avail].copy_from_slice(&bytes[first..first + avail]);
            u64::from_le_bytes(w)
        }
    };
    let v = window >> (pos % 8);
    (v & ((1u64 << n) - 1)) as u32
}

/// Read the codes of one stream: `bits` bits of `bytes` (which must hold them), each code's
/// value length given by `value_bits(symbol, free bit present)`. Bounded by `bits`: at most
/// one code per 3 bits is kept.
#[cfg(test)]
pub fn read(
    bytes: &[u8],
    bits: u64,
    value_bits: impl Fn(u8, bool) -> u8,
) -> Result<Codes, StreamError> {
    debug_assert!(bits.div_ceil(8) <= bytes.len() as u64);
    let mut r = Reader {
        bytes,
        bits,
        pos: 0,
    };
    let mut codes: Vec<Code> = Vec::with_capacity((bits / 3).min(1 << 20) as usize);
    let mut pairs = 0usize;
    while r.pos < bits {
        for _ in 0..2 {
            let at = r.pos;
            let part0 = r.read(3)? as u8;
            codes.push(Code {
                at,
                part0,
                part1: None,
                value: 0,
                value_bits: 0,
            });
        }
        pairs += 1;
        if pairs >= 2 {
            for c in &mut codes[2 * (pairs - 2)..2 * (pairs - 1)] {
                if c.part0 == ESCAPE {
                    c.part1 = Some(r.read(2)? as u8);
                }
            }
        }
        if pairs >= 3 {
            for c in &mut codes[2 * (pairs - 3)..2 * (pairs - 2)] {
                let (s, free) = symbol(c.part0, c.part1);
                c.value_bits = value_bits(s, free.is_some());
                c.value = r.read(c.value_bits)?;
            }
        }
    }
    // The last two pairs are the flush: first parts only, all 000 or all 100.
    let flush_at = codes.len().saturating_sub(4);
    let tail = &codes[flush_at..];
    let flush = tail.first().map_or(1, |c| c.part0);
    if pairs < 2 || !matches!(flush, 0 | 4) || tail.iter().any(|c| c.part0 != flush) {
        let at = tail.first().map_or(0, |c| c.at);
        return Err(StreamError::new(
            StreamCode::CoefStreamFlush,
            at,
            "the stream does not end with two flush pairs of first parts 000 or 100",
        ));
    }
    codes.truncate(flush_at);
    Ok(Codes { codes, flush })
}

/// Read the codes of one stream as `read` does, without keeping them: each code is handed to
/// `visit` once its value bits are read, in stream order, each code's value length given by
/// `value_bits(first part, second part)`. The flush pairs are checked as `read` checks them.
/// A structural error (overrun, flush) is reported before the first error `visit` returned,
/// which stops the visits but not the reading. Returns the flush's first part and the number
/// of codes before it.
pub fn decode(
    bytes: &[u8],
    bits: u64,
    value_bits: impl Fn(u8, Option<u8>) -> u8,
    mut visit: impl FnMut(&Code) -> Result<(), StreamError>,
) -> Result<(u8, u64), StreamError> {
    debug_assert!(bits.div_ceil(8) <= bytes.len() as u64);
    let mut r = Reader {
        bytes,
        bits,
        pos: 0,
    };
    let blank = Code {
        at: 0,
        part0: 0,
        part1: None,
        value: 0,
        value_bits: 0,
    };
    // The last three pairs read: [n-2, n-1, n].
    let mut ring = [[blank; 2]; 3];
    let mut pairs = 0u64;
    let mut visited = 0u64;
    let mut failed: Option<StreamError> = None;
    while r.pos < bits {
        ring.rotate_left(1);
        for c in ring[2].iter_mut() {
            let at = r.pos;
            let part0 = r.read(3)? as u8;
            *c = Code { at, part0, ..blank };
        }
        pairs += 1;
        if pairs >= 2 {
            for c in ring[1].iter_mut().filter(|c| c.part0 == ESCAPE) {
                c.part1 = Some(r.read(2)? as u8);
            }
        }
        if pairs >= 3 {
            for c in ring[0].iter_mut() {
                c.value_bits = value_bits(c.part0, c.part1);
                c.value = r.read(c.value_bits)?;
                if failed.is_none() {
                    failed = visit(c).err();
                }
                visited += 1;
            }
        }
    }
    // The last two pairs are the flush: first parts only, all 000 or all 100.
    let tail: Vec<&Code> = ring[1..].iter().flatten().collect();
    let flush = if pairs >= 2 { tail[0].part0 } else { 1 };
    if pairs < 2 || !matches!(flush, 0 | 4) || tail.iter().any(|c| c.part0 != flush) {
        let at = if pairs >= 2 { tail[0].at } else { 0 };
        return Err(StreamError::new(
            StreamCode::CoefStreamFlush,
            at,
            "the stream does not end with two flush pairs of first parts 000 or 100",
        ));
    }
    match failed {
        Some(e) => Err(e),
        None => Ok((flush, visited)),
    }
}

/// LSB-first writer: bits gather in `acc` (`fill` of them) and leave it a byte at a time.
pub(super) struct Writer {
    bytes: Vec<u8>,
    acc: u64,
    fill: u32,
}

impl Writer {
    /// An empty writer with room for `bytes` bytes.
    pub(super) fn with_capacity(bytes: usize) -> Writer {
        Writer {
            bytes: Vec::with_capacity(bytes),
            acc: 0,
            fill: 0,
        }
    }

    /// The low `n` (at most 32) bits of `v`.
    pub(super) fn put(&mut self, v: u32, n: u8) {
        let n = u32::from(n);
        self.acc |= (u64::from(v) & ((1u64 << n) - 1)) << self.fill;
        self.fill += n;
        while self.fill >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.fill -= 8;
        }
    }

    /// The bytes, the last one partial when the bit count is not a multiple of 8, and the
    /// bit count.
    pub(super) fn finish(mut self) -> (Vec<u8>, u64) {
        let bits = self.bytes.len() as u64 * 8 + u64::from(self.fill);
        if self.fill > 0 {
            self.bytes.push(self.acc as u8);
        }
        (self.bytes, bits)
    }
}

/// The bits `codes` are stored as, flush included, and how many there are: `read`'s inverse.
/// The codes go in pairs: an odd count ends with the encoder's dummy, as `read` returns it.
#[cfg(test)]
pub fn write(codes: &Codes) -> (Vec<u8>, u64) {
    debug_assert!(codes.codes.len() % 2 == 0, "codes go in pairs");
    let flush = Code {
        at: 0,
        part0: codes.flush,
        part1: None,
        value: 0,
        value_bits: 0,
    };
    // The codes, then the two flush pairs.
    let n = codes.codes.len() + 4;
    let at = |i: usize| codes.codes.get(i).copied().unwrap_or(flush);
    let mut w = Writer::with_capacity(n);
    for p in 0..n / 2 {
        for i in 2 * p..2 * p + 2 {
            w.put(u32::from(at(i).part0), 3);
        }
        if p >= 1 {
            for i in 2 * (p - 1)..2 * p {
                if let Some(p1) = at(i).part1 {
                    w.put(u32::from(p1), 2);
                }
            }
        }
        if p >= 2 {
            for i in 2 * (p - 2)..2 * (p - 1) {
                let c = at(i);
                w.put(c.value, c.value_bits);
            }
        }
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_and_parts_are_inverse() {
        for p0 in 0..8u8 {
            for p1 in 0..4u8 {
                let part1 = (p0 == ESCAPE).then_some(p1);
                let (s, free) = symbol(p0, part1);
                assert_eq!(free.is_some(), has_free_bit(s));
                assert_eq!(parts(s, free.unwrap_or(0)), (p0, part1));
            }
        }
    }

    fn code(part0: u8, part1: Option<u8>, value: u32, value_bits: u8) -> Code {
        Code {
            at: 0,
            part0,
            part1,
            value,
            value_bits,
        }
    }

    #[test]
    fn write_then_read_gives_the_codes_back_with_their_positions() {
        let lengths = |s: u8, free: bool| s + 1 - u8::from(free);
        let mut codes = Vec::new();
        for (i, s) in [3u8, 0, 5, 7, 2, 1, 6].into_iter().enumerate() {
            let (p0, p1) = parts(s, (i % 2) as u8);
            let n = lengths(s, has_free_bit(s));
            codes.push(code(p0, p1, (0x5a5a >> i) & ((1 << n) - 1), n));
        }
        // The dummy that evens the count (symbol 0, no value bits here).
        codes.push(code(0, None, 0, 0));
        let c = Codes { codes, flush: 4 };
        let (bytes, bits) = write(&c);
        let back = read(&bytes, bits, lengths).unwrap();
        assert_eq!(back.flush, 4);
        let strip = |v: &[Code]| v.iter().map(|c| Code { at: 0, ..*c }).collect::<Vec<_>>();
        assert_eq!(strip(&back.codes), strip(&c.codes));
        assert_eq!(back.codes[1].at, 3);
        assert_eq!(write(&back), (bytes.clone(), bits));
        // The streaming decoder visits the same codes.
        let mut seen = Vec::new();
        let by_parts = |p0: u8, p1: Option<u8>| {
            let (s, free) = symbol(p0, p1);
            lengths(s, free.is_some())
        };
        let (flush, n) = decode(&bytes, bits, by_parts, |c| {
            seen.push(*c);
            Ok(())
        })
        .unwrap();
        assert_eq!((flush, n as usize, seen), (4, back.codes.len(), back.codes));
    }

    #[test]
    fn a_short_or_unflushed_stream_is_an_error_not_a_panic() {
        // All first parts 111: four pairs end on bit 28, but not with a flush.
        assert_eq!(
            read(&[0xff; 4], 28, |_, _| 1).unwrap_err(),
            StreamError::new(
                StreamCode::CoefStreamFlush,
                12,
                "the stream does not end with two flush pairs of first parts 000 or 100"
            )
        );
        assert_eq!(
            read(&[0xff; 4], 30, |_, _| 1).unwrap_err().code,
            StreamCode::CoefStreamOverrun
        );
        assert_eq!(
            read(&[0; 1], 5, |_, _| 0).unwrap_err().code,
            StreamCode::CoefStreamOverrun
        );
        assert_eq!(
            read(&[], 0, |_, _| 0).unwrap_err().code,
            StreamCode::CoefStreamFlush
        );
    }
}
