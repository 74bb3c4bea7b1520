//! The ONNX admission audit (protobuf envelope, structural checker, limits, policy signature)
//! on arbitrary bytes with the compiled-in policy: never a panic, and an admitted model's
//! audit is deterministic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nbg_lab::onnx::{audit, policy};
use std::sync::OnceLock;

static POLICY: OnceLock<policy::Policy> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let policy = POLICY.get_or_init(|| policy::embedded().expect("the compiled-in policy loads"));
    let limits = audit::Limits::default();
    if let Ok(first) = audit::audit(data, &limits, policy) {
        let second = audit::audit(data, &limits, policy).expect("same bytes, same verdict");
        assert_eq!(
            serde_json::to_string(&first).unwrap(),
            serde_json::to_string(&second).unwrap()
        );
    }
});
