//! Zero-copy `ArrayBuffer` views of memory this addon already accounts for.
//!
//! V8 counts the length of every external `ArrayBuffer` as external memory when it
//! is made (and takes it off when it sweeps the buffer), and starts a garbage
//! collection each time that count has grown by about 64 MiB. For a view of a
//! tensor's memory the count is wrong: the memory is a file mapping (file-backed
//! pages; the addon charges the mapping's holders itself, see `MAPPING_CHARGE`),
//! decoded stream bytes (charged by their tensor or item), or a caller's own
//! `ArrayBuffer` (counted by V8 already). Left alone, taking views of every tensor of
//! an 87 MiB model makes V8 collect while the views are being made, when nothing is
//! garbage, and one view of more than about 64 MiB makes it collect at once. So a
//! view takes its length back from the count just before it is made, and gives it
//! back when its finalizer runs: over the view's life the net report is zero, the
//! memory is reported once, by whoever owns it, and a collection is prompted by
//! views that died rather than by views being made.

use napi::bindgen_prelude::*;

use crate::error::{napi_err, Result};
use crate::tensor::adjust_external;

/// An external `ArrayBuffer` of `len` bytes at `data` that keeps `hold` alive until
/// it is collected, not counted by V8 as external memory (see the module comment).
///
/// Errors: the napi failure of creating it.
///
/// # Safety
/// `data` must point at `len` (> 0) bytes that stay valid and are not freed while
/// `hold` lives, and no other external `ArrayBuffer` may own them.
pub(crate) unsafe fn uncounted<'env, T: 'env>(
    env: &'env Env,
    data: *mut u8,
    len: usize,
    hold: T,
) -> Result<ArrayBuffer<'env>> {
    // A length over i64::MAX cannot exist in this address space; saturate anyway.
    let bytes = i64::try_from(len).unwrap_or(i64::MAX);
    // Taken back first: V8 adds `len` while it makes the buffer and may start a
    // collection right there (at once, for a buffer of more than about 64 MiB).
    adjust_external(env.raw(), -bytes);
    // SAFETY: the caller's contract; the finalizer, on the JS thread of `env`, gives
    // the count back and then drops `hold` (which may free the memory).
    let made = unsafe {
        ArrayBuffer::from_external(env, data, len, hold, move |env, hold| {
            adjust_external(env.raw(), bytes);
            drop(hold);
        })
    };
    if made.is_err() {
        adjust_external(env.raw(), bytes);
    }
    made.map_err(napi_err)
}
