//! What `nbg mapping check` and `promote` do, as values: the commands render them
//! (`report::mapping`) and map their ends to exit statuses.

use super::*;

/// Why a check or a promotion stopped before its result.
#[derive(Debug, thiserror::Error)]
pub enum Stop {
    /// The mappings file, a capture set or the output was refused (exit 2).
    #[error(transparent)]
    Input(#[from] MappingError),
    /// A capture set is an invalid NBG (exit 1).
    #[error(transparent)]
    Capture(#[from] CaptureFailure),
}

impl Stop {
    /// How a run that stopped here ends.
    pub fn exit_status(&self) -> Exit {
        match self {
            Stop::Input(e) => e.exit_status(),
            Stop::Capture(e) => e.exit_status(),
        }
    }
}

/// The capture sets in `dirs`, each named by its path as given.
pub fn load_captures(dirs: &[PathBuf]) -> Result<Vec<Capture>, MappingError> {
    if dirs.len() > MAX_CAPTURE_SETS {
        return Err(MappingError::TooManyCaptures(dirs.len()));
    }
    dirs.iter()
        .map(|d| Capture::load(d, d.display().to_string()).map_err(MappingError::from))
        .collect()
}

/// `nbg mapping check`: every mapping of the file against every capture set, and the registry
/// (its digest goes into the JSON document). Writes nothing.
pub fn run_check(mappings: &Path, dirs: &[PathBuf]) -> Result<(Registry, Vec<CheckRow>), Stop> {
    let registry = load(mappings)?;
    let captures = load_captures(dirs)?;
    let all: Vec<&Mapping> = registry.mappings.iter().collect();
    let rows = check_all(&all, &captures)?;
    Ok((registry, rows))
}

/// How a promotion ended.
#[derive(Debug)]
pub enum Promoted {
    /// Promoted and written: the new registry and the checks it rests on.
    Written(Registry, Vec<CheckRow>),
    /// Refused; nothing was written.
    Refused(Refusal),
}

/// `nbg mapping promote`: promote `name` on the capture sets in `dirs` (named relative to the
/// mappings file's folder) and rewrite the file atomically, or say why not.
pub fn run_promote(mappings: &Path, name: &str, dirs: &[PathBuf]) -> Result<Promoted, Stop> {
    let registry = load(mappings)?;
    let base = folder(mappings);
    if dirs.len() > MAX_CAPTURE_SETS {
        return Err(MappingError::TooManyEvidence.into());
    }
    let mut captures = Vec::new();
    for d in dirs {
        let n = relative_name(base, d)?;
        captures.push(Capture::load(d, n).map_err(MappingError::from)?);
    }
    let (promoted, rows) = match promote(&registry, name, &captures) {
        Ok(x) => x,
        Err(r) => return Ok(Promoted::Refused(r)),
    };
    let inputs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    let mut outputs = crate::output::Outputs::new(&inputs, true);
    outputs
        .stage(mappings, promoted.canonical().as_bytes())
        .and_then(|_| outputs.commit())
        .map_err(MappingError::from)?;
    Ok(Promoted::Written(promoted, rows))
}
