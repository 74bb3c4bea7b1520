//! The front-end command stream decoder on any bytes: a value or a failure with its offset,
//! never a panic; whatever decodes encodes again to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match nbg_lab::nbg::commands::decode(data) {
        Ok(commands) => {
            let mut again = Vec::with_capacity(data.len());
            for c in &commands {
                c.encode(&mut again);
            }
            assert_eq!(again, data);
        }
        Err(e) => assert!(e.at <= data.len() as u64),
    }
});
