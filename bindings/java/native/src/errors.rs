//! The error policy: every failure becomes a pending Java exception, and the one
//! place where a library error's category becomes a Java exception type
//! ([`exception_class`], docs/java.md "Errors").
//!
//! A library error (`FfiError`: a status, a message, maybe an OS error number)
//! becomes, by its category (`FfiError::category`, the one table of every binding)
//! and `FfiError::os_error`:
//!
//! | category | in a method that declares `IOException` | elsewhere |
//! |---|---|---|
//! | not found, for a path | `MissingFileException` (a `NoSuchFileException`) | the same, wrapped in `UncheckedIOException` |
//! | not found (a tensor, a key) | `NotFoundException` | `NotFoundException` |
//! | I/O, `EISDIR` | `IsDirectoryException` (a `FileSystemException`) | wrapped in `UncheckedIOException` |
//! | I/O | `HurrayIOException` (a `FileSystemException`) | wrapped in `UncheckedIOException` |
//! | truncated | `TruncatedException` (an `EOFException`) | `FormatException` (an in-memory value cut short) |
//! | format, limit | `FormatException` | `FormatException` |
//! | other | `HurrayException` | `HurrayException` |
//!
//! Every one of them implements `dev.hurray.HurrayError` (status, category, errno,
//! and `netCode`: the network protocol's ERROR code, set here on `HurrayException`s
//! and `HurrayIOException`s when the error came from a server).
//! A JNI failure becomes an `IllegalStateException` (unless one is already pending),
//! a bad argument an `IllegalArgumentException`; [`run`] is the panic boundary of
//! every entry point.

use std::panic::{catch_unwind, AssertUnwindSafe};

use hurray_ffi::{ErrorCategory, FfiError, HURRAY_ERR_FILE_NOT_FOUND, HURRAY_ERR_INTERNAL_PANIC};
use jni::objects::{JObject, JThrowable, JValue};
use jni::JNIEnv;

/// `ENOENT` and `EISDIR` (the same numbers on Linux and macOS).
const ENOENT: i32 = 2;
const EISDIR: i32 = 21;

/// Why an entry point failed.
pub(crate) enum Fail {
    /// The library refused, in an entry point whose Java method is unchecked: an
    /// I/O-family error is wrapped in `UncheckedIOException`.
    Status(FfiError),
    /// The library refused, in an entry point whose `Native` method declares
    /// `throws IOException` ([`checked`]); the path, when the call was about one.
    Checked(FfiError, Option<String>),
    /// A JNI call failed; usually a Java exception is already pending.
    Jni(jni::errors::Error),
    /// A Java argument was unusable (becomes `IllegalArgumentException`).
    Arg(String),
    /// Java cannot represent the result (becomes `UnsupportedOperationException`).
    Unsupported(String),
}

impl From<jni::errors::Error> for Fail {
    fn from(e: jni::errors::Error) -> Fail {
        Fail::Jni(e)
    }
}

pub(crate) type R<T> = Result<T, Fail>;

impl From<FfiError> for Fail {
    fn from(e: FfiError) -> Fail {
        Fail::Status(e)
    }
}

/// For `map_err` in an entry point whose `Native` method declares `throws
/// IOException`: the library's error as a checked one, about `path` if given.
pub(crate) fn checked(path: Option<&str>) -> impl FnOnce(FfiError) -> Fail + '_ {
    move |e| Fail::Checked(e, path.map(str::to_string))
}

/// Whether a Java class is an `IOException` (so it needs a path-aware constructor
/// and, outside a checked method, wrapping).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// `(int status, int osError, String message)`, unchecked.
    Runtime,
    /// `(int status, int osError, String file, String reason)`, a `FileSystemException`.
    FileSystem,
    /// `(int status, int osError, String message)`, an `EOFException`.
    Eof,
}

/// The one mapping from a library error to a Java exception class (see the module
/// comment's table). `checked`: the entry point may throw an `IOException`.
fn exception_class(e: &FfiError, checked: bool, has_path: bool) -> (&'static str, Family) {
    let errno = e.os_error().unwrap_or(0);
    match e.category() {
        ErrorCategory::NotFound
            if has_path && (e.status == HURRAY_ERR_FILE_NOT_FOUND || errno == ENOENT) =>
        {
            ("dev/hurray/MissingFileException", Family::FileSystem)
        }
        ErrorCategory::NotFound => ("dev/hurray/NotFoundException", Family::Runtime),
        ErrorCategory::Io if errno == EISDIR => {
            ("dev/hurray/IsDirectoryException", Family::FileSystem)
        }
        ErrorCategory::Io => ("dev/hurray/HurrayIOException", Family::FileSystem),
        ErrorCategory::Truncated if checked => ("dev/hurray/TruncatedException", Family::Eof),
        ErrorCategory::Truncated | ErrorCategory::Format | ErrorCategory::Limit => {
            ("dev/hurray/FormatException", Family::Runtime)
        }
        ErrorCategory::InvalidArgument
        | ErrorCategory::State
        | ErrorCategory::Unsupported
        | ErrorCategory::Internal => ("dev/hurray/HurrayException", Family::Runtime),
    }
}

/// The Java exception for `e` (not yet thrown).
fn exception<'l>(
    env: &mut JNIEnv<'l>,
    e: &FfiError,
    checked: bool,
    path: Option<&str>,
) -> jni::errors::Result<JObject<'l>> {
    let (class, family) = exception_class(e, checked, path.is_some());
    let status = JValue::Int(e.status);
    let errno = JValue::Int(e.os_error().unwrap_or(0));
    let ex = match family {
        Family::Runtime | Family::Eof => {
            let m = env.new_string(e.to_string())?;
            env.new_object(
                class,
                "(IILjava/lang/String;)V",
                &[status, errno, JValue::Object(&m)],
            )?
        }
        Family::FileSystem => {
            // `FileSystemException` prints "<file>: <reason>": the reason is the
            // status name and the detail, without the path the library put first.
            let file = path.map(|p| env.new_string(p)).transpose()?;
            let detail = path
                .and_then(|p| e.message.strip_prefix(p))
                .and_then(|m| m.strip_prefix(": "))
                .unwrap_or(&e.message);
            let reason =
                env.new_string(format!("{}: {detail}", hurray_ffi::status_name(e.status)))?;
            let null = JObject::null();
            env.new_object(
                class,
                "(IILjava/lang/String;Ljava/lang/String;)V",
                &[
                    status,
                    errno,
                    JValue::Object(file.as_deref().unwrap_or(&null)),
                    JValue::Object(&reason),
                ],
            )?
        }
    };
    // The network protocol's ERROR code (B.16), on the classes that carry it
    // (`HurrayException` and its subclasses, `HurrayIOException` and its subclass).
    if let Some(code) = e.net_code().filter(|&c| c != 0) {
        if family == Family::Runtime
            || class.ends_with("IOException")
            || class.ends_with("IsDirectoryException")
        {
            env.set_field(&ex, "netCode", "I", JValue::Int(code as i32))?;
        }
    }
    if checked || family == Family::Runtime {
        return Ok(ex);
    }
    // An I/O-family error where the Java method cannot declare it: the JDK's
    // convention, as in `Files.lines` streams.
    let m = env.new_string(e.to_string())?;
    env.new_object(
        "java/io/UncheckedIOException",
        "(Ljava/lang/String;Ljava/io/IOException;)V",
        &[JValue::Object(&m), JValue::Object(&ex)],
    )
}

/// Makes `f` pending as a Java exception (unless one already is).
fn throw(env: &mut JNIEnv, f: Fail) {
    if env.exception_check().unwrap_or(false) {
        return;
    }
    let (e, checked, path) = match f {
        Fail::Status(e) => (e, false, None),
        Fail::Checked(e, path) => (e, true, path),
        Fail::Jni(e) => {
            let _ = env.throw_new("java/lang/IllegalStateException", format!("JNI: {e}"));
            return;
        }
        Fail::Arg(msg) => {
            let _ = env.throw_new("java/lang/IllegalArgumentException", msg);
            return;
        }
        Fail::Unsupported(msg) => {
            let _ = env.throw_new("java/lang/UnsupportedOperationException", msg);
            return;
        }
    };
    let built =
        exception(env, &e, checked, path.as_deref()).and_then(|ex| env.throw(JThrowable::from(ex)));
    if built.is_err() && !env.exception_check().unwrap_or(false) {
        let _ = env.throw_new("java/lang/IllegalStateException", e.to_string());
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
                Fail::Status(FfiError::new(
                    HURRAY_ERR_INTERNAL_PANIC,
                    format!("the Java binding panicked: {what}"),
                )),
            );
            default
        }
    }
}
