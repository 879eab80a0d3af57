//! The error policy: every failure becomes a pending Java exception.
//!
//! A C status becomes a `dev.hurray.HurrayException` (via `HurrayException.fromNative`),
//! a JNI failure an `IllegalStateException` (unless one is already pending), a bad
//! argument an `IllegalArgumentException`; [`run`] is the panic boundary of every entry
//! point.

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};

use hurray_ffi::abi::hurray_last_error_message;
use hurray_ffi::{HurrayStatus, HURRAY_ERR_INTERNAL_PANIC, HURRAY_OK};
use jni::objects::{JThrowable, JValue};
use jni::JNIEnv;

/// Why an entry point failed.
pub(crate) enum Fail {
    /// A C ABI call failed: its status and the last-error message, read at once.
    Status(HurrayStatus, String),
    /// A JNI call failed; usually a Java exception is already pending.
    Jni(jni::errors::Error),
    /// A Java argument was unusable (becomes `IllegalArgumentException`).
    Arg(String),
}

impl From<jni::errors::Error> for Fail {
    fn from(e: jni::errors::Error) -> Fail {
        Fail::Jni(e)
    }
}

pub(crate) type R<T> = Result<T, Fail>;

/// The calling thread's last-error message of the C ABI ("" if none).
pub(crate) fn last_error() -> String {
    let p = hurray_last_error_message();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: a non-NULL last-error pointer is a NUL-terminated string that stays
    // valid until the next failing call on this thread; we copy it at once.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// `Ok` for `HURRAY_OK`, else the status with the message the call left.
pub(crate) fn ck(status: HurrayStatus) -> R<()> {
    if status == HURRAY_OK {
        Ok(())
    } else {
        Err(Fail::Status(status, last_error()))
    }
}

/// Makes `f` pending as a Java exception (unless one already is).
fn throw(env: &mut JNIEnv, f: Fail) {
    if env.exception_check().unwrap_or(false) {
        return;
    }
    match f {
        Fail::Status(status, msg) => {
            let built = (|| -> jni::errors::Result<()> {
                let m = env.new_string(&msg)?;
                let ex = env
                    .call_static_method(
                        "dev/hurray/HurrayException",
                        "fromNative",
                        "(ILjava/lang/String;)Ldev/hurray/HurrayException;",
                        &[JValue::Int(status), JValue::Object(&m)],
                    )?
                    .l()?;
                env.throw(JThrowable::from(ex))
            })();
            if built.is_err() && !env.exception_check().unwrap_or(false) {
                let _ = env.throw_new(
                    "java/lang/IllegalStateException",
                    format!("status {status}: {msg}"),
                );
            }
        }
        Fail::Jni(e) => {
            let _ = env.throw_new("java/lang/IllegalStateException", format!("JNI: {e}"));
        }
        Fail::Arg(msg) => {
            let _ = env.throw_new("java/lang/IllegalArgumentException", msg);
        }
    }
}

/// Runs one entry point's body: a panic or an error becomes a Java exception and the
/// entry point returns `default` (which Java never sees, as the exception is pending).
pub(crate) fn run<'l, T>(
    env: &mut JNIEnv<'l>,
    default: T,
    f: impl FnOnce(&mut JNIEnv<'l>) -> R<T>,
) -> T {
    match catch_unwind(AssertUnwindSafe(|| f(env))) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            throw(env, e);
            default
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            throw(
                env,
                Fail::Status(
                    HURRAY_ERR_INTERNAL_PANIC,
                    format!("HURRAY_ERR_INTERNAL_PANIC: the Java binding panicked: {what}"),
                ),
            );
            default
        }
    }
}
