//! Outputs that never destroy anything.
//!
//! Every command that writes files plans them through one `Outputs`: each path is checked
//! before any work against the run's inputs (by device and inode, so `./a.nb`, `a.nb` and a
//! hard link are the same file), against the other outputs, and against what exists (a
//! non-regular file is never replaced; an existing regular file only with `--force`). The bytes
//! are staged as `.nbg-partial-*` files beside their targets and renamed into place only when
//! every output of the run is complete; on any failure the staged files are removed and nothing
//! new remains. Messages name the paths the user gave.

use crate::files::InputError;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The outputs of one command run.
pub struct Outputs {
    inputs: Vec<(u64, u64, PathBuf)>,
    force: bool,
    planned: Vec<PathBuf>,
    staged: Vec<(tempfile::NamedTempFile, PathBuf)>,
}

impl Outputs {
    /// Outputs of a run that reads `inputs` (files, or folders whose files are all inputs).
    /// Inputs that cannot be stated are left to the reader, which reports them.
    pub fn new(inputs: &[&Path], force: bool) -> Self {
        let mut ids = Vec::new();
        for input in inputs {
            let Ok(meta) = fs::symlink_metadata(input) else {
                continue;
            };
            ids.push((meta.dev(), meta.ino(), input.to_path_buf()));
            if meta.is_dir() {
                for entry in fs::read_dir(input).into_iter().flatten().flatten() {
                    if let Ok(m) = entry.metadata() {
                        ids.push((m.dev(), m.ino(), entry.path()));
                    }
                }
            }
        }
        Outputs {
            inputs: ids,
            force,
            planned: Vec::new(),
            staged: Vec::new(),
        }
    }

    /// Check that `path` may be written, and reserve it. Call for every output before the work.
    pub fn plan(&mut self, path: &Path) -> Result<(), InputError> {
        if self.planned.iter().any(|p| same_path(p, path)) {
            return Err(InputError::refused(
                path,
                "named twice as an output of this run",
            ));
        }
        match fs::symlink_metadata(path) {
            Ok(meta) => {
                if let Some((_, _, input)) = self
                    .inputs
                    .iter()
                    .find(|(d, i, _)| *d == meta.dev() && *i == meta.ino())
                {
                    return Err(InputError::refused(
                        path,
                        format!(
                            "is an input of this run ({}); refusing to overwrite it",
                            input.display()
                        ),
                    ));
                }
                if !meta.file_type().is_file() {
                    return Err(InputError::refused(
                        path,
                        "exists and is not a regular file; refusing to replace it",
                    ));
                }
                if !self.force {
                    return Err(InputError::refused(
                        path,
                        "already exists (pass --force to replace it)",
                    ));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(InputError::io(path, e)),
        }
        let dir = parent(path);
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(InputError::refused(dir, "is not a directory")),
            Err(e) => return Err(InputError::io(dir, e)),
        }
        self.planned.push(path.to_path_buf());
        Ok(())
    }

    /// Stage the bytes of a planned output in a temporary file beside it.
    pub fn stage(&mut self, path: &Path, bytes: &[u8]) -> Result<(), InputError> {
        self.stage_with(path, &mut |w| w.write_all(bytes))
    }

    /// `stage` for an output written piece by piece (never held whole in memory).
    pub fn stage_with(
        &mut self,
        path: &Path,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<(), InputError> {
        use std::io::Write;
        if !self.planned.iter().any(|p| p == path) {
            self.plan(path)?;
        }
        let mut tmp =
            crate::files::partial_file(parent(path)).map_err(|e| InputError::io(path, e))?;
        let mut buffered = std::io::BufWriter::new(tmp.as_file_mut());
        write(&mut buffered)
            .and_then(|_| buffered.flush())
            .map_err(|e| InputError::io(path, e))?;
        drop(buffered);
        tmp.as_file()
            .sync_all()
            .map_err(|e| InputError::io(path, e))?;
        self.staged.push((tmp, path.to_path_buf()));
        Ok(())
    }

    /// Rename every staged file into place. Each target is checked again first; when one
    /// cannot be placed, the ones already placed by this call are removed (they did not exist
    /// before, or `--force` was given) and the rest are discarded.
    pub fn commit(self) -> Result<(), InputError> {
        let Outputs {
            inputs,
            force,
            staged,
            ..
        } = self;
        let mut recheck = Outputs {
            inputs,
            force,
            planned: Vec::new(),
            staged: Vec::new(),
        };
        for (_, path) in &staged {
            recheck.plan(path)?;
        }
        let mut placed: Vec<PathBuf> = Vec::new();
        for (tmp, path) in staged {
            let result = if force {
                tmp.persist(&path).map(|_| ())
            } else {
                tmp.persist_noclobber(&path).map(|_| ())
            };
            if let Err(e) = result {
                for p in &placed {
                    let _ = fs::remove_file(p);
                }
                return Err(InputError::io(path, e.error));
            }
            placed.push(path);
        }
        Ok(())
    }
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Two output paths name the same file: equal as written, or the same existing file.
fn same_path(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (fs::symlink_metadata(a), fs::symlink_metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => match (fs::canonicalize(parent(a)), fs::canonicalize(parent(b))) {
            (Ok(pa), Ok(pb)) => pa == pb && a.file_name() == b.file_name(),
            _ => false,
        },
    }
}

/// Create a new folder `dir` for a run's outputs; it must not exist. Returns a guard that
/// removes it again unless `keep` is called, so a failed run leaves no folder behind.
pub fn new_dir(dir: &Path) -> Result<DirGuard, InputError> {
    fs::create_dir(dir).map_err(|e| match e.kind() {
        // Said as every output folder that must be new is said.
        std::io::ErrorKind::AlreadyExists => InputError::Exists {
            path: dir.to_path_buf(),
        },
        _ => InputError::io(dir, e),
    })?;
    Ok(DirGuard {
        dir: Some(dir.to_path_buf()),
    })
}

/// A folder created by this run, removed on drop unless kept.
pub struct DirGuard {
    dir: Option<PathBuf>,
}

impl DirGuard {
    /// The run succeeded: leave the folder.
    pub fn keep(mut self) {
        self.dir = None;
    }
}

impl Drop for DirGuard {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

/// Create `dir` (which must not exist) holding `files` (name, bytes), all or nothing: the files
/// are written into a `.nbg-partial-*` folder beside it, which is renamed into place only when
/// every file is complete, and removed on any failure.
pub fn write_new_dir(dir: &Path, files: &[(&str, &[u8])]) -> Result<(), InputError> {
    use std::io::Write;
    if fs::symlink_metadata(dir).is_ok() {
        return Err(InputError::Exists {
            path: dir.to_path_buf(),
        });
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let staged = tempfile::Builder::new()
        .prefix(".nbg-partial-")
        .tempdir_in(parent)
        .map_err(|e| InputError::io(dir, e))?;
    for (name, bytes) in files {
        let path = staged.path().join(name);
        fs::File::create_new(&path)
            .and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_all()))
            .map_err(|e| InputError::io(dir.join(name), e))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // tempdir is 0700; a finished output folder gets the usual 0755 (umask permitting).
        fs::set_permissions(staged.path(), fs::Permissions::from_mode(0o755))
            .map_err(|e| InputError::io(dir, e))?;
    }
    let staged = staged.keep();
    fs::rename(&staged, dir).map_err(|e| {
        let _ = fs::remove_dir_all(&staged);
        InputError::io(dir, e)
    })
}
