//! Parsing a file on disk: the parser reads its structure with positioned reads and `stream`
//! streams the payload once. Above both `parse` and `stream`, so neither imports the other back.

use crate::failure::Failure;
use crate::files::InputError;
use crate::parse::{Graph, Options};
use crate::read::Data;
use crate::stream::FileSource;
use std::path::Path;
use std::sync::Arc;

/// Parse a file without holding it: the parser reads its structure with positioned reads and
/// the payload is streamed once. The graph has no `bytes` (they are empty), so it serves the
/// decoded facts and fingerprints, not payload access. `Err` is an input error (exit 2).
pub fn parse_file(
    path: &Path,
    opts: Options,
) -> Result<Result<Graph<'static>, Failure>, InputError> {
    parse_source(Arc::new(FileSource::open(path)?), opts)
}

/// `parse_file` over an opened file.
pub fn parse_source(
    file: Arc<FileSource>,
    opts: Options,
) -> Result<Result<Graph<'static>, Failure>, InputError> {
    let parsed = crate::parse::parse_data(Data::file(Arc::clone(&file)), opts);
    match file.error() {
        Some(e) => Err(e),
        None => Ok(parsed),
    }
}
