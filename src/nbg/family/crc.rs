//! Each family's structural boundaries for the CRC hypothesis registry (`crc_rules`): what
//! `NbgFamily::crc_explanation` and the v1 `crc_flips` evaluate.

use crate::nbg::crc_rules::{Explanation, finish, registry, v2_rule_hypothesis};
use crate::nbg::parse::{NbgV1, NbgV2};

/// The v1 half of `NbgFamily::crc_explanation`: the registry over the table boundaries and the
/// end of the fixed part's opaque extension.
pub(super) fn explain_v1(g: &NbgV1<'_>, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation {
    let (field, hypotheses) = v1_registry(g);
    finish(
        g.format,
        g.file.size,
        crc_of,
        field,
        g.crc.stored,
        hypotheses,
        None,
    )
}

/// The v1 CRC field's offset and the registry over the graph's structural boundaries.
fn v1_registry(g: &NbgV1<'_>) -> (u64, Vec<crate::nbg::crc_rules::Hypothesis>) {
    let field = crate::nbg::format::v1::OFF_CRC as u64;
    let ext_end = g.opaque_fixed_extension.offset + g.opaque_fixed_extension.size;
    let b = crate::nbg::parse::v1::boundaries(&g.tables, g.fixed_part.size, ext_end);
    (field, registry(g.file.size, field, &b))
}

/// The v1 half of `NbgFamily::crc_flips` for a stored CRC: the same registry as `explain_v1`,
/// each hypothesis's CRC over the unflipped file, walked for every flip.
pub(super) fn flips_v1(
    g: &NbgV1<'_>,
    crc_of: &mut dyn FnMut(u64, u64) -> u32,
    patterns: &[u8],
) -> Option<crate::nbg::crc_rules::RegistryFlips> {
    let (field, hypotheses) = v1_registry(g);
    let eval = crate::nbg::crc_rules::Evaluator::with_crcs(g.file.size, &hypotheses, crc_of);
    let values = hypotheses
        .iter()
        .map(|h| eval.crc(h))
        .collect::<Option<Vec<u32>>>()?;
    crate::nbg::crc_rules::RegistryFlips::new(
        g.file.size,
        field,
        g.crc.stored,
        &hypotheses,
        &values,
        patterns,
    )
}

/// The v2 half of `NbgFamily::crc_explanation`: the registry over the header, sub-header and
/// section boundaries, plus the recovered directory-order rule.
pub(super) fn explain_v2(g: &NbgV2<'_>, crc_of: &mut dyn FnMut(u64, u64) -> u32) -> Explanation {
    use crate::nbg::format::v2 as f2;
    let field = f2::OFF_CRC_SUM as u64;
    let mut b = vec![
        (f2::HEADER_SIZE as u64, "end of header".to_string()),
        (
            g.sub_header.offset + u64::from(f2::SUB_HEADER_SIZE),
            "end of sub-header".to_string(),
        ),
    ];
    for s in g.sections.iter().filter(|s| s.size > 0) {
        b.push((s.offset, format!("start of {}", s.type_name)));
        b.push((s.end(), format!("end of {}", s.type_name)));
    }
    let hypotheses = registry(g.file.size, field, &b);
    // The recovered rule: payloads in directory order, section-40 value words as zero.
    let listing: Vec<_> = g
        .sections
        .iter()
        .map(|s| (s.kind, s.offset, s.size))
        .collect();
    let v2_rule = v2_rule_hypothesis(&listing);
    let computed = g.file_checksum.directory_order_crc32;
    finish(
        g.format,
        g.file.size,
        crc_of,
        field,
        g.header.crc_sum(),
        hypotheses,
        Some((v2_rule, computed)),
    )
}
