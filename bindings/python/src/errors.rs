//! The seven exception classes of the `hurray` package and the one place every
//! Rust error becomes a Python exception.

use hurray_core::{DecodeError, Rule};
use hurray_ffi::{status::*, FfiError};
use pyo3::create_exception;
use pyo3::exceptions::{PyNotImplementedError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

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

/// An error of the handle layer (hurray-ffi).
pub fn ffi(e: FfiError) -> PyErr {
    let msg = e.to_string();
    if e.is_content() {
        // A layout or quantization rule broken by buffer bytes.
        return InvalidDescriptorError::new_err(msg);
    }
    match e.status {
        HURRAY_ERR_DESCRIPTOR => InvalidDescriptorError::new_err(msg),
        HURRAY_ERR_BUFFER_MISMATCH => InvalidDescriptorError::new_err(msg),
        HURRAY_ERR_ABI_VERSION => UnsupportedError::new_err(msg),
        HURRAY_ERR_INTERNAL_PANIC => InternalError::new_err(msg),
        HURRAY_ERR_IO | HURRAY_ERR_FILE_NOT_FOUND => FileError::new_err(msg),
        HURRAY_ERR_FORMAT | HURRAY_ERR_TRUNCATED | HURRAY_ERR_LIMIT => StreamError::new_err(msg),
        _ => BufferError::new_err(msg),
    }
}

/// An error of a container (`kind` is "stream" or "file"): descriptor problems are
/// `InvalidDescriptorError`, I/O is `FileError`, framing is `StreamError` for
/// streams and `FileError` for files.
pub fn io(e: hurray_io::Error, file: bool) -> PyErr {
    match e {
        hurray_io::Error::Descriptor { source, at } => {
            InvalidDescriptorError::new_err(format!("descriptor at byte {at}: {source}"))
        }
        // A layout or quantization rule broken by the buffer bytes (sparse indices,
        // block tables, scales): the reference API's class for rule violations.
        hurray_io::Error::Format {
            rule: hurray_io::FormatRule::BufferMismatch,
            ..
        }
        | hurray_io::Error::Content { .. } => InvalidDescriptorError::new_err(e.to_string()),
        hurray_io::Error::Io(ref io) if file || io.kind() != std::io::ErrorKind::UnexpectedEof => {
            FileError::new_err(e.to_string())
        }
        _ if file => FileError::new_err(e.to_string()),
        _ => StreamError::new_err(e.to_string()),
    }
}

/// The OS-error subclasses that are also `hurray.FileError`, by the builtin they
/// refine: `(name in hurray, builtin name, docstring)`.
const OS_SUBCLASSES: [(&str, &str, &str); 2] = [
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
];

/// The error of reading or writing the file at `path`, mapped once by category:
/// an OS error becomes `hurray.FileNotFoundError` (ENOENT), `hurray.IsADirectoryError`
/// (EISDIR) or `hurray.FileError`, each an `OSError` with `errno`, `strerror` and
/// `filename` set; a descriptor or buffer-content rule `InvalidDescriptorError`;
/// any other container error (truncated, bad magic, CRC, limit) `hurray.FileError`
/// without errno. Every message names the path.
pub fn file(py: Python<'_>, e: hurray_io::Error, path: &std::path::Path) -> PyErr {
    let shown = path.display().to_string();
    match e {
        hurray_io::Error::Io(ref io) if io.raw_os_error().is_some() || is_not_found(io) => {
            let errno = io.raw_os_error().unwrap_or(2);
            let text = io.to_string();
            let strerror = text
                .strip_suffix(&format!(" (os error {errno})"))
                .unwrap_or(&text)
                .to_string();
            let class = match io.kind() {
                std::io::ErrorKind::NotFound => Some("FileNotFoundError"),
                std::io::ErrorKind::IsADirectory => Some("IsADirectoryError"),
                _ => None,
            };
            let made = match class {
                Some(name) => py
                    .import("hurray._native")
                    .and_then(|m| m.getattr(name))
                    .and_then(|t| t.call1((errno, strerror.clone(), shown.clone())))
                    .map(PyErr::from_value),
                None => Ok(FileError::new_err((errno, strerror.clone(), shown.clone()))),
            };
            made.unwrap_or_else(|err| err)
        }
        hurray_io::Error::Descriptor { .. }
        | hurray_io::Error::Content { .. }
        | hurray_io::Error::Format {
            rule: hurray_io::FormatRule::BufferMismatch,
            ..
        } => InvalidDescriptorError::new_err(format!("{shown}: {e}")),
        // Not an OS error: `filename` stays unset (Python would print the error as
        // "[Errno None] None: 'path'"); the message names the path.
        _ => FileError::new_err(format!("{shown}: {e}")),
    }
}

fn is_not_found(io: &std::io::Error) -> bool {
    io.kind() == std::io::ErrorKind::NotFound
}

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
    Ok(())
}
