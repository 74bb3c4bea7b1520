//! Who claims which bytes: each family's claims, the gaps filled, the ledger proved, and the
//! views over it.

use super::*;

/// A claimed (non-gap) range before gaps are filled.
pub(super) struct Claim {
    start: u64,
    end: u64,
    class: OwnerClass,
    label: String,
    origin: Origin,
    /// Declared alignment of the section that starts here (v2), for the gap before it.
    alignment: u64,
}

pub(super) fn claim(start: u64, end: u64, class: OwnerClass, label: String) -> Claim {
    Claim {
        start,
        end,
        class,
        label,
        origin: Origin::Structure,
        alignment: 0,
    }
}

pub(super) fn claims_v2(g: &NbgV2<'_>, source: &Data<'_>) -> Vec<Claim> {
    let dir = u64::from(g.sub_header.section_headers_offset);
    let dir_end = dir + g.sections.len() as u64 * u64::from(f2::SECTION_HEADER_SIZE);
    let mut c = vec![
        claim(
            0,
            f2::HEADER_SIZE as u64,
            OwnerClass::DecodedRecord,
            "header".into(),
        ),
        claim(
            g.sub_header.offset,
            g.sub_header.offset + u64::from(f2::SUB_HEADER_SIZE),
            OwnerClass::DecodedRecord,
            "sub-header".into(),
        ),
        claim(
            dir,
            dir_end,
            OwnerClass::DecodedRecord,
            "section directory".into(),
        ),
    ];
    for s in g.sections.iter().filter(|s| s.size > 0) {
        let label = format!("section {} type {} {}", s.index, s.kind, s.type_name);
        if let (Some(regions), _) = g.regions_of(s.kind) {
            let parts = region_claims(regions, s.offset, s.end(), &label, |e| {
                Origin::SectionEntry(s.index, e)
            });
            if let Some(mut parts) = parts {
                if s.kind == crate::nbg::format::section::COEF_DATA {
                    parts = coefficient_claims(g, source, s.index, parts);
                }
                if let Some(first) = parts.first_mut().filter(|p| p.start == s.offset) {
                    first.alignment = if s.aligned { u64::from(s.alignment) } else { 0 };
                }
                c.extend(parts);
                continue;
            }
        }
        let class = payload_class(g.decodes(s));
        let mut x = claim(s.offset, s.end(), class, label);
        x.alignment = if s.aligned { u64::from(s.alignment) } else { 0 };
        x.origin = Origin::Section(s.index);
        c.push(x);
    }
    c
}

pub(super) fn claims_v1(g: &NbgV1<'_>) -> Vec<Claim> {
    let entries = g.fixed_part.entries_offset;
    let mut c = vec![
        claim(
            0,
            f1::FEATURE_DB as u64,
            OwnerClass::DecodedRecord,
            "fixed part: header".into(),
        ),
        claim(
            f1::FEATURE_DB as u64,
            f1::OFF_MEMORY_POOL as u64,
            OwnerClass::DecodedRecord,
            "fixed part: feature database".into(),
        ),
        claim(
            f1::OFF_MEMORY_POOL as u64,
            entries,
            OwnerClass::DecodedRecord,
            "fixed part: memory pool and SRAM".into(),
        ),
        claim(
            entries,
            g.fixed_part.size,
            OwnerClass::DecodedRecord,
            "fixed part: table entries".into(),
        ),
    ];
    let ext = &g.opaque_fixed_extension;
    if ext.size > 0 {
        let mut x = claim(
            ext.offset,
            ext.offset + ext.size,
            OwnerClass::PreservedOpaque,
            "opaque fixed extension".into(),
        );
        x.origin = Origin::Extension;
        c.push(x);
    }
    for t in g.tables.iter().filter(|t| t.size > 0) {
        let regions = g.regions_of(t.name).0;
        let label = format!("table {} {}", t.index, t.name);
        if let Some(parts) = regions.and_then(|r| {
            region_claims(r, t.offset, t.end(), &label, |e| {
                Origin::TableEntry(t.index, e)
            })
        }) {
            c.extend(parts);
            continue;
        }
        let class = payload_class(t.decoded);
        let mut x = claim(
            t.offset,
            t.end(),
            class,
            format!("table {} {}", t.index, t.name),
        );
        x.origin = Origin::Table(t.index);
        c.push(x);
    }
    c
}

/// One claim per non-empty entry of a table of buffers (`patch_targets::Region`), named by its
/// entry and role: decoded where the entry is a state stream that decodes or whole command
/// records, opaque otherwise. `None` (the payload stays one owner) unless the entries are
/// disjoint, inside `[start, end)` and at least one is non-empty.
fn region_claims(
    regions: &[crate::nbg::parse::patch_targets::Region],
    start: u64,
    end: u64,
    label: &str,
    origin: impl Fn(usize) -> Origin,
) -> Option<Vec<Claim>> {
    use crate::nbg::parse::patch_targets::disjoint;
    if !disjoint(regions, start, end) || regions.iter().all(|r| r.size == 0) {
        return None;
    }
    Some(
        regions
            .iter()
            .filter(|r| r.size > 0)
            .map(|r| {
                let class = payload_class(r.decoded);
                let mut x = claim(
                    r.offset,
                    r.offset + r.size,
                    class,
                    format!("{label}[{}] {}", r.entry, r.role.as_str()),
                );
                x.origin = origin(r.entry);
                x
            })
            .collect(),
    )
}

/// The COEF_DATA entry claims with every entry that decodes whole split into its parts
/// (`coefficients::Buffer::ledger_parts`: header, one stream per core, biases) or owned whole
/// as a table, each a decoded record; the other entries stay as they are.
fn coefficient_claims(
    g: &NbgV2<'_>,
    source: &Data<'_>,
    section: usize,
    parts: Vec<Claim>,
) -> Vec<Claim> {
    use crate::nbg::coefficients::{self, Part};
    let c = coefficients::of_with(&g.coefficient_view(), None, &|at, len| {
        source.slice(at, len, "coefficients").ok()
    });
    let mut split: std::collections::HashMap<u64, Vec<(u64, u64, usize, Part)>> =
        std::collections::HashMap::new();
    for b in &c.buffers {
        if let Some(p) = b.ledger_parts() {
            let v = p
                .into_iter()
                .map(|x| (x.start, x.end, b.entry, x.part))
                .collect();
            split.insert(b.offset, v);
        }
    }
    for t in &c.tables {
        if t.rewritten().is_some() {
            split.insert(
                t.offset,
                vec![(t.offset, t.offset + t.size, t.entry, Part::Table)],
            );
        }
    }
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        match split
            .get(&p.start)
            .filter(|v| v.last().is_some_and(|l| l.1 == p.end))
        {
            Some(v) => out.extend(v.iter().map(|&(a, z, e, part)| {
                let mut x = claim(
                    a,
                    z,
                    OwnerClass::DecodedRecord,
                    format!("{} {}", p.label, part.label()),
                );
                x.origin = Origin::Coefficient(section, e, part);
                x
            })),
            None => out.push(p),
        }
    }
    out
}

/// A payload's owner class: a decoded record when every byte of it is decoded, else opaque.
fn payload_class(decoded: bool) -> OwnerClass {
    if decoded {
        OwnerClass::DecodedRecord
    } else {
        OwnerClass::PreservedOpaque
    }
}

/// Sort the claims and give every unclaimed byte an owner: alignment, padding, or the tail.
pub(super) fn fill_gaps(source: &Data<'_>, mut claims: Vec<Claim>) -> Result<Vec<Owner>, Failure> {
    let size = source.len();
    claims.sort_by_key(|c| (c.start, c.end));
    let mut owners: Vec<Owner> = Vec::with_capacity(claims.len() * 2 + 2);
    let mut cursor = 0u64;
    for c in claims {
        if c.start < cursor {
            return fail(
                Code::OwnershipConflict,
                c.start,
                format!(
                    "{} starts inside an earlier owner ending at 0x{cursor:x}",
                    c.label
                ),
            );
        }
        if c.start > cursor {
            let aligned = if c.alignment > 1 {
                cursor.next_multiple_of(c.alignment).min(c.start)
            } else {
                cursor
            };
            if aligned > cursor {
                owners.push(owner(
                    source,
                    cursor,
                    aligned,
                    OwnerClass::Alignment,
                    format!("alignment before {}", c.label),
                ));
            }
            if c.start > aligned {
                owners.push(owner(
                    source,
                    aligned,
                    c.start,
                    OwnerClass::Padding,
                    format!("padding before {}", c.label),
                ));
            }
        }
        cursor = c.end;
        owners.push(Owner {
            start: c.start,
            end: c.end,
            class: c.class,
            label: c.label,
            origin: c.origin,
            all_zero: None,
        });
    }
    if cursor < size {
        let tail = size - CONNECTION_REGION_SIZE.min(size);
        if cursor <= tail {
            if tail > cursor {
                owners.push(owner(
                    source,
                    cursor,
                    tail,
                    OwnerClass::Padding,
                    "padding before connection tail".into(),
                ));
            }
            owners.push(Owner {
                start: tail,
                end: size,
                class: OwnerClass::ConnectionTail,
                label: "connection region (final 512 bytes)".into(),
                origin: Origin::Tail,
                all_zero: None,
            });
        } else {
            owners.push(owner(
                source,
                cursor,
                size,
                OwnerClass::Padding,
                "padding before EOF".into(),
            ));
        }
    }
    Ok(owners)
}

pub(super) fn owner(
    source: &Data<'_>,
    start: u64,
    end: u64,
    class: OwnerClass,
    label: String,
) -> Owner {
    let all_zero = (class == OwnerClass::Padding).then(|| {
        source
            .visit(start, end, 1, |_, piece| {
                if piece.iter().all(|&b| b == 0) {
                    Ok(())
                } else {
                    Err(())
                }
            })
            .is_ok()
    });
    Owner {
        start,
        end,
        class,
        label,
        origin: Origin::Gap,
        all_zero,
    }
}

/// Sorted, contiguous, non-empty, from 0 to the file size.
pub(super) fn prove(owners: &[Owner], size: u64) -> Result<(), Failure> {
    let mut cursor = 0;
    for o in owners {
        if o.start != cursor || o.end <= o.start {
            return fail(
                Code::OwnershipConflict,
                o.start.min(cursor),
                format!(
                    "owner {} [0x{:x}, 0x{:x}) breaks contiguity at 0x{cursor:x}",
                    o.label, o.start, o.end
                ),
            );
        }
        cursor = o.end;
    }
    if cursor != size {
        return fail(
            Code::OwnershipConflict,
            cursor,
            format!("owners end at 0x{cursor:x}, file ends at 0x{size:x}"),
        );
    }
    Ok(())
}

/// The final 512 bytes as a view when other owners already hold any of them.
pub(super) fn connection_view(owners: &[Owner], size: u64) -> Option<View> {
    let start = size - CONNECTION_REGION_SIZE.min(size);
    if size == 0 || owners.iter().any(|o| o.class == OwnerClass::ConnectionTail) {
        return None;
    }
    let held: Vec<&str> = owners
        .iter()
        .filter(|o| o.end > start && o.class != OwnerClass::Padding)
        .map(|o| o.label.as_str())
        .collect();
    Some(View {
        start,
        end: size,
        class: ViewClass::SectionCoveredView,
        label: format!(
            "connection region (final 512 bytes) over {}",
            held.join(", ")
        ),
    })
}

pub(super) fn views_v2(graph: &Graph<'_>) -> Vec<View> {
    let name = section::name(section::DYNAIO).unwrap_or("DYNAIO");
    graph
        .dynaio_ranges()
        .into_iter()
        .enumerate()
        .map(|(i, (start, end))| View {
            start,
            end,
            class: ViewClass::NestedReference,
            label: format!("dynaio_table[{i}] -> {name}"),
        })
        .collect()
}

pub(super) fn views_v1(g: &NbgV1<'_>) -> Vec<View> {
    let mut out = Vec::new();
    for n in &g.nested_tables {
        let Some(target) = g.table(n.target) else {
            continue;
        };
        for (i, e) in n.entries.iter().enumerate().filter(|(_, e)| e[1] > 0) {
            out.push(View {
                start: target.offset + e[0],
                end: target.offset + e[0] + e[1],
                class: ViewClass::NestedReference,
                label: format!("{}[{i}] -> {}", n.table, n.target),
            });
        }
    }
    out
}
