//! Synthetic capture sets for the mapping registry, written by the project's own builders
//! (`synth` for v2, `synth_v1` for v1): A and B are each built from a source description, never
//! by patching A, so a capture set is what a deterministic serializer would emit for the two
//! source values. Each mapping kind has proving sets with different source values and one set
//! that refutes it.

use super::{Quantity, Value};
use crate::lab::capture::CaptureSpec;
use crate::lab::synth::{self, BuildError, GraphSpec, Rng, TensorSpec};
use crate::lab::synth_v1::{V1Crc, V1Spec};
use crate::nbg::format::section;
use std::collections::BTreeMap;

/// A capture set before it is written: A (captured twice), B and `differential.json`.
pub struct Built {
    /// The A capture (A1 and A2 are the same bytes).
    pub a: Vec<u8>,
    /// The B capture.
    pub b: Vec<u8>,
    /// The spec written as `differential.json`.
    pub spec: CaptureSpec,
}

/// The capture sets this module builds (beside `synth::TRIOS`).
pub const NAMES: [&str; 9] = [
    "v2-output-scale-64",
    "v2-output-scale-256",
    "v2-output-scale-with-zero-point",
    "v1-input-scale-quarter",
    "v1-input-scale-eighth",
    "v1-input-scale-with-output",
    "coef-word-a",
    "coef-word-b",
    "coef-word-and-tp",
];

/// Every capture set `nbg synth-differential` writes.
pub fn all_names() -> Vec<&'static str> {
    synth::TRIOS.iter().chain(NAMES.iter()).copied().collect()
}

/// Build a named capture set (the DYNAIO trios included).
pub fn build(name: &str) -> Result<Built, BuildError> {
    if synth::TRIOS.contains(&name) {
        let t = synth::trio(name)?;
        return Ok(Built {
            a: t.a,
            b: t.b,
            spec: CaptureSpec {
                a_source: t.a_source,
                b_source: t.b_source,
                provenance: Some(t.provenance),
                ..Default::default()
            },
        });
    }
    match name {
        "v2-output-scale-64" => v2_scale(name, 1.0 / 64.0, 128),
        "v2-output-scale-256" => v2_scale(name, 1.0 / 256.0, 128),
        "v2-output-scale-with-zero-point" => v2_scale(name, 1.0 / 256.0, 127),
        "v1-input-scale-quarter" => v1_scale(0.25, 0.5),
        "v1-input-scale-eighth" => v1_scale(0.125, 0.5),
        "v1-input-scale-with-output" => v1_scale(0.25, 0.25),
        "coef-word-a" => coef(0x0000_0000, false),
        "coef-word-b" => coef(0x3f80_0000, false),
        "coef-word-and-tp" => coef(0x3f80_0000, true),
        _ => Err(BuildError::Unknown(name.into())),
    }
}

fn quantities(key: &str, a: Value, b: Value) -> BTreeMap<String, Quantity> {
    BTreeMap::from([(key.to_string(), Quantity { a, b })])
}

/// Seed of the v2 quantization graph.
const QUANT_SEED: u64 = 15;
/// A's output scale and zero point in the v2 quantization sets.
const QUANT_A: (f32, u32) = (1.0 / 128.0, 128);

/// A small affine-quantized U8 graph (`erf-u8`'s shape) with the output's scale and zero point.
fn quant_graph(scale: f32, zero_point: u32) -> Result<Vec<u8>, BuildError> {
    let mut output = TensorSpec::new("output_0", &[481], 2);
    output.quant_format = 2;
    output.quant_words = [scale.to_bits(), zero_point];
    let g = GraphSpec {
        target: 0x1000_000e,
        network_name: "quant_io".into(),
        inputs: vec![TensorSpec::new("input_0", &[481], 2)],
        outputs: vec![output],
        layers: 4,
        operations: 5,
        ppu_bytes: 256,
        loadstate_bytes: 320,
        coef_bytes: 1024,
        memory_pool_bytes: 161_280,
        vip_sram_bytes: 262_144,
        dynaio: None,
    };
    g.layout(&mut Rng::new(QUANT_SEED))?.emit()
}

fn v2_scale(name: &str, scale: f32, zero_point: u32) -> Result<Built, BuildError> {
    let source = |s: f32| s.to_le_bytes().to_vec();
    let also = if zero_point != QUANT_A.1 {
        format!(" and zero point {} -> {zero_point}", QUANT_A.1)
    } else {
        String::new()
    };
    Ok(Built {
        a: quant_graph(QUANT_A.0, QUANT_A.1)?,
        b: quant_graph(scale, zero_point)?,
        spec: CaptureSpec {
            context: BTreeMap::new(),
            aliases: BTreeMap::new(),
            tensors: BTreeMap::new(),
            a_source: source(QUANT_A.0),
            b_source: source(scale),
            provenance: Some(format!(
                "nbg-lab synth ({name}): quant_io seed {QUANT_SEED}; B sets output 0 scale {} -> {scale}{also}; a_source/b_source are the scale's f32 bytes",
                QUANT_A.0
            )),
            quantities: quantities(
                "output0_scale",
                Value::Float(f64::from(QUANT_A.0)),
                Value::Float(f64::from(scale)),
            ),
        },
    })
}

/// The v1 graph of the whole-file CRC profile (0x0001001e, a version the vendor's reader and
/// loader read), A with input and output scale 0.5.
fn v1_scale(input: f32, output: f32) -> Result<Built, BuildError> {
    let graph = |scales: [f32; 2]| {
        V1Spec {
            scales,
            ..V1Spec::new(0x0001_001e, 0, V1Crc::WholeFileFieldZeroed)
        }
        .build()
    };
    let also = if output != 0.5 {
        format!("; B also sets output 0 scale 0.5 -> {output}")
    } else {
        String::new()
    };
    Ok(Built {
        a: graph([0.5, 0.5])?,
        b: graph([input, output])?,
        spec: CaptureSpec {
            context: BTreeMap::new(),
            aliases: BTreeMap::new(),
            tensors: BTreeMap::new(),
            a_source: 0.5f32.to_le_bytes().to_vec(),
            b_source: input.to_le_bytes().to_vec(),
            provenance: Some(format!(
                "nbg-lab synth_v1: v1-001e-whole-file-crc; B sets input 0 scale 0.5 -> {input}{also}; a_source/b_source are the scale's f32 bytes"
            )),
            quantities: quantities(
                "input0_scale",
                Value::Float(0.5),
                Value::Float(f64::from(input)),
            ),
        },
    })
}

/// Offset of the coefficient word the `coef-word` sets change, in the COEF_DATA payload.
const COEF_AT: usize = 16;

/// `ctc-like` seed 12 (the DYNAIO trios' graph) with one coefficient word set to `word`;
/// `tp` also changes a TP command byte in B (the refuting set).
fn coef(word: u32, tp: bool) -> Result<Built, BuildError> {
    // Invariant: `ctc-like` has COEF_DATA and TP sections.
    let base = synth::profile("ctc-like", synth::TRIO_SEED)?;
    let payload = |l: &mut synth::Layout, kind: u32| -> usize {
        l.sections
            .iter()
            .position(|s| s.kind == kind)
            // Invariant: called for COEF_DATA and TP only, which `ctc-like` has (see above).
            .expect("ctc-like has the section")
    };
    let mut a = base.clone();
    let i = payload(&mut a, section::COEF_DATA);
    let a_word = u32::from_le_bytes(
        // Invariant: the range is 4 bytes long, so the conversion cannot fail.
        a.sections[i].payload[COEF_AT..COEF_AT + 4]
            .try_into()
            .expect("4 bytes"),
    );
    let mut b = base;
    b.sections[i].payload[COEF_AT..COEF_AT + 4].copy_from_slice(&word.to_le_bytes());
    if tp {
        let t = payload(&mut b, section::TP);
        b.sections[t].payload[0] ^= 0x01;
    }
    Ok(Built {
        a: a.emit()?,
        b: b.emit()?,
        spec: CaptureSpec {
            context: BTreeMap::new(),
            aliases: BTreeMap::new(),
            tensors: BTreeMap::new(),
            a_source: a_word.to_le_bytes().to_vec(),
            b_source: word.to_le_bytes().to_vec(),
            provenance: Some(format!(
                "nbg-lab synth: ctc-like seed {}; B sets NBG_SECTION_COEF_DATA word +0x{COEF_AT:x} 0x{a_word:08x} -> 0x{word:08x}{}",
                synth::TRIO_SEED,
                if tp {
                    "; B also flips bit 0 of NBG_SECTION_TP byte 0"
                } else {
                    ""
                }
            )),
            quantities: quantities(
                "coef_word",
                Value::Unsigned(u64::from(a_word)),
                Value::Unsigned(u64::from(word)),
            ),
        },
    })
}
