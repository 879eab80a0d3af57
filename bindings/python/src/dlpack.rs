//! DLPack export (`dlpack.h` v1.0 structures): versioned and legacy capsules over
//! buffer 0 of a dense tensor. The manager context holds a strong reference to
//! the tensor plus the shape/strides arrays; its deleter may run on any thread.

use crate::errors::UnsupportedError;
use crate::owner::PyRef;
use crate::tensor::Tensor;
use hurray_core::{DeviceTag, ElementType, Layout as L, MemoryClass, DYN};
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_char, c_void, CStr};

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

/// What the capsule owns besides the tensor header.
struct Ctx {
    _tensor: PyRef,
    _shape: Vec<i64>,
    _strides: Option<Vec<i64>>,
}

const VERSIONED: &CStr = c"dltensor_versioned";
const LEGACY: &CStr = c"dltensor";

/// The DLPack device type for a Hurray device and memory class (reference table).
pub fn device_type(tag: DeviceTag, class: MemoryClass) -> PyResult<i32> {
    use DeviceTag::*;
    use MemoryClass::*;
    let v = match (tag, class) {
        (Cpu, _) => Some(1),
        (Cuda, Standard) => Some(2),
        (Cuda, HostPinned) => Some(3),
        (Cuda, Unified) => Some(13),
        (Rocm, Standard) => Some(10),
        (Rocm, HostPinned) => Some(11),
        (Metal, _) => Some(8),
        (Vulkan, Peer) => None,
        (Vulkan, _) => Some(7),
        (WebGpu, _) => Some(15),
        (Hexagon, _) => Some(16),
        (LevelZero, Peer) => None,
        (LevelZero, _) => Some(14),
        (OpenCl, _) => Some(4),
        _ => None,
    };
    v.ok_or_else(|| {
        UnsupportedError::new_err(format!(
            "device {} with memory class {} has no DLPack device type",
            tag.name(),
            crate::device::class_name(class)
        ))
    })
}

/// `(code, bits)` of DLPack for an element type, if it has one.
pub fn dl_dtype(t: ElementType) -> Option<(u8, u8)> {
    use ElementType::*;
    Some(match t {
        Int8 => (0, 8),
        Int16 => (0, 16),
        Int32 => (0, 32),
        Int64 => (0, 64),
        Uint8 => (1, 8),
        Uint16 => (1, 16),
        Uint32 => (1, 32),
        Uint64 => (1, 64),
        Float16 => (2, 16),
        Float32 => (2, 32),
        Float64 => (2, 64),
        Bfloat16 => (4, 16),
        Complex64 => (5, 64),
        Complex128 => (5, 128),
        _ => return None,
    })
}

unsafe extern "C" fn delete_versioned(p: *mut DLManagedTensorVersioned) {
    if p.is_null() {
        return;
    }
    // SAFETY: p and its ctx were leaked by `export` and are freed once, here.
    let b = unsafe { Box::from_raw(p) };
    drop(unsafe { Box::from_raw(b.manager_ctx.cast::<Ctx>()) });
}

unsafe extern "C" fn delete_legacy(p: *mut DLManagedTensor) {
    if p.is_null() {
        return;
    }
    // SAFETY: as above.
    let b = unsafe { Box::from_raw(p) };
    drop(unsafe { Box::from_raw(b.manager_ctx.cast::<Ctx>()) });
}

unsafe extern "C" fn capsule_destructor_versioned(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with the capsule; IsValid checks name and pointer.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, VERSIONED.as_ptr()) == 1 {
            let p = ffi::PyCapsule_GetPointer(cap, VERSIONED.as_ptr())
                .cast::<DLManagedTensorVersioned>();
            if let Some(d) = (*p).deleter {
                d(p);
            }
        } else {
            ffi::PyErr_Clear();
        }
    }
}

unsafe extern "C" fn capsule_destructor_legacy(cap: *mut ffi::PyObject) {
    // SAFETY: as above.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, LEGACY.as_ptr()) == 1 {
            let p = ffi::PyCapsule_GetPointer(cap, LEGACY.as_ptr()).cast::<DLManagedTensor>();
            if let Some(d) = (*p).deleter {
                d(p);
            }
        } else {
            ffi::PyErr_Clear();
        }
    }
}

/// Exports `t` as a DLPack capsule (checks in the order of the reference).
pub fn export(t: &Bound<'_, Tensor>, versioned: bool) -> PyResult<Py<PyAny>> {
    let py = t.py();
    let me = t.get();
    let d = me.model();
    let lname = crate::layout::name_of(&crate::layout::Repr::Core(d.layout.clone()));
    if !d.layout.is_dense() {
        return Err(PyBufferError::new_err(format!(
            "a {lname} tensor cannot be exported through DLPack (only dense layouts can)"
        )));
    }
    let dev = me.device_value();
    let device_type = device_type(dev.tag, dev.class)?;
    let Some((code, bits)) = dl_dtype(d.element_type) else {
        let msg = if d.element_type == ElementType::Bool {
            "hurray bool is bit-packed (8 per byte); DLPack bool is one byte per element, so it cannot be exported without a copy".to_string()
        } else {
            format!("dtype {} has no DLPack type code", d.element_type.name())
        };
        return Err(PyBufferError::new_err(msg));
    };
    let rank = d.shape.len();
    let shape: Vec<i64> = d
        .shape
        .iter()
        .map(|&v| if v == DYN { -1 } else { v as i64 })
        .collect();
    let strides: Option<Vec<i64>> = match &d.layout {
        L::RowMajor => None,
        L::ColumnMajor => {
            let mut s = Vec::with_capacity(rank);
            let mut acc = 1i64;
            for &dim in &shape {
                s.push(acc);
                acc = acc.saturating_mul(dim.max(1));
            }
            Some(s)
        }
        L::Strided { strides } => Some(strides.clone()),
        _ if rank == 0 => None,
        _ => {
            return Err(UnsupportedError::new_err(format!(
                "a {lname} tensor has no strided form DLPack can describe"
            )))
        }
    };
    let buf0 = me.host(0)?;
    let data = if buf0.is_empty() {
        std::ptr::null_mut()
    } else {
        buf0.as_slice().as_ptr() as *mut c_void
    };
    let mut ctx = Box::new(Ctx {
        _tensor: PyRef::new(t.as_any()),
        _shape: shape,
        _strides: strides,
    });
    let dl_tensor = DLTensor {
        data,
        device: DLDevice {
            device_type,
            device_id: dev.id as i32,
        },
        ndim: rank as i32,
        dtype: DLDataType {
            code,
            bits,
            lanes: 1,
        },
        shape: ctx._shape.as_mut_ptr(),
        strides: ctx
            ._strides
            .as_mut()
            .map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: d.byte_offset,
    };
    let ctx = Box::into_raw(ctx).cast::<c_void>();
    let (ptr, name, destructor): (*mut c_void, *const c_char, ffi::PyCapsule_Destructor) =
        if versioned {
            let m = Box::new(DLManagedTensorVersioned {
                version: DLPackVersion { major: 1, minor: 0 },
                manager_ctx: ctx,
                deleter: Some(delete_versioned),
                flags: 0,
                dl_tensor,
            });
            (
                Box::into_raw(m).cast(),
                VERSIONED.as_ptr(),
                capsule_destructor_versioned,
            )
        } else {
            let m = Box::new(DLManagedTensor {
                dl_tensor,
                manager_ctx: ctx,
                deleter: Some(delete_legacy),
            });
            (
                Box::into_raw(m).cast(),
                LEGACY.as_ptr(),
                capsule_destructor_legacy,
            )
        };
    // SAFETY: ptr is a live DLManagedTensor(Versioned); the destructor frees it
    // unless a consumer renamed the capsule (then the consumer calls the deleter).
    let cap = unsafe { ffi::PyCapsule_New(ptr, name, Some(destructor)) };
    if cap.is_null() {
        // SAFETY: the capsule was not made; free what it would have owned.
        unsafe {
            if versioned {
                delete_versioned(ptr.cast());
            } else {
                delete_legacy(ptr.cast());
            }
        }
        return Err(PyErr::fetch(py));
    }
    // SAFETY: PyCapsule_New returned a new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, cap) }.unbind())
}
