//! Status codes, the thread-local last-error message, and the one panic boundary
//! every export runs inside.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Result of every exported function: `HURRAY_OK` (0) or a negative error code.
/// Codes are stable once published; retired ones stay reserved.
pub type HurrayStatus = i32;

// Status codes, in ranges by origin. HURRAY_STATUS_LIST: keep `status_name` in step.
/// Success.
pub const HURRAY_OK: HurrayStatus = 0;
// -1 .. -19: arguments and handles.
/// A required pointer argument was NULL (or a required length was 0).
pub const HURRAY_ERR_NULL_POINTER: HurrayStatus = -1;
/// An argument is out of its documented range.
pub const HURRAY_ERR_INVALID_ARGUMENT: HurrayStatus = -2;
/// The ABI version of a handle or caller differs from `HURRAY_C_ABI_VERSION`.
pub const HURRAY_ERR_ABI_VERSION: HurrayStatus = -3;
/// An index is past the end of a list.
pub const HURRAY_ERR_OUT_OF_RANGE: HurrayStatus = -4;
/// A caller-supplied output buffer is too small; the needed size was reported.
pub const HURRAY_ERR_BUFFER_TOO_SMALL: HurrayStatus = -5;
/// The accessor does not apply (wrong layout, section absent, wrong scheme).
pub const HURRAY_ERR_NOT_APPLICABLE: HurrayStatus = -6;
/// A handle was destroyed twice (detected in debug builds).
pub const HURRAY_ERR_DOUBLE_DESTROY: HurrayStatus = -7;
/// An object was used in a state that does not allow the call.
pub const HURRAY_ERR_STATE: HurrayStatus = -8;
/// A name or key was not found.
pub const HURRAY_ERR_NOT_FOUND: HurrayStatus = -9;
// -20 .. -39: the format.
/// A descriptor did not decode or validate (the message names the rule and offset).
pub const HURRAY_ERR_DESCRIPTOR: HurrayStatus = -20;
/// The buffers do not match the descriptor's buffer table (count or sizes).
pub const HURRAY_ERR_BUFFER_MISMATCH: HurrayStatus = -21;
/// `sync_mode` is reserved or invalid (`streams-and-transport.md` C.4).
pub const HURRAY_ERR_INVALID_SYNC_MODE: HurrayStatus = -22;
/// The out-of-band sync payload (event or stream) does not match `sync_mode`.
pub const HURRAY_ERR_SYNC_MODE_MISMATCH: HurrayStatus = -23;
/// A stream or file container broke a rule (the message names it and the offset).
pub const HURRAY_ERR_FORMAT: HurrayStatus = -24;
/// Input ended early (truncated stream or file, torn composite).
pub const HURRAY_ERR_TRUNCATED: HurrayStatus = -25;
/// A configured limit for untrusted input was exceeded.
pub const HURRAY_ERR_LIMIT: HurrayStatus = -26;
// -40 .. -59: the system.
/// The operating system reported an I/O error.
pub const HURRAY_ERR_IO: HurrayStatus = -40;
/// A file does not exist.
pub const HURRAY_ERR_FILE_NOT_FOUND: HurrayStatus = -41;
// -100: internal.
/// A bug: the library panicked. The process continues; the object involved may be unusable.
pub const HURRAY_ERR_INTERNAL_PANIC: HurrayStatus = -100;

/// The constant's name for a status (`"HURRAY_ERR_NULL_POINTER"`), or `"HURRAY_UNKNOWN_STATUS"`.
pub fn status_name(s: HurrayStatus) -> &'static str {
    match s {
        HURRAY_OK => "HURRAY_OK",
        HURRAY_ERR_NULL_POINTER => "HURRAY_ERR_NULL_POINTER",
        HURRAY_ERR_INVALID_ARGUMENT => "HURRAY_ERR_INVALID_ARGUMENT",
        HURRAY_ERR_ABI_VERSION => "HURRAY_ERR_ABI_VERSION",
        HURRAY_ERR_OUT_OF_RANGE => "HURRAY_ERR_OUT_OF_RANGE",
        HURRAY_ERR_BUFFER_TOO_SMALL => "HURRAY_ERR_BUFFER_TOO_SMALL",
        HURRAY_ERR_NOT_APPLICABLE => "HURRAY_ERR_NOT_APPLICABLE",
        HURRAY_ERR_DOUBLE_DESTROY => "HURRAY_ERR_DOUBLE_DESTROY",
        HURRAY_ERR_STATE => "HURRAY_ERR_STATE",
        HURRAY_ERR_NOT_FOUND => "HURRAY_ERR_NOT_FOUND",
        HURRAY_ERR_DESCRIPTOR => "HURRAY_ERR_DESCRIPTOR",
        HURRAY_ERR_BUFFER_MISMATCH => "HURRAY_ERR_BUFFER_MISMATCH",
        HURRAY_ERR_INVALID_SYNC_MODE => "HURRAY_ERR_INVALID_SYNC_MODE",
        HURRAY_ERR_SYNC_MODE_MISMATCH => "HURRAY_ERR_SYNC_MODE_MISMATCH",
        HURRAY_ERR_FORMAT => "HURRAY_ERR_FORMAT",
        HURRAY_ERR_TRUNCATED => "HURRAY_ERR_TRUNCATED",
        HURRAY_ERR_LIMIT => "HURRAY_ERR_LIMIT",
        HURRAY_ERR_IO => "HURRAY_ERR_IO",
        HURRAY_ERR_FILE_NOT_FOUND => "HURRAY_ERR_FILE_NOT_FOUND",
        HURRAY_ERR_INTERNAL_PANIC => "HURRAY_ERR_INTERNAL_PANIC",
        _ => "HURRAY_UNKNOWN_STATUS",
    }
}

/// An error on its way out of the library: a status for programs, a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FfiError {
    /// The status code.
    pub status: HurrayStatus,
    /// Human detail: which rule, which byte offset.
    pub message: String,
}

/// How every buffer-content error's message starts (`HURRAY_ERR_FORMAT`, from
/// `hurray_core::content`), so a binding can tell it from container framing errors.
pub const CONTENT_ERROR_PREFIX: &str = "buffer content";

impl FfiError {
    /// True for a buffer-content rule violation (a sparse index, a block table, a
    /// scale: `HURRAY_ERR_FORMAT` with a message starting [`CONTENT_ERROR_PREFIX`]).
    pub fn is_content(&self) -> bool {
        self.status == HURRAY_ERR_FORMAT && self.message.starts_with(CONTENT_ERROR_PREFIX)
    }

    /// An error with this status and message.
    pub fn new(status: HurrayStatus, message: impl Into<String>) -> FfiError {
        FfiError {
            status,
            message: message.into(),
        }
    }
    /// `HURRAY_ERR_NULL_POINTER` naming the argument.
    pub fn null(arg: &str) -> FfiError {
        FfiError::new(HURRAY_ERR_NULL_POINTER, format!("argument `{arg}` is NULL"))
    }
}

impl std::fmt::Display for FfiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", status_name(self.status), self.message)
    }
}

impl std::error::Error for FfiError {}

impl From<hurray_core::DecodeError> for FfiError {
    fn from(e: hurray_core::DecodeError) -> Self {
        FfiError::new(HURRAY_ERR_DESCRIPTOR, e.to_string())
    }
}

impl From<hurray_io::Error> for FfiError {
    fn from(e: hurray_io::Error) -> Self {
        use hurray_io::{Error, FormatRule};
        let status = match &e {
            Error::Io(io) if io.kind() == std::io::ErrorKind::NotFound => HURRAY_ERR_FILE_NOT_FOUND,
            _ if e.is_truncation() => HURRAY_ERR_TRUNCATED,
            Error::Io(_) => HURRAY_ERR_IO,
            Error::Descriptor { .. } => HURRAY_ERR_DESCRIPTOR,
            Error::Format {
                rule: FormatRule::Limit,
                ..
            } => HURRAY_ERR_LIMIT,
            Error::Format {
                rule: FormatRule::BufferMismatch,
                ..
            } => HURRAY_ERR_BUFFER_MISMATCH,
            Error::Format {
                rule: FormatRule::SyncMode,
                ..
            } => HURRAY_ERR_INVALID_SYNC_MODE,
            _ => HURRAY_ERR_FORMAT,
        };
        FfiError::new(status, e.to_string())
    }
}

/// Result of the safe layer.
pub type FfiResult<T> = Result<T, FfiError>;

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Records `e` as this thread's last error and returns its status.
pub(crate) fn set_last_error(e: &FfiError) -> HurrayStatus {
    let text = format!("{}: {}", status_name(e.status), e.message).replace('\0', "\\0");
    LAST_ERROR.with(|c| *c.borrow_mut() = CString::new(text).ok());
    e.status
}

/// The last error message of this thread as a C string, or NULL when none.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|c| c.borrow().as_ref().map_or(std::ptr::null(), |s| s.as_ptr()))
}

/// Runs an export body: catches panics (-> `HURRAY_ERR_INTERNAL_PANIC`), records any
/// error as the thread's last error, and returns the status.
pub(crate) fn boundary(f: impl FnOnce() -> FfiResult<()>) -> HurrayStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => HURRAY_OK,
        Ok(Err(e)) => set_last_error(&e),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&FfiError::new(
                HURRAY_ERR_INTERNAL_PANIC,
                format!("the library panicked: {what}"),
            ))
        }
    }
}

/// Writes `v` through a required out-pointer.
///
/// # Safety
/// `out` must be NULL or valid for a write of `T`.
pub(crate) unsafe fn put<T>(out: *mut T, arg: &str, v: T) -> FfiResult<()> {
    if out.is_null() {
        return Err(FfiError::null(arg));
    }
    // SAFETY: non-null and valid per the caller.
    unsafe { out.write(v) };
    Ok(())
}

/// Checks a required out-pointer before any work is done (outputs are written only on success).
pub(crate) fn need<T>(out: *mut T, arg: &str) -> FfiResult<()> {
    if out.is_null() {
        Err(FfiError::null(arg))
    } else {
        Ok(())
    }
}

/// Copies a variable-length result into a caller array (the convention of every
/// array accessor): `*out_len` receives the number of elements; a NULL `out` only
/// asks for that number; a `capacity` (in elements) below it fails with
/// `HURRAY_ERR_BUFFER_TOO_SMALL` after writing `*out_len`, and copies nothing.
///
/// # Safety
/// `out` must be NULL or valid for `capacity` writes of `T`; `out_len` NULL or writable.
pub(crate) unsafe fn copy_out<T: Copy>(
    src: &[T],
    out: *mut T,
    capacity: u64,
    out_len: *mut u64,
    what: &str,
) -> FfiResult<()> {
    need(out_len, "out_len")?;
    let n = src.len() as u64;
    // SAFETY: out_len checked non-null; writable per the caller.
    unsafe { out_len.write(n) };
    if out.is_null() {
        return Ok(());
    }
    if capacity < n {
        return Err(FfiError::new(
            HURRAY_ERR_BUFFER_TOO_SMALL,
            format!("{what} has {n} elements, the output holds {capacity}"),
        ));
    }
    // SAFETY: out is valid for capacity >= n writes of T; src and out cannot overlap
    // (src is library memory, out the caller's array).
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), out, src.len()) };
    Ok(())
}

/// [`copy_out`] for elements produced one by one (`n` of them, `items` yielding at
/// least `n`): writes `n` to `*out_len` and, when `out` is not NULL and holds
/// `capacity >= n` elements, the elements into `out`.
///
/// # Safety
/// `out` must be NULL or valid for `capacity` writes of `T`; `out_len` NULL or writable.
pub(crate) unsafe fn copy_out_iter<T: Copy>(
    n: usize,
    items: impl Iterator<Item = T>,
    out: *mut T,
    capacity: u64,
    out_len: *mut u64,
    what: &str,
) -> FfiResult<()> {
    need(out_len, "out_len")?;
    // SAFETY: out_len checked non-null; writable per the caller.
    unsafe { out_len.write(n as u64) };
    if out.is_null() {
        return Ok(());
    }
    if capacity < n as u64 {
        return Err(FfiError::new(
            HURRAY_ERR_BUFFER_TOO_SMALL,
            format!("{what} has {n} elements, the output holds {capacity}"),
        ));
    }
    for (k, x) in items.take(n).enumerate() {
        // SAFETY: k < n <= capacity, and out is valid for capacity writes.
        unsafe { out.add(k).write(x) };
    }
    Ok(())
}

/// Borrows a caller array of `len` elements; NULL is allowed only when `len` is 0.
///
/// # Safety
/// `p` must be NULL or valid for `len` reads of `T` for the lifetime `'a`.
pub(crate) unsafe fn slice_in<'a, T>(p: *const T, len: u64, arg: &str) -> FfiResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(FfiError::null(arg));
    }
    let n = usize::try_from(len)
        .ok()
        .filter(|&n| {
            n.checked_mul(std::mem::size_of::<T>())
                .is_some_and(|b| isize::try_from(b).is_ok())
        })
        .ok_or_else(|| {
            FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("`{arg}` length {len} exceeds the address space"),
            )
        })?;
    // SAFETY: non-null and valid for n reads per the caller; n * size_of::<T>() ≤ isize::MAX.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// `HURRAY_ERR_NOT_APPLICABLE` with a message naming what was asked and why it
/// does not apply.
pub(crate) fn not_applicable(msg: impl Into<String>) -> FfiError {
    FfiError::new(HURRAY_ERR_NOT_APPLICABLE, msg)
}
