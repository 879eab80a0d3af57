//! The only door between a language runtime and a handle pointer.
//!
//! Binding crates (Python, Java, Node) hold handles as raw pointers only where their
//! runtime needs one: a PyCapsule pointer, a JNI `long`, a napi external. They turn a
//! handle into such a pointer with [`into_raw`], look at it again with [`borrow`] /
//! [`borrow_mut`], and take ownership back with [`take`] (dropping the returned box
//! destroys the handle, running its release callbacks exactly once). Every other call
//! is a method on the handle type; binding crates never call a `hurray_*` function.
//!
//! The checks are those of every C export: NULL, ABI version, handle kind, made by this
//! copy of the library, and (debug builds) a handle already destroyed.

use crate::handle::{self, Handle, FLAG_BORROWED};
use crate::status::*;

/// Moves a handle to the heap and returns the pointer its new owner holds. Give it
/// back with [`take`] (or to C, which destroys it with the matching `*_destroy`).
/// Debug builds register the address, so a stale second `take` or destroy is detected.
pub fn into_raw<T: Handle>(h: T) -> *mut T {
    handle::into_raw(h)
}

/// Borrows the handle behind `p` for `'a`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (NULL), `HURRAY_ERR_ABI_VERSION` (made by a
/// build of another ABI version), `HURRAY_ERR_INVALID_ARGUMENT` (another kind of
/// handle, or made by another copy of the library), `HURRAY_ERR_DOUBLE_DESTROY`
/// (debug builds: the handle was already destroyed).
///
/// # Safety
/// `p` must be NULL or point at a live handle of some build of this library (a
/// pointer from [`into_raw`] or from a C export), and it must outlive `'a`: nothing
/// may destroy or [`take`] it while the reference is used.
pub unsafe fn borrow<'a, T: Handle>(p: *const T) -> FfiResult<&'a T> {
    // SAFETY: forwarded contract.
    unsafe { handle::own::<T>(p, T::NAME) }
}

/// Mutable variant of [`borrow`], same errors.
///
/// # Safety
/// As [`borrow`], and no other reference to the handle may be live during `'a`
/// (handles are used by one thread at a time).
pub unsafe fn borrow_mut<'a, T: Handle>(p: *mut T) -> FfiResult<&'a mut T> {
    // SAFETY: forwarded contract.
    unsafe { handle::own_mut::<T>(p, T::NAME) }
}

/// Takes ownership back from a pointer made by [`into_raw`] (or handed out owned by
/// a C export of this copy). `Ok(None)` for NULL. Dropping the box destroys the
/// handle.
///
/// Errors: as [`borrow`], plus `HURRAY_ERR_INVALID_ARGUMENT` when the handle is part
/// of a parent (a tensor's descriptor or buffer list, a list's buffer, an item's
/// member), which only its parent may free.
///
/// # Safety
/// As [`borrow`]; afterwards `p` is dangling: the caller must not use it again.
pub unsafe fn take<T: Handle>(p: *mut T) -> FfiResult<Option<Box<T>>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    let h = unsafe { handle::own::<T>(p, T::NAME)? };
    if h.header().flags & FLAG_BORROWED != 0 {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!(
                "`{}` is part of its parent and cannot be taken on its own",
                T::NAME
            ),
        ));
    }
    // SAFETY: `own` checked the kind and that this copy made it; every own-build
    // handle handed out as a pointer was made by `handle::into_raw` (a Box of T),
    // and the caller gives up `p`.
    Ok(Some(unsafe { handle::take_own(p) }))
}
