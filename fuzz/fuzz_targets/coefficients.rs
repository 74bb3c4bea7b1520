//! The coefficient decoder on any bytes: a header whose stream sizes the input picks (so the
//! streams' code is reached), the rest as streams and biases, and a layout from the input.
//! Every stream decodes and re-encodes to its bits, or is reported with a code and a bit inside
//! it; the kernels are put together or refused; never a panic, never an allocation the streams'
//! bits do not bound.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nbg_lab::nbg::coefficients::kernels::Features;
use nbg_lab::nbg::coefficients::{Command, cut};

fuzz_target!(|data: &[u8]| {
    if data.len() < 72 {
        return;
    }
    let (shape, rest) = data.split_at(8);
    let mut bytes = rest.to_vec();
    let cores = 1 + usize::from(shape[0] % 8);
    let room = (bytes.len().saturating_sub(64) * 8 / cores) as u32;
    for c in 0..9 {
        let w = if c < cores {
            u32::from(u16::from_le_bytes([shape[1], shape[2]])) % room.max(1) + 1
        } else {
            0
        };
        bytes[28 + 4 * c..32 + 4 * c].copy_from_slice(&w.to_le_bytes());
    }
    let command = Command {
        index: 0,
        kernel: [
            u64::from(shape[3] % 4 + 1),
            u64::from(shape[4] % 4 + 1),
            u64::from(shape[5] % 8 + 1),
        ],
        output_channels: u64::from(shape[6] % 32) + cores as u64,
        kernels_per_core: u64::from(shape[7] % 4 + 1),
        depthwise: shape[7] & 0x80 != 0,
        kernel_data_type: u64::from(shape[7] >> 4 & 7),
        coef_zero_point: 0,
        per_channel_post_mul: false,
    };
    if let Ok(b) = cut(0, 0, &bytes, Some(command), &Features::candidates(None)) {
        for s in &b.streams {
            match (&s.decoded, &s.not_decoded) {
                (Some(d), None) => assert!(d.reencoded),
                (None, Some(e)) => assert!(e.bit <= s.bits),
                _ => panic!("a stream neither decoded nor reported"),
            }
        }
        if let Some(w) = &b.weights {
            let n: usize = w.shape.iter().product();
            assert_eq!(w.kernels.weights.len(), n);
        }
    }
});
