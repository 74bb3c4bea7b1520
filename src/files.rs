//! Reading input files: regular files only, never through a symlink.

use std::fs;
use std::path::{Component, Path, PathBuf};

/// Why an input could not be read or an output written: a usage or I/O problem (exit 2), not
/// an invalid NBG. Each message starts with the path the user gave.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The operating system refused to state, open, read, write or rename `path`.
    #[error("{path}: {source}")]
    Io {
        /// The path as the user gave it.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An input is a symbolic link, which is never followed.
    #[error("{path}: is a symlink; refusing to follow it")]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// An input file is a directory.
    #[error("{path}: is a directory, not an NBG file")]
    Directory {
        /// The directory.
        path: PathBuf,
    },
    /// An input is a FIFO, socket or device.
    #[error("{path}: is not a regular file")]
    NotRegular {
        /// The special file.
        path: PathBuf,
    },
    /// An output that must be new exists already.
    #[error("{path}: already exists; name a new folder or file (it is never replaced)")]
    Exists {
        /// The existing path.
        path: PathBuf,
    },
    /// `path` exists and reads, but is not what the command accepts (an output that would
    /// replace an input, a capture directory without its spec, a malformed registry).
    #[error("{path}: {reason}")]
    Refused {
        /// The refused path.
        path: PathBuf,
        /// Why, as one clause.
        reason: String,
    },
    /// A scratch file that holds intermediate results could not be written.
    #[error("temporary file of the {of}: {source}")]
    Temporary {
        /// What the scratch file holds (`inventory`).
        of: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// More inputs of one kind than a run accepts.
    #[error("{given} {what}; at most {max}")]
    TooMany {
        /// What was given too many of (`capture sets`).
        what: &'static str,
        /// How many were given.
        given: usize,
        /// The bound.
        max: usize,
    },
}

impl InputError {
    /// An I/O failure on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        InputError::Io {
            path: path.into(),
            source,
        }
    }

    /// `path` refused for `reason`.
    pub fn refused(path: impl Into<PathBuf>, reason: impl std::fmt::Display) -> Self {
        InputError::Refused {
            path: path.into(),
            reason: reason.to_string(),
        }
    }
}

/// Read a regular file whole. Symlinks, directories, FIFOs and devices are refused, so a corpus
/// path can never be redirected outside the tree it names.
pub fn read_regular(path: &Path) -> Result<Vec<u8>, InputError> {
    let mut buf = Vec::new();
    read_regular_into(path, &mut buf)?;
    Ok(buf)
}

/// `read_regular` into a caller's buffer, reusing its capacity: a worker that reads many files
/// keeps one allocation the size of the largest, so peak memory stays flat as a corpus grows.
pub fn read_regular_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), InputError> {
    read_regular_limited(path, buf, u64::MAX)
}

/// `read_regular_into` that reads at most `limit` bytes, for inputs with a size bound (a caller
/// that reads `bound + 1` bytes can tell an oversized file from one exactly at the bound).
pub fn read_regular_limited(path: &Path, buf: &mut Vec<u8>, limit: u64) -> Result<(), InputError> {
    use std::io::Read;
    let (file, meta) = open_regular(path)?;
    buf.clear();
    buf.reserve(meta.len().min(limit) as usize);
    file.take(limit)
        .read_to_end(buf)
        .map_err(|e| InputError::io(path, e))?;
    Ok(())
}

/// Open a regular file for reading (the refusals of `read_regular`), with its metadata.
pub fn open_regular(path: &Path) -> Result<(fs::File, fs::Metadata), InputError> {
    let meta = fs::symlink_metadata(path).map_err(|e| InputError::io(path, e))?;
    let kind = meta.file_type();
    let path = path.to_path_buf();
    if kind.is_symlink() {
        return Err(InputError::Symlink { path });
    }
    if kind.is_dir() {
        return Err(InputError::Directory { path });
    }
    if !kind.is_file() {
        return Err(InputError::NotRegular { path });
    }
    let file = fs::File::open(&path).map_err(|e| InputError::io(path, e))?;
    Ok((file, meta))
}

/// Write `bytes` to `path` atomically: a temporary file in the same folder, then a rename, so
/// an interrupted run never leaves a half-written file. With `overwrite == false` an existing
/// file is an error.
pub fn write_atomic(path: &Path, bytes: &[u8], overwrite: bool) -> Result<(), InputError> {
    write_atomic_with(path, overwrite, |w| w.write_all(bytes))
}

/// `write_atomic` of whatever `fill` writes, streamed through a buffer (for outputs larger
/// than memory should hold).
pub fn write_atomic_with(
    path: &Path,
    overwrite: bool,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), InputError> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = partial_file(dir).map_err(|e| InputError::io(path, e))?;
    let written = (|| {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        fill(&mut buffered)?;
        buffered.flush()?;
        drop(buffered);
        tmp.as_file().sync_all()
    })();
    written.map_err(|e| InputError::io(path, e))?;
    let persisted = if overwrite {
        tmp.persist(path)
    } else {
        tmp.persist_noclobber(path)
    };
    persisted
        .map(|_| ())
        .map_err(|e| InputError::io(path, e.error))
}

/// A temporary `.nbg-partial-*` file in `dir`, created with mode 0666 less the umask (0644 under
/// the usual 022), as any other program's output would be: tempfile's default 0600 would make
/// every file the lab writes private.
pub fn partial_file(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".nbg-partial-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Why a config path does not resolve to a regular file inside its root (`resolve`).
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The path is empty or absolute.
    #[error("paths must be relative to the config's folder")]
    NotRelative,
    /// A component cannot be examined.
    #[error("{}: {source}", .path.display())]
    Unreadable {
        /// The path up to that component.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A component is a symlink.
    #[error("{} is a symlink; corpus paths never follow links", .0.display())]
    Symlink(PathBuf),
    /// A component is `..`, `.` or a root.
    #[error("paths may not contain '..', '.' or a root")]
    NotNormal,
    /// The resolved file cannot be examined.
    #[error("{0}")]
    Stat(std::io::Error),
    /// The resolved path is not a regular file.
    #[error("{} is not a regular file", .0.display())]
    NotFile(PathBuf),
}

/// Resolve a relative path (a corpus config's, a policy's manifest) inside `root`: relative, no `..`, no symlink at any component, a
/// regular file at the end.
pub fn resolve(root: &Path, path: &str) -> Result<PathBuf, PathError> {
    let p = Path::new(path);
    if path.is_empty() || p.is_absolute() {
        return Err(PathError::NotRelative);
    }
    let mut full = root.to_path_buf();
    for c in p.components() {
        match c {
            Component::Normal(part) => {
                full.push(part);
                let meta = match std::fs::symlink_metadata(&full) {
                    Ok(m) => m,
                    Err(source) => return Err(PathError::Unreadable { path: full, source }),
                };
                if meta.file_type().is_symlink() {
                    return Err(PathError::Symlink(full));
                }
            }
            _ => return Err(PathError::NotNormal),
        }
    }
    let meta = std::fs::symlink_metadata(&full).map_err(PathError::Stat)?;
    if !meta.is_file() {
        return Err(PathError::NotFile(full));
    }
    Ok(full)
}
