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
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    pool.install(|| {
        CURRENT.set(0);
        PEAK.set(0);
        CALLS.set(0);
        COUNTING.set(true);
        let result = parse(bytes);
        COUNTING.set(false);
        drop(result);
        (PEAK.get() as usize, CALLS.get())
    })
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
    let small = nbg_lab::synth::bulk(1, 256 * 1024).emit();
    let large = nbg_lab::synth::bulk(1, 4 * 1024 * 1024).emit();
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
