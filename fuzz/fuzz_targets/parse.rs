//! Strict parse of arbitrary bytes: never a panic; check-only mode agrees with the full parse.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nbg_lab::NbgFamily;
use nbg_lab::nbg::parse::{Options, parse_with};

fuzz_target!(|data: &[u8]| {
    let full = nbg_lab::parse(data);
    let check = parse_with(
        data,
        Options {
            fingerprints: false,
        },
    );
    match (&full, &check) {
        (Ok(g), Ok(_)) => {
            let _ = g.to_json();
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("check-only parse disagrees with the full parse"),
    }
});
