//! Library-wide exports: ABI version, last error, status names, live-object count,
//! and the test-only panic hook.

use crate::handle::{self, HURRAY_C_ABI_VERSION};
use crate::status::*;
use std::ffi::{c_char, c_void};

/// The ABI version this library was built with (`HURRAY_C_ABI_VERSION`, 10).
/// Compare it with the header's constant before anything else. Never fails.
/// Ownership: returns a value; nothing to free.
#[no_mangle]
pub extern "C" fn hurray_c_abi_version() -> u32 {
    HURRAY_C_ABI_VERSION
}

/// The calling thread's last error message: which rule, which byte offset.
/// Ownership: borrowed, valid until the next failing call on this thread; NULL when
/// no call on this thread has failed.
#[no_mangle]
pub extern "C" fn hurray_last_error_message() -> *const c_char {
    last_error_ptr()
}

/// The name of a status code (`"HURRAY_ERR_NULL_POINTER"`), or
/// `"HURRAY_UNKNOWN_STATUS"`. Ownership: borrowed static string; never NULL.
#[no_mangle]
pub extern "C" fn hurray_status_name(status: HurrayStatus) -> *const c_char {
    let s: &'static [u8] = match status_name(status) {
        "HURRAY_OK" => b"HURRAY_OK\0",
        "HURRAY_ERR_NULL_POINTER" => b"HURRAY_ERR_NULL_POINTER\0",
        "HURRAY_ERR_INVALID_ARGUMENT" => b"HURRAY_ERR_INVALID_ARGUMENT\0",
        "HURRAY_ERR_ABI_VERSION" => b"HURRAY_ERR_ABI_VERSION\0",
        "HURRAY_ERR_OUT_OF_RANGE" => b"HURRAY_ERR_OUT_OF_RANGE\0",
        "HURRAY_ERR_BUFFER_TOO_SMALL" => b"HURRAY_ERR_BUFFER_TOO_SMALL\0",
        "HURRAY_ERR_NOT_APPLICABLE" => b"HURRAY_ERR_NOT_APPLICABLE\0",
        "HURRAY_ERR_DOUBLE_DESTROY" => b"HURRAY_ERR_DOUBLE_DESTROY\0",
        "HURRAY_ERR_STATE" => b"HURRAY_ERR_STATE\0",
        "HURRAY_ERR_NOT_FOUND" => b"HURRAY_ERR_NOT_FOUND\0",
        "HURRAY_ERR_CANCELLED" => b"HURRAY_ERR_CANCELLED\0",
        "HURRAY_ERR_DESCRIPTOR" => b"HURRAY_ERR_DESCRIPTOR\0",
        "HURRAY_ERR_BUFFER_MISMATCH" => b"HURRAY_ERR_BUFFER_MISMATCH\0",
        "HURRAY_ERR_INVALID_SYNC_MODE" => b"HURRAY_ERR_INVALID_SYNC_MODE\0",
        "HURRAY_ERR_SYNC_MODE_MISMATCH" => b"HURRAY_ERR_SYNC_MODE_MISMATCH\0",
        "HURRAY_ERR_FORMAT" => b"HURRAY_ERR_FORMAT\0",
        "HURRAY_ERR_TRUNCATED" => b"HURRAY_ERR_TRUNCATED\0",
        "HURRAY_ERR_LIMIT" => b"HURRAY_ERR_LIMIT\0",
        "HURRAY_ERR_IO" => b"HURRAY_ERR_IO\0",
        "HURRAY_ERR_FILE_NOT_FOUND" => b"HURRAY_ERR_FILE_NOT_FOUND\0",
        "HURRAY_ERR_TIMEOUT" => b"HURRAY_ERR_TIMEOUT\0",
        "HURRAY_ERR_INTERNAL_PANIC" => b"HURRAY_ERR_INTERNAL_PANIC\0",
        _ => b"HURRAY_UNKNOWN_STATUS\0",
    };
    s.as_ptr().cast()
}

/// The [`ErrorCategory`] of a status (`HURRAY_CATEGORY_*`, stable numbers): what
/// kind of failure it is, for mapping to a language's conventions. A status this
/// build does not know gives `HURRAY_CATEGORY_INTERNAL`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` when `out_category` is NULL;
/// `HURRAY_ERR_INVALID_ARGUMENT` for `HURRAY_OK` (success has no category).
///
/// Ownership: `*out_category` written by value; nothing to free.
///
/// # Safety
/// `out_category` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_status_category(
    status: HurrayStatus,
    out_category: *mut i32,
) -> HurrayStatus {
    boundary(|| {
        need(out_category, "out_category")?;
        if status == HURRAY_OK {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "HURRAY_OK is not an error and has no category",
            ));
        }
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out_category, "out_category", category(status) as i32) }
    })
}

/// The stable snake-case name of an error category (`"not_found"`, `"io"`,
/// `"truncated"`, `"format"`, `"invalid_argument"`, `"state"`, `"limit"`,
/// `"unsupported"`, `"internal"`), or `"unknown"` for a number that is none.
/// Ownership: borrowed static string; never NULL.
#[no_mangle]
pub extern "C" fn hurray_error_category_name(category: i32) -> *const c_char {
    let s: &'static [u8] = match ErrorCategory::from_number(category) {
        Some(ErrorCategory::NotFound) => b"not_found\0",
        Some(ErrorCategory::Io) => b"io\0",
        Some(ErrorCategory::Truncated) => b"truncated\0",
        Some(ErrorCategory::Format) => b"format\0",
        Some(ErrorCategory::InvalidArgument) => b"invalid_argument\0",
        Some(ErrorCategory::State) => b"state\0",
        Some(ErrorCategory::Limit) => b"limit\0",
        Some(ErrorCategory::Unsupported) => b"unsupported\0",
        Some(ErrorCategory::Internal) => b"internal\0",
        None => b"unknown\0",
    };
    s.as_ptr().cast()
}

/// The operating system's error number (`errno`: `ENOENT`, `EISDIR`, ...) of the
/// calling thread's last error, or 0 when that error did not come from the OS (or
/// no call on this thread has failed). Set together with
/// `hurray_last_error_message`. Never fails.
/// Ownership: returns a value; nothing to free.
#[no_mangle]
pub extern "C" fn hurray_last_error_os_error() -> i32 {
    last_os_error()
}

/// The network protocol's `ERROR` code (`streams-and-transport.md` B.16:
/// `UNKNOWN_TENSOR` = 0x02, ..., private `0xF0`..`0xFE`) of the calling thread's last
/// error, or 0 when that error did not come from an `ERROR` message (sent by the
/// server, or by this client when the server broke a rule) or no call on this thread
/// has failed. Set together with `hurray_last_error_message`. Never fails.
/// Ownership: returns a value; nothing to free.
#[no_mangle]
pub extern "C" fn hurray_last_error_net_code() -> u32 {
    last_net_code()
}

/// Number of live handles created by this copy of the library (tensors, descriptors,
/// buffers, lists, items, decoders, encoders, readers, writers, pools, network
/// clients and connections, and the descriptor, list and buffers a tensor owns). Tests assert it returns to 0. Never fails.
/// Ownership: returns a value; nothing to free.
#[no_mangle]
pub extern "C" fn hurray_debug_live_objects() -> i64 {
    handle::live_objects()
}

/// Test hook: panics inside the export boundary. Returns `HURRAY_ERR_INTERNAL_PANIC`
/// and sets the last error; the process continues.
/// Ownership: nothing is created or freed.
#[cfg(feature = "test-hooks")]
#[no_mangle]
pub extern "C" fn hurray_debug_panic() -> HurrayStatus {
    boundary(|| panic!("hurray_debug_panic was called"))
}

/// Reads the ABI version stored in the first field of any handle of any build
/// (tensor, descriptor, buffer, list, item, ...). This function never changes
/// signature; call it first on a handle received from elsewhere.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` when `handle` or `out` is NULL.
///
/// Ownership: `*out` written by value; the handle is only read.
///
/// # Safety
/// `handle` must be NULL or point at a live handle of some build of this library.
#[no_mangle]
pub unsafe extern "C" fn hurray_handle_abi_version(
    handle: *const c_void,
    out: *mut u32,
) -> HurrayStatus {
    boundary(|| {
        if handle.is_null() {
            return Err(FfiError::null("handle"));
        }
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        // SAFETY: every handle of every build begins with a u32 ABI version (frozen prefix).
        unsafe { *out = *handle.cast::<u32>() };
        Ok(())
    })
}
