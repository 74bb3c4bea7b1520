//! `NbgError`: every refusal as the CLI's stable code, the file offset and a message.

use nbg_lab::files::InputError;
use nbg_lab::nbg::failure::{Code, Failure};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(
    nbg_lab,
    NbgError,
    PyException,
    "A refusal: `.code` (the CLI's stable kebab-case code), `.offset` (the file offset it \
     concerns) and `.message`."
);

/// A refusal in the shape every function raises.
pub struct Refusal {
    code: String,
    offset: u64,
    message: String,
}

impl Refusal {
    /// `code` at `offset`, said in `message`.
    pub fn new(code: impl Into<String>, offset: u64, message: impl Into<String>) -> Self {
        Refusal {
            code: code.into(),
            offset,
            message: message.into(),
        }
    }
}

impl From<Failure> for Refusal {
    fn from(f: Failure) -> Self {
        Refusal::new(f.code.as_str(), f.offset, f.message)
    }
}

/// An input that cannot be read is `unreadable` at offset 0, as `nbg check --json` and
/// `nbg info --json` list it.
impl From<InputError> for Refusal {
    fn from(e: InputError) -> Self {
        Refusal::new(Code::Unreadable.as_str(), 0, e.to_string())
    }
}

impl From<Refusal> for PyErr {
    fn from(r: Refusal) -> PyErr {
        Python::attach(|py| {
            let text = format!("{} at offset {}: {}", r.code, r.offset, r.message);
            let err = NbgError::new_err(text);
            let value = err.value(py);
            let set = value
                .setattr("code", r.code)
                .and_then(|()| value.setattr("offset", r.offset))
                .and_then(|()| value.setattr("message", r.message));
            match set {
                Ok(()) => err,
                Err(e) => e,
            }
        })
    }
}

/// Run `work` and contain a panic: it becomes an `NbgError` with code `internal-panic`, never a
/// `PanicException` (the library is fuzzed not to panic; this is the last guard).
pub fn contained<T>(work: impl FnOnce() -> Result<T, Refusal>) -> Result<T, Refusal> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|panic| {
        let said = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Refusal::new(
            "internal-panic",
            0,
            format!("nbg-lab panicked (a bug; please report it with the input): {said}"),
        ))
    })
}
