//! `nbg dump`: the bytes one owner, one payload or one range holds, as `readelf -x` or
//! `objdump -s` shows a section. A range needs no parse (a damaged file dumps too); a name is
//! an owner label as `nbg image` lists it, or a payload (a v2 section's type name, a v1
//! table's name), matched whole and without case.

use crate::nbg::family::Payload;
use crate::nbg::image::NbgImage;

/// What to dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// `OFFSET:LEN`, each decimal or 0x hex.
    Range {
        /// First byte.
        start: u64,
        /// Bytes.
        len: u64,
    },
    /// An owner label or a payload name.
    Name(String),
}

impl Selector {
    /// `OFFSET:LEN` as a range, anything else as a name.
    pub fn parse(what: &str) -> Self {
        let number = |s: &str| match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        };
        match what.split_once(':').map(|(a, b)| (number(a), number(b))) {
            Some((Some(start), Some(len))) => Selector::Range { start, len },
            _ => Selector::Name(what.to_string()),
        }
    }
}

/// The bytes chosen: `[start, end)` and what they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// The owner or payload named, or the range.
    pub what: String,
}

/// Why nothing can be dumped.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DumpError {
    /// The range leaves the file.
    #[error("[0x{start:x}, 0x{end:x}) leaves the {len}-byte file")]
    OutOfFile {
        /// First byte asked for.
        start: u64,
        /// One past the last (saturated).
        end: u64,
        /// The file's size.
        len: u64,
    },
    /// No owner or payload has the name.
    #[error("no owner or payload is named {what:?}; payloads: {known}")]
    NotFound {
        /// The name given.
        what: String,
        /// The payload names there are.
        known: String,
    },
    /// More than one payload has the name.
    #[error("{what:?} names {count} payloads; give an owner label or OFFSET:LEN")]
    Ambiguous {
        /// The name given.
        what: String,
        /// How many match.
        count: usize,
    },
}

/// A range of a file of `len` bytes, checked.
pub fn range(start: u64, len: u64, file_len: u64) -> Result<Selection, DumpError> {
    let end = start.saturating_add(len);
    if end > file_len {
        return Err(DumpError::OutOfFile {
            start,
            end,
            len: file_len,
        });
    }
    Ok(Selection {
        start,
        end,
        what: format!("0x{start:x}:{len}"),
    })
}

/// The owner labelled `what` in `image`, else the one payload named `what`.
pub fn named(
    image: &NbgImage<'_>,
    payloads: &[Payload],
    what: &str,
) -> Result<Selection, DumpError> {
    if let Some(o) = image.owners().iter().find(|o| o.label == what) {
        return Ok(Selection {
            start: o.start,
            end: o.end,
            what: o.label.clone(),
        });
    }
    let found: Vec<&Payload> = payloads
        .iter()
        .filter(|p| {
            // v2 type names with or without their `NBG_SECTION_` prefix.
            let short = p.name.strip_prefix("NBG_SECTION_").unwrap_or(p.name);
            p.name.eq_ignore_ascii_case(what) || short.eq_ignore_ascii_case(what)
        })
        .collect();
    match found[..] {
        [p] => Ok(Selection {
            start: p.offset,
            end: p.offset + p.size,
            what: p.name.to_string(),
        }),
        [] => {
            let mut names: Vec<&str> = payloads.iter().map(|p| p.name).collect();
            names.sort_unstable();
            names.dedup();
            Err(DumpError::NotFound {
                what: what.to_string(),
                known: names.join(", "),
            })
        }
        _ => Err(DumpError::Ambiguous {
            what: what.to_string(),
            count: found.len(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_offset_colon_length_in_hex_or_decimal() {
        assert_eq!(
            Selector::parse("0x10:32"),
            Selector::Range { start: 16, len: 32 }
        );
        assert_eq!(
            Selector::parse("100:0x10"),
            Selector::Range {
                start: 100,
                len: 16
            }
        );
        assert_eq!(Selector::parse("layer"), Selector::Name("layer".into()));
        assert_eq!(
            Selector::parse("table 3 layer:x"),
            Selector::Name("table 3 layer:x".into())
        );
        assert_eq!(
            range(10, u64::MAX, 100),
            Err(DumpError::OutOfFile {
                start: 10,
                end: u64::MAX,
                len: 100
            })
        );
    }
}
