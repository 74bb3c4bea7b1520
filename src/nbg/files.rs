//! Reading input files: regular files only, never through a symlink.

use std::fs;
use std::path::Path;

/// Why an input could not be read: a usage or I/O problem (exit 2), not an invalid NBG.
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

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
    let shown = path.display();
    let (file, meta) = open_regular(path)?;
    buf.clear();
    buf.reserve(meta.len().min(limit) as usize);
    file.take(limit)
        .read_to_end(buf)
        .map_err(|e| InputError(format!("{shown}: {e}")))?;
    Ok(())
}

/// Open a regular file for reading (the refusals of `read_regular`), with its metadata.
pub fn open_regular(path: &Path) -> Result<(fs::File, fs::Metadata), InputError> {
    let shown = path.display();
    let meta = fs::symlink_metadata(path).map_err(|e| InputError(format!("{shown}: {e}")))?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(InputError(format!(
            "{shown}: is a symlink; refusing to follow it"
        )));
    }
    if kind.is_dir() {
        return Err(InputError(format!(
            "{shown}: is a directory, not an NBG file"
        )));
    }
    if !kind.is_file() {
        return Err(InputError(format!("{shown}: is not a regular file")));
    }
    let file = fs::File::open(path).map_err(|e| InputError(format!("{shown}: {e}")))?;
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
    let shown = path.display();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = partial_file(dir).map_err(|e| InputError(format!("{shown}: {e}")))?;
    let written = (|| {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        fill(&mut buffered)?;
        buffered.flush()?;
        drop(buffered);
        tmp.as_file().sync_all()
    })();
    written.map_err(|e| InputError(format!("{shown}: {e}")))?;
    let persisted = if overwrite {
        tmp.persist(path)
    } else {
        tmp.persist_noclobber(path)
    };
    persisted
        .map(|_| ())
        .map_err(|e| InputError(format!("{shown}: {}", e.error)))
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
