//! Tensor payloads against their declared type and shape.

use super::*;

/// A tensor's payload must match its type and shape exactly.
pub(super) fn tensor_data(t: &TensorProto, graph: &str) -> Result<(), Refusal> {
    let name = t.name.as_deref().unwrap_or("");
    let bad = |m: String| {
        Refusal::new(
            RefusalCode::TensorDataInvalid,
            format!("tensor {name:?} in graph {graph:?}: {m}"),
        )
    };
    let elem = t.data_type.unwrap_or(0);
    if type_string(elem).is_none() {
        return Err(bad(format!(
            "data_type {elem} is not a tensor element type"
        )));
    }
    let count = t
        .dims
        .iter()
        .try_fold(1u64, |a, &d| {
            u64::try_from(d).ok().and_then(|d| a.checked_mul(d))
        })
        .ok_or_else(|| bad(format!("dims {:?} are negative or too large", t.dims)))?;
    if let Some(raw) = &t.raw_data {
        let Some(b) = bits(elem) else {
            return Err(bad("a string tensor cannot use raw_data".into()));
        };
        let want = count
            .checked_mul(b)
            .map(|x| x.div_ceil(8))
            .ok_or_else(|| bad("too large".into()))?;
        if raw.len() as u64 != want {
            return Err(bad(format!(
                "raw_data holds {} bytes; dims {:?} of {} need {want}",
                raw.len(),
                t.dims,
                type_string(elem).unwrap_or_default()
            )));
        }
        return Ok(());
    }
    // Typed fields: which one carries the type, and how many entries per element.
    let (held, per) = match elem {
        1 => (t.float_data.len(), 1),
        14 => (t.float_data.len(), 2),
        7 => (t.int64_data.len(), 1),
        11 => (t.double_data.len(), 1),
        15 => (t.double_data.len(), 2),
        12 | 13 => (t.uint64_data.len(), 1),
        8 => (t.string_data.len(), 1),
        _ => (t.int32_data.len(), 1),
    };
    let held = held as u64;
    // Sub-byte types pack several elements per int32 entry.
    let want = match bits(elem) {
        Some(b) if b < 8 => (count * b).div_ceil(8),
        _ => count * per,
    };
    if held != want {
        return Err(bad(format!(
            "holds {held} values; dims {:?} need {want}",
            t.dims
        )));
    }
    Ok(())
}
