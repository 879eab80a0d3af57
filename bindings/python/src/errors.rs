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

/// An error of making a tensor handle (`HurrayTensor::new`): there
/// `HURRAY_ERR_FORMAT` only means buffer contents that break a content rule (sparse
/// indices, block tables, scales), a rule violation like any other descriptor rule:
/// `hurray.InvalidDescriptorError`, as `Tensor.validate_content` raises. The rest
/// as [`ffi`].
pub fn tensor_new(e: FfiError) -> PyErr {
    if e.status == HURRAY_ERR_FORMAT {
        return InvalidDescriptorError::new_err(e.to_string());
    }
    ffi(e)
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

/// Registers the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
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
