//! Capture sets on disk: what `nbg synth-differential` and `nbg vendor capture` write.

use crate::lab::differential::{A1_FILE, A2_FILE, B_FILE, CaptureSpec, SPEC_FILE};
use crate::nbg::files::{InputError, write_atomic};
use std::path::Path;

/// Write a capture set (A twice, B and the spec) into the new folder `out`; a failure leaves no
/// folder behind.
pub fn write(a: &[u8], b: &[u8], spec: &CaptureSpec, out: &Path) -> Result<(), InputError> {
    write_set(a, a, b, spec, out)
}

/// Write a capture set of two separate captures of A (a real serializer run twice), B and the
/// spec into the new folder `out`; a failure leaves no folder behind.
pub fn write_set(
    a1: &[u8],
    a2: &[u8],
    b: &[u8],
    spec: &CaptureSpec,
    out: &Path,
) -> Result<(), InputError> {
    let folder = crate::output::new_dir(out)?;
    // Invariant: a spec is byte lists, strings and numbers, which always serialize.
    let json = crate::canonical::canonical(&serde_json::to_value(spec).unwrap_or_default());
    for (file, bytes) in [
        (A1_FILE, a1),
        (A2_FILE, a2),
        (B_FILE, b),
        (SPEC_FILE, json.as_bytes()),
    ] {
        write_atomic(&out.join(file), bytes, false)?;
    }
    folder.keep();
    Ok(())
}
