//! The NBG core: the format's constants, bounded reads, failures as values, the strict parser
//! (in memory or streamed from a file), the field map every record is read and written through,
//! the CRC hypothesis registry, the byte-ownership ledger and the re-encoding round trip. Nothing here knows of corpora, ONNX or reports.

pub mod coefficients;
pub mod commands;
pub mod crc_explain;
pub mod crc_index;
pub mod crc_rules;
pub mod decoded;
pub mod failure;
pub mod family;
pub mod fieldmap;
pub mod fingerprint;
pub mod format;
pub mod holds;
pub mod image;
pub mod open;
pub mod parse;
pub mod read;
pub mod reencode;
pub mod stream;
pub(crate) mod window;
