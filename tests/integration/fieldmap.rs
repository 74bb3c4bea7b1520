//! The field map as data and the round trip that can fail: every decoded record of every
//! control and public file re-encodes exactly from its decoded values; random records survive
//! decode -> encode -> decode; a changed decoded value is caught and its field named.

use crate::common;
use nbg_lab::NbgFamily;

use nbg_lab::nbg::fieldmap::{self as fm, View, Writer};
use nbg_lab::nbg::image::NbgImage;
use nbg_lab::nbg::parse::{Graph, parse};
use nbg_lab::nbg::reencode::{rebuild, reencode};
use proptest::prelude::*;
use std::path::PathBuf;

/// The committed synthetic controls and the public v1 files.
fn files() -> Vec<PathBuf> {
    let root = common::root();
    let mut out: Vec<PathBuf> = common::control_names()
        .iter()
        .map(|n| root.join("controls").join(n))
        .collect();
    let mut public: Vec<PathBuf> = std::fs::read_dir(root.join("controls/public/v1"))
        .expect("public v1 folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "nb"))
        .collect();
    public.sort();
    assert!(public.len() >= 15, "the public v1 files are committed");
    out.extend(public);
    out
}

#[test]
fn every_control_and_public_file_reencodes_exactly() {
    let mut total = 0;
    for path in files() {
        let bytes = std::fs::read(&path).expect("read");
        let graph = parse(&bytes).expect("valid");
        let image = NbgImage::new(&graph).expect("ledger");
        let r = reencode(&graph, &image);
        assert!(r.records_total > 0, "{}", path.display());
        assert_eq!(r.first_mismatch, None, "{}", path.display());
        assert!(
            r.not_reencodable.is_empty(),
            "{}: {:?}",
            path.display(),
            r.not_reencodable
        );
        assert_eq!(r.records_reencoded, r.records_total, "{}", path.display());
        // Rebuilt from the decoded values (opaque payloads from the source): the same bytes.
        assert_eq!(rebuild(&graph, &image).as_deref(), Some(&bytes[..]));
        total += r.records_total;
    }
    assert!(total > 200, "{total} decoded-record owners");
}

/// A decoded value changed after the parse makes the re-encoding differ, and the first field
/// that does not round-trip is named.
#[test]
fn a_changed_decoded_value_is_caught_and_named() {
    let bytes = common::control("erf-u8.nb");
    let check = |change: &dyn Fn(&mut Graph<'_>), field: &str| {
        let mut graph = parse(&bytes).expect("valid");
        let image = NbgImage::new(&graph).expect("ledger");
        change(&mut graph);
        let r = reencode(&graph, &image);
        assert_eq!(r.records_reencoded + 1, r.records_total, "{field}");
        let m = r.first_mismatch.expect("caught");
        assert_eq!(m.field, field);
        assert_ne!(rebuild(&graph, &image).as_deref(), Some(&bytes[..]));
    };
    let v2 = |f: fn(&mut nbg_lab::nbg::parse::NbgV2<'_>)| {
        move |g: &mut Graph<'_>| {
            if let Graph::V2(g) = g {
                f(g)
            }
        }
    };
    check(
        &v2(|g| g.inputs[0].dimensions[0] += 1),
        "NBG_SECTION_INPUT[0].dimensions",
    );
    check(
        &v2(|g| assert!(g.header.fields.set_uint(&fm::v2_header::reserved3, 7))),
        "header.reserved3",
    );
    check(
        &v2(|g| assert!(g.header.fields.set_part(&fm::v2_header::class_word, 1, 1))),
        "header.class_word",
    );
    check(
        &v2(|g| {
            assert!(
                g.sub_header
                    .fields
                    .set_uint(&fm::v2_sub_header::section_header_size, 45)
            )
        }),
        "sub_header.section_header_size",
    );
    check(
        &v2(|g| {
            assert!(g.network_info.as_mut().expect("info").fields.set_part(
                &fm::v2_network_info::attribute,
                4,
                1
            ))
        }),
        "NBG_SECTION_NETWORK_INFO.attribute",
    );
    check(
        &v2(|g| {
            assert!(
                g.records.operations.as_mut().expect("ops")[1]
                    .fields
                    .set_part(&fm::operation::preempt_word, 0, 3)
            )
        }),
        "NBG_SECTION_OPERATIONS[1].preempt_word",
    );
    check(
        &v2(|g| {
            assert!(
                g.records.patches.as_mut().expect("patches").records[2]
                    .fields
                    .set_uint(&fm::patch::transformed, 1)
            )
        }),
        "NBG_SECTION_PATCH[2].transformed",
    );
    check(
        &v2(|g| g.sections[3].alignment = 8),
        "directory[3](NBG_SECTION_OPERATIONS).alignment",
    );
    // A value that does not fit its field is named too, never truncated.
    check(
        &v2(|g| {
            assert!(
                g.records.layers.as_mut().expect("layers")[0]
                    .fields
                    .set_name(&fm::layer::name, &"x".repeat(64))
            )
        }),
        "NBG_SECTION_LAYER[0].name",
    );
    check(
        &v2(|g| {
            assert!(
                g.records.operations.as_mut().expect("ops")[0]
                    .fields
                    .set_part(&fm::operation::preempt_word, 0, 16)
            )
        }),
        "NBG_SECTION_OPERATIONS[0].preempt_word",
    );
    check(
        &v2(|g| g.inputs[0].quantization.raw_words.push(0)),
        "NBG_SECTION_INPUT[0].quantization.format",
    );

    // v1: the fixed part, bitfields and reserved bytes included.
    let public = common::root().join("controls/public/v1/timvx-conv2d_relu_maxpool2d_fp32-001e.nb");
    let bytes = std::fs::read(public).expect("public file");
    for (change, field) in [
        (
            (|g: &mut nbg_lab::nbg::parse::NbgV1<'_>| {
                *g.feature_database
                    .bits
                    .get_mut("nn_transpose_phase2")
                    .expect("bit") ^= 1
            }) as fn(&mut nbg_lab::nbg::parse::NbgV1<'_>),
            "header.feature_database.bits",
        ),
        (
            |g| g.feature_database.customer_reserved.raw[5] = 9,
            "header.feature_database.customer_reserved",
        ),
        (
            |g| g.feature_database.core_reserved = 1,
            "header.feature_database.core_fields",
        ),
        (
            |g| g.inputs[0].unused_dimension_slots.push(1),
            "input[0].dimensions",
        ),
        (|g| g.tables[2].size += 4, "entries[2].size"),
    ] {
        let mut graph = parse(&bytes).expect("valid");
        let image = NbgImage::new(&graph).expect("ledger");
        if let Graph::V1(g) = &mut graph {
            change(g);
        }
        let r = reencode(&graph, &image);
        assert_eq!(r.first_mismatch.expect("caught").field, field);
    }
}

/// Every field of every record: random values written through `Writer` read back through
/// `View` and write the same bytes again.
#[test]
fn every_record_writes_and_reads_back() {
    let mut seed = 0x5eed_u64;
    let mut next = || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        seed
    };
    for record in fm::ALL {
        for _ in 0..64 {
            let mut w = Writer::new(record.size);
            let mut values = Vec::new();
            for f in record.fields {
                let v = match f.width {
                    1 | 2 | 4 | 8 => next() & (u64::MAX >> (64 - 8 * f.width)),
                    _ => 0,
                };
                match f.ty {
                    fm::Type::Str | fm::Type::Bytes | fm::Type::U32s => {
                        let bytes: Vec<u8> = (0..f.width).map(|_| next() as u8 | 1).collect();
                        let bytes = if f.ty == fm::Type::Str {
                            bytes[..f.width - 1].to_vec()
                        } else {
                            bytes
                        };
                        w.put_bytes(f, &bytes);
                        values.push(bytes);
                    }
                    _ => {
                        w.put_uint(f, v);
                        values.push(v.to_le_bytes()[..f.width].to_vec());
                    }
                }
            }
            let bytes = w.finish().expect("every value fits");
            let view = View::new(&record, &bytes).expect("full size");
            let mut again = Writer::new(record.size);
            for (f, want) in record.fields.iter().zip(&values) {
                assert_eq!(
                    &view.bytes(f)[..want.len()],
                    &want[..],
                    "{}.{}",
                    record.id,
                    f.name
                );
                if !f.parts.is_empty() {
                    let parts: Vec<u64> = f.parts.iter().map(|p| p.get(view.uint(f))).collect();
                    again.put_parts(f, &parts);
                } else {
                    again.put_bytes(f, view.bytes(f));
                }
            }
            assert_eq!(again.finish().expect("fits"), bytes, "{}", record.id);
        }
    }
}

#[test]
fn writer_refuses_what_does_not_fit() {
    let mut w = Writer::new(fm::layer::SIZE);
    w.put_u32(&fm::layer::id, 1)
        .put_str(&fm::layer::name, &"n".repeat(64));
    assert_eq!(w.finish(), Err(fm::Overflow { field: "name" }));
    let mut w = Writer::new(fm::operation::RECORD.size_at(0x0001_0011));
    w.put_opt_u32(&fm::operation::abs_op_id, Some(1));
    assert_eq!(
        w.finish(),
        Err(fm::Overflow { field: "abs_op_id" }),
        "a field the 28-byte record does not hold"
    );
    let mut w = Writer::new(fm::v2_header::SIZE);
    w.put_parts(&fm::v2_header::class_word, &[2, 0]);
    assert_eq!(
        w.finish(),
        Err(fm::Overflow {
            field: "class_word"
        }),
        "2 does not fit the 1-bit class"
    );
    assert_eq!(
        View::new(&fm::operation::RECORD, &[0; 30]).map(|_| ()),
        None
    );
    assert!(View::new(&fm::operation::RECORD, &[0; 28]).is_some());
}

/// Public v1 files without a CRC (version 0x0001000e): any patch record bytes parse.
fn crc_free_public() -> Vec<u8> {
    let path = common::root().join("controls/public/v1/ameba-yamnet_s_hybrid-000e.nb");
    std::fs::read(path).expect("public file")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// decode -> encode -> decode over random records: random bytes in a patch record and in the
    /// feature database's customer-reserved area of a public file (in memory only) decode,
    /// re-encode exactly, and the rebuilt file decodes to the same document.
    #[test]
    fn random_records_decode_encode_decode(
        record in 0usize..64,
        patch in proptest::collection::vec(any::<u8>(), 28),
        reserved in proptest::collection::vec(any::<u8>(), 192),
    ) {
        let mut bytes = crc_free_public();
        let (at, size) = {
            let g = parse(&bytes).expect("valid");
            let Graph::V1(g) = g else { panic!("v1") };
            let t = g.table("patch").expect("patch table");
            let size = t.record_size.expect("size") as usize;
            let n = t.record_count.expect("count") as usize;
            (t.offset as usize + (record % n) * size, size)
        };
        prop_assume!(size == patch.len());
        bytes[at..at + size].copy_from_slice(&patch);
        let cr = fm::v1_fixed::customer_reserved;
        bytes[cr.offset..cr.end()].copy_from_slice(&reserved);
        let graph = parse(&bytes).expect("any patch bytes parse");
        let image = NbgImage::new(&graph).expect("ledger");
        let r = reencode(&graph, &image);
        prop_assert_eq!(r.first_mismatch, None);
        prop_assert_eq!(r.records_reencoded, r.records_total);
        let rebuilt = rebuild(&graph, &image).expect("rebuilt");
        prop_assert_eq!(&rebuilt, &bytes);
        let again = parse(&rebuilt).expect("decodes again");
        prop_assert_eq!(again.to_json(), graph.to_json());
    }

    /// Random v2 I/O records through the builder: decode, re-encode exactly, decode again.
    #[test]
    fn random_io_records_round_trip(
        dims in proptest::collection::vec(1u32..64, 1..=6),
        format in 0u32..17,
        quant_format in 0u32..3,
        words in any::<[u32; 2]>(),
        name in "[a-z_/0-9]{0,63}",
    ) {
        prop_assume!(format != 15);
        let mut spec = nbg_lab::lab::synth::GraphSpec {
            target: 0x1000_000e,
            network_name: "random".into(),
            inputs: vec![nbg_lab::lab::synth::TensorSpec::new(&name, &dims, format)],
            outputs: vec![nbg_lab::lab::synth::TensorSpec::new("out", &[4], 0)],
            layers: 2,
            operations: 3,
            ppu_bytes: 64,
            loadstate_bytes: 64,
            coef_bytes: 64,
            memory_pool_bytes: 1024,
            vip_sram_bytes: 4096,
            dynaio: None,
        };
        spec.inputs[0].quant_format = quant_format;
        spec.inputs[0].quant_words = words;
        let bytes = spec.layout(&mut nbg_lab::lab::synth::Rng::new(1)).unwrap().emit().unwrap();
        let graph = parse(&bytes).expect("valid");
        let image = NbgImage::new(&graph).expect("ledger");
        let r = reencode(&graph, &image);
        prop_assert_eq!(r.records_reencoded, r.records_total);
        let rebuilt = rebuild(&graph, &image).expect("rebuilt");
        prop_assert_eq!(&rebuilt, &bytes);
        prop_assert_eq!(parse(&rebuilt).expect("again").to_json(), graph.to_json());
    }
}

#[test]
fn cli_fieldmap_exports_and_roundtrip_json() {
    use nbg_lab::report::fieldmap::Export;
    for (path, family, format) in nbg_lab::evidence::FIELDMAP_EXPORTS {
        let format = match format {
            Export::Json => "json",
            Export::Ksy => "ksy",
            Export::Markdown => "md",
        };
        let mut args = vec!["fieldmap", "--format", format];
        if let Some(f) = family {
            args.extend(["--family", f.as_str()]);
        }
        let o = common::nbg(&common::root(), &args);
        assert_eq!(o.status.code(), Some(0));
        let committed = std::fs::read(common::root().join(path)).expect("committed export");
        assert_eq!(o.stdout, committed, "{path}");
    }
    for bad in [
        &["fieldmap", "--format", "ksy"][..],
        &["fieldmap", "--family", "v3"],
        &["fieldmap", "--format", "yaml"],
    ] {
        assert_eq!(
            common::nbg(&common::root(), bad).status.code(),
            Some(2),
            "{bad:?}"
        );
    }
    let o = common::nbg(
        &common::root(),
        &["roundtrip", "--json", "controls/ctc-like.nb"],
    );
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let f = &v["files"][0];
    assert_eq!(f["records_reencoded"], 20);
    assert_eq!(f["records_total"], 20);
    assert_eq!(f["first_mismatch"], serde_json::Value::Null);
    assert_eq!(f["ledger_exact"], true);
}
