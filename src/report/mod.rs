//! `nbg report`: one self-contained, deterministic HTML page per graph, graph pair or capture
//! set (inline CSS and JavaScript, no network, no fonts to fetch).
//!
//! Everything on a page comes from the library's own values: the parse document
//! (`Graph::to_json`), the ownership ledger (`NbgImage`), the sweep, the diff report and the
//! differential report. The server-rendered tables are the text alternative of the canvas byte
//! map and are what the browser test reads back; the script only draws and navigates.
//!
//! Large files stay small: a page embeds decoded records whole up to `DECODED_MAX` bytes per
//! owner (`DECODED_TOTAL_MAX` in all) and the first and last `SAMPLE_BYTES` of every other
//! owner, never the whole payload.

pub mod board;
mod capture_page;
pub mod fieldmap;
mod graph_page;
mod html;
pub mod inventory;
pub mod json;
#[cfg(feature = "onnx")]
pub mod locate;
pub mod mapping;
#[cfg(feature = "onnx")]
pub mod onnx;
mod pair_page;
#[cfg(feature = "onnx")]
pub mod run;
#[cfg(feature = "onnx")]
pub mod simulator;
pub mod svg;
pub mod text;
#[cfg(feature = "onnx")]
pub mod weights_npz;

use crate::exit::Exit;
use crate::files::InputError;
use crate::lab::diff::{DiffError, DiffReport, locate};
use crate::lab::differential::{CaptureSet, LoadError};
use crate::nbg::failure::Failure;
use crate::nbg::family::NbgFamily;
use crate::nbg::family::{OwnerClass, ViewClass};
use crate::nbg::image::NbgImage;
use crate::nbg::parse::{Graph, parse};
pub use capture_page::*;
pub use graph_page::*;
pub use pair_page::*;

use html::{Page, esc, hex};
use serde_json::{Value, json};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Decoded-record owners are embedded whole up to this many bytes (each).
pub const DECODED_MAX: u64 = 64 * 1024;
/// ... and up to this many bytes over all decoded records of a page; later ones are sampled.
pub const DECODED_TOTAL_MAX: u64 = 1024 * 1024;
/// Other owners: this many bytes from each end are embedded.
pub const SAMPLE_BYTES: u64 = 256;
/// Bins of the diff heat strip.
const HEAT_BINS: usize = 512;
/// Changed bytes shown per diff range (the range keeps its true length in the table).
const HEX_CHANGED_MAX: u64 = 64;
/// Context bytes either side of a changed range in the A/B hex views.
const HEX_CONTEXT: u64 = 16;

/// Why a report was not written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// An input is not a valid NBG: which file, and the failure.
    #[error("{0}: {1}")]
    Invalid(String, Failure),
    /// An input or the output could not be read or written.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The capture directory could not be loaded.
    #[error(transparent)]
    Capture(#[from] LoadError),
    /// The two graphs of a pair cannot be compared.
    #[error(transparent)]
    Diff(#[from] DiffError),
    /// A `--vendor-sweep` document is not a vendor sweep of this file: which file, and why.
    #[error("{0}: {1}")]
    VendorSweep(String, String),
}

impl ReportError {
    /// An invalid input is a failed check; the rest are usage or I/O problems.
    pub fn exit_status(&self) -> Exit {
        match self {
            ReportError::Invalid(..) => Exit::Failure,
            ReportError::Input(_) | ReportError::Capture(_) | ReportError::VendorSweep(..) => {
                Exit::Usage
            }
            ReportError::Diff(e) => e.exit_status(),
        }
    }
}

/// What to render.
pub enum Request {
    /// The page of one graph.
    Graph {
        /// The NBG file.
        file: PathBuf,
        /// Whether to include its mutation sweep.
        sweep: bool,
        /// A `nbg sweep --vendor --json` document of the same file, shown on the byte map.
        vendor_sweep: Option<PathBuf>,
    },
    /// The diff page of two graphs.
    Pair {
        /// The A file.
        a: PathBuf,
        /// The B file.
        b: PathBuf,
    },
    /// The page of one capture set's differential.
    Capture {
        /// The capture directory.
        dir: PathBuf,
    },
}

impl Request {
    /// Every file the request reads (outputs may never be one of them).
    pub fn inputs(&self) -> Vec<PathBuf> {
        match self {
            Request::Graph {
                file, vendor_sweep, ..
            } => std::iter::once(file.clone())
                .chain(vendor_sweep.iter().cloned())
                .collect(),
            Request::Pair { a, b } => vec![a.clone(), b.clone()],
            Request::Capture { dir } => ["A1.nb", "A2.nb", "B.nb", "differential.json"]
                .iter()
                .map(|n| dir.join(n))
                .collect(),
        }
    }

    /// Read the inputs and render the page.
    pub fn render(&self) -> Result<String, ReportError> {
        match self {
            Request::Graph {
                file,
                sweep,
                vendor_sweep,
            } => {
                let bytes = crate::files::read_regular(file)?;
                let vendor = match vendor_sweep {
                    Some(p) => Some(read_vendor_sweep(p, &bytes)?),
                    None => None,
                };
                graph_page_with(&display_name(file), &bytes, *sweep, vendor.as_ref())
                    .map_err(|f| ReportError::Invalid(file.display().to_string(), f))
            }
            Request::Pair { a, b } => {
                let ba = crate::files::read_regular(a)?;
                let bb = crate::files::read_regular(b)?;
                pair_page(&display_name(a), &ba, &display_name(b), &bb, |which| {
                    if which == 0 { a } else { b }.display().to_string()
                })
            }
            Request::Capture { dir } => {
                let set = crate::lab::differential::load(dir)?;
                capture_page(&display_name(dir), &set).map_err(|e| {
                    ReportError::Invalid(dir.join(e.file).display().to_string(), e.failure)
                })
            }
        }
    }
}

/// The name a page shows: the file or folder name only, so the same input gives the same bytes
/// wherever it lies.
/// A byte as the dumps show it: printable ASCII as itself, anything else as `.`.
fn printable(b: u8) -> char {
    if (0x20..0x7f).contains(&b) {
        b as char
    } else {
        '.'
    }
}

fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Write `html` to `out` through the shared output rules (`crate::output`): never onto an
/// input or a non-regular file, an existing file only with `force`, atomically, 0666 less the
/// umask.
pub fn write(out: &Path, html: &str, inputs: &[PathBuf], force: bool) -> Result<(), ReportError> {
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let mut outputs = crate::output::Outputs::new(&inputs, force);
    outputs
        .stage(out, html.as_bytes())
        .and_then(|_| outputs.commit())
        .map_err(ReportError::from)
}

/// The request with its paths resolved against `root`.
pub fn rooted(request: &Request, root: &Path) -> Request {
    match request {
        Request::Graph {
            file,
            sweep,
            vendor_sweep,
        } => Request::Graph {
            file: root.join(file),
            sweep: *sweep,
            vendor_sweep: vendor_sweep.as_ref().map(|p| root.join(p)),
        },
        Request::Pair { a, b } => Request::Pair {
            a: root.join(a),
            b: root.join(b),
        },
        Request::Capture { dir } => Request::Capture {
            dir: root.join(dir),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_keeps_every_changed_byte_and_stays_in_range() {
        for (size, s, e, n) in [(1000, 0, 1000, 1000), (10, 3, 4, 1), (5000, 4000, 4999, 7)] {
            let mut bins = vec![0u64; HEAT_BINS];
            spread(&mut bins, size, s, e, n);
            assert_eq!(bins.iter().sum::<u64>(), n);
            let first = bins.iter().position(|&b| b > 0).unwrap() as u64;
            assert_eq!(first, s * HEAT_BINS as u64 / size);
        }
    }

    #[test]
    fn field_values_read_as_the_field_map_types_them() {
        use crate::nbg::fieldmap::Type;
        assert_eq!(decode_value(Some(Type::Magic), b"VPMN"), "\"VPMN\"");
        assert_eq!(decode_value(Some(Type::Str), b"in\0\0"), "\"in\"");
        assert_eq!(
            decode_value(Some(Type::U32), &[0, 0, 2, 0]),
            "131072 = 0x20000 (u32)"
        );
        assert_eq!(decode_value(Some(Type::I32), &[0xff; 4]), "-1 (i32)");
        assert_eq!(
            decode_value(Some(Type::U64), &852u64.to_le_bytes()),
            "852 = 0x354 (u64)"
        );
        assert_eq!(
            decode_value(Some(Type::U32s), &[1, 0, 0, 0, 2, 0, 0, 0]),
            "[1, 2] (u32 words)"
        );
        // A name is text by its type, not its name; 4 bytes of text stay text.
        assert_eq!(decode_value(Some(Type::Str), b"abcd"), "\"abcd\"");
        assert_eq!(
            decode_value(Some(Type::Bytes), &[0xab; 16]),
            "abababababababababababababababab"
        );
        assert_eq!(decode_value(None, &[0xab; 3]), "ababab");
    }
}
