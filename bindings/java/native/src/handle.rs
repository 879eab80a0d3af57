//! Handles cross JNI as `long`s. This is the only place a Java `long` becomes a
//! Rust reference, in two kinds:
//!
//! - library handles (`HurrayTensor`, `HurrayItem`, `HurrayFileReader`,
//!   `HurrayStreamDecoder`, ...) go through `hurray_ffi::raw`, which checks the
//!   handle's kind and ABI version (and, in debug builds, that it is still live);
//! - this crate's own state (a file writer, a stream encoder) is a plain `Box`
//!   ([`into_long_box`], [`borrow_box`], [`take_box`]).
//!
//! The Java side (`NativeRef`, `Tensor`, `Item`, the readers and writers) keeps each
//! `long` private, passes only live handles of the type the entry point names,
//! serialises their use, and hands an owned handle to a `take` exactly once (a
//! closed object throws `IllegalStateException` before reaching here).

use hurray_ffi::handle::Handle;
use hurray_ffi::raw;
use jni::sys::jlong;

use crate::errors::{Fail, R};

/// Moves a library handle to the heap; the `long` Java will own (give it back
/// with [`take`]).
pub(crate) fn into_long<T: Handle>(h: T) -> jlong {
    raw::into_raw(h) as jlong
}

/// A `long` for a handle that lives inside another (an item's tensor or member);
/// Java never [`take`]s it and keeps the parent alive while it is used.
pub(crate) fn borrowed_long<T: Handle>(r: &T) -> jlong {
    r as *const T as jlong
}

/// The library handle behind `h`, for one native call.
///
/// # Safety
/// `h` must be 0 or a live handle of some kind made by this library (the Java
/// contract above), not used mutably by anyone during `'a`.
pub(crate) unsafe fn borrow<'a, T: Handle>(h: jlong) -> R<&'a T> {
    // SAFETY: the caller's contract; raw::borrow checks null, version and kind.
    Ok(unsafe { raw::borrow(h as *const T) }?)
}

/// The library handle behind `h`, mutably, for one native call.
///
/// # Safety
/// As [`borrow`], and nobody else uses the handle during `'a` (Java serialises
/// calls on one handle).
pub(crate) unsafe fn borrow_mut<'a, T: Handle>(h: jlong) -> R<&'a mut T> {
    // SAFETY: the caller's contract; raw::borrow_mut checks null, version and kind.
    Ok(unsafe { raw::borrow_mut(h as *mut T) }?)
}

/// Takes back the owned library handle behind `h` (dropping it frees it).
///
/// # Safety
/// `h` must be a live owned handle made by [`into_long`], handed here exactly once.
pub(crate) unsafe fn take<T: Handle>(h: jlong) -> R<Box<T>> {
    // SAFETY: the caller's contract; raw::take checks kind and refuses a borrowed one.
    unsafe { raw::take(h as *mut T) }?.ok_or_else(|| Fail::Arg("a native handle is 0".into()))
}

/// Moves this crate's own state to the heap; the `long` Java will own.
pub(crate) fn into_long_box<T>(b: Box<T>) -> jlong {
    Box::into_raw(b) as jlong
}

/// This crate's state behind `h`, mutably, for one native call.
///
/// # Safety
/// `h` must come from [`into_long_box`] for a `T`, not taken, and used by nobody
/// else during `'a`.
pub(crate) unsafe fn borrow_box<'a, T>(h: jlong) -> R<&'a mut T> {
    if h == 0 {
        return Err(Fail::Arg("a native handle is 0".into()));
    }
    // SAFETY: the caller's contract: a live, exclusively used T.
    Ok(unsafe { &mut *(h as *mut T) })
}

/// Takes back this crate's state behind `h`.
///
/// # Safety
/// `h` must come from [`into_long_box`] for a `T`, handed here exactly once.
pub(crate) unsafe fn take_box<T>(h: jlong) -> R<Box<T>> {
    if h == 0 {
        return Err(Fail::Arg("a native handle is 0".into()));
    }
    // SAFETY: the caller's contract: h came from Box::into_raw of a Box<T>, once.
    Ok(unsafe { Box::from_raw(h as *mut T) })
}
