//! Which record bit fields the promoted mappings prove: the field map's `proved` label rests
//! on this. A part of a record's bit-field word (an NN command's `word15.in_image_border_const`)
//! is proved by a promoted mapping when one of the mapping's placements covers exactly that
//! part's bits, every capture set of its evidence still proves the mapping (the same digests,
//! the in-memory replay reproducing B), and at least one of them changes the part's value: the
//! serializer wrote what the model change predicts there and nothing else. A part a placement
//! covers exactly whose value no set changes is `held`, not proved. A placement over bits of
//! several parts, or over part of one, proves none and is listed as not aligned.

use super::*;
use crate::lab::diff::{BitPlace, bit_place};

/// A part's value in one capture set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PartValue {
    /// The capture set, relative to the mappings file's folder.
    pub capture: String,
    /// The part's value in A1.
    pub a: u64,
    /// The part's value in B.
    pub b: u64,
}

/// One part a promoted mapping's placement covers exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoveredPart {
    /// The field-map record (`v2.nn_command`).
    pub record: &'static str,
    /// The bit-field word (`word15`).
    pub word: &'static str,
    /// The part (`in_image_border_const`).
    pub part: &'static str,
    /// Where the word lies in A1 (`NBG_SECTION_NN[0].word15`).
    pub at: String,
    /// The mapping.
    pub mapping: String,
    /// The target the mapping is pinned to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<String>,
    /// The part's values in each capture set of the evidence.
    pub values: Vec<PartValue>,
}

impl CoveredPart {
    /// Whether a capture set changes the part's value.
    pub fn changes(&self) -> bool {
        self.values.iter().any(|v| v.a != v.b)
    }
}

/// A placement inside one record field that covers no part of it exactly (or a field with no
/// parts only in part).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unaligned {
    /// The mapping.
    pub mapping: String,
    /// The field-map record.
    pub record: &'static str,
    /// Where the word lies in A1.
    pub at: String,
    /// The placement's first bit in the word.
    pub shift: u32,
    /// Its width in bits.
    pub bits: u32,
    /// The parts it holds bits of.
    pub parts: Vec<&'static str>,
}

/// A capture set of a promoted mapping's evidence that no longer proves it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unproved {
    /// The mapping.
    pub mapping: String,
    /// The capture set.
    pub capture: String,
    /// Why.
    pub detail: String,
}

/// What the promoted mappings of a registry prove of the field map's bit fields.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FieldProofs {
    /// Parts covered exactly whose value a capture set changes.
    pub proved: Vec<CoveredPart>,
    /// Parts covered exactly whose value no capture set changes.
    pub held: Vec<CoveredPart>,
    /// Placements inside one record field that cover no part exactly.
    pub unaligned: Vec<Unaligned>,
    /// Evidence that no longer proves its mapping (its mapping proves nothing here).
    pub unproved: Vec<Unproved>,
}

/// Schema of `nbg mapping fields --json`.
pub const FIELDS_SCHEMA: &str = "nbg-mapping-fields/1";

impl FieldProofs {
    /// The (record, word, part) triples proved.
    pub fn proved_parts(
        &self,
    ) -> std::collections::BTreeSet<(&'static str, &'static str, &'static str)> {
        self.proved
            .iter()
            .map(|p| (p.record, p.word, p.part))
            .collect()
    }

    /// The JSON document (`FIELDS_SCHEMA`), with the registry's digest.
    pub fn document(&self, registry_sha256: &Hash256) -> serde_json::Value {
        serde_json::json!({
            "schema": FIELDS_SCHEMA,
            "registry_sha256": registry_sha256.hex(),
            "proved": self.proved,
            "held": self.held,
            "unaligned": self.unaligned,
            "unproved": self.unproved,
        })
    }
}

/// `nbg mapping fields`: what the promoted mappings of the registry at `mappings` prove, each
/// re-checked on its evidence (capture sets relative to the file's folder). Writes nothing.
pub fn run_fields(mappings: &Path) -> Result<(Registry, FieldProofs), Stop> {
    let registry = load(mappings)?;
    let base = folder(mappings);
    let mut out = FieldProofs::default();
    for m in registry
        .mappings
        .iter()
        .filter(|m| m.status == Status::Promoted)
    {
        mapping_fields(m, base, &mut out)?;
    }
    Ok((registry, out))
}

/// One promoted mapping's covered parts and unaligned placements, added to `out`.
fn mapping_fields(m: &Mapping, base: &Path, out: &mut FieldProofs) -> Result<(), Stop> {
    let mut covered: Vec<CoveredPart> = Vec::new();
    let mut unaligned: Vec<Unaligned> = Vec::new();
    for e in &m.evidence {
        let unproved = |detail: String| Unproved {
            mapping: m.name.clone(),
            capture: e.capture.clone(),
            detail,
        };
        let c = match Capture::load(&base.join(&e.capture), e.capture.clone()) {
            Ok(c) => c,
            Err(err) => {
                out.unproved.push(unproved(err.to_string()));
                return Ok(());
            }
        };
        let [a1, a2, b] = c.digests();
        if [a1.hex(), a2.hex(), b.hex()]
            != [&e.a1_sha256, &e.a2_sha256, &e.b_sha256].map(String::clone)
        {
            out.unproved.push(unproved(
                "capture files no longer match the recorded SHA-256".into(),
            ));
            return Ok(());
        }
        let rows = check_all(&[m], std::slice::from_ref(&c))?;
        if rows[0].outcome != Outcome::Proved {
            out.unproved.push(unproved(format!(
                "{}: {}",
                rows[0].outcome.as_str(),
                serde_json::to_value(rows[0].reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            )));
            return Ok(());
        }
        // Invariant: check_all parsed both files, so they parse again.
        let fail = |file, failure| CaptureFailure {
            capture: c.name.clone(),
            file,
            failure,
        };
        let ga = parse(&c.set.a1).map_err(|f| fail("A1.nb", f))?;
        let ia = NbgImage::new(&ga).map_err(|f| fail("A1.nb", f))?;
        for p in placed(m, &ga, &ia) {
            let (bit, bits) = p.bit_span();
            let Some(place) = u32::try_from(bits)
                .ok()
                .and_then(|bits| bit_place(&ga, &ia, bit, bits))
            else {
                continue;
            };
            let whole = u64::from(place.bits) == 8 * place.field.width as u64;
            match place.part() {
                Some(part) => add_value(&mut covered, m, &place, part, &c),
                // A whole field with no parts is a byte placement, not a bit-field claim.
                None if whole && place.field.parts.is_empty() => {}
                None => {
                    let u = Unaligned {
                        mapping: m.name.clone(),
                        record: place.record,
                        at: place.at.clone(),
                        shift: place.shift,
                        bits: place.bits,
                        parts: place.touched().iter().map(|p| p.name).collect(),
                    };
                    if !unaligned.contains(&u) {
                        unaligned.push(u);
                    }
                }
            }
        }
    }
    for c in covered {
        if c.changes() {
            out.proved.push(c);
        } else {
            out.held.push(c);
        }
    }
    out.unaligned.extend(unaligned);
    Ok(())
}

/// Record the part's A and B values in capture `c` under its (part, place) entry.
fn add_value(
    covered: &mut Vec<CoveredPart>,
    m: &Mapping,
    place: &BitPlace,
    part: &'static crate::nbg::fieldmap::Part,
    c: &Capture,
) {
    let value = |bytes: &[u8]| place.word_value(bytes).map(|w| part.get(w));
    let (Some(a), Some(b)) = (value(&c.set.a1), value(&c.set.b)) else {
        return;
    };
    let v = PartValue {
        capture: c.name.clone(),
        a,
        b,
    };
    let key =
        |x: &CoveredPart| x.word == place.field.name && x.part == part.name && x.at == place.at;
    match covered.iter_mut().find(|x| key(x)) {
        Some(x) => {
            if !x.values.contains(&v) {
                x.values.push(v);
            }
        }
        None => covered.push(CoveredPart {
            record: place.record,
            word: place.field.name,
            part: part.name,
            at: place.at.clone(),
            mapping: m.name.clone(),
            pid: m.pid.clone(),
            values: vec![v],
        }),
    }
}
