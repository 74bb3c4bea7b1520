//! Reading and validating a mappings file.

use super::*;

/// Read and validate a mappings file: at most `MAX_FILE_BYTES`, unknown keys refused, names
/// unique, counts bounded, digests well formed, every value within its encoding.
pub fn load(path: &Path) -> Result<Registry, MappingError> {
    let mut bytes = Vec::new();
    crate::files::read_regular_limited(path, &mut bytes, MAX_FILE_BYTES + 1)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(MappingError::TooLarge(path.to_path_buf()));
    }
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(MappingError::NotObject(path.to_path_buf()));
    }
    let registry: Registry =
        serde_json::from_slice(&bytes).map_err(|source| MappingError::Fields {
            path: path.to_path_buf(),
            source,
        })?;
    validate(&registry).map_err(|problem| MappingError::Invalid {
        path: path.to_path_buf(),
        problem,
    })?;
    Ok(registry)
}

pub(super) fn is_hex64(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(super) fn validate(r: &Registry) -> Result<(), RegistryProblem> {
    if r.schema != SCHEMA {
        return Err(RegistryProblem::Schema(r.schema.clone()));
    }
    if r.mappings.len() > MAX_MAPPINGS {
        return Err(RegistryProblem::TooMany(r.mappings.len()));
    }
    let mut names = std::collections::BTreeSet::new();
    for m in &r.mappings {
        let n = &m.name;
        if n.is_empty()
            || n.len() > 128
            || !n
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(RegistryProblem::Name(n.clone()));
        }
        if !names.insert(n.as_str()) {
            return Err(RegistryProblem::Duplicate(n.clone()));
        }
        if m.source.key.is_empty() || m.source.key.len() > 128 || m.source.text.len() > 4096 {
            return Err(RegistryProblem::Source(n.clone()));
        }
        if m.evidence.len() > MAX_EVIDENCE {
            return Err(RegistryProblem::EvidenceCount(n.clone()));
        }
        for e in &m.evidence {
            if ![&e.a1_sha256, &e.a2_sha256, &e.b_sha256]
                .iter()
                .all(|d| is_hex64(d))
            {
                return Err(RegistryProblem::Digest {
                    name: n.clone(),
                    capture: e.capture.clone(),
                });
            }
            if e.capture.is_empty() || e.capture.split('/').any(|c| c == ".." || c.is_empty()) {
                return Err(RegistryProblem::CapturePath {
                    name: n.clone(),
                    capture: e.capture.clone(),
                });
            }
            if let Some(encoding) = m.value_encoding() {
                for v in [&e.a, &e.b] {
                    encode(encoding, v).map_err(|source| RegistryProblem::Value {
                        name: n.clone(),
                        source,
                    })?;
                }
            }
        }
        if m.status == Status::Promoted && m.evidence.len() < 2 {
            return Err(RegistryProblem::TooFewEvidence {
                name: n.clone(),
                count: m.evidence.len(),
            });
        }
        if m.family == Family::V1 && m.derived.contains(&Derived::SectionChecksums) {
            return Err(RegistryProblem::V1Checksums(n.clone()));
        }
        let mut d = m.derived.clone();
        d.sort();
        d.dedup();
        if d.len() != m.derived.len() {
            return Err(RegistryProblem::DerivedTwice(n.clone()));
        }
        if m.pid.as_deref().is_some_and(|p| parse_pid(p).is_none()) {
            return Err(RegistryProblem::Pid(n.clone()));
        }
        if m.target.is_some() != m.encoding.is_some()
            || (m.target.is_none() && m.also.is_empty() && m.computed.is_empty())
            || m.also.len() > MAX_PLACEMENTS
            || m.computed.len() > MAX_PLACEMENTS
            || m.also
                .iter()
                .any(|p| p.repeat == 0 || p.repeat > MAX_REPEAT)
        {
            return Err(RegistryProblem::Placements(n.clone()));
        }
        for c in &m.computed {
            if c.inputs.is_empty()
                || c.inputs.len() > computed::MAX_INPUTS
                || c.inputs.iter().any(|k| k.is_empty() || k.len() > 128)
                || c.candidates.is_empty()
                || c.candidates.len() > computed::MAX_CANDIDATES
                || c.kept.is_some_and(|k| !c.candidates.contains(&k))
                || c.target.is_some() != c.bits.is_empty()
                || c.bits.len() > computed::MAX_BITS
                || c.bits.iter().any(|b| !b.is_valid())
                || c.bits
                    .iter()
                    .any(|b| matches!(b.target, Target::SectionValue { .. }))
            {
                return Err(RegistryProblem::Computed(n.clone()));
            }
        }
        // A decoded-coefficient place is an element map's primary target, nothing else.
        let coefficient = |t: &Target| matches!(t, Target::Coefficient { .. });
        if m.targets()
            .skip(usize::from(m.target.is_some()))
            .any(coefficient)
            || m.target
                .as_ref()
                .is_some_and(|t| coefficient(t) && !m.is_element_map())
        {
            return Err(RegistryProblem::CoefficientTarget(n.clone()));
        }
        for t in m.targets() {
            match t {
                Target::SectionRange { start, end, .. }
                    if end <= start || end - start > MAX_VALUE_BYTES as u64 =>
                {
                    return Err(RegistryProblem::SectionRange {
                        name: n.clone(),
                        start: *start,
                        end: *end,
                    });
                }
                Target::SectionValue { every, .. }
                    if (m.is_element_map() || *every) && m.target.as_ref() == Some(t) =>
                {
                    return Err(RegistryProblem::ElementByValue(n.clone()));
                }
                Target::Field { field, offset } if field.is_empty() || *offset > 1 << 20 => {
                    return Err(RegistryProblem::FieldTarget(n.clone()));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A target word written `0x` and eight hex digits.
pub(super) fn parse_pid(p: &str) -> Option<u32> {
    // The registry's canonical form: `0x` and exactly eight digits.
    crate::word::parse(p).ok().filter(|_| p.len() == 10)
}

impl Target {
    /// Whether the target is every place holding the value (`section-value` with `every`).
    pub fn every(&self) -> bool {
        matches!(self, Target::SectionValue { every: true, .. })
    }
}

impl Mapping {
    /// Every target: the primary one, the further placements, the computed values.
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        self.target
            .iter()
            .chain(self.also.iter().map(|p| &p.target))
            .chain(
                self.computed
                    .iter()
                    .flat_map(|c| c.target.iter().chain(c.bits.iter().map(|b| &b.target))),
            )
    }

    /// The encoding the source value itself is written in (the primary's, else the first
    /// placement's); none when it lands only through computed values.
    pub fn value_encoding(&self) -> Option<Encoding> {
        self.encoding.or(self.also.first().map(|p| p.encoding))
    }

    /// An element map: the source key ends in `[*]`.
    pub fn is_element_map(&self) -> bool {
        self.source.key.ends_with(ELEMENT_KEY)
    }
}
