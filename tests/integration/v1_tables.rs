//! The v1 SW operation, hardware-init and PPU parameter tables: decoded on every public file, re-encoded field by field, and refused with their code and offset when a
//! reference leaves its table (mutations built in memory, never written).

use crate::common;

use common::{le32, put32};
use nbg_lab::Code;
use nbg_lab::NbgFamily;
use nbg_lab::lab::synth_v1::{V1Crc, V1Spec};
use nbg_lab::nbg::family::OwnerClass;
use nbg_lab::nbg::fieldmap::{self as fm, Writer};
use nbg_lab::nbg::image::NbgImage;
use nbg_lab::nbg::parse::{Graph, NbgV1, parse};
use nbg_lab::nbg::reencode::{rebuild, reencode};

fn v1<'a>(g: &'a Graph<'a>) -> &'a NbgV1<'a> {
    match g {
        Graph::V1(g) => g,
        Graph::V2(_) => panic!("a v1 file"),
    }
}

/// The decoded-record owners of table `name`, and whether every one re-encodes exactly.
fn owners_of(bytes: &[u8], name: &str) -> (usize, bool) {
    let graph = parse(bytes).expect("valid");
    let image = NbgImage::new(&graph).expect("ledger");
    let g = v1(&graph);
    let k = g.table(name).expect("the version has the table").index;
    let n = image
        .owners()
        .iter()
        .filter(|o| o.origin == nbg_lab::nbg::family::Origin::Table(k))
        .inspect(|o| assert_eq!(o.class, OwnerClass::DecodedRecord, "{name}"))
        .count();
    let r = reencode(&graph, &image);
    let exact = r.exact() && r.not_reencodable.is_empty();
    assert_eq!(rebuild(&graph, &image).as_deref(), Some(bytes));
    (n, exact)
}

fn deeplab() -> Vec<u8> {
    common::public_control("st-deeplabv3_257_int8_per_tensor-001e.nb")
}

#[test]
fn public_hw_init_records_decode_and_reencode() {
    let bytes = deeplab();
    let graph = parse(&bytes).unwrap();
    let g = v1(&graph);
    let hw: Vec<[u32; 3]> = g
        .records
        .hw_init_operations
        .as_ref()
        .expect("decoded in a proved version")
        .iter()
        .map(|h| [h.state_id(), h.patch_index(), h.patch_count()])
        .collect();
    // Three init operations whose patches run [0, 4), [4, 36), [36, 39): the INIT operation's
    // patches start at 39; each state id is an entry of the 14-entry ICD table.
    assert_eq!(hw, [[4, 0, 4], [9, 4, 32], [13, 36, 3]]);
    assert_eq!(g.records.operations.as_ref().unwrap()[0].patch_index(), 39);
    assert_eq!(g.table("icd_table").unwrap().size / 8, 14);
    assert_eq!(g.records.sw_operations.as_deref(), Some(&[][..]));
    assert_eq!(g.records.ppu_params.as_deref(), Some(&[][..]));
    assert!(g.table("hw_init").unwrap().decoded);
    assert_eq!(owners_of(&bytes, "hw_init"), (1, true));
    let doc = graph.to_json();
    assert_eq!(doc["hw_init_operations"][2]["state_id"], 13);
    assert_eq!(doc["sw_operations"], serde_json::json!([]));

    // Every public file: the three tables decode wherever the version has
    // them, and every hardware-init record re-encodes exactly.
    let Some(files) = common::corpus_files() else {
        return;
    };
    let mut hw_init_records = 0;
    for (name, bytes, _) in files {
        let graph = parse(&bytes).unwrap_or_else(|f| panic!("{name}: {f}"));
        let g = v1(&graph);
        // Every public file's version has a known layout: its tables are decoded.
        assert!(g.records.layers.is_some(), "{name}: tables not decoded");
        let r = &g.records;
        for (table, decoded) in [
            ("sw", r.sw_operations.as_ref().map(Vec::len)),
            ("hw_init", r.hw_init_operations.as_ref().map(Vec::len)),
            ("ppu_param", r.ppu_params.as_ref().map(Vec::len)),
        ] {
            let t = g.table(table);
            assert_eq!(
                decoded.map(|n| n as u64),
                t.and_then(|t| t.record_count),
                "{name}: {table}"
            );
        }
        hw_init_records += r.hw_init_operations.as_ref().map_or(0, Vec::len);
        if g.table("hw_init").is_some_and(|t| t.size > 0) {
            assert_eq!(owners_of(&bytes, "hw_init"), (1, true), "{name}");
        }
    }
    // The corpus grows: at least the 16 records of the eight files that had any when this was
    // written (1 + 3 + 1 + 3 + 1 + 3 + 1, and 3 in the 0x0001000f file).
    assert!(hw_init_records >= 16, "{hw_init_records}");
}

#[test]
fn a_bad_hw_init_or_sh_reference_is_refused_with_its_code_and_offset() {
    let base = deeplab();
    let graph = parse(&base).unwrap();
    let g = v1(&graph);
    let hw = g.table("hw_init").unwrap().offset as usize;
    let sh = g.table("sh").unwrap().offset as usize;
    let patches = g.records.patches.as_ref().unwrap().count as u32;
    let icd = (g.table("icd_table").unwrap().size / 8) as u32;
    let refused = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = base.clone();
        f(&mut b);
        let e = parse(&b).map(|_| ()).expect_err("refused");
        (e.code, e.offset)
    };
    let record = |i: usize| hw + i * fm::hw_init_operation::SIZE;
    let (index, count, state) = (
        fm::hw_init_operation::patch_index.offset,
        fm::hw_init_operation::patch_count.offset,
        fm::hw_init_operation::state_id.offset,
    );
    // The last init operation's patches [36, 39) pushed one past the patch table.
    assert_eq!(
        refused(&|b| put32(b, record(2) + count, patches - 36 + 1)),
        (Code::HwInitPatchOutOfRange, (record(2) + index) as u64)
    );
    assert_eq!(
        refused(&|b| put32(b, record(1) + index, patches)),
        (Code::HwInitPatchOutOfRange, (record(1) + index) as u64)
    );
    // The boundary holds: a range ending exactly at the table's end is accepted.
    let mut ok = base.clone();
    put32(&mut ok, record(2) + count, patches - 36);
    assert!(parse(&ok).is_ok());
    // A state id one past the ICD table.
    assert_eq!(
        refused(&|b| put32(b, record(1) + state, icd)),
        (Code::HwInitStateOutOfRange, (record(1) + state) as u64)
    );
    // With `change_ppu_param` set, SH record 0's ppu_param_index 0 names a record of the empty
    // PPU parameter table. Without the bit the index is not a reference (every public file).
    assert_eq!(le32(&base, sh + 4), 0);
    let bit = fm::v1_fixed::feature_bits
        .parts
        .iter()
        .find(|p| p.name == "change_ppu_param")
        .unwrap()
        .shift;
    assert_eq!(
        refused(&|b| {
            let at = fm::v1_fixed::feature_bits.offset;
            let w = le32(b, at) | (1 << bit);
            put32(b, at, w)
        }),
        (
            Code::ShPpuParamOutOfRange,
            (sh + fm::sh_operation::ppu_param_index.offset) as u64
        )
    );
}

fn sw_record(kind: u32, name: &str) -> Vec<u8> {
    let mut w = Writer::new(fm::v1_sw_operation::SIZE);
    w.put_u32(&fm::v1_sw_operation::sw_operation_type, kind)
        .put_str(&fm::v1_sw_operation::name, name);
    w.finish().expect("fits")
}

fn ppu_record(base: u32) -> Vec<u8> {
    use fm::v1_ppu_param as p;
    let mut w = Writer::new(p::SIZE);
    let xyz = |k: u32| [base + k, base + k + 1, base + k + 2];
    w.put_words(&p::global_offset, &xyz(0))
        .put_words(&p::global_scale, &xyz(10))
        .put_words(&p::group_size, &xyz(20))
        .put_words(&p::group_count, &xyz(30));
    w.finish().expect("fits")
}

/// A synthetic 0x0001001e graph with two SW operation records (one of a type outside the
/// public enum) and one PPU parameter record.
fn synthetic() -> Vec<u8> {
    let sw = [sw_record(1, "rpn_0"), sw_record(9, "custom")].concat();
    V1Spec {
        extra: vec![("sw", sw), ("ppu_param", ppu_record(100))],
        ..V1Spec::new(0x0001_001e, 0, V1Crc::WholeFileFieldZeroed)
    }
    .build()
    .unwrap()
}

#[test]
fn sw_and_ppu_param_records_decode_and_reencode_field_by_field() {
    let bytes = synthetic();
    let graph = parse(&bytes).expect("valid");
    let g = v1(&graph);
    let sw = g.records.sw_operations.as_ref().unwrap();
    let got: Vec<(u32, Option<&str>, Option<&str>)> = sw
        .iter()
        .map(|s| (s.kind(), s.type_name(), s.name()))
        .collect();
    // An unknown SW operation type is reported (no name), not refused.
    assert_eq!(
        got,
        [(1, Some("RPN"), Some("rpn_0")), (9, None, Some("custom"))]
    );
    let p = &g.records.ppu_params.as_ref().unwrap()[0];
    assert_eq!(
        fm::v1_ppu_param::RECORD
            .fields
            .iter()
            .map(|f| p.xyz(f))
            .collect::<Vec<_>>(),
        [
            [100, 101, 102],
            [110, 111, 112],
            [120, 121, 122],
            [130, 131, 132]
        ]
    );
    assert_eq!(owners_of(&bytes, "sw"), (1, true));
    assert_eq!(owners_of(&bytes, "ppu_param"), (1, true));

    // A byte the decoded value does not keep (after the name's NUL) is caught and named.
    let sw_at = g.table("sw").unwrap().offset as usize;
    let name_at = sw_at + fm::v1_sw_operation::name.offset;
    // A byte after the name's NUL is kept: decoded as the name's trailing bytes and
    // re-encoded exactly.
    let mut b = bytes.clone();
    b[name_at + 60] = 0x7f;
    let graph = parse(&b).expect("still valid");
    let image = NbgImage::new(&graph).unwrap();
    let r = reencode(&graph, &image);
    assert!(r.exact(), "{:?}", r.first_mismatch);
    let sw0 = &v1(&graph).records.sw_operations.as_ref().unwrap()[0];
    assert_eq!(sw0.name(), Some("rpn_0"));
    assert_eq!(sw0.name_trailing_bytes().0[60 - "rpn_0".len() - 1], 0x7f);

    // A name without a NUL is refused where it starts.
    let mut b = bytes.clone();
    b[name_at..name_at + 64].fill(b'x');
    let e = parse(&b).map(|_| ()).unwrap_err();
    assert_eq!((e.code, e.offset), (Code::InvalidName, name_at as u64));

    // An SW operation indexes the SW table: index 2 of 2 records is refused at its index word.
    let op = g.table("operation").unwrap().offset as usize;
    let mut b = bytes.clone();
    put32(&mut b, op + fm::operation::kind.offset, 4);
    put32(&mut b, op + fm::operation::layer_id.offset, 0);
    put32(&mut b, op + fm::operation::index.offset, 2);
    let e = parse(&b).map(|_| ()).unwrap_err();
    assert_eq!(
        (e.code, e.offset),
        (
            Code::OperationIndexOutOfRange,
            (op + fm::operation::index.offset) as u64
        )
    );
}

/// `nbg diff` names a changed byte down to the element of a word array, from the field map
/// (element names where the map has them, else the index), and the new tables by record.
#[test]
fn diff_names_elements_and_the_new_records() {
    let a = deeplab();
    let ga = parse(&a).unwrap();
    let g = v1(&ga);
    let layer = g.table("layer").unwrap().offset as usize;
    let input = g.table("input").unwrap().offset as usize;
    let hw = g.table("hw_init").unwrap().offset as usize;
    let mut b = a.clone();
    b[layer + 3 * fm::layer::SIZE + 1] ^= 0x20;
    b[input + fm::v1_io_record::dimensions.offset + 4] ^= 1;
    b[fm::v1_fixed::memory_pool.offset + 8] ^= 1;
    b[hw + fm::hw_init_operation::SIZE] ^= 1;
    let gb = parse(&b).unwrap();
    let (ia, ib) = (NbgImage::new(&ga).unwrap(), NbgImage::new(&gb).unwrap());
    let r = nbg_lab::lab::diff::diff(&ga, &ia, &gb, &ib).unwrap();
    let fields: Vec<&str> = r
        .owners
        .iter()
        .flat_map(|o| o.ranges.iter().map(|c| c.field.as_str()))
        .collect();
    for want in [
        "layer[3].name",
        "input[0].dimensions[1]",
        "header.memory_pool.base",
        "hw_init[1].state_id",
    ] {
        assert!(fields.contains(&want), "{want} in {fields:?}");
    }
}
