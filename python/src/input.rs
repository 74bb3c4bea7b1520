//! Where a file's bytes come from: a path the library reads with its refusals, an immutable
//! `bytes` object read in place, or a copy of a buffer Python code may change.

use crate::error::Refusal;
use nbg_lab::nbg::failure::Code;
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Where a file's bytes are.
pub enum Source<'a> {
    /// In memory, the caller's or a copy of them.
    Memory(&'a [u8]),
    /// In the file at a path, read by the library.
    File(&'a Path),
}

/// A file given to a function.
pub enum Input {
    /// A path (`str` or `os.PathLike`): symlinks, folders and devices are refused, as by the CLI.
    Path(PathBuf),
    /// A `bytes` object, or a read-only C-contiguous view of one: immutable, so it is parsed in
    /// place, without the GIL and without a copy.
    Shared(PyBuffer<u8>),
    /// A copy of any other buffer of bytes (a `bytearray`, a writable `memoryview`, an `mmap`):
    /// Python code could change those while the parse runs without the GIL.
    Owned(Vec<u8>),
}

impl Input {
    /// Read `obj` as a file: bytes-like objects by their buffer, anything else as a path.
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Input> {
        let bytes_like = obj.is_instance_of::<PyBytes>()
            || obj.is_instance_of::<PyByteArray>()
            || obj.is_instance_of::<PyMemoryView>();
        if !bytes_like {
            if let Ok(path) = obj.extract::<PathBuf>() {
                return Ok(Input::Path(path));
            }
        }
        let buffer = PyBuffer::<u8>::get(obj).map_err(|_| {
            PyTypeError::new_err(
                "expected a path (str or os.PathLike) or a bytes-like object of unsigned bytes",
            )
        })?;
        if immutable(obj)? && buffer.readonly() && buffer.is_c_contiguous() {
            Ok(Input::Shared(buffer))
        } else {
            Ok(Input::Owned(buffer.to_vec(obj.py())?))
        }
    }

    /// Where the bytes are: in memory, or in the file at a path.
    pub fn source(&self) -> Source<'_> {
        match self {
            Input::Path(p) => Source::File(p),
            // SAFETY: the buffer is a read-only, C-contiguous export of an immutable `bytes`
            // object (checked in `of`), kept alive by the `PyBuffer` for as long as `self`; its
            // memory cannot change, so reading it without the GIL is sound.
            Input::Shared(b) => Source::Memory(unsafe {
                std::slice::from_raw_parts(b.buf_ptr() as *const u8, b.item_count())
            }),
            Input::Owned(v) => Source::Memory(v),
        }
    }

    /// The bytes in memory: the caller's, or the file's read whole.
    pub fn load(&self) -> Result<Cow<'_, [u8]>, Refusal> {
        match self.source() {
            Source::Memory(b) => Ok(Cow::Borrowed(b)),
            Source::File(path) => Ok(Cow::Owned(nbg_lab::files::read_regular(path)?)),
        }
    }

    /// The refusal of a file read again that is no longer the one parsed (its bytes in memory
    /// never change).
    pub fn changed(&self) -> Refusal {
        let what = format!("{}: changed since it was parsed", self.shown());
        Refusal::new(Code::Unreadable.as_str(), 0, what)
    }

    /// The name messages and documents give the file: its path, else `<bytes>`.
    pub fn shown(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            _ => "<bytes>".to_string(),
        }
    }
}

/// Whether `obj` is a `bytes` object or a view of one (immutable memory).
fn immutable(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if obj.is_instance_of::<PyBytes>() {
        return Ok(true);
    }
    if obj.is_instance_of::<PyMemoryView>() {
        return Ok(obj.getattr("obj")?.is_instance_of::<PyBytes>());
    }
    Ok(false)
}
