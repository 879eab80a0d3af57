//! The one place a library status becomes a JS `Error`, with Node's conventions for
//! `error.code` (docs/node.md "Errors"):
//!
//! - an error the operating system reported carries its errno name, as Node's own
//!   `fs` errors do: `ENOENT` (no such file), `EISDIR` (a directory), `EACCES`, ...;
//! - every other error carries `ERR_HURRAY_<CATEGORY>`, one code per category of the
//!   status: `ERR_HURRAY_NOT_FOUND`, `ERR_HURRAY_TRUNCATED`, `ERR_HURRAY_FORMAT`,
//!   `ERR_HURRAY_INVALID_ARGUMENT`, `ERR_HURRAY_STATE`, `ERR_HURRAY_LIMIT`,
//!   `ERR_HURRAY_UNSUPPORTED`, `ERR_HURRAY_INTERNAL` (and `ERR_HURRAY_IO` for an I/O
//!   error without an errno).
//!
//! Categories come from hurray-ffi (`FfiError::category`, one table for every
//! binding), the errno from `FfiError::os_error`.
//!
//! The message starts with the exact status name (`HURRAY_ERR_OUT_OF_RANGE: ...`)
//! and then names the rule, byte offset or path.

use hurray_ffi::{HurrayStatus, HURRAY_ERR_FILE_NOT_FOUND};

/// A JS error: `code` as the module comment says, the reason a human message.
pub type JsErr = napi::Error<String>;
/// The result type of every exported function.
pub type Result<T> = std::result::Result<T, JsErr>;

/// The `error.code` of a status, given the OS error number behind it (if any): the
/// errno name, else `ERR_HURRAY_<CATEGORY>` of the status's category.
fn node_code(status: HurrayStatus, os_errno: Option<i32>) -> String {
    if let Some(name) = os_errno.and_then(errno_name) {
        return name.to_string();
    }
    if status == HURRAY_ERR_FILE_NOT_FOUND {
        return "ENOENT".to_string();
    }
    format!(
        "ERR_HURRAY_{}",
        hurray_ffi::category(status).name().to_ascii_uppercase()
    )
}

/// Node's name of an errno value (Linux numbering), for the errors a path can give.
fn errno_name(n: i32) -> Option<&'static str> {
    Some(match n {
        1 => "EPERM",
        2 => "ENOENT",
        5 => "EIO",
        13 => "EACCES",
        20 => "ENOTDIR",
        21 => "EISDIR",
        23 => "ENFILE",
        24 => "EMFILE",
        36 => "ENAMETOOLONG",
        40 => "ELOOP",
        _ => return None,
    })
}

/// A JS error for `status` with `message` (which should start with the status name).
fn error_of(status: HurrayStatus, os_errno: Option<i32>, message: String) -> JsErr {
    napi::Error::new(node_code(status, os_errno), message)
}

/// A library error as a JS error; the message is the error's text, the one the C
/// ABI's last-error message carries (`"HURRAY_ERR_X: rule at byte N ..."`).
pub fn ffi(e: hurray_ffi::FfiError) -> JsErr {
    error_of(e.status, e.os_error(), e.to_string())
}

/// An error for misuse the binding detects itself (a closed object, a bad argument),
/// given the name of the C status that fits it (`"HURRAY_ERR_STATE"`, ...).
pub fn err(status_name: &str, message: impl Into<String>) -> JsErr {
    // The status of the name (statuses are small negative numbers).
    let status = hurray_ffi::STATUSES
        .iter()
        .find(|s| s.name == status_name)
        .map_or(hurray_ffi::HURRAY_ERR_INTERNAL_PANIC, |s| s.value);
    error_of(status, None, format!("{status_name}: {}", message.into()))
}

/// The error of any call on a closed object: `code` `ERR_HURRAY_STATE`.
pub fn closed(what: &str) -> JsErr {
    err("HURRAY_ERR_STATE", format!("the {what} is closed"))
}

/// Converts a napi error (a failed napi call) into our error type.
pub fn napi_err(e: napi::Error) -> JsErr {
    napi::Error::new(format!("{}", e.status), e.reason.clone())
}

/// A napi status as our error, for raw `napi_*` calls.
pub fn napi_check(status: napi::sys::napi_status, what: &str) -> Result<()> {
    if status == napi::sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(
            "ERR_NAPI".to_string(),
            format!("ERR_NAPI: {what} failed (napi status {status})"),
        ))
    }
}
