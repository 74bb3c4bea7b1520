//! CRC-32 of any range of a file that differs from a known base file in at most one byte,
//! without a pass over the range. A mutation sweep parses millions of such files. CRC-32 is
//! linear: a range's CRC is the base range's CRC xor the flip's effect shifted by its distance
//! from the range's end, and the base range's CRC comes from the CRCs of two prefixes
//! (`crc(s..e) = crc(..e) ^ shift(crc(..s), e - s)`, the identity zlib's `crc32_combine`
//! implements). The base's prefix CRCs are kept every `BLOCK` bytes, and the ranges a sweep's
//! parses ask for again and again are remembered.

use std::collections::HashMap;
use std::sync::RwLock;
use zlib_rs::crc32::{crc32_combine_gen, crc32_combine_op};

/// Bytes between two kept prefix CRCs (the index holds 4 bytes per block).
const BLOCK: usize = 64;

/// Ranges remembered per index: a parse asks for a few dozen, the same ones for every flip
/// that leaves the structure alone; a flipped table offset asks for new ones, so the memory
/// stays bounded.
const REMEMBERED_RANGES: usize = 1 << 16;
/// Shift operators remembered per thread (x^(8n) for each length met).
const REMEMBERED_SHIFTS: usize = 1 << 12;

thread_local! {
    static SHIFTS: std::cell::RefCell<HashMap<u64, u32>> = Default::default();
}

/// CRC-32 of `a` followed by `len` bytes whose CRC-32 is `b`: `a` shifted over `len` zero
/// bytes, xor `b`. The shift is a product with x^(8 len) modulo the polynomial; computing that
/// power costs one product per set bit of `len`, so each thread keeps the powers it met.
pub fn concat(a: u32, b: u32, len: u64) -> u32 {
    let op = SHIFTS.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(&op) = m.get(&len) {
            return op;
        }
        let op = crc32_combine_gen(len);
        if m.len() >= REMEMBERED_SHIFTS {
            m.clear();
        }
        m.insert(len, op);
        op
    });
    crc32_combine_op(a, b, op)
}

/// The reflected IEEE CRC-32 table: `TABLE[b]` is how a register's low byte `b` spreads as it
/// moves past one byte.
const TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// A CRC difference carried past one more byte equal in both files (CRC-32 is linear, so the
/// initial value and final xor cancel in a difference).
pub(crate) fn past_one_byte(d: u32) -> u32 {
    TABLE[(d & 0xff) as usize] ^ (d >> 8)
}

/// How much a byte xored with `xor` changes the CRC-32 of a message it ends (the same for
/// every message: the initial value and final xor cancel in a difference).
pub(crate) fn difference(xor: u8) -> u32 {
    TABLE[usize::from(xor)]
}

/// Prefix CRCs of a base file.
#[derive(Debug)]
pub struct CrcIndex<'a> {
    base: &'a [u8],
    /// `prefix[k]` is the CRC-32 of `base[..k * BLOCK]`.
    prefix: Vec<u32>,
    /// Base range CRCs already computed, shared by the sweep's workers.
    ranges: RwLock<HashMap<(u64, u64), u32>>,
}

impl<'a> CrcIndex<'a> {
    /// One pass over `base`.
    pub fn new(base: &'a [u8]) -> Self {
        let mut prefix = Vec::with_capacity(base.len() / BLOCK + 1);
        let mut h = crc32fast::Hasher::new();
        prefix.push(0);
        for block in base.chunks_exact(BLOCK) {
            h.update(block);
            prefix.push(h.clone().finalize());
        }
        CrcIndex {
            base,
            prefix,
            ranges: RwLock::default(),
        }
    }

    /// The base file.
    pub fn base(&self) -> &'a [u8] {
        self.base
    }

    /// CRC-32 of `base[..x]`.
    fn prefix_at(&self, x: usize) -> u32 {
        let k = x / BLOCK;
        let tail = &self.base[k * BLOCK..x];
        concat(self.prefix[k], crc32fast::hash(tail), tail.len() as u64)
    }

    /// CRC-32 of `base[s..e]` (`s <= e <= base.len()`).
    pub fn range(&self, s: u64, e: u64) -> u32 {
        // A poisoned lock still holds correct values (each is inserted whole).
        if let Some(&crc) = self
            .ranges
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(s, e))
        {
            return crc;
        }
        let crc = self.prefix_at(e as usize) ^ concat(self.prefix_at(s as usize), 0, e - s);
        let mut ranges = self.ranges.write().unwrap_or_else(|p| p.into_inner());
        if ranges.len() < REMEMBERED_RANGES {
            ranges.insert((s, e), crc);
        }
        crc
    }
}

/// A file equal to an index's base except for one byte, `base[offset] ^ xor`.
#[derive(Clone, Copy, Debug)]
pub struct Flip<'a> {
    index: &'a CrcIndex<'a>,
    offset: u64,
    xor: u8,
}

impl<'a> Flip<'a> {
    /// The flip of `index`'s base that `bytes` is, when `bytes` is as long as the base and
    /// differs from it at `offset` by `xor` (the caller vouches for every other byte: a sweep
    /// changes one byte of its working copy and restores it).
    pub fn of(index: &'a CrcIndex<'a>, bytes: &[u8], offset: usize) -> Option<Self> {
        let base = index.base;
        (bytes.len() == base.len() && offset < base.len()).then(|| Flip {
            index,
            offset: offset as u64,
            xor: bytes[offset] ^ base[offset],
        })
    }

    /// CRC-32 of `[s, e)` of the flipped file.
    pub fn range(&self, s: u64, e: u64) -> u32 {
        let crc = self.index.range(s, e);
        if (s..e).contains(&self.offset) && self.xor != 0 {
            crc ^ concat(difference(self.xor), 0, e - self.offset - 1)
        } else {
            crc
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_flipped_range_crc_is_the_direct_crc(
            base in proptest::collection::vec(any::<u8>(), 1..700),
            at in any::<prop::sample::Index>(),
            xor in any::<u8>(),
            a in any::<prop::sample::Index>(),
            b in any::<prop::sample::Index>(),
        ) {
            let index = CrcIndex::new(&base);
            let o = at.index(base.len());
            let mut flipped = base.clone();
            flipped[o] ^= xor;
            let flip = Flip::of(&index, &flipped, o).unwrap();
            let (s, e) = {
                let (x, y) = (a.index(base.len() + 1), b.index(base.len() + 1));
                (x.min(y), x.max(y))
            };
            prop_assert_eq!(flip.range(s as u64, e as u64), crc32fast::hash(&flipped[s..e]));
            prop_assert_eq!(index.range(s as u64, e as u64), crc32fast::hash(&base[s..e]));
        }
    }
}
