//! The ONNX admission policy file on arbitrary bytes: never a panic, and a policy it accepts
//! loads again to the same digest.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nbg_lab::onnx::policy;

fuzz_target!(|data: &[u8]| {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../policy"));
    if let Ok(first) = policy::from_bytes(data, dir) {
        let second = policy::from_bytes(data, dir).expect("same bytes, same policy");
        assert_eq!(first.sha256, second.sha256);
    }
});
