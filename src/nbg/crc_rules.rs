//! CRC coverage rules: the recovered v2 rule, the corroborated v1 rule, and a finite,
//! documented registry of coverage hypotheses for explaining a stored CRC field.
//!
//! Registry (all reflected IEEE CRC-32 from the zlib initial state, as `crc32fast` computes):
//! - `whole-file-field-zeroed`: every byte of the file, the four field bytes read as zero;
//! - `whole-file-field-skipped`: every byte except the field;
//! - `prefix-field-zeroed@B` / `prefix-field-skipped@B`: bytes [0, B) for every structural
//!   boundary B the parser knows, the field zeroed or skipped where it lies inside;
//! - `suffix@B` and `suffix-field-zeroed@B` / `suffix-field-skipped@B`: bytes [B, EOF);
//! - for v2 only, `v2-directory-order`: the recovered producer rule (see `parse::v2::file_crc`).
//!
//! Boundaries come from the parse (start and end of the fixed part, the extension and every
//! table or section), so a new version's rule is found by running the registry on its files,
//! with no code change. Each hypothesis costs no extra pass: the file is cut at every boundary
//! once, and hypothesis CRCs are combined from the segment CRCs.

use serde::Serialize;

/// The recovered v1 rule: CRC-32 of the whole file with the 4-byte CRC field read as zeros.
pub const WHOLE_FILE_FIELD_ZEROED: &str = "whole-file-field-zeroed";

/// The recovered v2 producer rule, the one place it is written: reflected IEEE CRC-32 from zero
/// over section payloads in directory order, every section-40 `checksum_value` word read as
/// zero. `sections` lists (type, offset, size, CRC-32 of the raw payload) in directory order.
pub fn v2_file_crc(bytes: &[u8], sections: &[(u32, u64, u64, u32)]) -> u32 {
    combine_v2_file_crc(sections, |offset, size| {
        crc32fast::hash(&v2_normalized_checksum_payload(
            &bytes[offset as usize..(offset + size) as usize],
        ))
    })
}

/// `v2_file_crc` given the CRC-32 of the normalized section-40 payload at (offset, size), so a
/// caller that already has every payload CRC never hashes the file twice.
pub fn combine_v2_file_crc(
    sections: &[(u32, u64, u64, u32)],
    mut normalized_crc: impl FnMut(u64, u64) -> u32,
) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    for &(kind, offset, size, payload_crc) in sections {
        let part = if kind == crate::nbg::format::section::CHECKSUM {
            normalized_crc(offset, size)
        } else {
            payload_crc
        };
        crc.combine(&crc32fast::Hasher::new_with_initial_len(part, size));
    }
    crc.finalize()
}

/// Section-40 bytes with every `checksum_value` word replaced by zero.
pub fn v2_normalized_checksum_payload(payload: &[u8]) -> Vec<u8> {
    use crate::nbg::fieldmap::v2_checksum_record as c;
    let mut normalized = payload.to_vec();
    for r in normalized.chunks_exact_mut(c::SIZE) {
        r[c::checksum_value.offset..c::checksum_value.end()].fill(0);
    }
    normalized
}

/// The v2 rule as a registry hypothesis over the sections (type, offset, size) in directory
/// order: covered ranges, and the section-40 value words fed as zeros.
pub fn v2_rule_hypothesis(sections: &[(u32, u64, u64)]) -> Hypothesis {
    use crate::nbg::fieldmap::v2_checksum_record as c;
    let (mut ranges, mut zeroed) = (Vec::new(), Vec::new());
    let value = c::checksum_value.offset as u64;
    for &(kind, offset, size) in sections.iter().filter(|s| s.2 > 0) {
        if kind == crate::nbg::format::section::CHECKSUM {
            for r in (offset..offset + size).step_by(c::SIZE) {
                ranges.push([r, r + value]);
                zeroed.push([r + value, r + c::checksum_value.end() as u64]);
            }
        } else {
            ranges.push([offset, offset + size]);
        }
    }
    Hypothesis {
        rule: "v2-directory-order".into(),
        ranges,
        zeroed,
    }
}

/// How a v1 file's CRC field relates to its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrcClass {
    /// Stored value is zero: the producer wrote no checksum.
    Absent,
    /// A registry rule reproduces the stored value.
    Matches,
    /// No rule in the registry reproduces the stored value.
    Unexplained,
}

/// Whether a change turned a v1 CRC field no known rule reproduces: the one verdict every
/// command gives such a file (`check` says it, `check --strict` and `carve` refuse with
/// `crc-field-unexplained`), counted by a sweep as the change caught. A base whose own field is
/// unexplained catches nothing this way; a field made zero is a file without a CRC.
pub fn caught(base: Option<CrcClass>, changed: Option<CrcClass>) -> bool {
    changed == Some(CrcClass::Unexplained) && base != Some(CrcClass::Unexplained)
}

/// CRC-32 of the whole file with the four bytes at `field` read as zero.
pub fn whole_file_field_zeroed(bytes: &[u8], field: u64) -> u32 {
    let f = field as usize;
    if f + 4 > bytes.len() {
        return crc32fast::hash(bytes);
    }
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[..f]);
    h.update(&[0; 4]);
    h.update(&bytes[f + 4..]);
    h.finalize()
}

/// `whole_file_field_zeroed` from the CRC-32 of the bytes before the field and of the
/// `after_len` bytes after it, for a file that is streamed rather than held.
pub fn field_zeroed_from_parts(before: u32, after: u32, after_len: u64) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(before);
    h.update(&[0; 4]);
    h.combine(&crc32fast::Hasher::new_with_initial_len(after, after_len));
    h.finalize()
}

/// One coverage hypothesis: the byte ranges fed to the CRC in order, and the field range read
/// as zeros (when it is covered that way).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hypothesis {
    /// The hypothesis's stable name.
    pub rule: String,
    /// Covered `[start, end)` ranges, the zeroed field left out of them.
    pub ranges: Vec<[u64; 2]>,
    /// Ranges fed to the CRC as zeros (the field, or v2's checksum-value words).
    pub zeroed: Vec<[u64; 2]>,
}

/// The generic registry for a CRC field at `field` (4 bytes) in a file of `len` bytes.
pub fn registry(len: u64, field: u64, boundaries: &[(u64, String)]) -> Vec<Hypothesis> {
    let fe = field + 4;
    let mut out = vec![
        hypothesis(WHOLE_FILE_FIELD_ZEROED.into(), 0, len, field, true),
        hypothesis("whole-file-field-skipped".into(), 0, len, field, false),
    ];
    let mut cuts: Vec<(u64, String)> = boundaries
        .iter()
        .filter(|(b, _)| *b > 0 && *b < len)
        .map(|(b, label)| (*b, slug(label)))
        .collect();
    cuts.sort();
    cuts.dedup_by_key(|c| c.0);
    for (b, label) in &cuts {
        if *b >= fe {
            out.push(hypothesis(
                format!("prefix-field-zeroed@{label}"),
                0,
                *b,
                field,
                true,
            ));
            out.push(hypothesis(
                format!("prefix-field-skipped@{label}"),
                0,
                *b,
                field,
                false,
            ));
        }
        if *b <= field {
            out.push(hypothesis(
                format!("suffix-field-zeroed@{label}"),
                *b,
                len,
                field,
                true,
            ));
            out.push(hypothesis(
                format!("suffix-field-skipped@{label}"),
                *b,
                len,
                field,
                false,
            ));
        } else if *b >= fe {
            out.push(hypothesis(format!("suffix@{label}"), *b, len, field, false));
        }
    }
    out
}

fn hypothesis(rule: String, start: u64, end: u64, field: u64, zero: bool) -> Hypothesis {
    let fe = field + 4;
    if end <= field || start >= fe {
        return Hypothesis {
            rule,
            ranges: vec![[start, end]],
            zeroed: Vec::new(),
        };
    }
    let ranges = [[start, field], [fe, end]]
        .into_iter()
        .filter(|r| r[1] > r[0])
        .collect();
    Hypothesis {
        rule,
        ranges,
        zeroed: if zero { vec![[field, fe]] } else { Vec::new() },
    }
}

fn slug(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// CRC of a hypothesis, combined from segment CRCs: the file is hashed once, and each
/// hypothesis costs a few CRC combinations, however many segments it covers.
pub struct Evaluator {
    cuts: Vec<u64>,
    /// `prefix[k]`: CRC-32 of `[0, cuts[k])`.
    prefix: Vec<u32>,
}

use crate::nbg::crc_index::{concat, difference, past_one_byte};

impl Evaluator {
    /// The evaluator for a file of `len` bytes, given the CRC-32 of any `[start, end)`.
    pub fn with_crcs(
        len: u64,
        hypotheses: &[Hypothesis],
        crc_of: impl FnMut(u64, u64) -> u32,
    ) -> Self {
        let mut cuts: Vec<u64> = vec![0, len];
        for h in hypotheses {
            for r in h.ranges.iter().chain(h.zeroed.iter()) {
                cuts.extend_from_slice(r);
            }
        }
        Evaluator::over_cuts(cuts, crc_of)
    }

    /// The evaluator of every range between two of `cuts` (0 is added): the bytes from 0 to
    /// the last cut are hashed once, one segment at a time through `crc_of`.
    pub fn over_cuts(mut cuts: Vec<u64>, mut crc_of: impl FnMut(u64, u64) -> u32) -> Self {
        cuts.push(0);
        cuts.sort_unstable();
        cuts.dedup();
        let mut prefix = Vec::with_capacity(cuts.len());
        prefix.push(0);
        for w in cuts.windows(2) {
            let last = prefix[prefix.len() - 1];
            prefix.push(concat(last, crc_of(w[0], w[1]), w[1] - w[0]));
        }
        Evaluator { cuts, prefix }
    }

    /// CRC-32 of `[start, end)`, or `None` when either is not a cut.
    pub fn range(&self, start: u64, end: u64) -> Option<u32> {
        self.span([start, end])
    }

    /// CRC-32 of `r`, from the prefix CRCs: CRC(A B) is CRC(A) shifted over B's length, XOR
    /// CRC(B), so CRC(B) is CRC(A B) XOR CRC(A) shifted. `None` when `r` does not start and end
    /// at cuts (a hypothesis the evaluator was not built with).
    fn span(&self, r: [u64; 2]) -> Option<u32> {
        let start = self.cuts.binary_search(&r[0]).ok()?;
        let end = self.cuts.binary_search(&r[1]).ok()?;
        if start == 0 {
            return Some(self.prefix[end]);
        }
        Some(self.prefix[end] ^ concat(self.prefix[start], 0, r[1] - r[0]))
    }

    /// The CRC-32 `h` computes, from the prefix CRCs; `None` for a hypothesis the evaluator
    /// was not built with (its ranges do not fall on the cuts).
    pub fn crc(&self, h: &Hypothesis) -> Option<u32> {
        let mut pieces: Vec<([u64; 2], bool)> = h.ranges.iter().map(|&r| (r, false)).collect();
        pieces.extend(h.zeroed.iter().map(|&z| (z, true)));
        pieces.sort_by_key(|p| p.0[0]);
        let mut total = None;
        for (r, zero) in pieces {
            let len = r[1] - r[0];
            let piece = if zero {
                crc32fast::hash(&vec![0; len as usize])
            } else {
                self.span(r)?
            };
            total = Some(total.map_or(piece, |t| concat(t, piece, len)));
        }
        Some(total.unwrap_or(0))
    }
}

/// Whether any hypothesis of `registry(len, field, boundaries)` reproduces `stored`, given only
/// the boundaries' offsets and the CRC-32 of any `[start, end)`. The registry's values are
/// carried along the segments between boundaries (the file's CRC so far, and the same with the
/// field zeroed or skipped), so nothing is named or allocated per hypothesis and each segment
/// costs one x^(8n) power: a mutation sweep asks this for every flipped byte. `None` when the
/// field does not lie inside the file (the caller evaluates the registry itself).
pub fn registry_matches(
    len: u64,
    field: u64,
    boundaries: &[u64],
    stored: u32,
    crc_of: impl FnMut(u64, u64) -> u32,
) -> Option<bool> {
    Some(registry_values(len, field, boundaries, crc_of)?.contains(&stored))
}

/// The CRC-32 of every hypothesis of the registry, in no particular order (see
/// `registry_matches`).
pub fn registry_values(
    len: u64,
    field: u64,
    boundaries: &[u64],
    mut crc_of: impl FnMut(u64, u64) -> u32,
) -> Option<Vec<u32>> {
    let fe = field.checked_add(4).filter(|&fe| fe <= len)?;
    // The registry's cuts; those inside the field start no hypothesis (and the field stays
    // one segment).
    let mut cuts: Vec<u64> = boundaries
        .iter()
        .copied()
        .filter(|&b| b > 0 && b < len && (b <= field || b >= fe))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut points = cuts.clone();
    points.extend([0, field, fe, len]);
    points.sort_unstable();
    points.dedup();
    // At every point p: the CRC of [0, p) and, from the field's end on, of [0, p) with the
    // field read as zeros and left out.
    let mut prefix: Vec<(u32, u32, u32)> = Vec::with_capacity(points.len());
    let (mut plain, mut zeroed, mut skipped) = (0u32, 0u32, 0u32);
    prefix.push((plain, zeroed, skipped));
    for w in points.windows(2) {
        let (s, e) = (w[0], w[1]);
        let n = e - s;
        if s == field {
            // The field is its own segment: [field, fe).
            zeroed = concat(plain, crc32fast::hash(&[0; 4]), n);
            skipped = plain;
            plain = concat(plain, crc_of(s, e), n);
        } else {
            let crc = crc_of(s, e);
            plain = concat(plain, crc, n);
            if s >= fe {
                zeroed = concat(zeroed, crc, n);
                skipped = concat(skipped, crc, n);
            }
        }
        prefix.push((plain, zeroed, skipped));
    }
    let at = |p: u64| points.binary_search(&p).map(|i| prefix[i]).ok();
    let (whole, whole_zeroed, whole_skipped) = at(len)?;
    let mut values = vec![whole_zeroed, whole_skipped];
    for &b in &cuts {
        let (plain_b, zeroed_b, skipped_b) = at(b)?;
        if b >= fe {
            values.extend([zeroed_b, skipped_b, whole ^ concat(plain_b, 0, len - b)]);
        } else {
            values.extend([
                whole_zeroed ^ concat(plain_b, 0, len - b),
                whole_skipped ^ concat(plain_b, 0, len - b - 4),
            ]);
        }
    }
    Some(values)
}

/// Offsets per block of `RegistryFlips::new`'s parallel walk.
const FLIP_BLOCK: usize = 1 << 16;

/// Which one-byte flips of a file leave some registry hypothesis reproducing the stored CRC,
/// for every offset and pattern at once. A flip of the byte at `o` by `p` changes the CRC of a
/// hypothesis that covers `o` by `difference(p)` carried past the `n` covered bytes after `o`; the
/// walk from a hypothesis's end down to its start carries that difference one byte per step, so
/// a hypothesis costs one table step per offset and pattern, with no CRC combination. Exact: a
/// hypothesis whose changed value happens to equal the stored CRC is found too.
#[derive(Debug)]
pub struct RegistryFlips {
    patterns: Vec<u8>,
    /// Bit `k` of `matches[o]`: flipping byte `o` by `patterns[k]` leaves a hypothesis matching.
    matches: Vec<u8>,
    /// The CRC field, whose flips change the stored value instead.
    field: [u64; 2],
}

/// A hypothesis as the walk sees it: covered bytes `[start, end)` but for one gap (a skipped
/// field), and its CRC xor the stored value.
struct Span {
    start: u64,
    end: u64,
    gap: Option<[u64; 2]>,
    target: u32,
}

impl Span {
    fn of(h: &Hypothesis, value: u32, stored: u32) -> Option<Span> {
        let mut pieces: Vec<[u64; 2]> = h.ranges.iter().chain(&h.zeroed).copied().collect();
        pieces.retain(|r| r[1] > r[0]);
        pieces.sort_unstable();
        // A hypothesis over no bytes (a prefix ending at the field's end, the field skipped)
        // covers no flip.
        let (first, last) = match (pieces.first(), pieces.last()) {
            (Some(f), Some(l)) => (*f, *l),
            _ => ([0, 0], [0, 0]),
        };
        let mut gaps = pieces.windows(2).filter(|w| w[1][0] != w[0][1]);
        let gap = gaps.next().map(|w| [w[0][1], w[1][0]]);
        if gaps.next().is_some() || pieces.windows(2).any(|w| w[1][0] < w[0][1]) {
            return None;
        }
        Some(Span {
            start: first[0],
            end: last[1],
            gap,
            target: value ^ stored,
        })
    }

    fn covers(&self, o: u64) -> bool {
        (self.start..self.end).contains(&o) && !self.gap.is_some_and(|g| (g[0]..g[1]).contains(&o))
    }

    /// Covered bytes in `[from, end)`.
    fn covered_from(&self, from: u64) -> u64 {
        let from = from.max(self.start).min(self.end);
        let gap = self
            .gap
            .map_or(0, |g| g[1].min(self.end).saturating_sub(g[0].max(from)));
        self.end - from - gap
    }
}

/// What a one-byte flip outside every read byte does to a file's checksums, for every offset
/// and pattern (`NbgFamily::crc_flips`).
#[derive(Debug)]
pub enum CrcFlips {
    /// v1, the field stores zero: every flip leaves it absent.
    Absent,
    /// v1: the registry decides the field's class, flip by flip.
    Registry(RegistryFlips),
    /// v2: the checksums are rules the parse enforces after every structural rule, each a
    /// CRC-32 over whole ranges (which catches every one-byte change), so a flip fails the
    /// first check that covers it: `[start, end)` ranges in file order with that check's code.
    /// A flip no range covers parses like the base.
    Enforced(Vec<(u64, u64, &'static str)>),
}

/// How the check-only parse of a one-byte flip outside every read byte ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlipVerdict {
    /// It fails with this code.
    Fails(&'static str),
    /// It parses, its CRC field of this class (none for v2).
    Parses(Option<CrcClass>),
}

impl CrcFlips {
    /// The verdict once byte `offset` is xored with `xor`; `None` where the table cannot say (a
    /// byte of the field, another pattern).
    pub fn verdict(&self, offset: u64, xor: u8) -> Option<FlipVerdict> {
        let class = |matches| {
            if matches {
                CrcClass::Matches
            } else {
                CrcClass::Unexplained
            }
        };
        Some(match self {
            CrcFlips::Absent => FlipVerdict::Parses(Some(CrcClass::Absent)),
            CrcFlips::Registry(r) => FlipVerdict::Parses(Some(class(r.matches(offset, xor)?))),
            CrcFlips::Enforced(ranges) => {
                covering(ranges, offset).map_or(FlipVerdict::Parses(None), FlipVerdict::Fails)
            }
        })
    }
}

/// The code of the range in `ranges` (sorted, not overlapping) that holds `offset`.
pub fn covering(ranges: &[(u64, u64, &'static str)], offset: u64) -> Option<&'static str> {
    let i = ranges.partition_point(|r| r.1 <= offset);
    ranges.get(i).filter(|r| r.0 <= offset).map(|r| r.2)
}

impl RegistryFlips {
    /// The flips of a file of `len` bytes with the CRC field at `field`, given the registry's
    /// hypotheses and their CRCs over the unflipped file. `None` when a hypothesis has more than
    /// one gap or overlapping pieces (not one the registry builds).
    pub fn new(
        len: u64,
        field: u64,
        stored: u32,
        hypotheses: &[Hypothesis],
        values: &[u32],
        patterns: &[u8],
    ) -> Option<Self> {
        use rayon::prelude::*;
        if patterns.len() > 8 || hypotheses.len() != values.len() {
            return None;
        }
        let spans: Vec<Span> = hypotheses
            .iter()
            .zip(values)
            .map(|(h, &v)| Span::of(h, v, stored))
            .collect::<Option<_>>()?;
        let mut matches = vec![0u8; len as usize];
        let all = (1u8 << patterns.len()) - 1;
        matches
            .par_chunks_mut(FLIP_BLOCK)
            .enumerate()
            .for_each(|(b, out)| {
                let a = (b * FLIP_BLOCK) as u64;
                for s in &spans {
                    if s.target == 0 {
                        // Matching unflipped: a flip it does not cover leaves it matching; one
                        // it covers changes its CRC (CRC-32 catches every one-byte change).
                        for (i, m) in out.iter_mut().enumerate() {
                            if !s.covers(a + i as u64) {
                                *m = all;
                            }
                        }
                    } else {
                        walk(s, a, out, patterns);
                    }
                }
            });
        Some(RegistryFlips {
            patterns: patterns.to_vec(),
            matches,
            field: [field, field + 4],
        })
    }

    /// Whether some hypothesis matches once byte `offset` is xored with `xor`; `None` for a
    /// byte of the CRC field or a pattern the table was not built with.
    pub fn matches(&self, offset: u64, xor: u8) -> Option<bool> {
        if (self.field[0]..self.field[1]).contains(&offset) {
            return None;
        }
        let k = self.patterns.iter().position(|&p| p == xor)?;
        Some(self.matches.get(offset as usize)? >> k & 1 == 1)
    }
}

/// Mark in `out` (offsets `a..`) the flips that make `s` match: walk down from the block's
/// end (or the span's), each pattern's difference carried past one more byte at every covered
/// offset left behind.
fn walk(s: &Span, a: u64, out: &mut [u8], patterns: &[u8]) {
    let lo = s.start.max(a);
    let hi = s.end.min(a + out.len() as u64);
    if lo >= hi {
        return;
    }
    for (k, &p) in patterns.iter().enumerate() {
        // The difference a flip at `hi - 1` makes, carried past the covered bytes after it.
        let mut d = concat(difference(p), 0, s.covered_from(hi));
        let mut o = hi - 1;
        loop {
            let covered = s.covers(o);
            if covered && d == s.target {
                out[(o - a) as usize] |= 1 << k;
            }
            if o == lo {
                break;
            }
            if covered {
                d = past_one_byte(d);
            }
            o -= 1;
        }
    }
}

/// Every registry hypothesis that reproduces `stored`.
pub fn explain_v1(
    bytes: &[u8],
    field: u64,
    stored: u32,
    boundaries: &[(u64, String)],
) -> Vec<Hypothesis> {
    explain_v1_with(bytes.len() as u64, field, stored, boundaries, |s, e| {
        crc32fast::hash(&bytes[s as usize..e as usize])
    })
}

/// `explain_v1` for a file of `len` bytes, given the CRC-32 of any `[start, end)`.
pub fn explain_v1_with(
    len: u64,
    field: u64,
    stored: u32,
    boundaries: &[(u64, String)],
    crc_of: impl FnMut(u64, u64) -> u32,
) -> Vec<Hypothesis> {
    let hypotheses = registry(len, field, boundaries);
    let eval = Evaluator::with_crcs(len, &hypotheses, crc_of);
    hypotheses
        .into_iter()
        .filter(|h| eval.crc(h) == Some(stored))
        .collect()
}

impl std::fmt::Display for CrcClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CrcClass::Absent => "absent",
            CrcClass::Matches => "matches",
            CrcClass::Unexplained => "unexplained",
        })
    }
}

/// What `nbg crc-explain` reports for one file.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The graph's format name (`nbg-v1`, `nbg-v2`).
    pub format: &'static str,
    /// File offset of the stored CRC field.
    pub field_offset: u64,
    /// The value stored in the CRC field.
    pub stored: u32,
    /// How many hypotheses were computed (the registry plus the v2 rule).
    pub hypotheses_evaluated: usize,
    /// The hypotheses whose CRC equals `stored`, the recovered v2 rule first.
    pub matches: Vec<Hypothesis>,
}

/// The explanation of a CRC field from its hypotheses (and, for v2, the recovered rule with
/// the value it computes); `crc_explain::explain` builds them from a parsed graph.
/// `crc_of` gives the CRC-32 of any `[start, end)` of the file of `len` bytes.
pub fn finish(
    format: &'static str,
    len: u64,
    crc_of: impl FnMut(u64, u64) -> u32,
    field: u64,
    stored: u32,
    hypotheses: Vec<Hypothesis>,
    special: Option<(Hypothesis, u32)>,
) -> Explanation {
    let eval = Evaluator::with_crcs(len, &hypotheses, crc_of);
    let evaluated = hypotheses.len() + usize::from(special.is_some());
    let mut matches: Vec<Hypothesis> = hypotheses
        .into_iter()
        .filter(|h| eval.crc(h) == Some(stored))
        .collect();
    if let Some((rule, crc)) = special {
        if crc == stored {
            matches.insert(0, rule);
        }
    }
    Explanation {
        format,
        field_offset: field,
        stored,
        hypotheses_evaluated: evaluated,
        matches,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The CRC a hypothesis describes, by hashing its pieces' bytes directly.
    fn direct(bytes: &[u8], h: &Hypothesis) -> u32 {
        let mut pieces: Vec<([u64; 2], bool)> = h.ranges.iter().map(|&r| (r, false)).collect();
        pieces.extend(h.zeroed.iter().map(|&z| (z, true)));
        pieces.sort_by_key(|p| p.0[0]);
        let mut crc = crc32fast::Hasher::new();
        for (r, zero) in pieces {
            let (s, e) = (r[0] as usize, r[1] as usize);
            if zero {
                crc.update(&vec![0; e - s]);
            } else {
                crc.update(&bytes[s..e]);
            }
        }
        crc.finalize()
    }

    #[test]
    fn one_byte_step_is_the_one_byte_shift() {
        for d in [1u32, 0x8000_0000, 0xdead_beef, 0x0123_4567] {
            assert_eq!(past_one_byte(d), concat(d, 0, 1));
        }
    }

    proptest! {
        /// The flip table says, for a flip outside the field, exactly whether some hypothesis
        /// of the flipped bytes reproduces the stored value (chosen so that some do).
        #[test]
        fn registry_flips_are_the_flipped_hypotheses(
            bytes in proptest::collection::vec(any::<u8>(), 8..300),
            field in 0u64..300,
            cuts in proptest::collection::vec(0u64..300, 0..8),
            at in any::<prop::sample::Index>(),
            which in 0usize..3,
            pick in any::<prop::sample::Index>(),
            stored_kind in 0u8..3,
        ) {
            let patterns = [0x01u8, 0x80, 0xff];
            let len = bytes.len() as u64;
            let field = field % (len - 3);
            let boundaries: Vec<(u64, String)> =
                cuts.iter().map(|&c| (c % len, format!("cut {c}"))).collect();
            let hypotheses = registry(len, field, &boundaries);
            // Outside the field: the byte after it, or the first when it ends the file.
            let o = match at.index(bytes.len()) as u64 {
                o if (field..field + 4).contains(&o) && field + 4 < len => field + 4,
                o if (field..field + 4).contains(&o) => 0,
                o => o,
            };
            let mut flipped = bytes.clone();
            flipped[o as usize] ^= patterns[which];
            let h = &hypotheses[pick.index(hypotheses.len())];
            let stored = match stored_kind {
                0 => direct(&flipped, h),
                1 => direct(&bytes, h),
                _ => 0x1234_5678,
            };
            let values: Vec<u32> = hypotheses.iter().map(|h| direct(&bytes, h)).collect();
            let table = RegistryFlips::new(len, field, stored, &hypotheses, &values, &patterns)
                .expect("registry hypotheses have at most one gap");
            let expected = hypotheses.iter().any(|h| direct(&flipped, h) == stored);
            prop_assert_eq!(table.matches(o, patterns[which]), Some(expected));
        }

        /// The registry's values carried along the segments are exactly its hypotheses' CRCs.
        #[test]
        fn registry_values_are_the_hypotheses_crcs(
            bytes in proptest::collection::vec(any::<u8>(), 8..600),
            field in 0u64..600,
            cuts in proptest::collection::vec(0u64..700, 0..12),
        ) {
            let len = bytes.len() as u64;
            let field = field % (len - 3);
            let boundaries: Vec<(u64, String)> =
                cuts.iter().map(|&c| (c, format!("cut {c}"))).collect();
            let mut expected: Vec<u32> = registry(len, field, &boundaries)
                .iter()
                .map(|h| direct(&bytes, h))
                .collect();
            let offsets: Vec<u64> = cuts.clone();
            let mut values = registry_values(len, field, &offsets, |s, e| {
                crc32fast::hash(&bytes[s as usize..e as usize])
            })
            .expect("the field lies inside the file");
            expected.sort_unstable();
            values.sort_unstable();
            prop_assert_eq!(values, expected);
        }

        /// Combining prefix CRCs gives every registry hypothesis the CRC of its bytes.
        #[test]
        fn evaluator_matches_direct_hashing(
            bytes in proptest::collection::vec(any::<u8>(), 8..600),
            field in 0u64..600,
            cuts in proptest::collection::vec(0u64..600, 0..12),
        ) {
            let len = bytes.len() as u64;
            let field = field % (len - 4);
            let boundaries: Vec<(u64, String)> =
                cuts.iter().map(|&c| (c % len, format!("cut {c}"))).collect();
            let hypotheses = registry(len, field, &boundaries);
            let eval = Evaluator::with_crcs(len, &hypotheses, |s, e| {
                crc32fast::hash(&bytes[s as usize..e as usize])
            });
            for h in &hypotheses {
                prop_assert_eq!(eval.crc(h), Some(direct(&bytes, h)), "{}", h.rule);
            }
        }
    }
}
