//! Hashes and fingerprints: SHA-256 (the `sha2` crate picks the CPU's SHA extensions at run
//! time), CRC-32 (`crc32fast`, SIMD where available) and byte entropy, in one pass per range.

use serde::{Serialize, Serializer};
use sha2::{Digest, Sha256};
use std::fmt;

/// A SHA-256 digest, serialized as lowercase hex.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Hash256(pub [u8; 32]);

impl Hash256 {
    /// SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Hash256(Sha256::digest(bytes).into())
    }

    /// The digest as lowercase hex.
    pub fn hex(&self) -> String {
        hex(&self.0)
    }
}

impl fmt::Display for Hash256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for Hash256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash256({})", self.hex())
    }
}

impl Serialize for Hash256 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

/// Lowercase hex of any byte string.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// Bytes hashed between histogram updates; keeps SHA and CRC on long runs.
const CHUNK: usize = 64 * 1024;
/// Width of the edge fingerprints.
pub const EDGE: usize = 64;

/// Fingerprint of one byte range: never the bytes themselves.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fingerprint {
    /// SHA-256 of the range (zero in the check-only parse mode).
    pub sha256: Hash256,
    /// CRC-32 (IEEE) of the range.
    pub crc32: u32,
    /// Shannon entropy in bits per byte, rounded to 6 decimals so JSON stays stable.
    pub entropy_bits_per_byte: f64,
    /// SHA-256 of the first `min(64, len)` bytes.
    pub head_sha256: Hash256,
    /// SHA-256 of the last `min(64, len)` bytes.
    pub tail_sha256: Hash256,
}

impl Fingerprint {
    /// `of` when `full`, else only the CRC-32 that checks need (hashes left zero): the
    /// check-only parse mode used by mutation sweeps.
    pub fn compute(bytes: &[u8], full: bool) -> Self {
        if full {
            return Fingerprint::of(bytes);
        }
        Fingerprint::crc_only(crc32(bytes))
    }

    /// One pass over `bytes` for SHA-256, CRC-32 and the byte histogram.
    pub fn of(bytes: &[u8]) -> Self {
        let mut sha = Sha256::new();
        let mut crc = crc32fast::Hasher::new();
        let mut histogram = [0u64; 256];
        for chunk in bytes.chunks(CHUNK) {
            sha.update(chunk);
            crc.update(chunk);
            count_bytes(chunk, &mut histogram);
        }
        let edge = EDGE.min(bytes.len());
        Fingerprint::from_parts(
            Hash256(sha.finalize().into()),
            crc.finalize(),
            &histogram,
            bytes.len() as u64,
            &bytes[..edge],
            &bytes[bytes.len() - edge..],
        )
    }
}

impl Fingerprint {
    /// Assemble a fingerprint from state a stream built over `len` bytes: SHA-256, CRC-32, the
    /// byte histogram and the first and last `min(64, len)` bytes.
    pub(crate) fn from_parts(
        sha256: Hash256,
        crc32: u32,
        histogram: &[u64; 256],
        len: u64,
        head: &[u8],
        tail: &[u8],
    ) -> Self {
        Fingerprint {
            sha256,
            crc32,
            entropy_bits_per_byte: entropy(histogram, len),
            head_sha256: Hash256::of(head),
            tail_sha256: Hash256::of(tail),
        }
    }

    /// Only the CRC-32 (the check-only parse mode).
    pub(crate) fn crc_only(crc32: u32) -> Self {
        Fingerprint {
            sha256: Hash256::default(),
            crc32,
            entropy_bits_per_byte: 0.0,
            head_sha256: Hash256::default(),
            tail_sha256: Hash256::default(),
        }
    }
}

/// Byte histogram with four interleaved tables, which avoids store-to-load stalls on runs.
/// (An eight-table variant with one 8-byte load per step measured no faster inside the
/// two-worker pipeline: `notebooks/performance.md`.)
pub(crate) fn count_bytes(chunk: &[u8], histogram: &mut [u64; 256]) {
    let mut lanes = [[0u32; 256]; 4];
    let mut quads = chunk.chunks_exact(4);
    for q in &mut quads {
        lanes[0][q[0] as usize] += 1;
        lanes[1][q[1] as usize] += 1;
        lanes[2][q[2] as usize] += 1;
        lanes[3][q[3] as usize] += 1;
    }
    for &b in quads.remainder() {
        lanes[0][b as usize] += 1;
    }
    for (i, total) in histogram.iter_mut().enumerate() {
        *total += u64::from(lanes[0][i] + lanes[1][i] + lanes[2][i] + lanes[3][i]);
    }
}

pub(crate) fn entropy(histogram: &[u64; 256], total: u64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let n = total as f64;
    let bits: f64 = histogram
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum();
    // `+ 0.0` turns the -0.0 of a constant range into 0.0 for stable JSON.
    (bits * 1e6).round() / 1e6 + 0.0
}

/// CRC-32 (reflected IEEE, zlib-compatible) of a byte string.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// A writer that hashes what passes through it: a file's pin without reading it back.
pub struct HashingWriter<W> {
    inner: W,
    sha: Sha256,
    len: u64,
}

impl<W: std::io::Write> HashingWriter<W> {
    /// Wrap `inner`; nothing is hashed yet.
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            sha: Sha256::new(),
            len: 0,
        }
    }

    /// SHA-256 and length of everything written.
    pub fn finish(self) -> (Hash256, u64) {
        (Hash256(self.sha.finalize().into()), self.len)
    }
}

impl<W: std::io::Write> std::io::Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
