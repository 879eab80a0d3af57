//! The error policy: every failure becomes a pending Java exception.
//!
//! A library error (`FfiError`, a status and a message) becomes a `dev.hurray.HurrayException` (via `HurrayException.fromNative`),
//! a JNI failure an `IllegalStateException` (unless one is already pending), a bad
//! argument an `IllegalArgumentException`; [`run`] is the panic boundary of every entry
//! point.

use std::panic::{catch_unwind, AssertUnwindSafe};

use hurray_ffi::{FfiError, HurrayStatus, HURRAY_ERR_INTERNAL_PANIC};
use jni::objects::{JThrowable, JValue};
use jni::JNIEnv;

/// Why an entry point failed.
pub(crate) enum Fail {
    /// The library refused: its status and message (`"<STATUS_NAME>: <detail>"`,
    /// as the C ABI's last-error message reads).
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

impl From<FfiError> for Fail {
    fn from(e: FfiError) -> Fail {
        Fail::Status(e.status, e.to_string())
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
