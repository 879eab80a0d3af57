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
use crate::tensor::HurrayTensor;

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

/// The `HURRAY_C_ABI_VERSION` of the build that made the handle behind `p` (any kind,
/// any copy of the library, any ABI version): the frozen first field, the one thing
/// a consumer reads before anything else. Compare it with
/// [`HURRAY_C_ABI_VERSION`](crate::HURRAY_C_ABI_VERSION).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`.
///
/// # Safety
/// `p` must be NULL or point at a live handle of some build of this library (its
/// first four bytes are read).
pub unsafe fn abi_version<T>(p: *const T) -> FfiResult<u32> {
    if p.is_null() {
        return Err(FfiError::null("handle"));
    }
    // SAFETY: non-NULL and, per the caller, a handle: every build of every ABI version
    // starts it with a u32 abi_version (the frozen prefix).
    Ok(unsafe { p.cast::<u32>().read() })
}

/// Takes ownership of a tensor handle made by any copy of this library in the
/// process (a `HurrayTensor *` received through a PyCapsule, say) and returns this
/// copy's tensor. For this copy's handles that is [`take`]; another copy's tensor is
/// adopted: this copy builds its own tensor over the same host memory (descriptor
/// decoded and checked, buffers checked against it), and the creator's destructor
/// runs, exactly once, when the last view is gone.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION` and
/// `HURRAY_ERR_INVALID_ARGUMENT` (another kind, or part of a parent) — in these
/// cases the handle is left untouched; for another copy's tensor, the errors of
/// decoding its descriptor and checking its buffers, `HURRAY_ERR_INVALID_ARGUMENT`
/// for device memory (never read by the host) — then the handle is destroyed, since
/// the caller gave it up.
///
/// # Safety
/// `p` must be NULL or a live tensor handle of some copy, owned by the caller, who
/// gives it up (unless the error says it is left untouched).
pub unsafe fn adopt(p: *mut HurrayTensor) -> FfiResult<HurrayTensor> {
    // SAFETY: forwarded contract.
    let h = unsafe { handle::header(p.cast(), HurrayTensor::NAME)? };
    handle::check_kind::<HurrayTensor>(h, HurrayTensor::NAME)?;
    if h.flags & FLAG_BORROWED != 0 {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            "`HurrayTensor` is part of an item and cannot be taken on its own",
        ));
    }
    if h.is_own() {
        // SAFETY: own-build tensor, unborrowed, given up by the caller.
        return Ok(*unsafe { handle::take_own(p) });
    }
    // SAFETY: a live foreign tensor owned by the caller.
    unsafe { crate::foreign::adopt(p) }.inspect_err(|_| {
        let mut q = p;
        // SAFETY: adopt leaves the tensor with the caller on error; the caller gave
        // it up, so it is destroyed here, through its creator's destructor.
        let _ = unsafe { handle::destroy(&mut q, "tensor") };
    })
}
