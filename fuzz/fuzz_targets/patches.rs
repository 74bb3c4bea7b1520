//! Patch resolution and the buffers owned entry by entry, on any bytes that parse: every patch
//! is resolved or reported with its reason, never a panic; the counts add up; every decoded
//! record, the entries included, re-encodes to its bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nbg_lab::NbgFamily;

fuzz_target!(|data: &[u8]| {
    if let Ok(graph) = nbg_lab::parse(data) {
        if let Some(t) = graph.patch_targets() {
            assert!(t.resolved + t.unused <= t.patches);
            assert_eq!(t.targets.len() as u64, t.patches);
        }
        let image =
            nbg_lab::nbg::image::NbgImage::new(&graph).expect("a parsed graph has a ledger");
        assert!(nbg_lab::nbg::reencode::reencode(&graph, &image).exact());
    }
});
