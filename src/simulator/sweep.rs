//! `nbg sweep FILE --vendor`: the sweep's flips (every byte, or every `stride`-th, XOR each of
//! `sweep::PATTERNS`) judged by nbg and by the vendor's loader. Each mutated image reaches the
//! loader from memory, never from disk, in batches per contained child (`load_batch`); a crash
//! or hang of the loader is a finding with its byte and field. The result is a 2x2 table per
//! owner class and per field: both refuse, only nbg refuses, only the loader refuses, both
//! accept (and the loader's crashes and hangs beside it).

use super::{BatchVerdict, Config, Sdk, VendorError};
use crate::digest::Hash256;
use crate::lab::sweep::VendorCells;
use crate::nbg::crc_rules::CrcClass;
use crate::nbg::family::NbgFamily as _;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::{Options, parse, parse_with};
use serde::Serialize;
use std::collections::BTreeMap;

/// Images per batch generated at once (memory: this many copies of the file).
pub const CHUNK: usize = 256;

/// nbg's verdict on one image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum NbgVerdict {
    /// It parses (and a v1 file whose CRC matched still matches).
    Valid,
    /// It is refused with this code.
    Refused {
        /// The failure code.
        code: String,
    },
}

/// Where one mutation falls in the 2x2 table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cell {
    /// nbg and the loader refuse.
    BothRefuse,
    /// nbg refuses, the loader accepts: nbg's extra strictness.
    OnlyNbgRefuses,
    /// The loader refuses, nbg accepts: a check nbg lacks.
    OnlyLoaderRefuses,
    /// Both accept.
    BothAccept,
    /// The loader crashed (nbg's verdict is in the row).
    LoaderCrashed,
    /// The loader hung and was killed.
    LoaderHung,
}

impl Cell {
    /// Every cell, worst first (the byte maps' palette order).
    pub const ALL: [Cell; 6] = [
        Cell::LoaderCrashed,
        Cell::LoaderHung,
        Cell::OnlyLoaderRefuses,
        Cell::OnlyNbgRefuses,
        Cell::BothAccept,
        Cell::BothRefuse,
    ];

    /// The cell's name (`only-loader-refuses`): `lab::sweep::VENDOR_CELLS`, in `ALL`'s order, which
    /// is also how the cell serializes (the report reads the runs back by these names).
    pub fn as_str(self) -> &'static str {
        crate::lab::sweep::VENDOR_CELLS[self.rank()]
    }

    /// Its place in `ALL`, worst first.
    fn rank(self) -> usize {
        Cell::ALL.iter().position(|x| *x == self).unwrap_or(0)
    }
}

/// Count `c` in `cells`.
fn add(cells: &mut VendorCells, c: Cell) {
    *match c {
        Cell::BothRefuse => &mut cells.both_refuse,
        Cell::OnlyNbgRefuses => &mut cells.only_nbg_refuses,
        Cell::OnlyLoaderRefuses => &mut cells.only_loader_refuses,
        Cell::BothAccept => &mut cells.both_accept,
        Cell::LoaderCrashed => &mut cells.loader_crashed,
        Cell::LoaderHung => &mut cells.loader_hung,
    } += 1;
}

/// One mutation that is a finding: the loader crashed or hung, or refused what nbg accepts.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// The byte flipped.
    pub offset: u64,
    /// The XOR pattern.
    pub pattern: u8,
    /// The owner class of the byte.
    pub class: String,
    /// Its field.
    pub field: String,
    /// nbg's verdict.
    pub nbg: NbgVerdict,
    /// The loader's.
    pub loader: BatchVerdict,
}

/// Most findings listed (all are counted).
pub const MAX_FINDINGS: usize = 256;

/// A vendor sweep of one file.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// SHA-256 of the file.
    pub sha256: Hash256,
    /// Its size.
    pub bytes: u64,
    /// The configuration the loader simulated.
    pub config: Config,
    /// The XOR patterns.
    pub patterns: Vec<u8>,
    /// Every `stride`-th offset was flipped (1: every byte).
    pub stride: u64,
    /// Mutations judged.
    pub mutations: u64,
    /// The loader's verdict on the unmutated file.
    pub baseline: BatchVerdict,
    /// All mutations.
    pub total: VendorCells,
    /// Per owner class.
    pub by_class: BTreeMap<String, VendorCells>,
    /// Per field (`diff::locate` names).
    pub by_field: BTreeMap<String, VendorCells>,
    /// Crashes, hangs and loader-only refusals (first `MAX_FINDINGS`).
    pub findings: Vec<Finding>,
    /// Loader children started.
    pub children: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The verdict of every swept offset, worst over the patterns (for the report's byte map).
    #[serde(skip)]
    pub per_offset: Vec<(u64, Cell)>,
    /// `per_offset` as runs `[start, end, cell]` of one cell over consecutive swept offsets (a
    /// sampled offset stands for the `stride` bytes from it).
    pub runs: Vec<(u64, u64, Cell)>,
}

/// Why a vendor sweep could not run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The file is not a valid NBG for nbg: there is nothing to compare against.
    #[error("{}: at 0x{:x}: {}", .0.code, .0.offset, .0.message)]
    Invalid(crate::nbg::failure::Failure),
    /// The driver could not run.
    #[error(transparent)]
    Vendor(#[from] VendorError),
}

fn nbg_verdict(bytes: &[u8], base_crc: Option<CrcClass>) -> NbgVerdict {
    match parse_with(
        bytes,
        Options {
            fingerprints: false,
        },
    ) {
        Err(f) => NbgVerdict::Refused {
            code: f.code.as_str().to_string(),
        },
        Ok(g) if crate::nbg::crc_rules::caught(base_crc, g.crc_class()) => NbgVerdict::Refused {
            code: crate::nbg::failure::Code::CrcFieldUnexplained
                .as_str()
                .into(),
        },
        Ok(_) => NbgVerdict::Valid,
    }
}

fn cell(nbg: &NbgVerdict, loader: &BatchVerdict) -> Cell {
    match (nbg, loader) {
        (_, BatchVerdict::Crashed { .. }) => Cell::LoaderCrashed,
        (_, BatchVerdict::Hung) => Cell::LoaderHung,
        (NbgVerdict::Refused { .. }, BatchVerdict::Refused { .. }) => Cell::BothRefuse,
        (NbgVerdict::Refused { .. }, BatchVerdict::Accepted) => Cell::OnlyNbgRefuses,
        (NbgVerdict::Valid, BatchVerdict::Refused { .. }) => Cell::OnlyLoaderRefuses,
        (NbgVerdict::Valid, BatchVerdict::Accepted) => Cell::BothAccept,
    }
}

/// The worse of two cells for one offset: a crash or hang first, then a disagreement.
fn worse(a: Cell, b: Cell) -> Cell {
    if b.rank() < a.rank() { b } else { a }
}

/// Sweep `bytes` through nbg and the loader simulating `config`; `progress` hears the
/// mutations done and the total.
pub fn run(
    bytes: &[u8],
    sdk: &Sdk,
    config: &Config,
    stride: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report, SweepError> {
    let start = std::time::Instant::now();
    let graph = parse(bytes).map_err(SweepError::Invalid)?;
    let image = NbgImage::new(&graph).map_err(SweepError::Invalid)?;
    let base_crc = graph.crc_class();
    let stride = stride.max(1);
    let patterns = crate::lab::sweep::PATTERNS;
    let offsets: Vec<u64> = (0..bytes.len() as u64).step_by(stride as usize).collect();
    let total = offsets.len() as u64 * patterns.len() as u64;
    let mut children = 0u64;
    let (baseline, n) = super::load_batch(sdk, config, &[bytes.to_vec()])?;
    children += n;
    let baseline = baseline.into_iter().next().unwrap_or(BatchVerdict::Hung);
    let mut report = Report {
        sha256: Hash256::of(bytes),
        bytes: bytes.len() as u64,
        config: config.clone(),
        patterns: patterns.to_vec(),
        stride,
        mutations: total,
        baseline,
        total: VendorCells::default(),
        by_class: BTreeMap::new(),
        by_field: BTreeMap::new(),
        findings: Vec::new(),
        children: 0,
        seconds: 0.0,
        per_offset: Vec::with_capacity(offsets.len()),
        runs: Vec::new(),
    };
    let mutations: Vec<(u64, u8)> = offsets
        .iter()
        .flat_map(|&o| patterns.iter().map(move |&p| (o, p)))
        .collect();
    let mut done = 0u64;
    for chunk in mutations.chunks(CHUNK) {
        let images: Vec<Vec<u8>> = chunk
            .iter()
            .map(|&(o, p)| {
                let mut m = bytes.to_vec();
                m[o as usize] ^= p;
                m
            })
            .collect();
        let (verdicts, n) = super::load_batch(sdk, config, &images)?;
        children += n;
        for ((&(o, p), img), loader) in chunk.iter().zip(&images).zip(verdicts) {
            let nbg = nbg_verdict(img, base_crc);
            let c = cell(&nbg, &loader);
            let owner = image.owner_of(o);
            let class = owner.class.as_str().to_string();
            let field = crate::lab::diff::locate(&graph, owner, o).0;
            add(&mut report.total, c);
            add(report.by_class.entry(class.clone()).or_default(), c);
            add(report.by_field.entry(field.clone()).or_default(), c);
            match report.per_offset.last_mut() {
                Some((last, w)) if *last == o => *w = worse(*w, c),
                _ => report.per_offset.push((o, c)),
            }
            if matches!(
                c,
                Cell::LoaderCrashed | Cell::LoaderHung | Cell::OnlyLoaderRefuses
            ) && report.findings.len() < MAX_FINDINGS
            {
                report.findings.push(Finding {
                    offset: o,
                    pattern: p,
                    class,
                    field,
                    nbg,
                    loader,
                });
            }
        }
        done += chunk.len() as u64;
        progress(done, total);
    }
    for &(o, c) in &report.per_offset {
        let end = (o + stride).min(report.bytes);
        match report.runs.last_mut() {
            Some((_, e, last)) if *last == c && *e == o => *e = end,
            _ => report.runs.push((o, end, c)),
        }
    }
    report.children = children;
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}
