//! Resource bounds: adversarial images never make the parser allocate from an on-disk count,
//! and parse memory does not grow with payload size. Measured with a counting allocator.

use crate::common;

use common::put32;
use nbg_lab::parse;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the heap use of the measuring thread only: the other tests of this binary run on
/// other threads at the same time and would blur a process-wide count.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static CALLS: Cell<usize> = const { Cell::new(0) };
}

/// Whether this thread is measuring (false while its thread-locals are torn down).
fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: forwards to the system allocator unchanged; only counts. The thread-locals are
// `const`-initialised `Cell`s without destructors, so touching them never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            let now = CURRENT.get() + layout.size() as isize;
            CURRENT.set(now);
            PEAK.set(PEAK.get().max(now));
            CALLS.set(CALLS.get() + 1);
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if counting() {
            CURRENT.set(CURRENT.get() - layout.size() as isize);
        }
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// (peak bytes above the starting point, allocation calls) while parsing `bytes`. The parse runs
/// in a one-thread pool, so its parallel hashing happens on the one thread that counts.
fn measure(bytes: &[u8]) -> (usize, usize) {
    measure_with(|| drop(parse(bytes)))
}

/// (peak bytes, allocation calls) while `f` runs in a one-thread pool; what `f` returns is
/// dropped inside it, so only the peak counts.
fn measure_with(f: impl FnOnce() + Send) -> (usize, usize) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    pool.install(|| {
        CURRENT.set(0);
        PEAK.set(0);
        CALLS.set(0);
        COUNTING.set(true);
        f();
        COUNTING.set(false);
        (PEAK.get() as usize, CALLS.get())
    })
}

/// The sweep holds the file, one working copy per worker and two bytes per offset: on one
/// worker about 3 x the file plus a constant (24 bytes per offset before: 27 x).
#[test]
fn sweep_memory_is_a_small_multiple_of_the_file() {
    let bytes = nbg_lab::lab::synth::bulk(9, 4 << 20)
        .unwrap()
        .emit()
        .unwrap();
    let n = bytes.len();
    let (peak, _) = measure_with(|| {
        let (report, outcomes) =
            nbg_lab::lab::sweep::sweep(&bytes, nbg_lab::lab::sweep::EXHAUSTIVE_LIMIT).unwrap();
        assert_eq!(outcomes.len(), n);
        assert_eq!(report.undetected, 0);
    });
    assert!(
        peak < 3 * n + (4 << 20),
        "sweep of {n} bytes peaked at {peak} bytes"
    );
}

/// A deflated member the model does not name is refused before it is inflated, and a named
/// member inflates no further than the input's declared shape.
#[cfg(feature = "onnx")]
#[test]
fn npz_members_are_bounded_by_the_model_before_inflation() {
    use nbg_lab::onnx::npz::{self, Tensor};
    use nbg_lab::onnx::types::{ValueKind, ValueType};
    let input = ValueType {
        name: "x".into(),
        kind: ValueKind::Tensor,
        elem_type: Some(1),
        elem_type_name: Some("FLOAT"),
        shape: Some(vec![1.into(), 8.into()]),
    };
    let good = npz::write(&[Tensor::from_f32("x", &[1, 8], &[0.5; 8])]);
    let deflate = |members: &[(&str, Vec<u8>)]| {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, data) in members {
            w.start_file(*name, opts).unwrap();
            std::io::Write::write_all(&mut w, data).unwrap();
        }
        w.finish().unwrap().into_inner()
    };
    let x_npy = {
        let mut a = zip::ZipArchive::new(std::io::Cursor::new(&good)).unwrap();
        let mut f = a.by_index(0).unwrap();
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut v).unwrap();
        v
    };
    // 64 MiB of zeros behind an NPY header, deflated to about 64 KB.
    let big = || {
        let mut npy = Vec::new();
        let header = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
            16 << 20
        );
        let pad = 64 - (10 + header.len() + 1) % 64;
        npy.extend_from_slice(b"\x93NUMPY\x01\x00");
        npy.extend_from_slice(&((header.len() + pad + 1) as u16).to_le_bytes());
        npy.extend_from_slice(header.as_bytes());
        npy.extend(std::iter::repeat_n(b' ', pad));
        npy.push(b'\n');
        npy.resize(npy.len() + (64 << 20), 0);
        npy
    };
    let extra = deflate(&[("x.npy", x_npy.clone()), ("unnamed.npy", big())]);
    assert!(extra.len() < 1 << 20);
    let (peak, _) = measure_with(|| {
        let r = npz::read_inputs(&extra, std::slice::from_ref(&input), 1 << 30).unwrap_err();
        assert_eq!(r.code.as_str(), "TENSOR_ARCHIVE_INVALID");
        assert!(
            r.message.contains("unnamed: the model has no input"),
            "{}",
            r.message
        );
    });
    assert!(
        peak < 1 << 20,
        "refusing the unnamed member took {peak} bytes"
    );
    // A member named like the input whose NPY header claims far more than [1, 8] floats.
    let oversized = deflate(&[("x.npy", big())]);
    let (peak, _) = measure_with(|| {
        let r = npz::read_inputs(&oversized, std::slice::from_ref(&input), 1 << 30).unwrap_err();
        assert_eq!(r.code.as_str(), "TENSOR_TOO_LARGE");
    });
    assert!(peak < 1 << 20, "the oversized member took {peak} bytes");
    // The declared input itself reads.
    let ok = deflate(&[("x.npy", x_npy)]);
    assert_eq!(npz::read_inputs(&ok, &[input], 1 << 30).unwrap().len(), 1);
}

fn adversarial() -> Vec<(&'static str, Vec<u8>)> {
    let erf = common::control("erf-u8.nb");
    let mut out = Vec::new();
    let mut m = |name, f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = erf.clone();
        f(&mut b);
        out.push((name, b));
    };
    m("sub-header count u32::MAX", &|b| put32(b, 0x20, u32::MAX));
    m("section count u32::MAX", &|b| put32(b, 56, u32::MAX));
    m("section count 256 in a small file", &|b| put32(b, 56, 256));
    m("section size of a terabyte", &|b| {
        put32(b, 60 + 0x0c, 0);
        put32(b, 60 + 0x10, 256);
    });
    m("I/O section claiming 2^32 records", &|b| {
        put32(b, 60 + 0x0c, u32::MAX - (u32::MAX % 112))
    });
    m("dimensions near u32::MAX", &|b| {
        let at = common::le32(b, 60 + 4) as usize;
        put32(b, at, 6);
        for i in 0..6 {
            put32(b, at + 4 + 4 * i, u32::MAX);
        }
    });
    // 256 empty sections.
    let mut many = vec![0u8; 60 + 256 * 44];
    many[..4].copy_from_slice(b"VPMN");
    put32(&mut many, 4, 0x0002_0000);
    let n = many.len() as u32;
    put32(&mut many, 0x10, n);
    put32(&mut many, 0x18, 48);
    put32(&mut many, 0x1c, 12);
    put32(&mut many, 0x20, 1);
    put32(&mut many, 48, 60);
    put32(&mut many, 52, 44);
    put32(&mut many, 56, 256);
    out.push(("256 empty sections", many));
    // v1: tables pointing at each other, counts near u32::MAX.
    let timvx = common::public_control("timvx-conv2d_relu_maxpool2d_fp32-001e.nb");
    let mut v = timvx.clone();
    let input = common::le32(&v, 0x178);
    put32(&mut v, 0x180, input);
    put32(&mut v, 0x188, input);
    out.push(("v1 tables pointing at each other", v));
    let mut v = timvx.clone();
    for at in [0x4c, 0x50, 0x54, 0x58] {
        put32(&mut v, at, u32::MAX);
    }
    out.push(("v1 counts u32::MAX", v));
    let mut v = timvx;
    put32(&mut v, 0x178 + 8 * 26 + 4, u32::MAX);
    out.push(("v1 nested table of 2^29 entries", v));
    out
}

#[test]
fn allocation_is_bounded_by_the_input_never_by_a_count() {
    for (name, bytes) in adversarial() {
        let (peak, calls) = measure(&bytes);
        assert!(parse(&bytes).is_err(), "{name} parsed");
        assert!(
            peak <= 2 * bytes.len() + 64 * 1024,
            "{name}: peak {peak} bytes for a {}-byte input",
            bytes.len()
        );
        assert!(
            calls <= bytes.len() / 8 + 256,
            "{name}: {calls} allocations"
        );
    }

    // Parse memory follows the structure, not the payload: a 16x larger coefficient section
    // costs no more heap.
    let small = nbg_lab::lab::synth::bulk(1, 256 * 1024)
        .unwrap()
        .emit()
        .unwrap();
    let large = nbg_lab::lab::synth::bulk(1, 4 * 1024 * 1024)
        .unwrap()
        .emit()
        .unwrap();
    let (ps, cs) = measure(&small);
    let (pl, cl) = measure(&large);
    assert!(parse(&large).is_ok());
    assert_eq!(cs, cl, "allocation calls depend on payload size");
    assert!(
        pl <= ps + 1024,
        "peak grew from {ps} to {pl} bytes with payload size"
    );
    assert!(
        pl < 256 * 1024,
        "peak {pl} bytes for a {}-byte file",
        large.len()
    );
}
