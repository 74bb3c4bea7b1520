//! Parsing a file on disk: the parser reads its structure with positioned reads and `stream`
//! streams the payload once. Above both `parse` and `stream`, so neither imports the other back.

use crate::files::InputError;
use crate::nbg::failure::Failure;
use crate::nbg::image::NbgImage;
use crate::nbg::parse::{Graph, Options};
use crate::nbg::read::Data;
use crate::nbg::stream::FileSource;
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
    let parsed = crate::nbg::parse::parse_data(Data::file(Arc::clone(&file)), opts);
    match file.error() {
        Some(e) => Err(e),
        None => Ok(parsed),
    }
}

/// A graph parsed from a file and its ledger over the file's ranges, or why the file is not a
/// valid NBG.
pub type Built = Result<(Graph<'static>, NbgImage<'static>), Failure>;

/// Open `path`, parse it with positioned reads and build its ledger over ranges
/// (`NbgImage::from_file`): what `nbg image`, `roundtrip` and `diff` work on, without holding
/// the file. The source comes back too: reads made later (emission, diffs) keep their I/O
/// errors there, for the caller to check with `FileSource::error` once it is done reading.
/// `Err` is an input error (exit 2).
pub fn open_image(path: &Path) -> Result<(Arc<FileSource>, Built), InputError> {
    let source = Arc::new(FileSource::open(path)?);
    let built = parse_source(Arc::clone(&source), Options::default())?
        .and_then(|g| NbgImage::from_file(&g, Arc::clone(&source)).map(|i| (g, i)));
    Ok((source, built))
}
