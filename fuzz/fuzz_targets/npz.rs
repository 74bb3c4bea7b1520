//! The NPZ tensor archive reader on arbitrary bytes: never a panic, and an archive it accepts
//! is written back by the project's writer and read again to the same tensors.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nbg_lab::onnx::npz;

fuzz_target!(|data: &[u8]| {
    if let Ok(tensors) = npz::read(data, 1 << 20) {
        let again = npz::read(&npz::write(&tensors), 1 << 20).expect("own archive reads back");
        assert_eq!(again, tensors);
    }
});
