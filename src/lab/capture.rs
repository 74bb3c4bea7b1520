//! Synthetic capture sets on disk: what `nbg synth-differential` writes.

use crate::differential::{A1_FILE, A2_FILE, B_FILE, CaptureSpec, SPEC_FILE};
use crate::files::{InputError, write_atomic};
use crate::synth::Trio;
use std::path::Path;

/// Write the capture set of `trio` (A twice, B and the spec) into the new folder `out`; a failure
/// leaves no folder behind.
pub fn write(trio: &Trio, out: &Path) -> Result<(), InputError> {
    let folder = crate::output::new_dir(out)?;
    let spec = CaptureSpec {
        a_source: trio.a_source.clone(),
        b_source: trio.b_source.clone(),
        provenance: Some(trio.provenance.clone()),
    };
    // Invariant: a spec is byte lists and a string, which always serialize.
    let json = crate::canonical::canonical(&serde_json::to_value(&spec).unwrap_or_default());
    for (file, bytes) in [
        (A1_FILE, &trio.a[..]),
        (A2_FILE, &trio.a[..]),
        (B_FILE, &trio.b[..]),
        (SPEC_FILE, json.as_bytes()),
    ] {
        write_atomic(&out.join(file), bytes, false)?;
    }
    folder.keep();
    Ok(())
}
