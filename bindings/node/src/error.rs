//! The one place a C ABI status becomes a JS `Error` (`code` = status name).

use std::ffi::CStr;

use hurray_ffi::abi::{hurray_last_error_message, hurray_status_name};

/// A JS error: `code` is a `HURRAY_*` status name, the reason a human message.
pub type JsErr = napi::Error<String>;
/// The result type of every exported function.
pub type Result<T> = std::result::Result<T, JsErr>;

/// `Ok(())` for `HURRAY_OK`; otherwise an error carrying the status name as `code`
/// and the calling thread's last-error message (which names the rule and offset).
pub fn check(status: i32) -> Result<()> {
    if status == hurray_ffi::HURRAY_OK {
        return Ok(());
    }
    // SAFETY: both functions return pointers to NUL-terminated strings owned by the
    // library (a static table and a thread-local), valid until the next call on this
    // thread; they are copied at once.
    let (name, message) = unsafe {
        (
            CStr::from_ptr(hurray_status_name(status))
                .to_string_lossy()
                .into_owned(),
            CStr::from_ptr(hurray_last_error_message())
                .to_string_lossy()
                .into_owned(),
        )
    };
    let message = if message.is_empty() {
        name.clone()
    } else {
        message
    };
    Err(napi::Error::new(name, message))
}

/// A library error as a JS error: `code` the status name, the message the same text
/// the C ABI's last-error message carries (`"HURRAY_ERR_X: rule at byte N ..."`).
pub fn ffi(e: hurray_ffi::FfiError) -> JsErr {
    napi::Error::new(hurray_ffi::status_name(e.status).to_string(), e.to_string())
}

/// An error for misuse the binding detects itself (a closed object, a bad argument),
/// with the C status name that fits it.
pub fn err(code: &str, message: impl Into<String>) -> JsErr {
    napi::Error::new(code.to_string(), format!("{code}: {}", message.into()))
}

/// The error of any call on a closed object: `code` `HURRAY_ERR_STATE`.
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
