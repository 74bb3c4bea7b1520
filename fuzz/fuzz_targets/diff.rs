//! Owner-attributed diff of two inputs split from one: never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nbg_lab::nbg::image::NbgImage;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let at = usize::from(cut) * rest.len() / 256;
    let (a, b) = rest.split_at(at);
    let (Ok(ga), Ok(gb)) = (nbg_lab::parse(a), nbg_lab::parse(b)) else {
        return;
    };
    let (ia, ib) = (NbgImage::new(&ga).unwrap(), NbgImage::new(&gb).unwrap());
    if let Ok(report) = nbg_lab::lab::diff::diff(&ga, &ia, &gb, &ib) {
        assert_eq!(report.identical, a == b);
    }
});
