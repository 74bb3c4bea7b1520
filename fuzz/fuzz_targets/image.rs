//! NbgImage construction and emission: every parsed input has a proved ledger and re-emits
//! byte for byte; a changed image never emits.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nbg_lab::nbg::image::NbgImage;

fuzz_target!(|data: &[u8]| {
    if let Ok(graph) = nbg_lab::parse(data) {
        let image = NbgImage::new(&graph).expect("a parsed graph always has a ledger");
        assert_eq!(image.emit().expect("unchanged image emits"), data);
        assert!(image.change("fuzz").emit().is_err());
        let _ = image.to_json();
    }
});
