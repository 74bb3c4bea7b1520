//! Mutation sweep: flip every byte with a fixed set of patterns in memory and parse again.
//!
//! Each offset is `detected` (the parse fails, or a v1 CRC field that matched stops matching;
//! the code that caught it is kept), `tolerated` (the parse succeeds and the byte's owner
//! explains why: gap bytes the CRC rule excludes, recorded-but-unvalidated header and directory
//! words, a connection region nothing covers, a v1 file without a CRC) or `undetected`.
//! An offset takes its worst pattern's outcome.
//!
//! Every decoded byte is flipped and parsed (check-only mode: every rule, no SHA-256). In files
//! larger than `EXHAUSTIVE_LIMIT`, opaque payload and padding bytes and the parts of decoded
//! coefficient entries, which no parse rule reads except the checksums, are classified from the
//! checksum coverage instead (`derived`); on smaller
//! files both methods run in the tests and must agree.

use crate::nbg::crc_index::{CrcIndex, Flip};
use crate::nbg::crc_rules::{CrcClass, CrcFlips, FlipVerdict};
use crate::nbg::failure::{Code, Failure};
use crate::nbg::family::OwnerClass;
use crate::nbg::family::{NbgFamily, Origin, Place};
use crate::nbg::image::NbgImage;
use crate::nbg::parse::{Graph, Options, parse, parse_data};
use crate::nbg::read::{Data, ReadLog, ReadMap};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// XOR patterns applied to every byte: a low bit, the high bit and every bit.
pub const PATTERNS: [u8; 3] = [0x01, 0x80, 0xff];
/// Files up to this size are swept exhaustively at every offset.
pub const EXHAUSTIVE_LIMIT: u64 = 256 * 1024;

/// What happened to one offset under its worst pattern.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// The code that caught the flip (a failure code, or `crc-field-unexplained`).
    Detected(&'static str),
    /// The parse succeeded and the byte's owner explains why (the reason).
    Tolerated(&'static str),
    /// The parse succeeded and nothing explains it.
    Undetected,
}

impl Outcome {
    fn rank(&self) -> u8 {
        match self {
            Outcome::Detected(_) => 0,
            Outcome::Tolerated(_) => 1,
            Outcome::Undetected => 2,
        }
    }

    /// The outcome without its code or reason.
    pub fn class(&self) -> OutcomeClass {
        match self {
            Outcome::Detected(_) => OutcomeClass::Detected,
            Outcome::Tolerated(_) => OutcomeClass::Tolerated,
            Outcome::Undetected => OutcomeClass::Undetected,
        }
    }
}

/// An outcome's kind alone, as the byte maps and their runs name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OutcomeClass {
    /// A parse failure or the CRC check caught the flip.
    Detected,
    /// The parse succeeded and the byte's owner explains why.
    Tolerated,
    /// The parse succeeded and nothing explains it.
    Undetected,
}

/// The cells of a sweep against the vendor's loader (`simulator::sweep`), as its runs name them,
/// worst first: here, below both the driver code and the report that reads a sweep document
/// without the driver.
pub const VENDOR_CELLS: [&str; 6] = [
    "loader-crashed",
    "loader-hung",
    "only-loader-refuses",
    "only-nbg-refuses",
    "both-accept",
    "both-refuse",
];

/// Schema tag of `nbg sweep --vendor --json`.
pub const VENDOR_SCHEMA: &str = "nbg-vendor-sweep/1";

/// Mutations per cell of a vendor sweep (`simulator::sweep` counts them; a report reads them
/// from a saved document without the driver).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct VendorCells {
    /// `both-refuse`.
    pub both_refuse: u64,
    /// `only-nbg-refuses`.
    pub only_nbg_refuses: u64,
    /// `only-loader-refuses`.
    pub only_loader_refuses: u64,
    /// `both-accept`.
    pub both_accept: u64,
    /// `loader-crashed`.
    pub loader_crashed: u64,
    /// `loader-hung`.
    pub loader_hung: u64,
}

crate::canonical::names! {
    OutcomeClass {
        Detected => "detected",
        Tolerated => "tolerated",
        Undetected => "undetected",
    }
}

/// The outcome of every offset, two bytes each: an index into the few distinct outcomes a
/// sweep meets (failure codes, reasons, undetected), so memory is the file size twice, not the
/// 24 bytes an `Outcome` takes (a 32 MiB file held 768 MiB of outcomes that way).
#[derive(Clone, Debug, Default)]
pub struct Outcomes {
    distinct: Vec<Outcome>,
    ids: Vec<u16>,
}

impl Outcomes {
    /// Offsets covered.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no offset is covered (an empty file cannot be swept, so never in a report).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Every offset's outcome, in file order.
    pub fn iter(&self) -> impl Iterator<Item = &Outcome> {
        self.ids.iter().map(|&i| &self.distinct[usize::from(i)])
    }
}

impl std::ops::Index<usize> for Outcomes {
    type Output = Outcome;
    fn index(&self, offset: usize) -> &Outcome {
        &self.distinct[usize::from(self.ids[offset])]
    }
}

impl<'a> IntoIterator for &'a Outcomes {
    type Item = &'a Outcome;
    type IntoIter = Box<dyn Iterator<Item = &'a Outcome> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl PartialEq for Outcomes {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// The distinct outcomes met so far, shared by the workers (one lock per block of offsets).
#[derive(Default)]
struct Interner {
    ids: std::collections::HashMap<Outcome, u16>,
    distinct: Vec<Outcome>,
}

impl Interner {
    fn id(&mut self, o: Outcome) -> u16 {
        if let Some(&i) = self.ids.get(&o) {
            return i;
        }
        // Invariant: outcomes are failure codes, tolerated reasons and `Undetected`, a few
        // hundred at most, far below 65,536.
        let i = u16::try_from(self.distinct.len()).expect("fewer than 65,536 distinct outcomes");
        self.distinct.push(o.clone());
        self.ids.insert(o, i);
        i
    }
}

/// Offsets per outcome.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    /// Offsets detected.
    pub detected: u64,
    /// Offsets tolerated.
    pub tolerated: u64,
    /// Offsets undetected.
    pub undetected: u64,
}

impl Counts {
    fn add(&mut self, o: &Outcome, n: u64) {
        match o {
            Outcome::Detected(_) => self.detected += n,
            Outcome::Tolerated(_) => self.tolerated += n,
            Outcome::Undetected => self.undetected += n,
        }
    }
}

/// A sweep of one file.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The family's format name.
    pub format: &'static str,
    /// The XOR patterns applied.
    pub patterns: Vec<u8>,
    /// Offsets swept (the file size).
    pub offsets: u64,
    /// Offsets detected.
    pub detected: u64,
    /// Offsets tolerated.
    pub tolerated: u64,
    /// Offsets undetected.
    pub undetected: u64,
    /// Outcome counts per owner class.
    pub by_owner: BTreeMap<&'static str, Counts>,
    /// Detected offsets per failure code.
    pub by_code: BTreeMap<String, u64>,
    /// Tolerated offsets per reason.
    pub tolerated_reasons: BTreeMap<&'static str, u64>,
    /// Undetected runs (first 64): start, end, owner label.
    pub undetected_ranges: Vec<(u64, u64, String)>,
    /// Offsets flipped and parsed.
    pub exhaustive_offsets: u64,
    /// Offsets classified from checksum coverage instead (files above the exhaustive limit).
    pub derived_offsets: u64,
    /// What the flips' reparses cost, counted, not timed: the same on every machine.
    pub work: Work,
}

/// The work of a sweep's reparses: a guard on its speed that cannot drift with the machine (a
/// decoder put back on the check-only reparse reads more bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Work {
    /// Flips parsed again (the others judged from the unread-byte table or checksum coverage).
    pub reparses: u64,
    /// Bytes those parses read, other than through the base's CRC index.
    pub bytes_read: u64,
}

/// Sweep a file; returns the report and the outcome of every offset. Files larger than
/// `exhaustive_limit` classify payload and gap bytes from checksum coverage.
///
/// Memory: the file, one working copy of it per worker and two bytes per offset (5 x the file
/// on two workers), plus the parsed graph and its ledger.
pub fn sweep(bytes: &[u8], exhaustive_limit: u64) -> Result<(Report, Outcomes), Failure> {
    sweep_with_progress(bytes, exhaustive_limit, &|_| {})
}

/// `sweep`, calling `progress` with the number of offsets done as each block finishes.
pub fn sweep_with_progress(
    bytes: &[u8],
    exhaustive_limit: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(Report, Outcomes), Failure> {
    let graph = parse(bytes)?;
    let image = NbgImage::new(&graph)?;
    // Every flip's CRCs come from the base's prefix CRCs: no pass over the file per flip.
    let index = CrcIndex::new(bytes);
    let judge = Judge::new(bytes, &index, &graph, &image)?;
    let large = bytes.len() as u64 > exhaustive_limit;
    // Payload and gap bytes of a large file: their outcome follows from their owner (the
    // checksum that covers it, or the gap's reason), the same for every byte of the owner.
    // Coefficient streams, biases and tables as well: the check-only parse does not decode
    // them, so every byte of one has its owner's outcome, like an opaque payload's.
    let derived = |o: &crate::nbg::family::Owner| {
        large
            && (matches!(
                o.class,
                OwnerClass::PreservedOpaque | OwnerClass::Padding | OwnerClass::Alignment
            ) || matches!(o.origin, Origin::Coefficient(..)))
    };
    // One working copy per worker (not per block), each block's outcomes written in place as
    // two-byte ids.
    let chunk = 4096usize;
    let interner = std::sync::Mutex::new(Interner::default());
    let mut ids = vec![0u16; bytes.len()];
    ids.par_chunks_mut(chunk).enumerate().for_each_init(
        || (bytes.to_vec(), Vec::with_capacity(chunk)),
        |(buf, local), (k, out)| {
            let start = k * chunk;
            local.clear();
            // The derived outcome of the owner last met: [start, end) and its outcome.
            let mut owner_outcome: Option<(u64, u64, Outcome)> = None;
            local.extend((start..start + out.len()).map(|o| {
                let at = o as u64;
                if let Some((s, e, outcome)) = &owner_outcome
                    && (*s..*e).contains(&at)
                {
                    return outcome.clone();
                }
                let owner = image.owner_of(at);
                if derived(owner) {
                    let outcome = derive(&graph, &image, at);
                    owner_outcome = Some((owner.start, owner.end, outcome.clone()));
                    outcome
                } else {
                    judge.flip(buf, o)
                }
            }));
            // A worker that panicked while holding the lock left a consistent map (the
            // interner is only ever appended to), so a poisoned lock is still usable.
            let mut table = interner.lock().unwrap_or_else(|p| p.into_inner());
            let mut last: Option<(Outcome, u16)> = None;
            for (slot, o) in out.iter_mut().zip(local.drain(..)) {
                *slot = match &last {
                    Some((l, id)) if *l == o => *id,
                    _ => {
                        let id = table.id(o.clone());
                        last = Some((o, id));
                        id
                    }
                };
            }
            drop(table);
            progress(out.len() as u64);
        },
    );
    let Interner { distinct, .. } = interner.into_inner().unwrap_or_else(|p| p.into_inner());
    let outcomes = Outcomes { distinct, ids };
    let mut report = Report {
        format: image.format(),
        patterns: PATTERNS.to_vec(),
        offsets: bytes.len() as u64,
        detected: 0,
        tolerated: 0,
        undetected: 0,
        by_owner: BTreeMap::new(),
        by_code: BTreeMap::new(),
        tolerated_reasons: BTreeMap::new(),
        undetected_ranges: Vec::new(),
        exhaustive_offsets: 0,
        derived_offsets: 0,
        work: Work {
            reparses: judge.reparses.load(Ordering::Relaxed),
            bytes_read: judge.bytes_read.load(Ordering::Relaxed),
        },
    };
    // Owner by owner (they cover the file contiguously), counting runs of one outcome id.
    for owner in image.owners() {
        let counts = report.by_owner.entry(owner.class.as_str()).or_default();
        let range = owner.start as usize..owner.end as usize;
        let n = owner.end - owner.start;
        if derived(owner) {
            report.derived_offsets += n;
        } else {
            report.exhaustive_offsets += n;
        }
        let mut o = range.start;
        while o < range.end {
            let id = outcomes.ids[o];
            let run_end = (o..range.end)
                .find(|&i| outcomes.ids[i] != id)
                .unwrap_or(range.end);
            let run = (run_end - o) as u64;
            let outcome = &outcomes.distinct[usize::from(id)];
            counts.add(outcome, run);
            match outcome {
                Outcome::Detected(code) => {
                    report.detected += run;
                    *report.by_code.entry(code.to_string()).or_insert(0) += run;
                }
                Outcome::Tolerated(reason) => {
                    report.tolerated += run;
                    *report.tolerated_reasons.entry(reason).or_insert(0) += run;
                }
                Outcome::Undetected => {
                    report.undetected += run;
                    let ranges = &mut report.undetected_ranges;
                    let full = ranges.len() >= 64;
                    match ranges.last_mut() {
                        Some(r) if r.1 == o as u64 && r.2 == owner.label => r.1 = run_end as u64,
                        _ if full => {}
                        _ => ranges.push((o as u64, run_end as u64, owner.label.clone())),
                    }
                }
            }
            o = run_end;
        }
    }
    Ok((report, outcomes))
}

/// The sweep's outcome of one flip: byte `offset` of `bytes` xored with `xor`, judged as a
/// sweep judges it. Where the file's own verdict is clean, a detected flip's code is what
/// `check --strict` says of the flipped copy, and a flip not detected is one it passes.
pub fn flip_outcome(bytes: &[u8], offset: usize, xor: u8) -> Result<Outcome, Failure> {
    let graph = parse(bytes)?;
    let image = NbgImage::new(&graph)?;
    let index = CrcIndex::new(bytes);
    let judge = Judge::new(bytes, &index, &graph, &image)?;
    Ok(judge.pattern(&mut bytes.to_vec(), offset, xor, true))
}

/// The check-only parse: every rule, no SHA-256.
const CHECK_ONLY: Options = Options {
    fingerprints: false,
};

/// What judging a flip needs of the base file.
struct Judge<'a, 'data> {
    index: &'a CrcIndex<'data>,
    graph: &'a Graph<'data>,
    image: &'a NbgImage<'data>,
    base_crc: Option<CrcClass>,
    /// The bytes the check-only parse reads (every stage but the records', then the records'),
    /// and what a flip of any other byte does to the checksums.
    unread: Option<([ReadMap; 2], CrcFlips)>,
    /// Flips parsed again, and the bytes those parses read (`Work`).
    reparses: AtomicU64,
    bytes_read: AtomicU64,
}

impl<'a, 'data> Judge<'a, 'data> {
    fn new(
        bytes: &'data [u8],
        index: &'a CrcIndex<'data>,
        graph: &'a Graph<'data>,
        image: &'a NbgImage<'data>,
    ) -> Result<Self, Failure> {
        // A byte the check-only parse never reads cannot change what it decides, only the
        // checksums over it: the parse of such a flip is the base's with the CRC re-checked.
        let unread = match graph.crc_flips(&mut |s, e| index.range(s, e), &PATTERNS) {
            Some(flips) => {
                let log = ReadLog::default();
                parse_data(Data::recording(bytes, &log), CHECK_ONLY)?;
                Some((log.into_maps(bytes.len() as u64), flips))
            }
            None => None,
        };
        Ok(Judge {
            index,
            graph,
            image,
            base_crc: graph.crc_class(),
            unread,
            reparses: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
        })
    }

    /// Flip `buf[o]` (a copy of the base) with every pattern and keep the worst outcome: the
    /// first pattern's code when every pattern is detected. A flip that is not detected has
    /// the byte's own explanation, the same for every pattern and ranked above any code, so
    /// the first one ends the search.
    fn flip(&self, buf: &mut [u8], o: usize) -> Outcome {
        let [first, rest @ ..] = PATTERNS;
        let detected = self.pattern(buf, o, first, true);
        if detected.rank() > 0 {
            return detected;
        }
        for p in rest {
            let outcome = self.pattern(buf, o, p, true);
            if outcome.rank() > 0 {
                return outcome;
            }
        }
        detected
    }

    /// `buf[o]` xored with `p`: with `incremental`, a byte no stage but the records' reads is
    /// judged by that stage alone, then the checksums' table, an unread byte by the table;
    /// otherwise (or where the table cannot say) the check-only parse of the flipped bytes.
    fn pattern(&self, buf: &mut [u8], o: usize, p: u8, incremental: bool) -> Outcome {
        let at = o as u64;
        if incremental
            && let Some(([rules, records], flips)) = &self.unread
            && !rules.read(at)
            && let Some(verdict) = flips.verdict(at, p)
        {
            let refused = records.read(at).then(|| {
                self.flipped(buf, o, p, |buf| {
                    let data = Data::new(buf).counting(&self.bytes_read);
                    self.graph.recheck_records(data).err()
                })
            });
            return match (refused.flatten(), verdict) {
                (Some(f), _) => Outcome::Detected(f.code.as_str()),
                (None, FlipVerdict::Fails(code)) => Outcome::Detected(code),
                (None, FlipVerdict::Parses(class)) => self.parsed(class, o),
            };
        }
        self.flipped(buf, o, p, |buf| {
            let data = match Flip::of(self.index, buf, o) {
                Some(f) => Data::flipped(buf, f),
                None => Data::new(buf),
            }
            .counting(&self.bytes_read);
            match parse_data(data, CHECK_ONLY) {
                Err(f) => Outcome::Detected(f.code.as_str()),
                Ok(g) => self.parsed(g.crc_class(), o),
            }
        })
    }

    /// `parse` of `buf` with byte `o` xored with `p`, counted as a reparse; `buf` is the base
    /// again afterwards.
    fn flipped<T>(&self, buf: &mut [u8], o: usize, p: u8, parse: impl FnOnce(&[u8]) -> T) -> T {
        self.reparses.fetch_add(1, Ordering::Relaxed);
        buf[o] ^= p;
        let out = parse(buf);
        buf[o] ^= p;
        out
    }

    /// The outcome of a flip that parsed with the CRC class `class`.
    fn parsed(&self, class: Option<CrcClass>, o: usize) -> Outcome {
        if crate::nbg::crc_rules::caught(self.base_crc, class) {
            Outcome::Detected(Code::CrcFieldUnexplained.as_str())
        } else {
            explain(self.graph, self.image, o as u64)
        }
    }
}

/// The outcome checksum coverage implies for a payload or gap byte.
fn derive(graph: &Graph<'_>, image: &NbgImage<'_>, o: u64) -> Outcome {
    match graph.coverage_code(o) {
        Some(code) => Outcome::Detected(code),
        None => explain(graph, image, o),
    }
}

/// Why a successful parse of a flipped byte is acceptable, from the byte's owner.
fn explain(graph: &Graph<'_>, image: &NbgImage<'_>, o: u64) -> Outcome {
    let owner = image.owner_of(o);
    let place = match owner.class {
        OwnerClass::Padding | OwnerClass::Alignment => Place::Gap,
        OwnerClass::ConnectionTail => Place::ConnectionTail,
        OwnerClass::DecodedRecord if owner.origin == Origin::Structure => Place::Structure,
        _ => Place::Other,
    };
    graph
        .unchecked_reason(o, place)
        .map_or(Outcome::Undetected, Outcome::Tolerated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The check-only parse of a flip through the base's CRC index, as text.
    fn both(base: &[u8], index: &CrcIndex<'_>, o: usize, xor: u8) -> (String, String) {
        let mut buf = base.to_vec();
        buf[o] ^= xor;
        let opts = Options {
            fingerprints: false,
        };
        let full = format!("{:?}", crate::nbg::parse::parse_with(&buf, opts));
        let flip = Flip::of(index, &buf, o).unwrap();
        let incremental = format!("{:?}", parse_data(Data::flipped(&buf, flip), opts));
        (full, incremental)
    }

    /// The files the incremental judgement is held to: v1 public controls, and v2 under each
    /// header CRC rule (the board toolkit's directory order, the simulator's whole file).
    const CONTROLS: [&str; 4] = [
        "controls/public/v1/a733-lenet-v2-0016.nb",
        "controls/public/v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb",
        "controls/public/v2/a733-face_detector_int16-0000.nb",
        "controls/serializer/conv-qdq-u8-88.nb",
    ];

    fn control(file: &str) -> Vec<u8> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::read(root.join(file)).unwrap()
    }

    #[test]
    fn most_of_a_file_is_judged_without_a_parse() {
        for file in CONTROLS {
            let base = control(file);
            let (graph, index) = (parse(&base).unwrap(), CrcIndex::new(&base));
            let image = NbgImage::new(&graph).unwrap();
            let judge = Judge::new(&base, &index, &graph, &image).unwrap();
            let ([rules, _], _) = judge.unread.as_ref().expect("a flip table");
            let unread = (0..base.len() as u64).filter(|&o| !rules.read(o)).count();
            assert!(
                unread * 2 > base.len(),
                "{file}: {unread} bytes read by no rule"
            );
            assert!(rules.read(0), "{file}: the magic is read");
        }
    }

    #[test]
    fn a_flip_only_the_records_read_is_judged_by_them_as_a_parse_would() {
        for file in CONTROLS {
            let base = control(file);
            let (graph, index) = (parse(&base).unwrap(), CrcIndex::new(&base));
            let image = NbgImage::new(&graph).unwrap();
            let judge = Judge::new(&base, &index, &graph, &image).unwrap();
            let ([rules, records], _) = judge.unread.as_ref().expect("a flip table");
            let mut buf = base.clone();
            let mut judged = 0;
            for o in (0..base.len()).filter(|&o| !rules.read(o as u64) && records.read(o as u64)) {
                for p in PATTERNS {
                    let fast = judge.pattern(&mut buf, o, p, true);
                    let parsed = judge.pattern(&mut buf, o, p, false);
                    assert_eq!(fast, parsed, "{file}: offset 0x{o:x} ^ 0x{p:02x}");
                    judged += 1;
                }
            }
            assert_eq!(buf, base);
            assert!(judged > 0, "{file}: no byte only the records read");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// A flip judged from the unread-byte table has the outcome of its full check-only
        /// parse, pattern by pattern.
        #[test]
        fn a_flip_judged_incrementally_is_the_parsed_outcome(
            at in any::<prop::sample::Index>(),
            p in 0usize..3,
            which in 0usize..4,
        ) {
            let base = control(CONTROLS[which]);
            let (graph, index) = (parse(&base).unwrap(), CrcIndex::new(&base));
            let image = NbgImage::new(&graph).unwrap();
            let judge = Judge::new(&base, &index, &graph, &image).unwrap();
            let mut buf = base.clone();
            let o = at.index(base.len());
            let fast = judge.pattern(&mut buf, o, PATTERNS[p], true);
            let parsed = judge.pattern(&mut buf, o, PATTERNS[p], false);
            prop_assert_eq!(buf, base);
            prop_assert_eq!(fast, parsed, "offset 0x{:x}", o);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn a_flip_parsed_incrementally_is_the_full_parse(
            at in any::<prop::sample::Index>(),
            xor in 1u8..,
            which in 0usize..2,
        ) {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
            let file = ["controls/serializer/conv-qdq-u8-88.nb", "controls/public/v1/a733-lenet-v2-0016.nb"][which];
            let base = std::fs::read(root.join(file)).unwrap();
            let index = CrcIndex::new(&base);
            let (full, incremental) = both(&base, &index, at.index(base.len()), xor);
            prop_assert_eq!(full, incremental);
        }
    }
}
