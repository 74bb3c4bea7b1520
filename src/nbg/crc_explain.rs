//! `nbg crc-explain`: the CRC hypothesis registry (`crc_rules`, a leaf below the parser)
//! evaluated against a parsed graph, over the structural boundaries its family gives
//! (`NbgFamily::crc_explanation`).

use crate::nbg::crc_rules::Explanation;
use crate::nbg::family::NbgFamily;
use crate::nbg::parse::Graph;

/// Evaluate the whole registry (plus the v2 rule for v2 files) against a graph parsed from
/// bytes in memory.
pub fn explain(graph: &Graph<'_>) -> Explanation {
    let bytes = graph.bytes();
    explain_with(graph, |s, e| {
        crc32fast::hash(&bytes[s as usize..e as usize])
    })
}

/// `explain` given the CRC-32 of any `[start, end)` of the file: from its bytes, or streamed
/// from disk (`nbg crc-explain` reads each segment between hypothesis boundaries once, so the
/// file is never held whole).
pub fn explain_with(graph: &Graph<'_>, mut crc_of: impl FnMut(u64, u64) -> u32) -> Explanation {
    graph.crc_explanation(&mut crc_of)
}
