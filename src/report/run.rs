//! Text of `nbg vendor run`: the configuration, a relabelling, the verdict, and each input
//! and output with its storage and conversion.

use crate::simulator::convert::Storage;
use crate::simulator::run::{RunReport, RunTensor, RunVerdict};
use std::fmt::Write as _;

/// How a tensor is stored, in `nbg info`'s words: the element type as the file's format names
/// it, the quantization's public name and its parameters (`INT16 DYNAMIC_FIXED_POINT fixed
/// point 15`).
fn storage(s: &Storage) -> String {
    use crate::simulator::convert::Int;
    let int = |i: &Int| match i {
        Int::U8 => "UINT8",
        Int::I8 => "INT8",
        Int::U16 => "UINT16",
        Int::I16 => "INT16",
        Int::I32 => "INT32",
        Int::U32 => "UINT32",
    };
    match s {
        Storage::Float32 => "FP32 NONE".into(),
        Storage::Float16 => "FP16 NONE".into(),
        Storage::Bfloat16 => "BFP16 NONE".into(),
        Storage::Affine {
            int: i,
            scale,
            zero_point,
        } => format!(
            "{} AFFINE_ASYMMETRIC scale {scale} zero point {zero_point}",
            int(i)
        ),
        Storage::DynamicFixedPoint { int: i, position } => {
            format!("{} DYNAMIC_FIXED_POINT fixed point {position}", int(i))
        }
        Storage::Integer { int: i } => format!("{} NONE", int(i)),
    }
}

fn tensor(s: &mut String, side: &str, t: &RunTensor) {
    let conversion = serde_json::to_value(t.conversion)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "  {side} {:<24} {:?} {}, {conversion}, stored sha256 {}",
        t.name,
        t.shape,
        storage(&t.storage),
        t.stored_sha256
    );
}

/// The report as text; `out` is where the outputs were written, when they were.
pub fn text(file: &str, r: &RunReport, out: Option<&str>) -> String {
    let mut s = format!("{file} under {}: ", r.config.name);
    match &r.verdict {
        RunVerdict::Ran {
            verify_seconds,
            process_seconds,
        } => {
            let _ = writeln!(
                s,
                "ran (verify {verify_seconds:.2} s, process {process_seconds:.2} s, child {:.1} s)",
                r.seconds
            );
        }
        RunVerdict::Refused(r) => {
            let _ = writeln!(s, "{r}");
        }
        RunVerdict::Crashed { failure } => {
            let _ = writeln!(s, "crashed: {failure}");
        }
    }
    if let Some(r) = &r.relabelled {
        let _ = writeln!(
            s,
            "  relabelled in memory: version {} read as {} ({})",
            r.from, r.to, r.reason
        );
    }
    for x in &r.substituted {
        let _ = writeln!(
            s,
            "  substituted in memory at 0x{:x}: {} -> {} (checksums recomputed)",
            x.offset, x.before, x.after
        );
    }
    for t in &r.inputs {
        tensor(&mut s, "input ", t);
    }
    for t in &r.outputs {
        tensor(&mut s, "output", t);
    }
    for d in &r.io_differences {
        let _ = writeln!(s, "  differs from the loader: {d}");
    }
    if let Some(o) = out {
        let _ = writeln!(s, "wrote {o} (outputs as float32)");
    }
    s
}
