//! The eight exception classes of the `hurray` package and the one place every
//! Rust error becomes a Python exception.

use hurray_core::{DecodeError, Rule};
use hurray_ffi::{status::*, ErrorCategory, FfiError};
use pyo3::create_exception;
use pyo3::exceptions::{PyNotImplementedError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::Path;

create_exception!(
    hurray,
    InvalidDescriptorError,
    PyValueError,
    "A descriptor, shape, layout, quantization, statistics or shard broke a rule of the format."
);
create_exception!(
    hurray,
    BufferError,
    PyValueError,
    "A buffer is too small, of the wrong type, or a native capsule is unusable \
     (not a subclass of the builtin BufferError)."
);
create_exception!(
    hurray,
    CopyRequiredError,
    PyValueError,
    "The requested conversion needs a copy but copy=False was given."
);
create_exception!(
    hurray,
    UnsupportedError,
    PyNotImplementedError,
    "The dtype, layout or device combination is not supported by the requested operation."
);
create_exception!(
    hurray,
    InternalError,
    PyRuntimeError,
    "A bug in the library (a Rust panic caught at the binding boundary)."
);
create_exception!(
    hurray,
    FileError,
    PyOSError,
    "A file could not be read or written, or the container broke a rule."
);
create_exception!(
    hurray,
    NotFoundError,
    pyo3::exceptions::PyKeyError,
    "A server holds no item under the requested key (network ERROR UNKNOWN_TENSOR, \
     net_code 2): a KeyError."
);
create_exception!(
    hurray,
    StreamError,
    PyOSError,
    "A stream is malformed or truncated, or a writer was used after finish()."
);

/// A descriptor rule violation: buffer-size rules are `hurray.BufferError`, every
/// other rule `hurray.InvalidDescriptorError`. The message names the rule and offset.
pub fn descriptor(e: &DecodeError) -> PyErr {
    match e.rule {
        Rule::BufferTooSmall => BufferError::new_err(e.to_string()),
        _ => InvalidDescriptorError::new_err(e.to_string()),
    }
}

/// Where an error of hurray-ffi's face surfaced: it picks the class of container
/// errors (framing, truncation, limits) and how the message reads.
#[derive(Clone, Copy, Debug)]
pub enum Origin<'a> {
    /// A tensor, descriptor or capsule handle: the message keeps the status name in
    /// front (`HURRAY_ERR_BUFFER_MISMATCH: ...`); container errors are `StreamError`.
    Handle,
    /// A stream being read or written: framing and truncation are `StreamError`, the
    /// transport's I/O errors `FileError`.
    Stream,
    /// The file at this path (`save`, `load`, `verify_data_crc32c`): OS errors are
    /// `OSError`s with `errno`, `strerror` and `filename`, every other container error
    /// `FileError`, and every message names the path once.
    File(&'a Path),
}

/// The one place an error of hurray-ffi's face ([`FfiError`]: status, category, OS
/// error number) becomes a Python exception:
///
/// - a descriptor rule, a buffer-table mismatch or a buffer-content rule, anywhere:
///   `InvalidDescriptorError`;
/// - category internal (a caught panic): `InternalError`;
/// - for a file, an OS error (or a missing file): `hurray.FileNotFoundError` (ENOENT),
///   `hurray.IsADirectoryError` (EISDIR) or `hurray.FileError`, each an `OSError` with
///   `errno`, `strerror` and `filename` set;
/// - categories I/O and not-found (of a file): `FileError`;
/// - everything else: `FileError` for a file, `StreamError` for a stream; for a
///   handle, truncated/limit/format framing `StreamError`, the ABI version
///   `UnsupportedError`, and argument or state errors `BufferError`.
pub fn map(e: FfiError, origin: Origin<'_>) -> PyErr {
    let text = match origin {
        Origin::Handle => e.to_string(),
        Origin::Stream => e.message.clone(),
        Origin::File(path) => naming(path, &e.message),
    };
    if e.is_content() || matches!(e.status, HURRAY_ERR_DESCRIPTOR | HURRAY_ERR_BUFFER_MISMATCH) {
        return InvalidDescriptorError::new_err(text);
    }
    if let (Origin::Stream, Some(EPIPE)) = (origin, e.os_error()) {
        return os_error(EPIPE, None);
    }
    let os_file_error = e.os_error().is_some() || e.status == HURRAY_ERR_FILE_NOT_FOUND;
    match (e.category(), origin) {
        (ErrorCategory::Internal, _) => InternalError::new_err(text),
        (ErrorCategory::Io | ErrorCategory::NotFound, Origin::File(path)) if os_file_error => {
            // A missing file whose error carries no number is still ENOENT.
            os_error(e.os_error().unwrap_or(ENOENT), Some(path))
        }
        (ErrorCategory::Io, _) => FileError::new_err(text),
        (ErrorCategory::NotFound, _) if e.status == HURRAY_ERR_FILE_NOT_FOUND => {
            FileError::new_err(text)
        }
        (_, Origin::File(_)) => FileError::new_err(text),
        (_, Origin::Stream) => StreamError::new_err(text),
        (ErrorCategory::Truncated | ErrorCategory::Limit, Origin::Handle) => {
            StreamError::new_err(text)
        }
        (ErrorCategory::Format, Origin::Handle) if e.status == HURRAY_ERR_FORMAT => {
            StreamError::new_err(text)
        }
        (ErrorCategory::Unsupported, Origin::Handle) if e.status == HURRAY_ERR_ABI_VERSION => {
            UnsupportedError::new_err(text)
        }
        (_, Origin::Handle) => BufferError::new_err(text),
    }
}

/// An error of the handle layer: [`map`] with [`Origin::Handle`] (for `map_err`).
pub fn ffi(e: FfiError) -> PyErr {
    map(e, Origin::Handle)
}

/// `ENOENT`, the same number on every platform Python runs on.
const ENOENT: i32 = 2;
/// `EPIPE` (Linux, macOS and the BSDs).
const EPIPE: i32 = 32;

/// An I/O error of opening or using `path` (or a transport, `None`): for an OS
/// error, the `OSError` subclass [`os_error`] picks (`filename` set to the path);
/// otherwise a `hurray.FileError` naming the path.
pub fn io_error(e: &std::io::Error, path: Option<&Path>) -> PyErr {
    match e.raw_os_error() {
        Some(errno) => os_error(errno, path),
        None => match path {
            Some(p) => FileError::new_err(format!("{}: {e}", p.display())),
            None => FileError::new_err(e.to_string()),
        },
    }
}

/// `message` with `path` in front, unless the face already put it there (a file
/// open, or an I/O error of a writer): the path appears once.
fn naming(path: &Path, message: &str) -> String {
    let shown = path.display().to_string();
    match message.strip_prefix(&shown) {
        Some(rest) if rest.starts_with(": ") => message.to_string(),
        _ => format!("{shown}: {message}"),
    }
}

/// The `OSError` for OS error number `errno` at `path`: `hurray.FileNotFoundError`
/// (ENOENT), `hurray.IsADirectoryError` (EISDIR), `hurray.BrokenPipeError` (EPIPE),
/// else `hurray.FileError`; `strerror` is the OS's text for the number, `filename`
/// the path (`None` for a transport without one).
pub fn os_error(errno: i32, path: Option<&Path>) -> PyErr {
    let shown = path.map(|p| p.display().to_string());
    let io = std::io::Error::from_raw_os_error(errno);
    let text = io.to_string();
    let strerror = text
        .strip_suffix(&format!(" (os error {errno})"))
        .unwrap_or(&text)
        .to_string();
    let class = match io.kind() {
        std::io::ErrorKind::NotFound => "FileNotFoundError",
        std::io::ErrorKind::IsADirectory => "IsADirectoryError",
        std::io::ErrorKind::BrokenPipe => "BrokenPipeError",
        _ => return FileError::new_err((errno, strerror, shown)),
    };
    Python::attach(|py| {
        py.import("hurray._native")
            .and_then(|m| m.getattr(class))
            .and_then(|t| t.call1((errno, strerror, shown)))
            .map(PyErr::from_value)
            .unwrap_or_else(|err| err)
    })
}

/// The OS-error subclasses that are also `hurray.FileError`, by the builtin they
/// refine: `(name in hurray, builtin name, docstring)`.
const OS_SUBCLASSES: [(&str, &str, &str); 3] = [
    (
        "FileNotFoundError",
        "FileNotFoundError",
        "The file does not exist: both the builtin FileNotFoundError and hurray.FileError \
         (errno ENOENT, filename set).",
    ),
    (
        "IsADirectoryError",
        "IsADirectoryError",
        "The path is a directory: both the builtin IsADirectoryError and hurray.FileError \
         (errno EISDIR, filename set).",
    ),
    (
        "BrokenPipeError",
        "BrokenPipeError",
        "The reading end of a pipe or socket a StreamWriter writes to was closed: both \
         the builtin BrokenPipeError and hurray.FileError (errno EPIPE).",
    ),
];

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let builtins = py.import("builtins")?;
    let make_type = builtins.getattr("type")?;
    for (name, builtin, doc) in OS_SUBCLASSES {
        let ns = pyo3::types::PyDict::new(py);
        ns.set_item("__module__", "hurray")?;
        ns.set_item("__doc__", doc)?;
        let bases = (py.get_type::<FileError>(), builtins.getattr(builtin)?);
        m.add(name, make_type.call1((name, bases, ns))?)?;
    }
    m.add(
        "InvalidDescriptorError",
        py.get_type::<InvalidDescriptorError>(),
    )?;
    m.add("BufferError", py.get_type::<BufferError>())?;
    m.add("CopyRequiredError", py.get_type::<CopyRequiredError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("FileError", py.get_type::<FileError>())?;
    m.add("StreamError", py.get_type::<StreamError>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    Ok(())
}
