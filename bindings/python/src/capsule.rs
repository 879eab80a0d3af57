//! The native capsule protocol (ARCHITECTURE.md "Python's native protocol"):
//! `Tensor.__hurray__()` hands out a `HurrayTensor *` in a capsule named
//! `"hurray_tensor_handle"`; `hurray.from_hurray(obj)` consumes one through the C
//! accessors only (so a handle made by another copy of the library works too).

use crate::errors::{BufferError, InvalidDescriptorError, UnsupportedError};
use crate::owner::PyRef;
use crate::tensor::{assemble, device_object, Tensor};
use hurray_core::{DecodeOptions, TensorDescriptor};
use hurray_ffi::buffer::{hurray_buffer_data, hurray_buffer_list_get, hurray_buffer_list_len};
use hurray_ffi::tensor::{
    hurray_tensor_abi_version, hurray_tensor_buffers, hurray_tensor_descriptor,
    hurray_tensor_destroy,
};
use hurray_ffi::{
    HurrayBuffer, HurrayBufferList, HurrayDescriptor, HurrayTensor, Placement, ReleaseGuard,
    HURRAY_C_ABI_VERSION, HURRAY_OK,
};
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::{c_void, CStr};
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
            let mut p = ffi::PyCapsule_GetPointer(cap, NAME.as_ptr()).cast::<HurrayTensor>();
            hurray_tensor_destroy(&mut p);
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
    let handle = HurrayTensor::new(desc, hb, Some(guard)).map_err(crate::errors::tensor_new)?;
    let raw = handle.into_raw();
    // SAFETY: raw is a live handle; the capsule destructor destroys it unless consumed.
    let cap = unsafe { ffi::PyCapsule_New(raw.cast(), NAME.as_ptr(), Some(destructor)) };
    if cap.is_null() {
        let mut raw = raw;
        // SAFETY: the capsule was not made, so we still own the handle.
        unsafe { hurray_tensor_destroy(&mut raw) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, cap) }.unbind())
}

/// A consumed foreign handle, destroyed (owner release included) with the last view.
struct Consumed(*mut HurrayTensor);

// SAFETY: handles may be destroyed from any thread (release callbacks are
// thread-safe by contract); we never use it from two threads at once.
unsafe impl Send for Consumed {}
// SAFETY: only read through the frozen public fields after construction.
unsafe impl Sync for Consumed {}

impl Drop for Consumed {
    fn drop(&mut self) {
        // SAFETY: we own the handle (the capsule was renamed to "used_...").
        unsafe { hurray_tensor_destroy(&mut self.0) };
    }
}

struct Borrowed {
    ptr: *const u8,
    len: usize,
    _keep: Arc<Consumed>,
}

// SAFETY: the bytes stay valid while the handle lives; only shared reads.
unsafe impl Send for Borrowed {}
// SAFETY: as above.
unsafe impl Sync for Borrowed {}

impl hurray_io::BufferOwner for Borrowed {
    fn bytes(&self) -> &[u8] {
        if self.len == 0 || self.ptr.is_null() {
            return &[];
        }
        // SAFETY: the handle keeps len bytes at ptr alive.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

fn last_error() -> String {
    // SAFETY: returns NULL or a NUL-terminated thread-local string.
    let p = hurray_ffi::abi::hurray_last_error_message();
    if p.is_null() {
        return "unknown error".into();
    }
    // SAFETY: non-NULL C string owned by the library.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
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
    let mut abi = 0u32;
    // SAFETY: ptr is a live handle of some build; this accessor reads only its frozen first field.
    if unsafe { hurray_tensor_abi_version(ptr, &mut abi) } != HURRAY_OK
        || abi != HURRAY_C_ABI_VERSION
    {
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
    let owned = Arc::new(Consumed(ptr));
    let mut dptr: *const HurrayDescriptor = std::ptr::null();
    // SAFETY: owned handle, out-pointer valid.
    if unsafe { hurray_tensor_descriptor(ptr, &mut dptr) } != HURRAY_OK || dptr.is_null() {
        return Err(InvalidDescriptorError::new_err(last_error()));
    }
    // SAFETY: dptr is borrowed from the live handle; its frozen public fields give the encoding.
    let bytes =
        unsafe { std::slice::from_raw_parts((*dptr).encoded, (*dptr).encoded_len as usize) };
    let opts = DecodeOptions {
        accept_private: true,
        ..DecodeOptions::default()
    };
    let model = TensorDescriptor::decode_with(bytes, &opts)
        .map_err(|e| InvalidDescriptorError::new_err(e.to_string()))?;
    let mut list: *const HurrayBufferList = std::ptr::null();
    // SAFETY: as above.
    if unsafe { hurray_tensor_buffers(ptr, &mut list) } != HURRAY_OK {
        return Err(BufferError::new_err(last_error()));
    }
    let mut n = 0u64;
    // SAFETY: list borrowed from the live handle.
    if unsafe { hurray_buffer_list_len(list, &mut n) } != HURRAY_OK {
        return Err(BufferError::new_err(last_error()));
    }
    if n as usize != model.buffers.len() {
        return Err(InvalidDescriptorError::new_err(format!(
            "the handle carries {n} buffer(s) but its descriptor declares {}",
            model.buffers.len()
        )));
    }
    let mut bufs = Vec::with_capacity(n as usize);
    for i in 0..n {
        let mut b: *const HurrayBuffer = std::ptr::null();
        let mut data: *const c_void = std::ptr::null();
        let mut size = 0u64;
        // SAFETY: borrowed buffer of the live list; outs valid.
        let ok = unsafe {
            hurray_buffer_list_get(list, i, &mut b) == HURRAY_OK
                && hurray_buffer_data(b, &mut data, &mut size) == HURRAY_OK
        };
        if !ok {
            return Err(BufferError::new_err(format!(
                "buffer {i}: {}",
                last_error()
            )));
        }
        let len = usize::try_from(size).map_err(|_| {
            BufferError::new_err(format!("buffer {i} is larger than the address space"))
        })?;
        bufs.push(hurray_io::Buffer::new(Arc::new(Borrowed {
            ptr: data.cast(),
            len,
            _keep: owned.clone(),
        })));
    }
    let device = device_object(py, &model, 0)?;
    assemble(py, model, bufs, None, Some(device))
}
