//! The named controls, the DYNAIO trios and the bulk files of `synth-corpus`.

use super::*;

/// Named profiles of the committed controls.
pub const PROFILES: [&str; 5] = [
    "erf-u8",
    "ctc-like",
    "zipformer-like",
    "tail-gap",
    "shuffled",
];

/// The `GraphSpec` and file placement of a named profile.
pub fn profile(name: &str, seed: u64) -> Result<Layout, BuildError> {
    let mut rng = Rng::new(seed);
    let base = |name: &str, inputs, outputs| GraphSpec {
        target: 0x1000_000e,
        network_name: name.into(),
        inputs,
        outputs,
        layers: 4,
        operations: 5,
        ppu_bytes: 256,
        loadstate_bytes: 320,
        coef_bytes: 1024,
        memory_pool_bytes: 161_280,
        vip_sram_bytes: 262_144,
        dynaio: None,
    };
    let u8_481 = || vec![TensorSpec::new("input_0", &[481], 2)];
    let layout = match name {
        "erf-u8" => {
            let mut g = base(
                "erf_u8",
                u8_481(),
                vec![TensorSpec::new("output_0", &[481], 2)],
            );
            g.outputs[0].quant_format = 2;
            g.outputs[0].quant_words = [(1.0f32 / 255.0).to_bits(), 128];
            g.layout(&mut rng)?
        }
        "ctc-like" => {
            let mut g = base(
                "ctc_like_NCHW",
                vec![TensorSpec::new("input/output[0]", &[256, 16, 1], 1)],
                vec![TensorSpec::new(
                    "uid_20000_sub_uid_1_out_0",
                    &[5200, 16, 1],
                    0,
                )],
            );
            g.layers = 5;
            g.operations = 6;
            g.memory_pool_bytes = 167_680;
            g.coef_bytes = 8192;
            g.dynaio = Some(dynaio_entries(&mut rng, 50));
            g.layout(&mut rng)?
        }
        "zipformer-like" => {
            let io = |prefix: &str, n: usize| -> Vec<TensorSpec> {
                (0..n)
                    .map(|i| {
                        let dims = [1 + (i as u32 % 7) * 16, 1 + i as u32 % 3, 1];
                        TensorSpec::new(
                            &format!("{prefix}_{i}"),
                            &dims,
                            if i % 5 == 0 { 8 } else { 1 },
                        )
                    })
                    .collect()
            };
            let mut g = base("zipformer_like", io("in", 75), io("out", 75));
            g.layers = 40;
            g.operations = 64;
            g.dynaio = Some(dynaio_entries(&mut rng, 150));
            g.layout(&mut rng)?
        }
        "tail-gap" => {
            let g = base(
                "tail_gap",
                u8_481(),
                vec![TensorSpec::new("output_0", &[481], 2)],
            );
            let mut l = g.layout(&mut rng)?;
            // More than 512 unowned bytes, so no section covers the connection region.
            l.tail = rng.bytes(640);
            l
        }
        "shuffled" => {
            let mut g = base(
                "shuffled",
                vec![TensorSpec::new("in", &[1, 3, 32, 32], 3)],
                vec![TensorSpec::new("out", &[1, 10], 0)],
            );
            g.inputs[0].quant_format = 1;
            g.inputs[0].quant_words = [7, 0];
            g.dynaio = Some(dynaio_entries(&mut rng, 8));
            let mut l = g.layout(&mut rng)?;
            shuffle(&mut rng, &mut l.file_order);
            l.extra_gap = (0..l.sections.len()).map(|_| rng.range(0, 3) * 4).collect();
            l
        }
        _ => return Err(BuildError::Unknown(name.into())),
    };
    Ok(layout)
}

/// `n` DYNAIO entries; entry 0 is the 4-byte constant `[0, 1, 2, 3]` of the spec's differential.
pub fn dynaio_entries(rng: &mut Rng, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| match i {
            0 => vec![0, 1, 2, 3],
            _ => {
                let len = rng.range(1, 200) as usize;
                rng.bytes(len)
            }
        })
        .collect()
}

/// Fisher-Yates with the builder's generator.
pub fn shuffle<T>(rng: &mut Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = rng.range(0, i as u64) as usize;
        items.swap(i, j);
    }
}

/// A controlled serializer differential built with the builder: A (captured twice) and B differ
/// only in the source bytes of one DYNAIO entry, unless the trio is a negative control.
pub struct Trio {
    /// A's image (`A1.nb` and `A2.nb`).
    pub a: Vec<u8>,
    /// B's image.
    pub b: Vec<u8>,
    /// The DYNAIO entry's bytes in A.
    pub a_source: Vec<u8>,
    /// The same entry's bytes in B.
    pub b_source: Vec<u8>,
    /// How the trio was built, in words (for `differential.json`).
    pub provenance: String,
}

/// Committed capture sets under `differentials/NAME/`.
pub const TRIOS: [&str; 4] = [
    "dynaio-constant",
    "dynaio-later-entry",
    "dynaio-multi-byte",
    "negative-outside-dynaio",
];

/// Seed of the `ctc-like` base graph every trio starts from.
pub const TRIO_SEED: u64 = 12;

/// Build a named trio.
pub fn trio(name: &str) -> Result<Trio, BuildError> {
    let unknown = || BuildError::Unknown(name.into());
    let base = profile("ctc-like", TRIO_SEED)?;
    // (entry, [(source index, new value)], also change an NN byte)
    let (entry, changes, outside): (usize, &[(usize, u8)], bool) = match name {
        "dynaio-constant" => (0, &[(3, 4)], false),
        "dynaio-later-entry" => (17, &[(5, 0x5a)], false),
        "dynaio-multi-byte" => (3, &[(0, 0xee), (2, 0x00), (7, 0x80)], false),
        "negative-outside-dynaio" => (0, &[(3, 4)], true),
        _ => return Err(unknown()),
    };
    // The entries and bytes below exist in the ctc-like base (50 entries); a miss is reported
    // as the trio being unknown to this base rather than a panic.
    let (start, len) = entry_range(&base, entry).ok_or_else(unknown)?;
    let region = |l: &Layout| -> Option<Vec<u8>> {
        let r = l.sections.iter().find(|s| s.kind == section::DYNAIO)?;
        r.payload.get(start..start + len).map(<[u8]>::to_vec)
    };
    let a_source = region(&base).ok_or_else(unknown)?;
    let mut changed = base.clone();
    {
        let r = changed
            .sections
            .iter_mut()
            .find(|s| s.kind == section::DYNAIO)
            .ok_or_else(unknown)?;
        for &(i, v) in changes {
            *r.payload.get_mut(start + i).ok_or_else(unknown)? = v;
        }
    }
    if outside {
        let nn = changed
            .sections
            .iter_mut()
            .find(|s| s.kind == section::NN)
            .ok_or_else(unknown)?;
        *nn.payload.first_mut().ok_or_else(unknown)? ^= 0x01;
    }
    let b_source = region(&changed).ok_or_else(unknown)?;
    let what = changes
        .iter()
        .map(|(i, v)| format!("[{i}]=0x{v:02x}"))
        .collect::<Vec<_>>()
        .join(", ");
    let provenance = format!(
        "nbg-lab synth: ctc-like seed {TRIO_SEED}; B sets DYNAIO entry {entry} source {what}{}",
        if outside {
            "; B also flips bit 0 of NBG_SECTION_NN byte 0 (negative control)"
        } else {
            ""
        }
    );
    Ok(Trio {
        a: base.emit()?,
        b: changed.emit()?,
        a_source,
        b_source,
        provenance,
    })
}

/// Region-relative (offset, size) of a DYNAIO entry, from the layout's table section; `None`
/// when the layout has no such entry.
pub(super) fn entry_range(l: &Layout, entry: usize) -> Option<(usize, usize)> {
    let t = l
        .sections
        .iter()
        .find(|s| s.kind == section::DYNAIO_TABLE)?;
    let r = t.payload.get(entry * 8..entry * 8 + 8)?;
    let word = |i: usize| -> Option<usize> {
        let bytes: [u8; 4] = r.get(i..i + 4)?.try_into().ok()?;
        Some(u32::from_le_bytes(bytes) as usize)
    };
    Some((word(0)?, word(4)?))
}

/// A large graph for benchmarks: the `ctc-like` shape with a coefficient section of about
/// `bytes` bytes (payload from SplitMix64 seeded by `seed`), at most `MAX_BULK_BYTES`.
pub fn bulk(seed: u64, bytes: u64) -> Result<Layout, BuildError> {
    let (mut l, g) = bulk_streamed(seed, bytes)?;
    l.sections[g.section].payload = g.bytes();
    Ok(l)
}

/// Bytes of the largest bulk graph: its coefficient table records sizes in 32 bits.
pub const MAX_BULK_BYTES: u64 = u32::MAX as u64 + BULK_OTHER_BYTES;
pub(super) const BULK_OTHER_BYTES: u64 = 20_000;

/// `bulk` with the coefficient payload left to generate while writing (`Layout::write`).
pub fn bulk_streamed(seed: u64, bytes: u64) -> Result<(Layout, Generated), BuildError> {
    // Invariant: every `GraphSpec::layout` adds COEF_DATA and COEF_DATA_TABLE unconditionally.
    let mut l = profile("ctc-like", seed)?;
    let section = l
        .sections
        .iter()
        .position(|s| s.kind == section::COEF_DATA)
        .expect("coefficients");
    l.sections[section].payload.clear();
    let generated = Generated {
        section,
        len: bytes.saturating_sub(BULK_OTHER_BYTES),
        seed: seed ^ 0xb01c,
    };
    let len = generated.len as u32;
    let table = l
        .sections
        .iter_mut()
        // Invariant: see above; COEF_DATA_TABLE is always added.
        .find(|s| s.kind == section::COEF_DATA_TABLE)
        .expect("table");
    table.payload = table_of(&fm::v1_entry::RECORD, &[(0, len)])?;
    Ok((l, generated))
}
