//! The target configurations the simulator carries (`VSIMULATOR_CONFIG` names), read from the
//! table compiled into the SDK's `libEmulator.so`: 100-byte records of a NUL-padded 80-byte
//! name and five little-endian words, the last the product ID (PID) a file's target word
//! holds. Measured on acuitylite 6.57.1: 534 records, 486 of them with `_PID0X` in the name.
//! The table is found from any `_PID0X` name and walked both ways while records stay valid.

use serde::Serialize;

/// Bytes per record.
const RECORD: usize = 100;
/// Bytes of the name field.
const NAME: usize = 80;

/// One configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Config {
    /// The `VSIMULATOR_CONFIG` name.
    pub name: String,
    /// The product ID (a file's target word).
    pub pid: u32,
}

fn record(data: &[u8], at: usize) -> Option<Config> {
    let r = data.get(at..at + RECORD)?;
    let field = &r[..NAME];
    let len = field.iter().position(|&b| b == 0)?;
    let name = &field[..len];
    let valid = (3..NAME).contains(&len)
        && name
            .iter()
            .all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b"_;+.-".contains(&b))
        && field[len..].iter().all(|&b| b == 0);
    if !valid {
        return None;
    }
    let pid = u32::from_le_bytes([r[96], r[97], r[98], r[99]]);
    Some(Config {
        name: String::from_utf8_lossy(name).into_owned(),
        pid,
    })
}

/// Every configuration of the table in `library` (the bytes of `libEmulator.so`), in table
/// order; empty when no table is found.
pub fn table(library: &[u8]) -> Vec<Config> {
    let needle = b"_PID0X";
    let mut best: Vec<Config> = Vec::new();
    let mut from = 0;
    // Every `_PID0X` (a format string elsewhere in the library holds one too). The record
    // holding a hit starts at most a name's length before it; the bytes before a name may
    // themselves look like name characters (the previous record's PID), so every candidate
    // start is walked and the longest table wins.
    while let Some(p) = memchr::memmem::find(&library[from..], needle) {
        let hit = from + p;
        let longest = (hit.saturating_sub(NAME - 1)..=hit)
            .filter(|&start| record(library, start).is_some())
            .map(|start| walk(library, start))
            // Equally long walks from shifted starts: the earliest is the aligned one (a
            // shifted name starts inside the real one).
            .max_by_key(|(first, _, t)| (t.len(), std::cmp::Reverse(*first)));
        from = hit + needle.len();
        if let Some((_, end, t)) = longest {
            // A table's records are not searched again.
            from = from.max(end);
            if t.len() > best.len() {
                best = t;
            }
        }
    }
    best
}

/// Where the valid records around the one at `start` begin and end, and the records in order.
fn walk(library: &[u8], start: usize) -> (usize, usize, Vec<Config>) {
    let mut first = start;
    while first >= RECORD && record(library, first - RECORD).is_some() {
        first -= RECORD;
    }
    let mut out = Vec::new();
    let mut at = first;
    while let Some(c) = record(library, at) {
        out.push(c);
        at += RECORD;
    }
    (first, at, out)
}

/// The configuration a file's target word selects: the one whose name ends in `_PID0X<pid>`
/// (upper-case hex); `None` when the table has none.
pub fn for_pid(configs: &[Config], pid: u32) -> Option<&Config> {
    let suffix = format!("_PID0X{pid:X}");
    configs
        .iter()
        .find(|c| c.pid == pid && c.name.ends_with(&suffix))
}

/// A `--target` value: a configuration name, or `0xPID` (the configuration for that PID).
pub fn resolve<'a>(configs: &'a [Config], target: &str) -> Result<&'a Config, String> {
    if target.starts_with("0x") || target.starts_with("0X") {
        let pid = crate::word::parse(target)?;
        return for_pid(configs, pid)
            .ok_or_else(|| format!("no configuration of the driver has PID 0x{pid:x}"));
    }
    configs.iter().find(|c| c.name == target).ok_or_else(|| {
        format!("the driver has no configuration named {target:?} (see `nbg vendor targets`)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(name: &str, pid: u32) -> Vec<u8> {
        let mut r = vec![0u8; RECORD];
        r[..name.len()].copy_from_slice(name.as_bytes());
        r[96..].copy_from_slice(&pid.to_le_bytes());
        r
    }

    #[test]
    fn the_table_is_found_and_walked_both_ways() {
        let mut lib = b"\x7fELF junk\0\x01\x02".to_vec();
        lib.extend(rec("VIP7000", 0));
        lib.extend(rec("VIP9000NANOS_PID0X1000000E", 0x1000_000e));
        lib.extend(rec("GCNANOULTRA31_VIP2_PID0X15", 0x15));
        lib.extend(b"\xff\xfftrailing");
        let t = table(&lib);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].name, "VIP7000");
        assert_eq!(
            for_pid(&t, 0x15).unwrap().name,
            "GCNANOULTRA31_VIP2_PID0X15"
        );
        assert_eq!(resolve(&t, "0x1000000e").unwrap().pid, 0x1000_000e);
        assert!(resolve(&t, "0x99").is_err());
        assert!(resolve(&t, "NOPE").is_err());
        assert!(table(b"no table here").is_empty());
    }
}
