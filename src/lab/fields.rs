//! `nbg image --fields`: every decoded field of the ledger with its value, as the field map
//! reads it (what `readelf -h` prints for one header, for every record of the file).
//!
//! A decoded-record owner is walked unit by unit, as `locate` names its bytes: a scalar field
//! (or one word of an array) gets its value, a bit-field word its parts' values, a name its
//! text; a unit the map keeps as bytes (a coefficient stream, say) gets its range only.

use crate::nbg::family::{NbgFamily, Owner, OwnerClass};
use crate::nbg::fieldmap as fm;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::Graph;
use serde::Serialize;

/// One decoded field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldValue {
    /// The field as `locate` and `diff` name it (`NBG_SECTION_INPUT[0].dimensions[1]`).
    pub field: String,
    /// File offset of its first byte.
    pub offset: u64,
    /// Its width in bytes.
    pub size: u64,
    /// Its value, where the map reads one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// A bit-field word's parts, each with its value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartValue>,
    /// How far the field map establishes a record field's meaning (`public`, `proved`,
    /// `inferred`, `reserved`, `unknown`); absent for an element of an array and for bytes
    /// no record lays out.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "evidence_name"
    )]
    pub evidence: Option<fm::Evidence>,
}

fn evidence_name<S: serde::Serializer>(e: &Option<fm::Evidence>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(e.map_or("", fm::Evidence::as_str))
}

impl FieldValue {
    /// The field's name with every index left out (`NBG_SECTION_NN[3].word29` ->
    /// `NBG_SECTION_NN[].word29`): the key `unknown_summary` groups by.
    pub fn generic_name(&self) -> String {
        let mut out = String::with_capacity(self.field.len());
        let mut skipping = false;
        for c in self.field.chars() {
            match c {
                '[' => {
                    skipping = true;
                    out.push('[');
                }
                ']' => {
                    skipping = false;
                    out.push(']');
                }
                _ if skipping => {}
                _ => out.push(c),
            }
        }
        out
    }
}

/// The fields the field map names unknown, grouped by their index-free name: how many, and
/// how many bytes (the drill-down of `nbg info`'s "fields named unknown").
pub fn unknown_summary(fields: &[FieldValue]) -> Vec<(String, u64, u64)> {
    let mut groups: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for f in fields
        .iter()
        .filter(|f| f.evidence == Some(fm::Evidence::Unknown))
    {
        let g = groups.entry(f.generic_name()).or_default();
        g.0 += 1;
        g.1 += f.size;
    }
    let mut v: Vec<(String, u64, u64)> = groups.into_iter().map(|(k, (n, b))| (k, n, b)).collect();
    v.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    v
}

/// A field's value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// An unsigned integer.
    Unsigned(u64),
    /// A signed integer.
    Signed(i64),
    /// Text up to its NUL (a name, the magic), lossily decoded.
    Text(String),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Unsigned(v) => write!(f, "{v} (0x{v:x})"),
            Value::Signed(v) => write!(f, "{v}"),
            Value::Text(t) => write!(f, "{t:?}"),
        }
    }
}

/// Bytes of a unit the field map reads as one integer of type `ty`.
pub(crate) fn scalar_width(ty: fm::Type) -> Option<u64> {
    match ty {
        fm::Type::U8 => Some(1),
        fm::Type::U32 | fm::Type::I32 => Some(4),
        fm::Type::U64 => Some(8),
        _ => None,
    }
}

/// The integer `bytes` (little-endian, `scalar_width(ty)` of them) hold, signed where `ty` is.
pub(crate) fn scalar(ty: fm::Type, bytes: &[u8]) -> Option<Value> {
    if Some(bytes.len() as u64) != scalar_width(ty) {
        return None;
    }
    let v = bytes
        .iter()
        .rev()
        .fold(0u64, |v, &x| (v << 8) | u64::from(x));
    Some(match ty {
        fm::Type::I32 => Value::Signed(i64::from(v as u32 as i32)),
        _ => Value::Unsigned(v),
    })
}

/// One part of a bit-field word.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartValue {
    /// The part's name.
    pub part: &'static str,
    /// Its value.
    pub value: u64,
}

/// Every decoded field of every decoded-record owner of `image` (built from `graph`), in file
/// order.
pub fn fields(graph: &Graph<'_>, image: &NbgImage<'_>) -> Vec<FieldValue> {
    let mut out = Vec::new();
    for o in image
        .owners()
        .iter()
        .filter(|o| o.class == OwnerClass::DecodedRecord)
    {
        let mut at = o.start;
        while at < o.end {
            let f = field_at(graph, image, o, at);
            at = f.offset + f.size.max(1);
            out.push(f);
        }
    }
    out
}

/// The field holding byte `at` of owner `o`, from `at` (a unit's first byte) to its end.
fn field_at(graph: &Graph<'_>, image: &NbgImage<'_>, o: &Owner, at: u64) -> FieldValue {
    let l = graph.located(o, at);
    // The unit's type, else its record field's (a whole field).
    let ty =
        l.ty.or(l.word.filter(|_| l.element.is_none()).map(|w| w.field.ty));
    let width = ty.and_then(scalar_width).or_else(|| {
        l.word
            .filter(|_| l.element.is_none())
            .map(|w| w.field.width as u64)
    });
    let end = match width {
        Some(w) => (l.unit + w).min(o.end),
        None => unit_end(graph, o, at, l.unit),
    };
    let bytes = image.range(at, end);
    let value = match ty {
        Some(fm::Type::Str | fm::Type::Magic) => {
            let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
            Some(Value::Text(String::from_utf8_lossy(text).into_owned()))
        }
        Some(t) => scalar(t, &bytes),
        None => None,
    };
    let parts = match (l.word, &value) {
        (Some(w), Some(Value::Unsigned(v))) if l.element.is_none() => w
            .field
            .parts
            .iter()
            .map(|p| PartValue {
                part: p.name,
                value: p.get(*v),
            })
            .collect(),
        _ => Vec::new(),
    };
    let name = match (&l.word, &l.element) {
        (Some(w), None) => l.field[..w.name_len.min(l.field.len())].to_string(),
        (_, Some(e)) => format!("{}{e}", l.field),
        _ => l.field,
    };
    FieldValue {
        field: name,
        offset: at,
        size: end - at,
        value,
        parts,
        evidence: l
            .word
            .filter(|_| l.element.is_none())
            .map(|w| w.field.evidence),
    }
}

/// One past the last byte of the unit that starts at `unit` and holds `at`: found by
/// doubling then halving, so a unit of n bytes costs O(log n) lookups.
fn unit_end(graph: &Graph<'_>, o: &Owner, at: u64, unit: u64) -> u64 {
    let same = |x: u64| x < o.end && graph.located(o, x).unit == unit;
    // Invariant: `lo` is in the unit, `hi` is not (or is the owner's end).
    let (mut lo, mut step) = (at, 1u64);
    let hi = loop {
        let next = lo.saturating_add(step).min(o.end);
        if !same(next) {
            break next;
        }
        lo = next;
        step = step.saturating_mul(2);
    };
    let mut hi = hi;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if same(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}
