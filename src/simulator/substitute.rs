//! Bytes substituted in memory before a run (`nbg vendor run --substitute`): an experiment on
//! what the hardware reads. The substituted image gets its checksums recomputed by the
//! family's recovered rules (the section-40 values whose payload changed, then the file CRC),
//! so that nbg and the loader read it as a file the serializer could have written. It is handed
//! to the driver child from memory and never written anywhere.

use super::VendorError;
use crate::nbg::family::NbgFamily as _;
use serde::Serialize;
use std::str::FromStr;

/// One substitution as asked: bytes to put at a file offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Substitution {
    /// File offset of the first byte.
    pub offset: u64,
    /// The bytes put there.
    pub bytes: Vec<u8>,
}

impl FromStr for Substitution {
    type Err = String;

    /// `OFFSET=HEX`: a decimal or 0x-prefixed offset and an even number of hex digits.
    fn from_str(s: &str) -> Result<Self, String> {
        let (at, hex) = s
            .split_once('=')
            .ok_or_else(|| format!("{s:?}: expected OFFSET=HEX"))?;
        let offset = match at.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16),
            None => at.parse(),
        }
        .map_err(|_| format!("{at:?}: not a decimal or 0x-hex offset"))?;
        if hex.is_empty() || hex.len() % 2 != 0 {
            return Err(format!("{hex:?}: expected an even number of hex digits"));
        }
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("x"), 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| format!("{hex:?}: not hex"))?;
        Ok(Substitution { offset, bytes })
    }
}

/// One substitution as made, for the run's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Substituted {
    /// File offset.
    pub offset: u64,
    /// The file's bytes there, hex.
    pub before: String,
    /// The bytes the driver got, hex.
    pub after: String,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `bytes` (a file nbg parses) with `subs` made and its checksums recomputed. Refused: a
/// substitution past the end of the file, two that overlap, and one on a checksum the
/// recomputation writes (the file CRC field, a section-40 value).
pub fn substituted(
    bytes: &[u8],
    subs: &[Substitution],
) -> Result<(Vec<u8>, Vec<Substituted>), VendorError> {
    let g = crate::parse(bytes).map_err(VendorError::Invalid)?;
    let refuse = |m: String| Err(VendorError::Substitution(m));
    let rule = g.crc_rule();
    let derived = g.derived_checksums();
    let mut written: Vec<(u64, u64, &'static str)> =
        vec![(rule.field, rule.field + 4, rule.field_name)];
    written.extend(
        derived
            .iter()
            .map(|c| (c.value_at, c.value_at + 4, "a section-40 value")),
    );
    let mut taken: Vec<(u64, u64)> = Vec::with_capacity(subs.len());
    let image = crate::nbg::image::NbgImage::new(&g).map_err(VendorError::Invalid)?;
    let mut changed = image.change("nbg vendor run --substitute");
    let mut made = Vec::with_capacity(subs.len());
    for s in subs {
        let end = s.offset.checked_add(s.bytes.len() as u64);
        let Some(end) = end.filter(|&e| e <= bytes.len() as u64) else {
            return refuse(format!(
                "0x{:x}: {} bytes end past the file's {} bytes",
                s.offset,
                s.bytes.len(),
                bytes.len()
            ));
        };
        if let Some((_, _, what)) = written.iter().find(|&&(a, b, _)| s.offset < b && a < end) {
            return refuse(format!(
                "0x{:x}: overlaps {what}, which is recomputed after the substitutions",
                s.offset
            ));
        }
        if taken.iter().any(|&(a, b)| s.offset < b && a < end) {
            return refuse(format!("0x{:x}: overlaps another substitution", s.offset));
        }
        taken.push((s.offset, end));
        made.push(Substituted {
            offset: s.offset,
            before: hex(&bytes[s.offset as usize..end as usize]),
            after: hex(&s.bytes),
        });
        changed
            .write(
                s.offset,
                &s.bytes,
                format!("substitution at 0x{:x}", s.offset),
            )
            .map_err(VendorError::Invalid)?;
    }
    changed.reseal(&g, &taken, true, true);
    Ok((changed.bytes().to_vec(), made))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_substitution_reads_as_offset_and_hex() {
        let s: Substitution = "0xc00=40000000".parse().unwrap();
        assert_eq!((s.offset, s.bytes), (0xc00, vec![0x40, 0, 0, 0]));
        assert_eq!("12=ff".parse::<Substitution>().unwrap().offset, 12);
        for bad in ["12", "12=", "12=f", "zz=00", "12=0g", "0x=00"] {
            assert!(bad.parse::<Substitution>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_substituted_image_has_its_checksums_recomputed_and_bad_ones_are_refused() {
        let file = include_bytes!("../../controls/serializer/gemm-relu-qdq-u8-1000001e.nb");
        let sub = |offset: u64, bytes: &[u8]| Substitution {
            offset,
            bytes: bytes.to_vec(),
        };
        // A change inside a checksummed section (COEF_HEADER) parses again; the report keeps
        // what was there.
        let (image, made) = substituted(file, &[sub(0xd40, &[1, 2, 3])]).unwrap();
        assert!(crate::parse(&image).is_ok());
        assert_ne!(&image[0x0c..0x10], &file[0x0c..0x10]);
        assert_eq!(made[0].before, "000000");
        assert_eq!(made[0].after, "010203");
        let refused = |subs: &[Substitution]| {
            matches!(substituted(file, subs), Err(VendorError::Substitution(_)))
        };
        assert!(refused(&[sub(file.len() as u64 - 1, &[0, 0])]));
        assert!(refused(&[sub(u64::MAX, &[0])]));
        assert!(refused(&[sub(0x0e, &[0])]));
        assert!(refused(&[sub(0xd40, &[0, 0]), sub(0xd41, &[0])]));
    }
}
