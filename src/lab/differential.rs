//! Controlled serializer differentials (PoC 12B/12C): A1/A2/B captures of one source change.
//!
//! 1. parse A1, A2 and B; A1 and A2 must be byte-identical (the serializer is deterministic);
//! 2. A and B must have the same size and layout descriptors;
//! 3. every changed byte is attributed to its owner in A's ledger: the header CRC field, the
//!    place of a mapping of the registry (`mapping`; the DYNAIO-constant mapping's places are
//!    the DYNAIO entries: index, offset in the entry, offset in the region, file offset), a
//!    section-40 value derived from a changed section, or anything else, which ends the
//!    experiment as `multi-region-unresolved`; so do changes in the places of two mappings.
//!    A change in one mapping other than the DYNAIO kind is settled by that mapping's check
//!    (`mapping::check_one`), reported under `mapping`;
//! 4. the DYNAIO entry holding `a_source` is found and the source indices that differ between
//!    `a_source` and `b_source` must be exactly the changed entry offsets;
//! 5. the substitution is replayed on an in-memory `ChangedImage` of A, the checksums are
//!    recomputed with the recovered rules, and the SHA-256 is compared with B's.
//!
//! Nothing is ever written here; the caller may write the report.

use crate::digest::Hash256;
use crate::exit::Exit;
pub use crate::lab::capture::{
    A1_FILE, A2_FILE, B_FILE, CaptureSet, CaptureSpec, LoadError, SPEC_FILE, load,
};
use crate::lab::diff::locate;
use crate::lab::mapping::{Outcome, Registry, Target, WriteRole};
use crate::nbg::failure::Failure;
use crate::nbg::family::NbgFamily;
use crate::nbg::family::OwnerClass;
use crate::nbg::image::{ChangedImage, NbgImage, Sealed};
use crate::nbg::parse::{FileFacts, Graph, parse};
use serde::Serialize;

/// Most changed ranges a report lists; the rest are counted in `changed_ranges_omitted`, so
/// memory and output stay bounded however much B differs from A.
pub const MAX_CHANGED_RANGES: usize = 4096;

/// Identity of the three captures.
#[derive(Clone, Debug, Serialize)]
pub struct Files {
    /// A1's size and SHA-256.
    pub a1: FileFacts,
    /// A2's size and SHA-256.
    pub a2: FileFacts,
    /// B's size and SHA-256.
    pub b: FileFacts,
}

/// Why a changed byte changed: the place of A that holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RangeRole {
    /// The header's file CRC field.
    CrcField,
    /// A DYNAIO entry (the place of a DYNAIO-constant mapping).
    DynaioEntry,
    /// The place of a field mapping of the registry.
    MappedField,
    /// The place of a section-range mapping of the registry.
    MappedRange,
    /// The coefficient buffer a decoded-coefficient mapping of the registry names.
    MappedCoefficients,
    /// A section-40 value derived from a changed section.
    DerivedChecksum,
    /// Nothing above: the change cannot be localized.
    Other,
}

crate::canonical::names! {
    RangeRole {
        CrcField => "crc-field",
        DynaioEntry => "dynaio-entry",
        MappedField => "mapped-field",
        MappedRange => "mapped-range",
        MappedCoefficients => "mapped-coefficients",
        DerivedChecksum => "derived-checksum",
        Other => "other",
    }
}

/// How a differential ended; only `Reproduced` means B was rebuilt exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// B was rebuilt exactly from A and the source change.
    Reproduced,
    /// Step 1: A1 and A2 are not byte-identical.
    A1DiffersFromA2,
    /// Step 2: A and B differ in size or layout descriptors.
    LayoutDiffers,
    /// Step 3: A and B are byte-identical.
    NoChange,
    /// Step 3: the changed bytes are not all in the place of one mapping.
    MultiRegionUnresolved,
    /// Step 4: no DYNAIO entry (or source quantity) holds the change's source.
    SourceNotFound,
    /// Step 4: the changed entry offsets are not the differing source indices.
    SourceMismatch,
    /// Step 5: the replayed image is not B.
    ReplayMismatch,
}

crate::canonical::names! {
    Verdict {
        Reproduced => "reproduced",
        A1DiffersFromA2 => "a1-differs-from-a2",
        LayoutDiffers => "layout-differs",
        NoChange => "no-change",
        MultiRegionUnresolved => "multi-region-unresolved",
        SourceNotFound => "source-not-found",
        SourceMismatch => "source-mismatch",
        ReplayMismatch => "replay-mismatch",
    }
}

/// One maximal run of changed bytes inside one unit of A's ledger.
#[derive(Clone, Debug, Serialize)]
pub struct ChangedRange {
    /// First changed byte.
    pub start: u64,
    /// One past the last changed byte.
    pub end: u64,
    /// The field or payload offset (`header.crc_sum`, `NBG_SECTION_DYNAIO+0x3`, ...).
    pub owner: String,
    /// The ledger class of the unit (`decoded-record`, `preserved-opaque`, ...).
    pub class: OwnerClass,
    /// Which place of A holds the range.
    pub role: RangeRole,
    /// The DYNAIO entry holding the range, for role `dynaio-entry`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynaio_entry: Option<usize>,
    /// Offset of the range in its DYNAIO entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_offset: Option<u64>,
    /// Offset of the range in the DYNAIO region.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_offset: Option<u64>,
    /// The registry mapping whose place holds the range (index in the registry).
    #[serde(skip)]
    pub mapping: Option<usize>,
}

/// Step 4: the DYNAIO entry that holds `a_source`, and whether B changed exactly its differing bytes.
#[derive(Clone, Debug, Serialize)]
pub struct SourceMatch {
    /// Index of the entry in the DYNAIO table.
    pub dynaio_entry: usize,
    /// File offset of the entry in A.
    pub entry_file_offset: u64,
    /// Entry size in bytes.
    pub entry_size: u64,
    /// Every entry whose A bytes equal `a_source`.
    pub entries_matching_a_source: Vec<usize>,
    /// Indices where `a_source` and `b_source` differ.
    pub differing_source_indices: Vec<u64>,
    /// Entry offsets of the changed bytes localized in step 3.
    pub localized_entry_offsets: Vec<u64>,
    /// Whether the two lists are equal.
    pub consistent: bool,
}

/// One byte of `b_source` written into A's DYNAIO entry.
#[derive(Clone, Debug, Serialize)]
pub struct Substitution {
    /// File offset written.
    pub file_offset: u64,
    /// The DYNAIO entry written.
    pub dynaio_entry: usize,
    /// Offset in that entry (the source index).
    pub entry_offset: u64,
    /// A's byte.
    pub from: u8,
    /// B's byte.
    pub to: u8,
}

/// Step 5: the substitution replayed on A in memory, with the checksums recomputed.
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    /// The bytes written, in source order.
    pub substitutions: Vec<Substitution>,
    /// B's stored header CRC, and the one recomputed over the replayed image.
    pub recorded_crc32: u32,
    /// The file CRC recomputed over the replayed image by `crc_rule` (0 when A stores none).
    pub recomputed_crc32: u32,
    /// The recovered rule the CRC was recomputed with.
    pub crc_rule: &'static str,
    /// Section types whose section-40 value was recomputed.
    pub section_checksums_recomputed: Vec<u32>,
    /// SHA-256 of the replayed image.
    pub sha256: Hash256,
    /// SHA-256 of B.
    pub b_sha256: Hash256,
    /// Whether the replayed image is byte-identical to B.
    pub matches_b: bool,
}

/// The experiment's outcome; `result` is `reproduced` only when B was rebuilt exactly.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The family's format name (`nbg-v1`, `nbg-v2`).
    pub format: &'static str,
    /// The three captures' sizes and SHA-256.
    pub files: Files,
    /// Provenance copied from `differential.json`.
    pub provenance: Option<String>,
    /// Step 1: whether A1 and A2 are byte-identical.
    pub a1_equals_a2: bool,
    /// Step 2: whether A and B have the same size and layout descriptors (absent when step 1 failed).
    pub same_layout: Option<bool>,
    /// The descriptors that differ, `a: ... / b: ...`.
    pub layout_differences: Vec<String>,
    /// Step 3: the changed runs, each inside one unit of A's ledger.
    pub changed_ranges: Vec<ChangedRange>,
    /// Changed ranges beyond `MAX_CHANGED_RANGES`, counted but not listed (then the source
    /// change cannot be localized: the result is `multi-region-unresolved`).
    #[serde(skip_serializing_if = "is_zero")]
    pub changed_ranges_omitted: u64,
    /// Step 4's outcome, when the change is one DYNAIO entry.
    pub source: Option<SourceMatch>,
    /// Step 5's outcome.
    pub replay: Option<Replay>,
    /// A mapping other than the DYNAIO kind explained the change: its check (the replay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping: Option<crate::lab::mapping::CheckRow>,
    /// How the experiment ended.
    pub result: Verdict,
}

impl Report {
    /// Whether B was rebuilt exactly from A and the source change (exit status 0).
    pub fn reproduced(&self) -> bool {
        self.result == Verdict::Reproduced
    }
}

/// A capture of the set that is not a valid NBG: the differential cannot start.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{file}: {failure}")]
pub struct CaptureError {
    /// The capture's file name in the set (`A1_FILE`, `A2_FILE`, `B_FILE`).
    pub file: &'static str,
    /// Why it does not parse (or why A1's ledger cannot be proven).
    #[source]
    pub failure: Failure,
}

impl CaptureError {
    /// An invalid capture is an invalid NBG, not a usage error.
    pub fn exit_status(&self) -> Exit {
        Exit::Failure
    }
}

/// Run the five steps with the registry compiled into the binary (`mapping::builtin`).
pub fn run(set: &CaptureSet) -> Result<Report, CaptureError> {
    run_with(set, crate::lab::mapping::builtin())
}

/// One place of a registry mapping in A: changed bytes inside it take its role.
struct Place {
    start: u64,
    end: u64,
    role: RangeRole,
    entry: Option<usize>,
    mapping: usize,
}

/// The places of every mapping of `registry` in A, in registry order (the first one holding a
/// byte names it). The DYNAIO kind's places are DYNAIO entries, role `dynaio-entry`. A
/// mapping with a target found by value has its places only where the capture set changes its
/// source: the ranges its check writes.
fn places(
    set: &CaptureSet,
    g: &Graph<'_>,
    image: &NbgImage<'_>,
    gb: &Graph<'_>,
    registry: &Registry,
) -> Vec<Place> {
    let entries = g.dynaio_ranges();
    let mut out = Vec::new();
    for (k, m) in registry.mappings.iter().enumerate() {
        if m.targets()
            .any(|t| matches!(t, Target::SectionValue { .. }))
        {
            let row = crate::lab::mapping::check_one(m, ".", set, g, image, gb);
            out.extend(
                row.written
                    .iter()
                    .filter(|w| matches!(w.role, WriteRole::Target | WriteRole::Computed))
                    .map(|w| Place {
                        start: w.start,
                        end: w.end,
                        role: RangeRole::MappedRange,
                        entry: None,
                        mapping: k,
                    }),
            );
        }
        for (target, start, end) in crate::lab::mapping::places(m, g, image) {
            let role = match target {
                Target::DynaioEntry { .. } => RangeRole::DynaioEntry,
                Target::Field { .. } => RangeRole::MappedField,
                Target::SectionRange { .. } | Target::SectionValue { .. } => RangeRole::MappedRange,
                Target::Coefficient { .. } => RangeRole::MappedCoefficients,
            };
            let entry = if role == RangeRole::DynaioEntry {
                entries.iter().position(|r| *r == (start, end))
            } else {
                None
            };
            out.push(Place {
                start,
                end,
                role,
                entry,
                mapping: k,
            });
        }
    }
    out
}

/// Run the five steps, localizing through `registry`. A parse failure of any capture is a
/// `CaptureError` naming the file.
pub fn run_with(set: &CaptureSet, registry: &Registry) -> Result<Report, CaptureError> {
    let in_file = |file: &'static str| move |failure| CaptureError { file, failure };
    let ga = parse(&set.a1).map_err(in_file(A1_FILE))?;
    let g2 = parse(&set.a2).map_err(in_file(A2_FILE))?;
    let gb = parse(&set.b).map_err(in_file(B_FILE))?;
    let ia = NbgImage::new(&ga).map_err(in_file(A1_FILE))?;
    let mut report = Report {
        format: ia.format(),
        files: Files {
            a1: ga.file().clone(),
            a2: g2.file().clone(),
            b: gb.file().clone(),
        },
        provenance: set.spec.provenance.clone(),
        a1_equals_a2: set.a1 == set.a2,
        same_layout: None,
        layout_differences: Vec::new(),
        changed_ranges: Vec::new(),
        changed_ranges_omitted: 0,
        source: None,
        replay: None,
        mapping: None,
        result: Verdict::A1DiffersFromA2,
    };
    if !report.a1_equals_a2 {
        return Ok(report);
    }

    // Step 2: same size and descriptors.
    let (da, db) = (ga.descriptors(), gb.descriptors());
    report.layout_differences = da
        .iter()
        .zip(&db)
        .filter(|(x, y)| x != y)
        .map(|(x, y)| format!("A {x} / B {y}"))
        .collect();
    if set.a1.len() != set.b.len() {
        report
            .layout_differences
            .insert(0, format!("size A {} / B {}", set.a1.len(), set.b.len()));
    }
    if da.len() != db.len() {
        report
            .layout_differences
            .push(format!("descriptor count A {} / B {}", da.len(), db.len()));
    }
    report.same_layout = Some(report.layout_differences.is_empty());
    if !report.layout_differences.is_empty() {
        report.result = Verdict::LayoutDiffers;
        return Ok(report);
    }

    // Step 3: localize.
    let places = places(set, &ga, &ia, &gb, registry);
    (report.changed_ranges, report.changed_ranges_omitted) =
        localize(&ga, &ia, &set.a1, &set.b, &places);
    if report.changed_ranges.is_empty() {
        report.result = Verdict::NoChange;
        return Ok(report);
    }
    let entries: std::collections::BTreeSet<usize> = report
        .changed_ranges
        .iter()
        .filter_map(|r| r.dynaio_entry)
        .collect();
    let mappings: std::collections::BTreeSet<usize> = report
        .changed_ranges
        .iter()
        .filter_map(|r| r.mapping)
        .collect();
    if report.changed_ranges_omitted > 0
        || report
            .changed_ranges
            .iter()
            .any(|r| r.role == RangeRole::Other)
        || mappings.len() != 1
    {
        report.result = Verdict::MultiRegionUnresolved;
        return Ok(report);
    }
    let Some(&k) = mappings.first() else {
        // Unreachable: `mappings.len() == 1` above.
        report.result = Verdict::MultiRegionUnresolved;
        return Ok(report);
    };
    let mapping = &registry.mappings[k];
    // The DYNAIO constant kind localizes its entry below; every other mapping is its check.
    let dynaio_constant = matches!(mapping.target, Some(Target::DynaioEntry { .. }))
        && !mapping.is_element_map()
        && mapping.also.is_empty()
        && mapping.computed.is_empty();
    if !dynaio_constant {
        // Steps 4 and 5 are the mapping's check: its source quantity, the replay, B's SHA-256.
        let row = crate::lab::mapping::check_one(mapping, ".", set, &ga, &ia, &gb);
        report.result = match row.outcome {
            Outcome::Proved => Verdict::Reproduced,
            Outcome::Refuted => Verdict::ReplayMismatch,
            Outcome::Inapplicable => Verdict::SourceNotFound,
        };
        report.mapping = Some(row);
        return Ok(report);
    }
    let (1, Some(&entry)) = (entries.len(), entries.first()) else {
        report.result = Verdict::MultiRegionUnresolved;
        return Ok(report);
    };

    // Step 4: the source.
    let views = ga.dynaio_ranges();
    let (estart, eend) = views[entry];
    let matching: Vec<usize> = views
        .iter()
        .enumerate()
        .filter(|(_, (s, e))| set.a1[*s as usize..*e as usize] == set.spec.a_source[..])
        .map(|(i, _)| i)
        .collect();
    let differing: Vec<u64> = set
        .spec
        .a_source
        .iter()
        .zip(&set.spec.b_source)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .map(|(i, _)| i as u64)
        .collect();
    let localized: Vec<u64> = report
        .changed_ranges
        .iter()
        .filter(|r| r.role == RangeRole::DynaioEntry)
        .flat_map(|r| r.entry_offset.unwrap_or(0)..r.entry_offset.unwrap_or(0) + (r.end - r.start))
        .collect();
    let consistent = matching.contains(&entry) && differing == localized;
    report.source = Some(SourceMatch {
        dynaio_entry: entry,
        entry_file_offset: estart,
        entry_size: eend - estart,
        entries_matching_a_source: matching.clone(),
        differing_source_indices: differing.clone(),
        localized_entry_offsets: localized,
        consistent,
    });
    if !matching.contains(&entry) {
        report.result = Verdict::SourceNotFound;
        return Ok(report);
    }
    if !consistent {
        report.result = Verdict::SourceMismatch;
        return Ok(report);
    }

    // Step 5: replay in memory.
    let replay = replay(&ga, &ia, &gb, set, entry, estart, &differing);
    report.result = if replay.matches_b {
        Verdict::Reproduced
    } else {
        Verdict::ReplayMismatch
    };
    report.replay = Some(replay);
    Ok(report)
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The changed runs of B against A, each inside one unit of A's ledger: at most
/// `MAX_CHANGED_RANGES` listed, the number of further runs returned beside them.
fn localize(
    g: &Graph<'_>,
    image: &NbgImage<'_>,
    a: &[u8],
    b: &[u8],
    places: &[Place],
) -> (Vec<ChangedRange>, u64) {
    let crc_at = g.crc_rule().field;
    let entries = g.dynaio_ranges();
    let region = g.dynaio_region();
    let checksum = g.checksum_table();
    // (role, DYNAIO entry, registry mapping)
    let classify = |offset: u64| -> (RangeRole, Option<usize>, Option<usize>) {
        if (crc_at..crc_at + 4).contains(&offset) {
            return (RangeRole::CrcField, None, None);
        }
        if let Some(p) = places.iter().find(|p| p.start <= offset && offset < p.end) {
            return (p.role, p.entry, Some(p.mapping));
        }
        if let Some((s, e)) = checksum {
            if s <= offset && offset < e && (offset - s) % 8 >= 4 {
                return (RangeRole::DerivedChecksum, None, None);
            }
        }
        (RangeRole::Other, None, None)
    };
    let mut out: Vec<ChangedRange> = Vec::new();
    let mut omitted = 0u64;
    // The run in progress once the list is full: (end, role, entry, unit).
    let mut overflow: Option<(u64, RangeRole, Option<usize>, u64)> = None;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x == y {
            continue;
        }
        let offset = i as u64;
        let owner = image.owner_of(offset);
        let unit = locate(g, owner, offset).1;
        let (role, entry, mapping) = classify(offset);
        if let Some((end, r, e, u)) = &mut overflow {
            if *end == offset && *r == role && *e == entry && *u == unit {
                *end += 1;
            } else {
                omitted += 1;
                overflow = Some((offset + 1, role, entry, unit));
            }
            continue;
        }
        if let Some(last) = out.last_mut() {
            let last_unit = locate(g, image.owner_of(last.start), last.start).1;
            if last.end == offset
                && last.role == role
                && last.dynaio_entry == entry
                && last.mapping == mapping
                && last_unit == unit
            {
                last.end += 1;
                continue;
            }
        }
        if out.len() == MAX_CHANGED_RANGES {
            omitted += 1;
            overflow = Some((offset + 1, role, entry, unit));
            continue;
        }
        let field = locate(g, owner, offset).0;
        let entry_offset = entry.map(|e| offset - entries[e].0);
        out.push(ChangedRange {
            start: offset,
            end: offset + 1,
            owner: field,
            class: owner.class,
            role,
            dynaio_entry: entry,
            entry_offset,
            section_offset: entry.and(region).map(|r| offset - r),
            mapping,
        });
    }
    (out, omitted)
}

fn replay(
    ga: &Graph<'_>,
    ia: &NbgImage<'_>,
    gb: &Graph<'_>,
    set: &CaptureSet,
    entry: usize,
    entry_start: u64,
    differing: &[u64],
) -> Replay {
    let mut image: ChangedImage = ia.change("differential: replay b_source");
    let mut substitutions = Vec::new();
    for &i in differing {
        let at = entry_start + i;
        let to = set.spec.b_source[i as usize];
        // Invariant: `at` lies in a DYNAIO entry of A, which the parser bounded inside A, and
        // the changed image has A's length.
        image
            .write(at, &[to], format!("source[{i}] -> 0x{to:02x}"))
            .expect("entry is in bounds");
        substitutions.push(Substitution {
            file_offset: at,
            dynaio_entry: entry,
            entry_offset: i,
            from: set.spec.a_source[i as usize],
            to,
        });
    }
    let crc = ga.crc_rule();
    let touched: Vec<(u64, u64)> = substitutions
        .iter()
        .map(|s| (s.file_offset, s.file_offset + 1))
        .collect();
    let mut recomputed = 0;
    let mut recomputed_sections = Vec::new();
    for sealed in image.reseal(ga, &touched, true, true) {
        match sealed {
            Sealed::SectionChecksum { section_type, .. } => recomputed_sections.push(section_type),
            Sealed::FileCrc { value, .. } => recomputed = value,
        }
    }
    // B parsed, so it holds the fixed header and its CRC field.
    let at = crc.field as usize;
    let recorded = set
        .b
        .get(at..at + 4)
        .and_then(|w| <[u8; 4]>::try_from(w).ok())
        .map_or(0, u32::from_le_bytes);
    let sha256 = image.sha256();
    Replay {
        substitutions,
        recorded_crc32: recorded,
        recomputed_crc32: recomputed,
        crc_rule: crc.rule,
        section_checksums_recomputed: recomputed_sections,
        sha256,
        b_sha256: gb.file().sha256,
        matches_b: sha256 == gb.file().sha256 && image.first_difference(&set.b).is_none(),
    }
}
