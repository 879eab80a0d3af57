//! Handles cross JNI as `long`s. This is the only place a Java `long` becomes a
//! Rust reference. Every handle is a library handle (`HurrayTensor`, `HurrayItem`,
//! `HurrayFileReader`, `HurrayFileWriter`, `HurrayStreamDecoder`,
//! `HurrayStreamEncoder`, `HurrayNetClient`), converted through `hurray_ffi::raw`, which checks the
//! handle's kind and ABI version (and, in debug builds, that it is still live); this
//! crate keeps no state of its own behind a `long`.
//!
//! # The Java contract (the safety argument of this module)
//!
//! The functions here are safe to call because every `long` they receive comes from
//! the package-private `dev.hurray.Native` methods, whose only callers (`NativeRef`,
//! `Tensor`, `Item`, `TensorFile`, `TensorFileWriter`, `StreamReader`,
//! `StreamWriter`) keep each `long` in a private field and
//!
//! 1. pass only a handle this crate returned for the type the entry point names,
//!    still live (a closed object throws `IllegalStateException` before any native
//!    call; a borrowed tensor or member holds its parent through `NativeRef`);
//! 2. use one handle from one thread at a time (the objects synchronise), except
//!    the file reader: `TensorFile` lets any number of threads read at once, which
//!    is sound because every reader entry point takes only a shared borrow (`&`)
//!    and `HurrayFileReader` is `Sync` (checked at compile time in `file.rs`), and
//!    `TensorFile` holds a count on the handle for each call, so `close()` cannot
//!    destroy it under a running call; likewise the network client: `NetClient`
//!    lets threads call at once (`HurrayNetClient` is `Sync`, its calls serialised
//!    inside, `cancel` allowed during a call; the entry points in `net` take shared
//!    borrows only) and holds a count on the handle for each call;
//! 3. hand an owned handle to a `take` exactly once, and never use it afterwards.
//!
//! Library handles are checked further by `hurray_ffi::raw` (kind and ABI version
//! from the frozen header, and in debug builds that the handle is still live), so a
//! `long` of the wrong kind is an error, not undefined behaviour. No other module
//! turns a `long` into a reference.

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
pub(crate) fn borrow<'a, T: Handle>(h: jlong) -> R<&'a T> {
    // SAFETY: the Java contract (1, 2): a live handle; raw::borrow checks null,
    // version and kind.
    Ok(unsafe { raw::borrow(h as *const T) }?)
}

/// The library handle behind `h`, mutably, for one native call.
///
pub(crate) fn borrow_mut<'a, T: Handle>(h: jlong) -> R<&'a mut T> {
    // SAFETY: the Java contract (1, 2): a live handle used by this thread only;
    // raw::borrow_mut checks null, version and kind.
    Ok(unsafe { raw::borrow_mut(h as *mut T) }?)
}

/// Takes back the owned library handle behind `h` (dropping it frees it).
///
pub(crate) fn take<T: Handle>(h: jlong) -> R<Box<T>> {
    // SAFETY: the Java contract (1, 3): an owned handle, handed over once; raw::take
    // checks kind and refuses a borrowed one.
    unsafe { raw::take(h as *mut T) }?.ok_or_else(|| Fail::Arg("a native handle is 0".into()))
}
