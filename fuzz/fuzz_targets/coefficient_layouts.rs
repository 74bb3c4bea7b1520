//! The decoders of the other coefficient layouts on any bytes: a TP fully-connected buffer cut
//! into parts by shapes the input picks (the zero-run and Huffman layouts), a VIP8000 zero-run
//! buffer read by a command the input picks, and a shader's image by a descriptor the input
//! picks. Each reads and writes again or refuses with a code; never a panic, never an
//! allocation the bytes do not bound.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nbg_lab::nbg::coefficients::kernels::Features;
use nbg_lab::nbg::coefficients::{Command, images, tp, zero_run};
use nbg_lab::nbg::parse::patch_targets::UniformRead;

fuzz_target!(|data: &[u8]| {
    if data.len() < 40 {
        return;
    }
    let (head, body) = data.split_at(40);
    let word = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
    // TP: one or two parts, shapes and offsets from the input.
    let shape = |i: usize| tp::Shape {
        command: i,
        slices: u64::from(head[i] % 64) + 1,
        filters: u64::from(head[i + 1] % 64) + 1,
        coef_zp: u16::from(head[i + 2]),
    };
    let split = u64::from(word(4)) % (body.len() as u64 + 1);
    let parts = [(Some(shape(0)), None, 0), (Some(shape(8)), None, split)];
    if let Ok(b) = tp::cut(0, 0, body, &parts[..1 + usize::from(head[3] & 1)]) {
        for p in &b.parts {
            assert_eq!(p.weights.len() as u64, p.shape.slices * p.shape.filters);
            assert_eq!(p.biases.len() as u64, p.shape.filters);
        }
        if b.reencoded(body) {
            let again: Vec<u8> = b.parts.iter().flat_map(|p| p.rewritten.clone()).collect();
            assert_eq!(again, body);
        }
    }
    // The VIP8000 zero-run buffer.
    let command = Command {
        index: 0,
        kernel: [
            u64::from(head[12] % 5 + 1),
            u64::from(head[13] % 5 + 1),
            u64::from(head[14] % 16 + 1),
        ],
        output_channels: u64::from(head[15] % 32 + 1),
        kernels_per_core: u64::from(head[16] % 8 + 1),
        depthwise: head[17] & 1 != 0,
        kernel_data_type: 0,
        coef_zero_point: u64::from(head[18]),
        per_channel_post_mul: false,
    };
    if let Ok(z) = zero_run::cut(0, 0, body, command, &Features::candidates(None)) {
        let n: usize = z.shape.iter().product();
        assert_eq!(z.weights.len(), n);
        if z.reencoded {
            assert_eq!(z.rewritten, body);
        }
    }
    // A shader's image.
    let read = UniformRead {
        operation: 0,
        entry: 0,
        uniform: 8,
        words: std::array::from_fn(|i| Some(word(20 + 2 * i) ^ u32::from(head[i]))),
    };
    if let Ok(i) = images::read(0, 0, body, &[(&read, None)]) {
        let n: u64 = i.shape.iter().product();
        assert_eq!(i.elements.len() as u64, n * i.dtype.bytes());
        if i.padding_zero {
            assert_eq!(i.rewritten(), body);
        }
    }
});
