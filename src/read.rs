//! Bounds-checked little-endian reads over borrowed file bytes.
//!
//! Every read names the file offset it needed, so a short file fails with `truncated` at the
//! exact place instead of panicking.

use crate::failure::{Code, Failure};

/// A borrowed view of file bytes with checked accessors.
#[derive(Clone, Copy, Debug)]
pub struct Data<'data> {
    pub bytes: &'data [u8],
}

impl<'data> Data<'data> {
    pub fn new(bytes: &'data [u8]) -> Self {
        Data { bytes }
    }

    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// `len` bytes at `offset`, or `truncated` naming what was being read.
    pub fn slice(&self, offset: u64, len: u64, what: &str) -> Result<&'data [u8], Failure> {
        let end = offset.checked_add(len);
        match end {
            Some(end) if end <= self.len() => Ok(&self.bytes[offset as usize..end as usize]),
            _ => Err(Failure::new(
                Code::Truncated,
                offset,
                format!(
                    "{what} needs {len} bytes at 0x{offset:x} but the file has {} bytes",
                    self.len()
                ),
            )),
        }
    }

    pub fn u32(&self, offset: u64, what: &str) -> Result<u32, Failure> {
        let b = self.slice(offset, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Little-endian u32 at `offset` inside an already bounds-checked record.
pub fn le32(record: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(record[offset..offset + 4].try_into().expect("4-byte slice"))
}

/// Compose a 64-bit value from its low and high words.
pub fn compose64(low: u32, high: u32) -> u64 {
    (u64::from(high) << 32) | u64::from(low)
}

/// A NUL-terminated strict UTF-8 name inside a fixed field; `None` when invalid.
pub fn fixed_name(field: &[u8]) -> Option<&str> {
    let nul = field.iter().position(|&b| b == 0)?;
    std::str::from_utf8(&field[..nul]).ok()
}
