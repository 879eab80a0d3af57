//! The native capsule protocol (ARCHITECTURE.md "Python's native protocol"):
//! `Tensor.__hurray__()` hands out a `HurrayTensor *` in a capsule named
//! `"hurray_tensor_handle"`; `hurray.from_hurray(obj)` consumes one through the C
//! accessors only (so a handle made by another copy of the library works too).

use crate::errors::{BufferError, UnsupportedError};
use crate::owner::PyRef;
use crate::tensor::{assemble, device_object, Tensor};
use hurray_ffi::{
    raw, HurrayBuffer, HurrayDescriptor, HurrayTensor, Placement, ReleaseGuard,
    HURRAY_C_ABI_VERSION,
};
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::CStr;
use std::sync::Arc;

/// Capsule name of an unconsumed handle.
pub const NAME: &CStr = c"hurray_tensor_handle";
/// Capsule name after a consumer took ownership.
pub const USED: &CStr = c"used_hurray_tensor_handle";

unsafe extern "C" fn destructor(cap: *mut ffi::PyObject) {
    // SAFETY: Python calls this with the capsule; IsValid checks the name, so a
    // consumed ("used_...") capsule is left alone.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, NAME.as_ptr()) == 1 {
            let p = ffi::PyCapsule_GetPointer(cap, NAME.as_ptr()).cast::<HurrayTensor>();
            // An unconsumed capsule still holds the handle `export` made: dropping
            // it destroys it (its owner release included).
            drop(raw::take(p));
        } else {
            ffi::PyErr_Clear();
        }
    }
}

/// `Tensor.__hurray__`: a fresh handle sharing the tensor's buffers (no copy),
/// whose owner is a strong reference to the tensor.
pub fn export(t: &Bound<'_, Tensor>) -> PyResult<Py<PyAny>> {
    let py = t.py();
    let me = t.get();
    let model = me.model().clone();
    let bufs = me.host_buffers()?;
    if bufs.is_empty() {
        return Err(BufferError::new_err(
            "the tensor has no buffers to hand out",
        ));
    }
    let hb = bufs
        .into_iter()
        .zip(&model.buffers)
        .map(|(b, h)| {
            Box::new(HurrayBuffer::host(
                b,
                Placement {
                    alignment: h.alignment,
                    device: h.device,
                    sync_mode: h.sync_mode,
                    memory_class: h.memory_class,
                },
            ))
        })
        .collect();
    let owner = PyRef::new(t.as_any());
    let guard = ReleaseGuard::from_fn(move || drop(owner));
    let desc = HurrayDescriptor::new(Arc::new(model)).map_err(crate::errors::ffi)?;
    let mut handle = HurrayTensor::new(desc, hb, Some(guard)).map_err(crate::errors::ffi)?;
    handle.set_read_only(me.is_read_only());
    let ptr = raw::into_raw(handle);
    // SAFETY: ptr is a live handle; the capsule destructor destroys it unless consumed.
    let cap = unsafe { ffi::PyCapsule_New(ptr.cast(), NAME.as_ptr(), Some(destructor)) };
    if cap.is_null() {
        // SAFETY: the capsule was not made, so we still own the handle.
        drop(unsafe { raw::take(ptr) });
        return Err(PyErr::fetch(py));
    }
    // SAFETY: new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, cap) }.unbind())
}

/// Consumes the capsule `obj.__hurray__()` returned, per the protocol rules
/// (`hurray.from_hurray` calls the method in Python, so no Python code runs
/// under this Rust frame).
pub fn consume(cap: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let py = cap.py();
    let cap = cap
        .cast::<PyCapsule>()
        .map_err(|_| BufferError::new_err("__hurray__() did not return a PyCapsule"))?;
    // SAFETY: cap is a capsule; GetName never fails on a valid capsule.
    let name = unsafe { ffi::PyCapsule_GetName(cap.as_ptr()) };
    let name = if name.is_null() {
        None
    } else {
        // SAFETY: a capsule name is a NUL-terminated string.
        Some(unsafe { CStr::from_ptr(name) })
    };
    if name == Some(USED) {
        return Err(BufferError::new_err(
            "the capsule was already consumed (named \"used_hurray_tensor_handle\"); call __hurray__() again for a fresh one",
        ));
    }
    if name != Some(NAME) {
        return Err(BufferError::new_err(match name {
            Some(n) => format!(
                "capsule is named \"{}\", not \"hurray_tensor_handle\"",
                n.to_string_lossy()
            ),
            None => "capsule has no name; expected \"hurray_tensor_handle\"".to_string(),
        }));
    }
    // SAFETY: the name matches.
    let ptr =
        unsafe { ffi::PyCapsule_GetPointer(cap.as_ptr(), NAME.as_ptr()) }.cast::<HurrayTensor>();
    if ptr.is_null() {
        // SAFETY: clear the error GetPointer may have set.
        unsafe { ffi::PyErr_Clear() };
        return Err(BufferError::new_err("the capsule holds a NULL handle"));
    }
    // SAFETY: ptr is a live handle of some build; only its frozen first field is read.
    let abi = unsafe { raw::abi_version(ptr) }.map_err(crate::errors::ffi)?;
    if abi != HURRAY_C_ABI_VERSION {
        return Err(UnsupportedError::new_err(format!(
            "the handle speaks HURRAY_C_ABI_VERSION {abi}, this library speaks {HURRAY_C_ABI_VERSION}"
        )));
    }
    // SAFETY: renaming a valid capsule; on failure the capsule stays unconsumed.
    if unsafe { ffi::PyCapsule_SetName(cap.as_ptr(), USED.as_ptr()) } != 0 {
        return Err(PyRuntimeError::new_err(
            "could not rename the capsule to \"used_hurray_tensor_handle\"",
        ));
    }
    // SAFETY: the capsule is ours now ("used_..."), and with it the handle, made by
    // this or another copy of the library; adopt takes it (destroying it on error).
    let t = unsafe { raw::adopt(ptr) }.map_err(crate::errors::ffi)?;
    // Views of its buffers that keep its memory (and owner) alive; the handle goes.
    let ro = t.read_only();
    let (model, bufs) = t.to_io().map_err(crate::errors::ffi)?.into_parts();
    drop(t);
    let device = device_object(py, &model, 0)?;
    Ok(assemble(py, Arc::unwrap_or_clone(model), bufs, None, Some(device))?.with_read_only(ro))
}
