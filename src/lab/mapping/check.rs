//! The check engine: each mapping against each capture set, replayed in memory.

use super::*;
use crate::nbg::image::Sealed;

/// The first byte the replay does not explain.
#[derive(Clone, Debug, Serialize)]
pub struct Unexplained {
    /// File offset.
    pub offset: u64,
    /// The owner's pairing key (`diff::owner_key`).
    pub owner: String,
    /// The owner's ledger class.
    pub class: crate::nbg::family::OwnerClass,
    /// The field name at the offset (`diff::locate`).
    pub field: String,
    /// A's byte.
    pub a: u8,
    /// B's byte.
    pub b: u8,
    /// The replay's byte there.
    pub replayed: u8,
}

/// Why the replay wrote a byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WriteRole {
    /// The mapping's target or a further placement: B's source value, encoded.
    Target,
    /// A value computed from several quantities (`computed::Computed`).
    Computed,
    /// A v2 section-40 value recomputed over a section the target touches.
    SectionChecksum,
    /// The header's file CRC, recomputed.
    FileCrc,
    /// A coefficient buffer as B holds it, written once its decoding is A's but for the
    /// mapping's element (`decoded::buffer_write`).
    DecodedCoefficients,
}

crate::canonical::names! {
    WriteRole {
        Target => "target",
        Computed => "computed",
        SectionChecksum => "section-checksum",
        FileCrc => "file-crc",
        DecodedCoefficients => "decoded-coefficients",
    }
}

/// A byte range the replay wrote, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Written {
    /// First byte written.
    pub start: u64,
    /// One past the last byte written.
    pub end: u64,
    /// Why it was written.
    pub role: WriteRole,
}

/// One mapping against one capture set.
#[derive(Clone, Debug, Serialize)]
pub struct CheckRow {
    /// The mapping's name.
    pub mapping: String,
    /// The capture set's name.
    pub capture: String,
    /// The verdict.
    pub outcome: Outcome,
    /// Why (`none` when proved).
    pub reason: Reason,
    /// The mapping's source key (a role key, `scale:graph.input[0]`).
    pub source_key: String,
    /// The keys of the quantities the capture set changes: with `source_key`, what an
    /// inapplicable row was not asked.
    pub changes: Vec<String>,
    /// The source quantity, when the capture set has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Quantity>,
    /// An element map's element index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<u64>,
    /// Each computed value's candidates: kept or refuted by this capture set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<computed::CandidateRow>,
    /// Bytes of A that differ in B.
    pub changed_bytes: u64,
    /// Bytes where the replay differs from B.
    pub unexplained_bytes: u64,
    /// The byte ranges the replay wrote.
    pub written: Vec<Written>,
    /// The first byte the replay does not explain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_unexplained: Option<Unexplained>,
    /// A decoded-coefficient target's first element B does not hold as the mapping says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decoded_mismatch: Option<decoded::DecodedMismatch>,
    /// SHA-256 of the replayed image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_sha256: Option<Hash256>,
    /// SHA-256 of B.
    pub b_sha256: Hash256,
    /// The replayed image, when proved (in memory only: a changed image has no emission
    /// path; `mapping check --run` hands it to the simulator on a pipe).
    #[serde(skip)]
    pub replayed: Option<Vec<u8>>,
}

/// A capture set loaded for checking, named as the user gave it.
pub struct Capture {
    /// The capture directory as given.
    pub name: String,
    /// Its four files.
    pub set: CaptureSet,
}

impl Capture {
    /// Load the capture set in `dir` under the name the user gave.
    pub fn load(dir: &Path, name: String) -> Result<Self, crate::lab::capture::LoadError> {
        Ok(Capture {
            name,
            set: crate::lab::capture::load(dir)?,
        })
    }

    /// SHA-256 of A1, A2 and B.
    pub fn digests(&self) -> [Hash256; 3] {
        [&self.set.a1, &self.set.a2, &self.set.b].map(|b| Hash256::of(b))
    }
}

/// The controlled quantity `key` of a capture set (`source` is `a_source`/`b_source`), found
/// under its key or an alias, or why not: the reason is `source-key-absent` or
/// `role-ambiguous`.
pub(super) fn quantity(set: &CaptureSet, key: &str) -> Result<Quantity, Reason> {
    lookup(set, key, false)
}

fn lookup(set: &CaptureSet, key: &str, context: bool) -> Result<Quantity, Reason> {
    if key == SOURCE_KEY {
        return Ok(Quantity {
            a: Value::Bytes(set.spec.a_source.clone()),
            b: Value::Bytes(set.spec.b_source.clone()),
        });
    }
    match set.spec.resolve(key, context) {
        KeyMatch::Found(k) => Ok(match set.spec.quantities.get(k) {
            Some(q) => q.clone(),
            None => {
                let v = set.spec.context[k].clone();
                Quantity { a: v.clone(), b: v }
            }
        }),
        KeyMatch::Ambiguous => Err(Reason::RoleAmbiguous),
        KeyMatch::Absent => Err(Reason::SourceKeyAbsent),
    }
}

/// A quantity a computed value reads: a controlled one, or one the capture set held fixed
/// (`context`, A = B). A mapping's own source is never read from the context: a set that does
/// not change it cannot test it.
pub(super) fn input_quantity(set: &CaptureSet, key: &str) -> Result<Quantity, Reason> {
    lookup(set, key, true)
}

/// The mapping's source quantity in a capture set, with the element index of an element map
/// (the one quantity one of whose keys is the pattern with an index in place of `*`).
pub(super) fn source_quantity(m: &Mapping, set: &CaptureSet) -> Result<(Quantity, u64), Reason> {
    let Some(prefix) = m.source.key.strip_suffix("*]") else {
        return quantity(set, &m.source.key).map(|q| (q, 0));
    };
    let index_of = |k: &str| -> Option<u64> {
        let index = k.strip_prefix(prefix)?.strip_suffix(']')?;
        let i: u64 = index.parse().ok()?;
        (i.to_string() == index).then_some(i)
    };
    let spec = &set.spec;
    let mut found = spec.quantities.iter().filter_map(|(k, q)| {
        let i = spec.keys_of(k).find_map(index_of)?;
        Some((q.clone(), i))
    });
    let Some(first) = found.next() else {
        // An unindexed pattern (`initializer:Conv.weight[*]`) that an indexed key unindexes to.
        let plain = crate::lab::capture::unindexed(prefix) == prefix;
        let ambiguous = plain
            && spec.quantities.keys().any(|k| {
                spec.keys_of(k)
                    .any(|x| index_of(&crate::lab::capture::unindexed(x)).is_some())
            });
        return Err(if ambiguous {
            Reason::RoleAmbiguous
        } else {
            Reason::SourceKeyAbsent
        });
    };
    // Two elements of the same tensor changed: not one element's capture.
    match found.next() {
        None => Ok(first),
        Some(_) => Err(Reason::SourceKeyAbsent),
    }
}

/// The registry compiled into the binary: the committed `differentials/mappings.json` (the
/// differential engine's default). A copy that does not load is an empty registry, which the
/// tests refuse.
pub fn builtin() -> &'static Registry {
    static BUILTIN: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    BUILTIN.get_or_init(|| {
        serde_json::from_str::<Registry>(include_str!("../../../differentials/mappings.json"))
            .ok()
            .filter(|r| validate(r).is_ok())
            .unwrap_or(Registry {
                schema: SCHEMA.into(),
                mappings: Vec::new(),
            })
    })
}

/// The width in bytes of one encoded value (none for raw bytes).
pub(super) fn width(encoding: Encoding) -> Option<u64> {
    match encoding {
        Encoding::U8 => Some(1),
        Encoding::Le16 | Encoding::F16 | Encoding::F16Nearest | Encoding::Bf16 => Some(2),
        Encoding::Le32 | Encoding::F32 => Some(4),
        Encoding::Le64 => Some(8),
        Encoding::Raw | Encoding::Text => None,
    }
}

/// One place a mapping may write in A: a file byte range, and for a computed bit field the
/// bits it sets in that word.
#[derive(Clone, Copy, Debug)]
pub struct Place<'m> {
    /// The target it resolves.
    pub target: &'m Target,
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// A bit field's (first bit, width) in the word at `start`; `None` for whole bytes.
    pub bits: Option<(u32, u32)>,
}

impl Place<'_> {
    /// The file bits the place covers: (first bit, width).
    pub fn bit_span(&self) -> (u64, u64) {
        match self.bits {
            Some((shift, width)) => (8 * self.start + u64::from(shift), u64::from(width)),
            None => (8 * self.start, 8 * (self.end - self.start)),
        }
    }
}

/// Where a mapping may write in A, whatever the source value: (target, start, end) file
/// ranges in `Mapping::targets` order. The DYNAIO kind without an entry index covers
/// every entry, as does an element map's primary target; a field target runs from its offset
/// for the encoding's width times the repeat count (a raw value to the field's end).
pub fn places<'m>(
    m: &'m Mapping,
    g: &Graph<'_>,
    image: &NbgImage<'_>,
) -> Vec<(&'m Target, u64, u64)> {
    placed(m, g, image)
        .into_iter()
        .map(|p| (p.target, p.start, p.end))
        .collect()
}

/// `places`, with the bits each computed bit field sets.
pub fn placed<'m>(m: &'m Mapping, g: &Graph<'_>, image: &NbgImage<'_>) -> Vec<Place<'m>> {
    let word = crate::nbg::read::le32_at(g.bytes(), crate::nbg::format::OFF_TARGET_WORD);
    if g.family() != m.family || m.pid.as_deref().is_some_and(|p| parse_pid(p) != word) {
        return Vec::new();
    }
    type Span<'m> = (&'m Target, Option<u64>, Option<(u32, u32)>);
    let mut spans: Vec<Span<'m>> = Vec::new();
    if let (Some(t), Some(e)) = (&m.target, m.encoding) {
        spans.push((t, width(e).filter(|_| !m.is_element_map()), None));
    }
    for p in &m.also {
        spans.push((
            &p.target,
            width(p.encoding).map(|w| w * u64::from(p.repeat)),
            None,
        ));
    }
    for c in &m.computed {
        spans.extend(c.target.iter().map(|t| (t, width(c.encoding), None)));
        spans.extend(
            c.bits
                .iter()
                .map(|b| (&b.target, Some(4), Some((b.shift, b.width)))),
        );
    }
    let mut out = Vec::new();
    for (target, width, bits) in spans {
        let place = |(start, end)| Place {
            target,
            start,
            end,
            bits,
        };
        match target {
            Target::Field { field, offset } => out.extend(
                crate::lab::diff::field_range(g, image, field)
                    .map(|(s, e)| {
                        let start = s + offset;
                        (start, width.map_or(e, |w| (start + w).min(e)))
                    })
                    .filter(|(s, e)| s < e)
                    .map(place),
            ),
            Target::SectionRange {
                section,
                start,
                end,
            } => out.extend(
                payload_of(g, section)
                    .filter(|(_, size)| end <= size)
                    .map(|(o, _)| place((o + start, o + end))),
            ),
            Target::Coefficient { nn, .. } => {
                out.extend(decoded::buffer_range(g, *nn).map(place));
            }
            // Found by value: only a check, with the capture set's values, places it.
            Target::SectionValue { .. } => {}
            Target::DynaioEntry { entry, .. } => {
                let entries = g.dynaio_ranges();
                let all = entries.iter().map(|&r| place(r));
                match entry {
                    Some(i) => out.extend(all.skip(*i as usize).take(1)),
                    None => out.extend(all),
                }
            }
        }
    }
    out
}

/// A capture set whose NBG does not parse: which file, and the failure.
#[derive(Debug, thiserror::Error)]
#[error("{capture}/{file}: {failure}")]
pub struct CaptureFailure {
    /// The capture set's name.
    pub capture: String,
    /// The file that does not parse.
    pub file: &'static str,
    /// Why.
    #[source]
    pub failure: Failure,
}

impl CaptureFailure {
    /// A capture that does not parse is an invalid NBG, a failed check.
    pub fn exit_status(&self) -> Exit {
        Exit::Failure
    }
}

/// Check every mapping against every capture set (rows ordered by capture, then mapping).
pub fn check_all(
    mappings: &[&Mapping],
    captures: &[Capture],
) -> Result<Vec<CheckRow>, CaptureFailure> {
    let mut rows = Vec::new();
    for c in captures {
        let fail = |file, failure| CaptureFailure {
            capture: c.name.clone(),
            file,
            failure,
        };
        let ga = parse(&c.set.a1).map_err(|f| fail("A1.nb", f))?;
        parse(&c.set.a2).map_err(|f| fail("A2.nb", f))?;
        let gb = parse(&c.set.b).map_err(|f| fail("B.nb", f))?;
        let ia = NbgImage::new(&ga).map_err(|f| fail("A1.nb", f))?;
        for m in mappings {
            rows.push(check_one(m, &c.name, &c.set, &ga, &ia, &gb));
        }
    }
    Ok(rows)
}

/// One write of a replay before it is made: where, the bytes A must hold there, the bytes
/// written, and why.
#[derive(Clone)]
pub(super) struct Planned {
    pub(super) at: u64,
    pub(super) a: Vec<u8>,
    pub(super) b: Vec<u8>,
    pub(super) role: WriteRole,
}

/// Check one mapping against one parsed capture set (A1 parsed as `ga` with ledger `ia`).
pub fn check_one(
    m: &Mapping,
    name: &str,
    set: &CaptureSet,
    ga: &Graph<'_>,
    ia: &NbgImage<'_>,
    gb: &Graph<'_>,
) -> CheckRow {
    let (a, b) = (&set.a1, &set.b);
    let mut row = CheckRow {
        mapping: m.name.clone(),
        capture: name.to_string(),
        outcome: Outcome::Inapplicable,
        reason: Reason::FamilyDiffers,
        source_key: m.source.key.clone(),
        changes: set.spec.quantities.keys().cloned().collect(),
        source: None,
        element: None,
        candidates: Vec::new(),
        changed_bytes: a.iter().zip(b.iter()).filter(|(x, y)| x != y).count() as u64
            + a.len().abs_diff(b.len()) as u64,
        unexplained_bytes: 0,
        written: Vec::new(),
        first_unexplained: None,
        decoded_mismatch: None,
        replay_sha256: None,
        b_sha256: gb.file().sha256,
        replayed: None,
    };
    if ga.family() != m.family || gb.family() != m.family {
        return row;
    }
    let word = |x: &[u8]| crate::nbg::read::le32_at(x, crate::nbg::format::OFF_TARGET_WORD);
    if let Some(pid) = m.pid.as_deref().and_then(parse_pid) {
        if word(a) != Some(pid) || word(b) != Some(pid) {
            row.reason = Reason::TargetDiffers;
            return row;
        }
    }
    let (q, index) = match source_quantity(m, set) {
        Ok(found) => found,
        Err(reason) => {
            row.reason = reason;
            return row;
        }
    };
    row.source = Some(q.clone());
    row.element = m.is_element_map().then_some(index);
    // A float where the mapping stores an integer: another data type's quantity (a float
    // weight of a float16 build under the role a uint8 mapping reads), not asked.
    let integer = matches!(
        m.encoding,
        Some(Encoding::U8 | Encoding::Le16 | Encoding::Le32 | Encoding::Le64)
    );
    if integer && [&q.a, &q.b].iter().any(|v| matches!(v, Value::Float(_))) {
        row.reason = Reason::SourceTypeDiffers;
        return row;
    }
    if set.a1 != set.a2 {
        row.reason = Reason::A1DiffersFromA2;
        return row;
    }
    row.outcome = Outcome::Refuted;
    if a.len() != b.len() {
        row.reason = Reason::SizeDiffers;
        return row;
    }
    let stop = |mut row: CheckRow, reason: Reason| {
        // A graph without the target place is outside the mapping, not against it.
        if matches!(
            reason,
            Reason::TargetNotFound
                | Reason::SourceKeyAbsent
                | Reason::RoleAmbiguous
                | Reason::CoefficientsNotDecoded
        ) {
            row.outcome = Outcome::Inapplicable;
        }
        row.reason = reason;
        row
    };
    let encoded = |encoding: Encoding, repeat: u32| -> Option<(Vec<u8>, Vec<u8>)> {
        let (x, y) = (encode(encoding, &q.a).ok()?, encode(encoding, &q.b).ok()?);
        (x.len() == y.len()).then(|| (x.repeat(repeat as usize), y.repeat(repeat as usize)))
    };
    // The further placements and the computed values: one place each.
    let mut fixed: Vec<Planned> = Vec::new();
    for p in &m.also {
        let Some((x, y)) = encoded(p.encoding, p.repeat) else {
            return stop(row, Reason::SourceNotEncodable);
        };
        match resolve(&p.target, ga, ia, a, &x, 0) {
            Ok(at) => {
                let all = if p.target.every() { at.len() } else { 1 };
                fixed.extend(at.into_iter().take(all).map(|at| Planned {
                    at,
                    a: x.clone(),
                    b: y.clone(),
                    role: WriteRole::Target,
                }));
            }
            Err(reason) => return stop(row, reason),
        }
    }
    for (k, c) in m.computed.iter().enumerate() {
        let (xa, xb) = match computed::inputs(&c.inputs, |key| input_quantity(set, key)) {
            Ok(values) => values,
            Err(reason) => return stop(row, reason),
        };
        let tried: Vec<computed::Candidate> = match c.kept {
            Some(kept) => vec![kept],
            None => c.candidates.clone(),
        };
        // The first kept candidate's writes; else the first candidate's, whose account then
        // shows where it fails.
        let mut chosen: Option<(Vec<Planned>, bool)> = None;
        for cand in tried {
            let w = candidate_writes(c, &cand, &xa, &xb, ga, ia, a, b);
            let kept = w.as_ref().is_some_and(|(_, k)| *k);
            row.candidates.push(computed::CandidateRow {
                computed: k,
                formula: cand.text(c.inputs.len()),
                candidate: cand,
                kept,
            });
            if w.is_some() && (chosen.is_none() || (kept && !chosen.as_ref().is_some_and(|x| x.1)))
            {
                chosen = w;
            }
        }
        match chosen {
            Some((writes, _)) => fixed.extend(writes),
            None => return stop(row, Reason::SourceNotEncodable),
        }
    }
    // The primary target: every candidate place, the first that reproduces B wins.
    let primary: Vec<Option<Planned>> = match (&m.target, m.encoding) {
        (Some(Target::Field { field, offset }), Some(Encoding::Text)) => {
            // Both names, NUL-padded to the field's end.
            let Some((s, e)) = crate::lab::diff::field_range(ga, ia, field) else {
                return stop(row, Reason::TargetNotFound);
            };
            let width = e.saturating_sub(s + offset) as usize;
            let pad = |v: &Value| match encode(Encoding::Text, v) {
                Ok(mut b) if b.len() <= width => {
                    b.resize(width, 0);
                    Some(b)
                }
                _ => None,
            };
            let (Some(x), Some(y)) = (pad(&q.a), pad(&q.b)) else {
                return stop(row, Reason::SourceNotEncodable);
            };
            vec![Some(Planned {
                at: s + offset,
                a: x,
                b: y,
                role: WriteRole::Target,
            })]
        }
        (Some(Target::Coefficient { nn, part, less }), Some(e)) => {
            let less = match less.as_deref().map(|key| input_quantity(set, key)) {
                Some(Err(reason)) => return stop(row, reason),
                q => q.and_then(Result::ok),
            };
            let site = decoded::Site {
                nn: *nn,
                part: *part,
                less,
                encoding: e,
            };
            match decoded::buffer_write(&site, ga, gb, a, b, &q, index) {
                Ok(p) => vec![Some(p)],
                Err((reason, mismatch)) => {
                    row.decoded_mismatch = mismatch;
                    return stop(row, reason);
                }
            }
        }
        (Some(t), Some(e)) => {
            let Some((x, y)) = encoded(e, 1) else {
                return stop(row, Reason::SourceNotEncodable);
            };
            let shift = index * x.len() as u64;
            match resolve(t, ga, ia, a, &x, shift) {
                Ok(places) => places
                    .into_iter()
                    .map(|at| {
                        Some(Planned {
                            at,
                            a: x.clone(),
                            b: y.clone(),
                            role: WriteRole::Target,
                        })
                    })
                    .collect(),
                Err(reason) => return stop(row, reason),
            }
        }
        _ => vec![None],
    };
    let mut first: Option<CheckRow> = None;
    for p in primary {
        let mut r = row.clone();
        let writes: Vec<Planned> = p.into_iter().chain(fixed.iter().cloned()).collect();
        replay_at(m, ga, ia, a, b, &writes, &mut r);
        if r.outcome == Outcome::Proved {
            return r;
        }
        first.get_or_insert(r);
    }
    first.unwrap_or(row)
}

/// The writes of one candidate of computed value `c` (A's bytes where it lands, the bytes it
/// writes for B), and whether it is kept: its A value is A's bytes and its B value B's bytes.
#[allow(clippy::too_many_arguments)]
pub(super) fn candidate_writes(
    c: &computed::Computed,
    cand: &computed::Candidate,
    xa: &[f64],
    xb: &[f64],
    ga: &Graph<'_>,
    ia: &NbgImage<'_>,
    a: &[u8],
    b: &[u8],
) -> Option<(Vec<Planned>, bool)> {
    let planned = |at: u64, x: Vec<u8>, y: Vec<u8>| Planned {
        at,
        a: x,
        b: y,
        role: WriteRole::Computed,
    };
    let range = |at: u64, n: usize| at as usize..at as usize + n;
    if let Some(target) = &c.target {
        let x = computed::encoded(cand, c.encoding, xa)?;
        let y = computed::encoded(cand, c.encoding, xb)?;
        let places = resolve(target, ga, ia, a, &x, 0).ok()?;
        let all = if target.every() { places.len() } else { 1 };
        let places = &places[..all];
        let kept = x.len() == y.len()
            && places
                .iter()
                .all(|&at| a[range(at, x.len())] == x[..] && b[range(at, y.len())] == y[..]);
        let writes = places
            .iter()
            .map(|&at| planned(at, x.clone(), y.clone()))
            .collect();
        return (x.len() == y.len()).then_some((writes, kept));
    }
    let (va, vb) = (computed::integer(cand, xa)?, computed::integer(cand, xb)?);
    let mut writes = Vec::new();
    let mut kept = true;
    for f in &c.bits {
        let at = resolve(&f.target, ga, ia, a, &[0; 4], 0).ok()?[0];
        let word =
            |bytes: &[u8]| u32::from_le_bytes(bytes[range(at, 4)].try_into().unwrap_or([0; 4]));
        let (wa, wb) = (word(a), word(b));
        let replayed = f.set(wa, vb);
        kept &= f.holds(wa, va) && replayed == wb;
        // A's word as A holds it (the field's A bits are checked through `kept`), B's from it.
        writes.push(planned(
            at,
            wa.to_le_bytes().to_vec(),
            replayed.to_le_bytes().to_vec(),
        ));
    }
    Some((writes, kept))
}

/// File offsets where the encoded value may start, `shift` bytes past the target's start (an
/// element map's element).
pub(super) fn resolve(
    target: &Target,
    g: &Graph<'_>,
    image: &NbgImage<'_>,
    a: &[u8],
    enc_a: &[u8],
    shift: u64,
) -> Result<Vec<u64>, Reason> {
    let len = enc_a.len() as u64;
    match target {
        Target::Field { field, offset } => {
            let (s, e) =
                crate::lab::diff::field_range(g, image, field).ok_or(Reason::TargetNotFound)?;
            let at = s + offset + shift;
            if at + len > e {
                return Err(Reason::TargetNotFound);
            }
            Ok(vec![at])
        }
        Target::SectionRange {
            section,
            start,
            end,
        } => {
            let payload = payload_of(g, section);
            let (offset, size) = payload.ok_or(Reason::TargetNotFound)?;
            if *end > size {
                return Err(Reason::TargetNotFound);
            }
            if shift == 0 && end - start != len {
                return Err(Reason::SourceNotEncodable);
            }
            if start + shift + len > *end {
                return Err(Reason::TargetNotFound);
            }
            Ok(vec![offset + start + shift])
        }
        Target::SectionValue { section, every } => {
            let (offset, size) = payload_of(g, section).ok_or(Reason::TargetNotFound)?;
            if shift != 0 || len == 0 {
                return Err(Reason::TargetNotFound);
            }
            let payload = &a[offset as usize..(offset + size) as usize];
            let step = len.min(4) as usize;
            let found: Vec<u64> = payload
                .windows(len as usize)
                .step_by(step)
                .enumerate()
                .filter(|(_, x)| *x == enc_a)
                .map(|(i, _)| offset + (i * step) as u64)
                .take(MAX_CANDIDATES + 1)
                .collect();
            match found.len() {
                0 => Err(Reason::TargetNotFound),
                1 => Ok(found),
                n if *every && n <= MAX_CANDIDATES => Ok(found),
                _ => Err(Reason::TargetAmbiguous),
            }
        }
        // Only a primary target (the registry's rule), placed by `decoded::buffer_write`.
        Target::Coefficient { .. } => Err(Reason::TargetNotFound),
        Target::DynaioEntry { entry, offset } => {
            let entries = g.dynaio_ranges();
            let fits = |&(s, e): &(u64, u64)| s + offset + shift + len <= e;
            match entry {
                Some(i) => {
                    let r = entries.get(*i as usize).filter(|r| fits(r));
                    r.map(|(s, _)| vec![s + offset + shift])
                        .ok_or(Reason::TargetNotFound)
                }
                None => {
                    let found: Vec<u64> = entries
                        .iter()
                        .filter(|r| fits(r))
                        .map(|(s, _)| s + offset + shift)
                        .filter(|&at| a[at as usize..(at + len) as usize] == *enc_a)
                        .take(MAX_CANDIDATES + 1)
                        .collect();
                    match found.len() {
                        0 => Err(Reason::TargetNotFound),
                        n if n > MAX_CANDIDATES => Err(Reason::TargetAmbiguous),
                        _ => Ok(found),
                    }
                }
            }
        }
    }
}

/// Replay the planned writes plus the derived values on A in memory, then account for every
/// byte against B.
#[allow(clippy::too_many_arguments)]
pub(super) fn replay_at(
    m: &Mapping,
    g: &Graph<'_>,
    image: &NbgImage<'_>,
    a: &[u8],
    b: &[u8],
    planned: &[Planned],
    row: &mut CheckRow,
) {
    for p in planned {
        let at = p.at as usize;
        if let Some(i) = (0..p.a.len()).find(|&i| a[at + i] != p.a[i]) {
            row.reason = Reason::TargetHoldsOtherValue;
            row.first_unexplained = Some(unexplained(g, image, a, b, p.at + i as u64, p.a[i]));
            return;
        }
    }
    let mut changed = image.change(format!("mapping {}: replay", m.name));
    // `writes` mirrors every byte written, so the account below needs no copy of the image.
    let mut writes: Vec<(u64, Vec<u8>, WriteRole)> = Vec::new();
    let write = |changed: &mut crate::nbg::image::ChangedImage,
                 writes: &mut Vec<(u64, Vec<u8>, WriteRole)>,
                 offset: u64,
                 bytes: Vec<u8>,
                 role: WriteRole| {
        if changed.write(offset, &bytes, role.as_str()).is_ok() {
            writes.push((offset, bytes, role));
        }
    };
    for p in planned {
        write(&mut changed, &mut writes, p.at, p.b.clone(), p.role);
    }
    let touched: Vec<(u64, u64)> = planned
        .iter()
        .map(|p| (p.at, p.at + p.b.len() as u64))
        .collect();
    let sealed = changed.reseal(
        g,
        &touched,
        m.derived.contains(&Derived::SectionChecksums),
        m.derived.contains(&Derived::FileCrc),
    );
    for s in sealed {
        let (at, value, role) = match s {
            Sealed::SectionChecksum { at, value, .. } => (at, value, WriteRole::SectionChecksum),
            Sealed::FileCrc { at, value } => (at, value, WriteRole::FileCrc),
        };
        writes.push((at, value.to_le_bytes().to_vec(), role));
    }
    // Later writes win, as in the image.
    let replayed = |offset: u64| -> u8 {
        writes
            .iter()
            .rev()
            .find(|(s, bytes, _)| *s <= offset && offset < s + bytes.len() as u64)
            .map_or(a[offset as usize], |(s, bytes, _)| {
                bytes[(offset - s) as usize]
            })
    };
    // The first unexplained byte reported is the first outside the derived values (a wrong
    // CRC is a consequence, not a cause), unless only derived values are wrong.
    let derived_at = |offset: u64| {
        writes.iter().any(|(s, bytes, role)| {
            !matches!(role, WriteRole::Target | WriteRole::DecodedCoefficients)
                && *s <= offset
                && offset < s + bytes.len() as u64
        })
    };
    let mut count = 0u64;
    let (mut first, mut first_derived) = (None::<u64>, None::<u64>);
    let mut check = |offset: u64| {
        if replayed(offset) != b[offset as usize] {
            count += 1;
            let slot = if derived_at(offset) {
                &mut first_derived
            } else {
                &mut first
            };
            *slot = Some(slot.map_or(offset, |f| f.min(offset)));
        }
    };
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            check(i as u64);
        }
    }
    // Written bytes A and B agree on are wrong only if the replay changed them.
    for (s, bytes, _) in &writes {
        for i in 0..bytes.len() as u64 {
            let o = s + i;
            if a[o as usize] == b[o as usize] {
                check(o);
            }
        }
    }
    row.written = writes
        .iter()
        .map(|(s, bytes, role)| Written {
            start: *s,
            end: s + bytes.len() as u64,
            role: *role,
        })
        .collect();
    let sha = changed.sha256();
    row.replay_sha256 = Some(sha);
    row.unexplained_bytes = count;
    match first.or(first_derived) {
        None if sha == row.b_sha256 && changed.first_difference(b).is_none() => {
            row.outcome = Outcome::Proved;
            row.reason = Reason::ReplayReproducesB;
            row.replayed = Some(changed.bytes().to_vec());
        }
        _ => {
            row.reason = Reason::ReplayDiffersFromB;
            let at = first
                .or(first_derived)
                .unwrap_or_else(|| changed.first_difference(b).unwrap_or(0));
            row.first_unexplained = Some(unexplained(g, image, a, b, at, replayed(at)));
        }
    }
}

pub(super) fn unexplained(
    g: &Graph<'_>,
    image: &NbgImage<'_>,
    a: &[u8],
    b: &[u8],
    offset: u64,
    replayed: u8,
) -> Unexplained {
    let owner = image.owner_of(offset);
    Unexplained {
        offset,
        owner: crate::lab::diff::owner_key(g, owner),
        class: owner.class,
        field: crate::lab::diff::locate(g, owner, offset).0,
        a: a[offset as usize],
        b: b[offset as usize],
        replayed,
    }
}

/// Checks per outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// `Outcome::Proved`.
    pub proved: usize,
    /// `Outcome::Refuted`.
    pub refuted: usize,
    /// `Outcome::Inapplicable`.
    pub inapplicable: usize,
}

/// The checks of `rows` per outcome.
pub fn summary(rows: &[CheckRow]) -> Summary {
    let mut s = Summary::default();
    for r in rows {
        *match r.outcome {
            Outcome::Proved => &mut s.proved,
            Outcome::Refuted => &mut s.refuted,
            Outcome::Inapplicable => &mut s.inapplicable,
        } += 1;
    }
    s
}

/// The check document: schema, the registry's SHA-256, rows, summary and, with `--run`, the
/// runs (`R`).
#[derive(Clone, Debug, Serialize)]
pub struct CheckDocument<'a, R: Serialize = ()> {
    /// `CHECK_SCHEMA`.
    pub schema: &'static str,
    /// SHA-256 of the registry's canonical text.
    pub mappings_sha256: Hash256,
    /// One per (mapping, capture set).
    pub rows: &'a [CheckRow],
    /// Rows per outcome.
    pub summary: Summary,
    /// The proved mappings run on the simulator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<R>,
}

/// The check document of `rows`, without runs.
pub fn check_document<'a>(registry_sha256: &Hash256, rows: &'a [CheckRow]) -> CheckDocument<'a> {
    CheckDocument {
        schema: CHECK_SCHEMA,
        mappings_sha256: *registry_sha256,
        rows,
        summary: summary(rows),
        runs: None,
    }
}

/// The (file offset, size) of a v2 section or v1 table named `section`, when the graph has it.
pub(super) fn payload_of(g: &Graph<'_>, section: &str) -> Option<(u64, u64)> {
    g.payload(section).map(|p| (p.offset, p.size))
}
