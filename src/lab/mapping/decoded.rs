//! Mappings proved against decoded coefficients. A source element that lands in an NN
//! command's coefficient stream has no fixed byte: the stream's codes, its symbol map and its
//! sizes change with the values around it. Its place is where the decoder
//! (`nbg::coefficients`) puts it. A capture set proves such a mapping when B's buffer decodes
//! to A's tensors with exactly the mapped element changed, from the A value to the B value;
//! the replay then writes B's buffer and accounts for every other byte as any replay does.

use super::*;
use crate::nbg::coefficients::{self, Buffer, Tensor, WeightType};

/// A `Target::Coefficient` with the mapping's encoding.
pub(super) struct Site {
    /// The NN command.
    pub nn: u32,
    /// Kernels or biases.
    pub part: Tensor,
    /// Subtracted from the source value before it is stored (its A and B values).
    pub less: Option<Quantity>,
    /// The mapping's encoding: the stored element's width.
    pub encoding: Encoding,
}

/// The coefficient buffer NN command `nn` reads, cut.
fn buffer(g: &Graph<'_>, nn: u32) -> Option<Buffer> {
    coefficients::of(&g.coefficient_view())
        .buffers
        .into_iter()
        .find(|b| b.command.is_some_and(|c| c.index == nn as usize))
}

/// The file range of the coefficient buffer NN command `nn` reads.
pub(super) fn buffer_range(g: &Graph<'_>, nn: u32) -> Option<(u64, u64)> {
    buffer(g, nn).map(|b| (b.offset, b.offset + b.size))
}

/// An integer value.
fn integer(v: &Value) -> Option<i64> {
    match v {
        Value::Unsigned(u) => i64::try_from(*u).ok(),
        Value::Signed(i) => Some(*i),
        _ => None,
    }
}

/// The element `v` is stored as: a half-precision encoding's bits (`f16`, `f16-nearest`:
/// fp16 kernels), else `v - less`, kernels wrapped to their width, biases as is. `None` when a
/// value is no integer where one is needed, `v` does not fit the encoding, or a kernel's width
/// is not the encoding's.
fn stored(v: &Value, less: Option<&Value>, site: &Site, bits: u32) -> Option<i64> {
    let bytes = encode(site.encoding, v).ok()?;
    if width(site.encoding)? * 8 != u64::from(bits) && site.part == Tensor::Weights {
        return None;
    }
    if matches!(site.encoding, Encoding::F16 | Encoding::F16Nearest) {
        return less
            .is_none()
            .then(|| i64::from(u16::from_le_bytes([bytes[0], bytes[1]])));
    }
    let less = less.map_or(Some(0), integer)?;
    let x = integer(v)?.checked_sub(less)?;
    Some(match site.part {
        Tensor::Weights => x.rem_euclid(1i64 << bits),
        Tensor::Biases => x,
    })
}

/// What a buffer decodes to besides its kernel and bias elements, which a value change must
/// leave alone: the header's format flags, the kernels' shape, type, zero point and extra
/// elements (an fp16 kernel's bias), and the per-channel post-multipliers. The symbol map,
/// run-length table and stream sizes follow from the values and may change.
#[allow(clippy::type_complexity)]
fn form(
    b: &Buffer,
) -> (
    (u8, bool, bool, bool),
    Option<([usize; 4], WeightType, u64, &[u16])>,
    Option<&Vec<[f32; 2]>>,
) {
    let h = &b.header;
    (
        (h.version, h.precode, h.bit16, h.fp16),
        b.weights
            .as_ref()
            .map(|w| (w.shape, w.dtype, w.zero_point, w.kernels.extras.as_slice())),
        b.biases.as_ref().and_then(|x| x.post_multipliers.as_ref()),
    )
}

/// The first decoded element where B is not A with the mapped element set to the B value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DecodedMismatch {
    /// The kernels or the biases.
    pub part: Tensor,
    /// The element, in decoded order.
    pub element: u64,
    /// What the replay holds there (A's element, or the B value at the mapped element; for
    /// `target-holds-other-value`, the A value where A holds `b`).
    pub replay: i64,
    /// What B's buffer decodes to there.
    pub b: i64,
}

/// The first element where `b` differs from `expected` (a missing element reads as 0 past
/// the shorter).
fn first_mismatch(part: Tensor, expected: &[i64], b: &[i64]) -> Option<DecodedMismatch> {
    let n = expected.len().max(b.len());
    (0..n)
        .find(|&i| expected.get(i) != b.get(i))
        .map(|i| DecodedMismatch {
            part,
            element: i as u64,
            replay: expected.get(i).copied().unwrap_or(0),
            b: b.get(i).copied().unwrap_or(0),
        })
}

/// Why a decoded-coefficient target is not written, with B's first differing element.
pub(super) type Refusal = (Reason, Option<DecodedMismatch>);

/// The replay's write for a decoded-coefficient target: B's buffer, once A's and B's
/// buffers sit at the same bytes, each re-encodes from what it decodes to, and they decode to
/// the same tensors and form (`form`) but for element `index` of the target's part, which
/// holds the A value in A and the B value in B.
pub(super) fn buffer_write(
    site: &Site,
    ga: &Graph<'_>,
    gb: &Graph<'_>,
    a: &[u8],
    b: &[u8],
    q: &Quantity,
    index: u64,
) -> Result<Planned, Refusal> {
    let only = |r: Reason| (r, None);
    let ba = buffer(ga, site.nn).ok_or(only(Reason::TargetNotFound))?;
    // Decoded whole: every byte of the buffer is the encoding of what was decoded (the
    // ledger's condition), so equal decodings leave nothing of it unexplained.
    if ba.ledger_parts().is_none() {
        return Err(only(Reason::CoefficientsNotDecoded));
    }
    let (ea, bits) = ba
        .elements(site.part)
        .ok_or(only(Reason::CoefficientsNotDecoded))?;
    let i = usize::try_from(index).map_err(|_| only(Reason::TargetNotFound))?;
    if i >= ea.len() {
        return Err(only(Reason::TargetNotFound));
    }
    let less = |b: bool| site.less.as_ref().map(|q| if b { &q.b } else { &q.a });
    let (Some(sa), Some(sb)) = (
        stored(&q.a, less(false), site, bits),
        stored(&q.b, less(true), site, bits),
    ) else {
        return Err(only(Reason::SourceNotEncodable));
    };
    if ea[i] != sa {
        let held = DecodedMismatch {
            part: site.part,
            element: index,
            replay: sa,
            b: ea[i],
        };
        return Err((Reason::TargetHoldsOtherValue, Some(held)));
    }
    let differs = |m| (Reason::DecodedDiffersFromB, m);
    let bb = buffer(gb, site.nn).ok_or(differs(None))?;
    if (ba.offset, ba.size) != (bb.offset, bb.size)
        || bb.ledger_parts().is_none()
        || form(&ba) != form(&bb)
    {
        return Err(differs(None));
    }
    let mut expected = ea;
    expected[i] = sb;
    let other = match site.part {
        Tensor::Weights => Tensor::Biases,
        Tensor::Biases => Tensor::Weights,
    };
    let decoded = |b: &Buffer, part| b.elements(part).map(|(e, _)| e).unwrap_or_default();
    let mismatch = first_mismatch(site.part, &expected, &decoded(&bb, site.part))
        .or_else(|| first_mismatch(other, &decoded(&ba, other), &decoded(&bb, other)));
    if mismatch.is_some() || bb.elements(site.part).is_none() {
        return Err(differs(mismatch));
    }
    let range = |x: &[u8]| {
        usize::try_from(ba.offset)
            .ok()
            .zip(usize::try_from(ba.offset + ba.size).ok())
            .and_then(|(s, e)| x.get(s..e))
            .map(<[u8]>::to_vec)
    };
    let (Some(xa), Some(xb)) = (range(a), range(b)) else {
        return Err(only(Reason::TargetNotFound));
    };
    Ok(Planned {
        at: ba.offset,
        a: xa,
        b: xb,
        role: WriteRole::DecodedCoefficients,
    })
}
