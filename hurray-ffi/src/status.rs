//! Status codes, the thread-local last-error message, and the one panic boundary
//! every export runs inside.

use std::cell::{Cell, RefCell};
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
/// A blocking call was cancelled from another thread (`hurray_net_client_cancel`).
pub const HURRAY_ERR_CANCELLED: HurrayStatus = -10;
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
/// A time limit ran out (connect, a stalled read or write, a whole call).
pub const HURRAY_ERR_TIMEOUT: HurrayStatus = -42;
// -100: internal.
/// A bug: the library panicked. The process continues; the object involved may be unusable.
pub const HURRAY_ERR_INTERNAL_PANIC: HurrayStatus = -100;

/// One status code: value, constant name, category and description. [`STATUSES`]
/// is the one declaration the generators (`cargo xtask codegen`) and
/// [`status_name`]/[`category`] read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusRow {
    /// The code.
    pub value: HurrayStatus,
    /// The C constant's name (`"HURRAY_ERR_TRUNCATED"`).
    pub name: &'static str,
    /// What kind of failure it is; `None` for `HURRAY_OK`.
    pub category: Option<ErrorCategory>,
    /// One line of description.
    pub doc: &'static str,
}

macro_rules! statuses {
    ($($c:ident $cat:expr, $doc:literal;)*) => {
        /// Every status code, in the order of the header.
        pub const STATUSES: &[StatusRow] = &[$(StatusRow {
            value: $c,
            name: stringify!($c),
            category: $cat,
            doc: $doc,
        }),*];
    };
}

statuses! {
    HURRAY_OK None, "success";
    HURRAY_ERR_NULL_POINTER Some(ErrorCategory::InvalidArgument), "a required pointer argument was NULL";
    HURRAY_ERR_INVALID_ARGUMENT Some(ErrorCategory::InvalidArgument), "an argument is out of its documented range";
    HURRAY_ERR_ABI_VERSION Some(ErrorCategory::Unsupported), "the ABI version of a handle or caller differs";
    HURRAY_ERR_OUT_OF_RANGE Some(ErrorCategory::InvalidArgument), "an index is past the end of a list";
    HURRAY_ERR_BUFFER_TOO_SMALL Some(ErrorCategory::InvalidArgument), "a caller-supplied output buffer is too small";
    HURRAY_ERR_NOT_APPLICABLE Some(ErrorCategory::Unsupported), "the accessor does not apply (layout, absent section)";
    HURRAY_ERR_DOUBLE_DESTROY Some(ErrorCategory::State), "a handle was destroyed twice";
    HURRAY_ERR_STATE Some(ErrorCategory::State), "the object's state does not allow the call";
    HURRAY_ERR_NOT_FOUND Some(ErrorCategory::NotFound), "a name or key was not found";
    HURRAY_ERR_CANCELLED Some(ErrorCategory::State), "the call was cancelled from another thread";
    HURRAY_ERR_DESCRIPTOR Some(ErrorCategory::Format), "a descriptor did not decode or validate";
    HURRAY_ERR_BUFFER_MISMATCH Some(ErrorCategory::InvalidArgument), "the buffers do not match the buffer table";
    HURRAY_ERR_INVALID_SYNC_MODE Some(ErrorCategory::Format), "sync_mode is reserved or invalid";
    HURRAY_ERR_SYNC_MODE_MISMATCH Some(ErrorCategory::InvalidArgument), "the sync payload does not match sync_mode";
    HURRAY_ERR_FORMAT Some(ErrorCategory::Format), "a stream or file rule was broken";
    HURRAY_ERR_TRUNCATED Some(ErrorCategory::Truncated), "input ended early";
    HURRAY_ERR_LIMIT Some(ErrorCategory::Limit), "a configured limit was exceeded";
    HURRAY_ERR_IO Some(ErrorCategory::Io), "the operating system reported an I/O error";
    HURRAY_ERR_FILE_NOT_FOUND Some(ErrorCategory::NotFound), "a file does not exist";
    HURRAY_ERR_TIMEOUT Some(ErrorCategory::Io), "a time limit ran out";
    HURRAY_ERR_INTERNAL_PANIC Some(ErrorCategory::Internal), "the library panicked (a bug)";
}

/// The constant's name for a status (`"HURRAY_ERR_NULL_POINTER"`), or `"HURRAY_UNKNOWN_STATUS"`.
pub fn status_name(s: HurrayStatus) -> &'static str {
    STATUSES
        .iter()
        .find(|r| r.value == s)
        .map_or("HURRAY_UNKNOWN_STATUS", |r| r.name)
}

/// The kind of failure a status stands for, so that every binding maps statuses to
/// its language's conventions in one place (issue 12 item 5): Python's
/// `FileNotFoundError`/`OSError`, Java's `IOException` family, Go's `fs.ErrNotExist`
/// and `io.ErrUnexpectedEOF`, Node's `error.code`.
///
/// The numbers are stable once published (C: `hurray_status_category`); new
/// categories get new numbers, retired ones stay reserved.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCategory {
    /// A file, tensor name or key does not exist.
    NotFound = 1,
    /// The operating system reported an I/O error ([`FfiError::os_error`] holds its errno).
    Io = 2,
    /// Input ended early: a truncated file or stream, a torn composite.
    Truncated = 3,
    /// Input broke a rule of the format (the message names the rule and byte offset).
    Format = 4,
    /// The caller passed a bad argument (NULL, out of range, too small, mismatched).
    InvalidArgument = 5,
    /// An object was used in a state that does not allow the call (closed, finished,
    /// destroyed twice).
    State = 6,
    /// A configured limit for untrusted input was exceeded.
    Limit = 7,
    /// The request does not apply or is not supported by this build (wrong layout,
    /// absent section, another ABI version).
    Unsupported = 8,
    /// A bug in the library (a caught panic), or a status this build does not know.
    Internal = 9,
}

impl ErrorCategory {
    /// Every category, in number order.
    pub const ALL: [ErrorCategory; 9] = [
        ErrorCategory::NotFound,
        ErrorCategory::Io,
        ErrorCategory::Truncated,
        ErrorCategory::Format,
        ErrorCategory::InvalidArgument,
        ErrorCategory::State,
        ErrorCategory::Limit,
        ErrorCategory::Unsupported,
        ErrorCategory::Internal,
    ];

    /// The category's stable name in snake case (`"not_found"`, `"io"`, ...), the
    /// same in every language.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCategory::NotFound => "not_found",
            ErrorCategory::Io => "io",
            ErrorCategory::Truncated => "truncated",
            ErrorCategory::Format => "format",
            ErrorCategory::InvalidArgument => "invalid_argument",
            ErrorCategory::State => "state",
            ErrorCategory::Limit => "limit",
            ErrorCategory::Unsupported => "unsupported",
            ErrorCategory::Internal => "internal",
        }
    }

    /// The category with this stable number, if any.
    pub fn from_number(n: i32) -> Option<ErrorCategory> {
        ErrorCategory::ALL.into_iter().find(|c| *c as i32 == n)
    }
}

/// The category of a status. `HURRAY_OK` has none and, like a status this build
/// does not know, gives [`ErrorCategory::Internal`] (callers ask only about errors
/// the library returned).
pub fn category(status: HurrayStatus) -> ErrorCategory {
    STATUSES
        .iter()
        .find(|r| r.value == status)
        .and_then(|r| r.category)
        .unwrap_or(ErrorCategory::Internal)
}

// Category numbers as C constants (`ErrorCategory as i32`); `category_constants_match`
// below keeps them in step with the enum.
/// [`ErrorCategory::NotFound`].
pub const HURRAY_CATEGORY_NOT_FOUND: i32 = 1;
/// [`ErrorCategory::Io`].
pub const HURRAY_CATEGORY_IO: i32 = 2;
/// [`ErrorCategory::Truncated`].
pub const HURRAY_CATEGORY_TRUNCATED: i32 = 3;
/// [`ErrorCategory::Format`].
pub const HURRAY_CATEGORY_FORMAT: i32 = 4;
/// [`ErrorCategory::InvalidArgument`].
pub const HURRAY_CATEGORY_INVALID_ARGUMENT: i32 = 5;
/// [`ErrorCategory::State`].
pub const HURRAY_CATEGORY_STATE: i32 = 6;
/// [`ErrorCategory::Limit`].
pub const HURRAY_CATEGORY_LIMIT: i32 = 7;
/// [`ErrorCategory::Unsupported`].
pub const HURRAY_CATEGORY_UNSUPPORTED: i32 = 8;
/// [`ErrorCategory::Internal`].
pub const HURRAY_CATEGORY_INTERNAL: i32 = 9;

/// An error on its way out of the library: a status for programs, a message for
/// people, and the operating system's error number when the OS reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FfiError {
    /// The status code.
    pub status: HurrayStatus,
    /// Human detail: which rule, which byte offset.
    pub message: String,
    /// `errno` of the I/O error behind this one (see [`FfiError::os_error`]).
    os_error: Option<i32>,
    /// The network `ERROR` code (B.16) behind this one (see [`FfiError::net_code`]).
    net_code: Option<u32>,
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

    /// An error with this status and message (and no OS error number).
    pub fn new(status: HurrayStatus, message: impl Into<String>) -> FfiError {
        FfiError {
            status,
            message: message.into(),
            os_error: None,
            net_code: None,
        }
    }

    /// This error's [`ErrorCategory`].
    pub fn category(&self) -> ErrorCategory {
        category(self.status)
    }

    /// The operating system's error number (`errno`, e.g. `ENOENT` 2, `EISDIR` 21 on
    /// Linux) when the error came from an OS call; `None` otherwise.
    pub fn os_error(&self) -> Option<i32> {
        self.os_error
    }

    /// The network protocol's `ERROR` code (`streams-and-transport.md` B.16, e.g.
    /// `UNKNOWN_TENSOR` = 2, or a private `0xF0`..`0xFE` one) when the error came from
    /// an `ERROR` message, sent by the server or by this client; `None` otherwise.
    pub fn net_code(&self) -> Option<u32> {
        self.net_code
    }

    /// This error with `code` recorded as its network `ERROR` code.
    pub fn with_net_code(mut self, code: Option<u32>) -> FfiError {
        self.net_code = code;
        self
    }

    /// This error with `os_error` recorded as its OS error number.
    pub fn with_os_error(mut self, os_error: Option<i32>) -> FfiError {
        self.os_error = os_error;
        self
    }

    /// This error with its message prefixed by `path` (`"<path>: <message>"`), so the
    /// message of a failed file open names the file.
    pub fn with_path(mut self, path: &str) -> FfiError {
        self.message = format!("{path}: {}", self.message);
        self
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
        let os_error = match &e {
            Error::Io(io) => io.raw_os_error(),
            _ => None,
        };
        FfiError::new(status, e.to_string()).with_os_error(os_error)
    }
}

/// Result of the safe layer.
pub type FfiResult<T> = Result<T, FfiError>;

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
    static LAST_OS_ERROR: Cell<i32> = const { Cell::new(0) };
    static LAST_NET_CODE: Cell<u32> = const { Cell::new(0) };
}

/// Records `e` as this thread's last error (message and OS error number) and returns
/// its status.
pub(crate) fn set_last_error(e: &FfiError) -> HurrayStatus {
    let text = format!("{}: {}", status_name(e.status), e.message).replace('\0', "\\0");
    LAST_ERROR.with(|c| *c.borrow_mut() = CString::new(text).ok());
    LAST_OS_ERROR.with(|c| c.set(e.os_error.unwrap_or(0)));
    LAST_NET_CODE.with(|c| c.set(e.net_code.unwrap_or(0)));
    e.status
}

/// The network `ERROR` code of this thread's last error, 0 when it had none.
pub(crate) fn last_net_code() -> u32 {
    LAST_NET_CODE.with(|c| c.get())
}

/// The OS error number of this thread's last error, 0 when it had none.
pub(crate) fn last_os_error() -> i32 {
    LAST_OS_ERROR.with(|c| c.get())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_constants_match() {
        let c = [
            HURRAY_CATEGORY_NOT_FOUND,
            HURRAY_CATEGORY_IO,
            HURRAY_CATEGORY_TRUNCATED,
            HURRAY_CATEGORY_FORMAT,
            HURRAY_CATEGORY_INVALID_ARGUMENT,
            HURRAY_CATEGORY_STATE,
            HURRAY_CATEGORY_LIMIT,
            HURRAY_CATEGORY_UNSUPPORTED,
            HURRAY_CATEGORY_INTERNAL,
        ];
        let e: Vec<i32> = ErrorCategory::ALL.iter().map(|c| *c as i32).collect();
        assert_eq!(e, c);
        assert_eq!(
            ErrorCategory::from_number(3),
            Some(ErrorCategory::Truncated)
        );
        assert_eq!(ErrorCategory::from_number(0), None);
        assert_eq!(ErrorCategory::from_number(10), None);
    }

    #[test]
    fn statuses_have_their_categories() {
        assert_eq!(category(HURRAY_ERR_FILE_NOT_FOUND), ErrorCategory::NotFound);
        assert_eq!(category(HURRAY_ERR_NOT_FOUND), ErrorCategory::NotFound);
        assert_eq!(category(HURRAY_ERR_IO), ErrorCategory::Io);
        assert_eq!(category(HURRAY_ERR_TRUNCATED), ErrorCategory::Truncated);
        assert_eq!(category(HURRAY_ERR_DESCRIPTOR), ErrorCategory::Format);
        assert_eq!(category(HURRAY_ERR_FORMAT), ErrorCategory::Format);
        assert_eq!(
            category(HURRAY_ERR_NULL_POINTER),
            ErrorCategory::InvalidArgument
        );
        assert_eq!(category(HURRAY_ERR_STATE), ErrorCategory::State);
        assert_eq!(category(HURRAY_ERR_LIMIT), ErrorCategory::Limit);
        assert_eq!(
            category(HURRAY_ERR_NOT_APPLICABLE),
            ErrorCategory::Unsupported
        );
        assert_eq!(category(HURRAY_ERR_INTERNAL_PANIC), ErrorCategory::Internal);
        assert_eq!(category(-12345), ErrorCategory::Internal);
        assert_eq!(ErrorCategory::InvalidArgument.name(), "invalid_argument");
    }

    #[test]
    fn io_errors_keep_errno() {
        let io = std::io::Error::from_raw_os_error(21);
        let e = FfiError::from(hurray_io::Error::Io(io));
        assert_eq!((e.status, e.os_error()), (HURRAY_ERR_IO, Some(21)));
        assert_eq!(e.category(), ErrorCategory::Io);
        let nf = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = FfiError::from(hurray_io::Error::Io(nf));
        assert_eq!((e.status, e.os_error()), (HURRAY_ERR_FILE_NOT_FOUND, None));
        let e = FfiError::from(hurray_io::Error::format(
            hurray_io::FormatRule::Truncated,
            7,
            "x",
        ));
        assert_eq!(e.category(), ErrorCategory::Truncated);
        assert_eq!(e.with_path("/a/b").message, "/a/b: Truncated at byte 7: x");
    }
}
