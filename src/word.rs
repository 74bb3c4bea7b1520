//! A 32-bit word as people write it: `0x` and hex digits (a target PID, a format version). The
//! one parser of that form, for command-line values, `--target` and the mapping registry (a
//! leaf).

/// The word `s` writes: `0x` (or `0X`) and one to eight hex digits.
pub fn parse(s: &str) -> Result<u32, String> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or_else(|| format!("{s:?}: expected 0x followed by hex digits"))?;
    if digits.is_empty() || digits.len() > 8 {
        return Err(format!("{s:?}: expected one to eight hex digits after 0x"));
    }
    u32::from_str_radix(digits, 16).map_err(|e| format!("{s:?}: {e}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn words_parse_with_their_prefix_only() {
        assert_eq!(super::parse("0x1000003b"), Ok(0x1000_003b));
        assert_eq!(super::parse("0X88"), Ok(0x88));
        for bad in ["88", "0x", "0x123456789", "0xg1", "-0x1"] {
            assert!(super::parse(bad).is_err(), "{bad}");
        }
    }
}
