//! Properties: random valid images parse to exactly what the builder put in, and no byte
//! mutation or truncation of a control makes the parser panic.

use crate::common;

use nbg_lab::lab::synth::{GraphSpec, Rng, TensorSpec, shuffle};
use nbg_lab::nbg::parse::Graph;
use nbg_lab::parse;
use proptest::prelude::*;

fn tensor() -> impl Strategy<Value = TensorSpec> {
    (
        "[a-z][a-z0-9_/]{0,40}",
        prop::collection::vec(1u32..64, 1..=6),
        prop::sample::select(vec![
            0u32, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 99,
        ]),
        0u32..4,
        0u32..4,
        any::<[u32; 2]>(),
    )
        .prop_map(
            |(name, dims, format, data_type, quant_format, quant_words)| TensorSpec {
                name,
                dims,
                format,
                data_type,
                quant_format,
                quant_words,
            },
        )
}

prop_compose! {
    fn graph()(
        inputs in prop::collection::vec(tensor(), 0..5),
        outputs in prop::collection::vec(tensor(), 0..5),
        counts in prop::collection::vec(0u32..6, 2),
        sizes in prop::collection::vec(0usize..700, 3),
        dynaio in prop::option::of(prop::collection::vec(1usize..150, 1..12)),
        pool in any::<u64>(),
        sram in any::<u32>(),
        name in "[A-Za-z0-9_]{0,63}",
    ) -> GraphSpec {
        GraphSpec {
            target: 0x1000_000e,
            network_name: name,
            inputs,
            outputs,
            layers: counts[0],
            operations: counts[1],
            ppu_bytes: sizes[0],
            loadstate_bytes: sizes[1],
            coef_bytes: sizes[2],
            memory_pool_bytes: pool,
            vip_sram_bytes: sram,
            dynaio: dynaio.map(|lens| lens.into_iter().map(|n| vec![0xa5; n]).collect()),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn parse_reports_what_the_builder_put_in(
        spec in graph(),
        seed in any::<u64>(),
        shuffled in any::<bool>(),
        alignments in prop::collection::vec(prop::sample::select(vec![0u32, 1, 4, 16, 64, 256]), 20),
        gaps in prop::collection::vec(0u64..40, 20),
        tail in 0usize..900,
    ) {
        let mut rng = Rng::new(seed);
        let mut layout = spec.layout(&mut rng).unwrap();
        for (s, a) in layout.sections.iter_mut().zip(&alignments) {
            s.alignment = *a;
        }
        if shuffled {
            shuffle(&mut rng, &mut layout.file_order);
        }
        layout.extra_gap = gaps[..layout.sections.len()].to_vec();
        layout.tail = rng.bytes(tail);
        let bytes = layout.emit().unwrap();
        let g = match parse(&bytes) {
            Ok(Graph::V2(g)) => g,
            Ok(Graph::V1(_)) => return Err(TestCaseError::fail("built v2, parsed v1")),
            Err(f) => return Err(TestCaseError::fail(format!("valid image refused: {f}"))),
        };
        prop_assert_eq!(g.file.size, bytes.len() as u64);
        prop_assert_eq!(g.sections.len(), layout.sections.len());
        for (s, want) in g.sections.iter().zip(&layout.sections) {
            prop_assert_eq!(s.kind, want.kind);
            prop_assert_eq!(s.size, want.payload.len() as u64);
            prop_assert_eq!(s.alignment, want.alignment);
            prop_assert!(s.aligned);
            prop_assert_eq!(s.entry_size, want.entry_size);
            if s.kind == 40 {
                // The builder fills the checksum values after the header CRC.
                let normalized = nbg_lab::nbg::crc_rules::v2_normalized_checksum_payload(g.payload(s));
                prop_assert_eq!(normalized, want.payload.clone());
            } else {
                prop_assert_eq!(g.payload(s), &want.payload[..]);
            }
        }
        for (got, want) in g.inputs.iter().chain(&g.outputs).zip(spec.inputs.iter().chain(&spec.outputs)) {
            prop_assert_eq!(got.name.as_deref(), Some(want.name.as_str()));
            prop_assert_eq!(&got.dimensions, &want.dims);
            prop_assert_eq!(got.data_format, want.format);
            prop_assert_eq!(got.data_type, want.data_type);
            prop_assert_eq!(got.quantization.format, want.quant_format);
            prop_assert_eq!(&got.quantization.raw_words[..], &want.quant_words[..]);
            let elements: u64 = want.dims.iter().map(|&d| u64::from(d)).product();
            let bits = nbg_lab::nbg::format::buffer_format::lookup(want.format).map(|(_, b)| u64::from(b));
            prop_assert_eq!(got.storage_bytes, bits.map(|b| (elements * b).div_ceil(8)));
        }
        prop_assert_eq!(g.inputs.len(), spec.inputs.len());
        prop_assert_eq!(g.outputs.len(), spec.outputs.len());
        let info = g.network_info.as_ref().unwrap();
        prop_assert_eq!(info.name(), spec.network_name.as_str());
        prop_assert_eq!(info.operation_count(), spec.plan().operations.len() as u32 + 3);
        prop_assert_eq!(g.memory_pool_bytes, Some(spec.memory_pool_bytes));
        prop_assert_eq!(g.vip_sram_bytes, Some(spec.vip_sram_bytes));
        prop_assert_eq!(g.section_checksums.len(), 5);
        match (&spec.dynaio, &g.dynamic_io) {
            (None, None) => {}
            (Some(entries), Some(d)) => {
                let sizes: Vec<u64> = d.entries.iter().map(|e| e.size).collect();
                let want: Vec<u64> = entries.iter().map(|e| e.len() as u64).collect();
                prop_assert_eq!(sizes, want);
            }
            _ => prop_assert!(false, "DYNAIO presence differs"),
        }
        let covered: u64 = layout.sections.iter().map(|s| s.payload.len() as u64).sum();
        prop_assert_eq!(g.file_checksum.covered_section_bytes, covered);
        let structure = 48 + 12 + 44 * layout.sections.len() as u64;
        prop_assert_eq!(g.file_checksum.excluded_alignment_gap_bytes, bytes.len() as u64 - covered - structure);
        prop_assert_eq!(g.connection_region.size, 512.min(bytes.len() as u64));
    }
}

/// Every byte of a small control flipped with three patterns: parse returns, never panics.
#[test]
fn byte_flips_never_panic() {
    let original = common::control("erf-u8.nb");
    let mut b = original.clone();
    let mut refused = 0usize;
    for i in 0..b.len() {
        for pattern in [0x01u8, 0x80, 0xff] {
            b[i] ^= pattern;
            refused += usize::from(parse(&b).is_err());
            b[i] = original[i];
        }
    }
    // Most flips must be caught (payloads are CRC-covered); the exact map is `nbg sweep`'s job.
    assert!(
        refused > b.len() * 3 / 2,
        "only {refused} of {} flips refused",
        b.len() * 3
    );
}

#[test]
fn every_truncation_is_refused_without_panic() {
    let b = common::control("ctc-like.nb");
    for len in 0..b.len() {
        assert!(
            parse(&b[..len]).is_err(),
            "truncation to {len} bytes parsed"
        );
    }
}
