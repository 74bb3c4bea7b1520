//! Each family's claims on its bytes (structures, sections or tables, the entries of a table of
//! buffers, coefficient parts) and its views, for `nbg::image` to fill the gaps and prove.

use super::ledger::{
    Claim, Origin, OwnerClass, Undecoded, UndecodedReason, View, ViewClass, claim,
};
use super::{NbgFamily, Read};
use crate::nbg::format::{section, v1 as f1, v2 as f2};
use crate::nbg::parse::{NbgV1, NbgV2};

/// The v2 claims: header, sub-header, directory, and each section whole or cut into its entries
/// (COEF_DATA entries into their decoded parts, read through `read`).
pub(super) fn v2<'a>(g: &NbgV2<'_>, read: &Read<'a>) -> Vec<Claim> {
    let dir = u64::from(g.sub_header.section_headers_offset());
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
                    parts = coefficient_claims(&g.coefficient_view(), read, s.index, parts);
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
        x.undecoded = (class == OwnerClass::PreservedOpaque).then(|| {
            if s.kind == crate::nbg::format::section::DYNAIO {
                Undecoded::of(UndecodedReason::RunData)
            } else {
                let code = s.type_name.to_string();
                Undecoded {
                    reason: UndecodedReason::FormatUnknown,
                    code: Some(code),
                    detail: None,
                }
            }
        });
        c.push(x);
    }
    c
}

/// The v1 claims: the fixed part's groups, the opaque extension, and each table whole or cut
/// into its entries (the coefficient table's entries into their decoded parts, read through
/// `read`).
pub(super) fn v1<'a>(g: &NbgV1<'_>, read: &Read<'a>) -> Vec<Claim> {
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
        x.undecoded = Some(Undecoded {
            reason: UndecodedReason::FormatUnknown,
            code: Some("opaque-fixed-extension".into()),
            detail: None,
        });
        c.push(x);
    }
    for t in g.tables.iter().filter(|t| t.size > 0) {
        let regions = g.regions_of(t.name).0;
        let label = format!("table {} {}", t.index, t.name);
        if let Some(mut parts) = regions.and_then(|r| {
            region_claims(r, t.offset, t.end(), &label, |e| {
                Origin::TableEntry(t.index, e)
            })
        }) {
            if t.name == g.coefficient_table() {
                parts = coefficient_claims(&g.coefficient_view(), read, t.index, parts);
            }
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
        x.undecoded = (class == OwnerClass::PreservedOpaque).then(|| {
            if t.name == "dyna_io" {
                Undecoded::of(UndecodedReason::RunData)
            } else {
                Undecoded {
                    reason: UndecodedReason::FormatUnknown,
                    code: Some(t.name.to_string()),
                    detail: None,
                }
            }
        });
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
                x.undecoded = (class == OwnerClass::PreservedOpaque).then(|| match r.role {
                    crate::nbg::parse::patch_targets::Role::Unreferenced => {
                        Undecoded::of(UndecodedReason::Unreferenced)
                    }
                    role => Undecoded {
                        reason: UndecodedReason::FormatUnknown,
                        code: Some(role.as_str().to_string()),
                        detail: None,
                    },
                });
                x
            })
            .collect(),
    )
}

/// The coefficient table's entry claims (v2 COEF_DATA, v1 `coeff_data` or `lcd`) with every
/// entry that decodes whole split into its parts (`coefficients::Buffer::ledger_parts`: header,
/// one stream per core, biases) or owned whole as a table or a shader's image, each a decoded
/// record; the other entries stay as they are. `payload` is the section's directory index (v2) or the table's
/// index (v1).
fn coefficient_claims<'a>(
    view: &crate::nbg::parse::patch_targets::CoefficientView<'_>,
    read: &Read<'a>,
    payload: usize,
    parts: Vec<Claim>,
) -> Vec<Claim> {
    use crate::nbg::coefficients::{self, Part};
    let c = coefficients::of_with(view, None, read, coefficients::Depth::Streams);
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
    for b in &c.tp {
        let whole = read(b.offset, b.size).is_some_and(|bytes| b.reencoded(&bytes));
        if whole {
            let v = b
                .parts
                .iter()
                .map(|p| {
                    let at = Part::TpPart(p.offset - b.offset);
                    (p.offset, p.offset + p.size, b.entry, at)
                })
                .collect();
            split.insert(b.offset, v);
        }
    }
    for z in c.zero_run.iter().filter(|z| z.reencoded) {
        split.insert(
            z.offset,
            vec![(z.offset, z.offset + z.size, z.entry, Part::ZeroRun)],
        );
    }
    for i in c.images.iter().filter(|i| i.padding_zero) {
        split.insert(
            i.offset,
            vec![(i.offset, i.offset + i.size, i.entry, Part::Image)],
        );
    }
    let reasons = undecoded_coefficients(&c);
    let mut out = Vec::with_capacity(parts.len());
    for mut p in parts {
        if let Some(r) = reasons
            .get(&p.start)
            .filter(|_| p.class == OwnerClass::PreservedOpaque)
        {
            p.undecoded = Some(r.clone());
        }
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
                x.origin = Origin::Coefficient(payload, e, part);
                x
            })),
            None => out.push(p),
        }
    }
    out
}

/// Why each coefficient entry that `c` does not decode whole stays opaque, by its offset: the
/// refusal's code, the first stream that does not decode, or bytes that do not re-encode.
fn undecoded_coefficients(
    c: &crate::nbg::coefficients::Coefficients,
) -> std::collections::HashMap<u64, Undecoded> {
    use crate::nbg::coefficients::CutCode;
    let mut out = std::collections::HashMap::new();
    for r in &c.refused {
        let code = r.error.code.as_str();
        let reason = if r.error.code == CutCode::CoefNoLayout {
            UndecodedReason::NoLayout
        } else {
            UndecodedReason::DecoderRefused
        };
        let detail = format!("at +0x{:x}", r.error.at);
        out.insert(r.offset, Undecoded::coded(reason, code, detail));
    }
    for b in &c.buffers {
        let failed = b
            .streams
            .iter()
            .find_map(|s| s.not_decoded.as_ref().map(|e| (s.core, e)));
        let u = match failed {
            Some((core, e)) => Undecoded::coded(
                UndecodedReason::DecoderRefused,
                e.code.as_str(),
                format!("stream {core} at bit {}: {}", e.bit, e.message),
            ),
            None => Undecoded::of(UndecodedReason::NotReencoded),
        };
        out.insert(b.offset, u);
    }
    let not_reencoded = Undecoded::of(UndecodedReason::NotReencoded);
    for i in &c.images {
        out.insert(i.offset, not_reencoded.clone());
    }
    for t in &c.tp {
        out.insert(t.offset, not_reencoded.clone());
    }
    for z in &c.zero_run {
        out.insert(z.offset, not_reencoded.clone());
    }
    for t in &c.tables {
        out.insert(t.offset, not_reencoded.clone());
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

/// v2 views: each DYNAIO entry inside the DYNAIO section.
pub(super) fn views_v2(g: &NbgV2<'_>) -> Vec<View> {
    let name = section::name(section::DYNAIO).unwrap_or("DYNAIO");
    g.dynaio_ranges()
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

/// v1 views: each nested table entry inside the table it points into.
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
