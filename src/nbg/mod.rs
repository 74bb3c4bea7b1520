//! The NBG core: the format's constants, bounded reads, failures as values, the strict parser
//! (in memory or streamed from a file), the CRC hypothesis registry and the byte-ownership
//! ledger. Nothing here knows of corpora, ONNX or reports.

pub mod crc_explain;
pub mod crc_rules;
pub mod failure;
pub mod files;
pub mod fingerprint;
pub mod format;
pub mod image;
pub mod open;
pub mod parse;
pub mod read;
pub mod stream;
