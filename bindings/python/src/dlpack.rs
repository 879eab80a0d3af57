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
                // DLPACK_FLAG_BITMASK_READ_ONLY (bit 0): the consumer must not write.
                flags: u64::from(me.is_read_only()),
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

/// The element type of a DLPack `(code, bits)` with one lane: the inverse of
/// [`dl_dtype`], plus one-byte `bool` (code 6, unpacked: imported by a packing
/// copy) and the 8-bit floats of DLPack 1.1 (`float8_e4m3fn` 10, `float8_e5m2` 12,
/// `float8_e8m0fnu` 14).
fn element_of_dl(code: u8, bits: u8) -> Option<ElementType> {
    use ElementType::*;
    Some(match (code, bits) {
        (6, 8) => Bool,
        (10, 8) => Float8E4m3,
        (12, 8) => Float8E5m2,
        (14, 8) => Float8E8m0,
        _ => {
            return [
                Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float16, Float32,
                Float64, Bfloat16, Complex64, Complex128,
            ]
            .into_iter()
            .find(|&t| dl_dtype(t) == Some((code, bits)))
        }
    })
}

/// A consumed DLPack tensor: the producer's memory, released through the
/// producer's deleter when the last buffer over it goes (on any thread).
struct Imported {
    ptr: *const u8,
    len: usize,
    managed: *mut c_void,
    versioned: bool,
}

// SAFETY: the DLPack contract lets the deleter run on any thread, and the bytes stay
// at a fixed address until it runs; they are only read through shared slices.
unsafe impl Send for Imported {}
// SAFETY: as above.
unsafe impl Sync for Imported {}

impl hurray_io::BufferOwner for Imported {
    fn bytes(&self) -> &[u8] {
        if self.len == 0 || self.ptr.is_null() {
            return &[];
        }
        // SAFETY: the producer keeps `len` bytes at `ptr` until its deleter runs (Drop).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Imported {
    fn drop(&mut self) {
        // Producers' deleters may touch Python objects (NumPy's, JAX's): run them
        // attached; once the interpreter is finalizing, leak like `PyRef` does.
        let managed = self.managed;
        let versioned = self.versioned;
        if crate::owner::finalizing() {
            return; // leak on purpose, as `PyRef` does
        }
        let _ = Python::try_attach(|_py| {
            // SAFETY: `managed` is the consumed capsule's DLManagedTensor(Versioned),
            // whose deleter we own the one call to.
            unsafe { call_deleter(managed, versioned) }
        });
    }
}

/// Calls the deleter of a DLManagedTensor (`versioned`: DLManagedTensorVersioned).
///
/// # Safety
/// `managed` must be a live managed tensor of that kind whose deleter has not run.
unsafe fn call_deleter(managed: *mut c_void, versioned: bool) {
    // SAFETY: per the contract above.
    unsafe {
        if versioned {
            let m = managed.cast::<DLManagedTensorVersioned>();
            if let Some(d) = (*m).deleter {
                d(m);
            }
        } else {
            let m = managed.cast::<DLManagedTensor>();
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
    }
}

/// Imports a DLPack capsule (`"dltensor_versioned"` or legacy `"dltensor"`) as a
/// CPU tensor, consuming it (renamed `"used_dltensor[_versioned]"`: the tensor owns
/// the producer's memory and calls its deleter when its last view goes). Zero-copy
/// for every type but `bool` (one byte per element in DLPack, bit-packed in Hurray:
/// a packing copy), when the data meets the declared 64-byte alignment: otherwise
/// `take` decides ([`crate::interop::take_host`]: one aligned copy, or
/// `CopyRequiredError` under `copy=False`, which also refuses `bool`). A read-only
/// producer (DLPack 1.0's `DLPACK_FLAG_BITMASK_READ_ONLY`) is wrapped too (or copied
/// for alignment), and the tensor is read-only ([`Tensor::is_read_only`]).
/// Contiguous C order is row-major, Fortran order column-major, other
/// non-negative strides (elements) strided.
///
/// Errors: `BufferError` (not an unconsumed DLPack capsule, a version above 1.x),
/// `UnsupportedError` (a non-CPU device, several lanes, a type code Hurray has no
/// element type for, negative strides), `CopyRequiredError` (as above).
pub fn import(
    py: Python<'_>,
    capsule: &Bound<'_, PyAny>,
    take: crate::interop::Take,
) -> PyResult<Tensor> {
    use crate::errors::BufferError as HBufferError;
    use crate::interop::{Take, Taken};
    let cap = capsule.as_ptr();
    // SAFETY: `cap` is a live object; the checks and reads below follow the
    // PyCapsule API, and the pointer is read only after its name matched.
    let (managed, versioned) = unsafe {
        if ffi::PyCapsule_CheckExact(cap) == 0 {
            return Err(HBufferError::new_err("not a DLPack capsule"));
        }
        if ffi::PyCapsule_IsValid(cap, VERSIONED.as_ptr()) == 1 {
            (ffi::PyCapsule_GetPointer(cap, VERSIONED.as_ptr()), true)
        } else if ffi::PyCapsule_IsValid(cap, LEGACY.as_ptr()) == 1 {
            (ffi::PyCapsule_GetPointer(cap, LEGACY.as_ptr()), false)
        } else {
            ffi::PyErr_Clear();
            return Err(HBufferError::new_err(
                "the capsule is not an unconsumed DLPack capsule (\"dltensor\" or \"dltensor_versioned\")",
            ));
        }
    };
    // SAFETY: the capsule's name says what `managed` points at.
    let (dl, read_only) = unsafe {
        if versioned {
            let m = &*managed.cast::<DLManagedTensorVersioned>();
            if m.version.major > 1 {
                return Err(HBufferError::new_err(format!(
                    "DLPack version {}.{} is newer than the 1.x this library reads",
                    m.version.major, m.version.minor
                )));
            }
            (&m.dl_tensor, m.flags & 1 != 0)
        } else {
            (&(*managed.cast::<DLManagedTensor>()).dl_tensor, false)
        }
    };
    if dl.device.device_type != 1 {
        return Err(UnsupportedError::new_err(format!(
            "DLPack device type {} is not the CPU (1); copy the array to the host first",
            dl.device.device_type
        )));
    }
    if dl.dtype.lanes != 1 {
        return Err(UnsupportedError::new_err(format!(
            "DLPack dtype with {} lanes has no hurray element type",
            dl.dtype.lanes
        )));
    }
    let t = element_of_dl(dl.dtype.code, dl.dtype.bits).ok_or_else(|| {
        UnsupportedError::new_err(format!(
            "DLPack dtype (code {}, {} bits) has no hurray element type",
            dl.dtype.code, dl.dtype.bits
        ))
    })?;
    if t == ElementType::Bool && take == Take::Never {
        return Err(crate::errors::CopyRequiredError::new_err(
            "bool elements are bit-packed in hurray (element-types.md §5): importing a \
             one-byte-per-element DLPack bool tensor packs it, a copy, but copy=False was given",
        ));
    }
    let rank = usize::try_from(dl.ndim).unwrap_or(0);
    // SAFETY: a DLTensor's shape has `ndim` entries; strides, when not NULL, too.
    let shape_i: &[i64] = if rank == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(dl.shape, rank) }
    };
    let strides_i: Option<&[i64]> = (!dl.strides.is_null() && rank > 0)
        .then(|| unsafe { std::slice::from_raw_parts(dl.strides, rank) });
    let shape: Vec<u64> = shape_i.iter().map(|&n| n.max(0) as u64).collect();
    let count: u64 = shape.iter().product();
    let row: Vec<i64> = {
        let mut s = vec![1i64; rank];
        for k in (0..rank.saturating_sub(1)).rev() {
            s[k] = s[k + 1].saturating_mul(shape_i[k + 1].max(1));
        }
        s
    };
    let col: Vec<i64> = {
        let mut s = vec![1i64; rank];
        for k in 1..rank {
            s[k] = s[k - 1].saturating_mul(shape_i[k - 1].max(1));
        }
        s
    };
    // Strides of size-1 dimensions do not matter for contiguity.
    let same = |a: &[i64], b: &[i64]| {
        a.iter()
            .zip(b)
            .zip(shape_i)
            .all(|((x, y), &n)| n <= 1 || x == y)
    };
    let layout = match strides_i {
        None => L::RowMajor,
        Some(s) if count == 0 || same(s, &row) => L::RowMajor,
        Some(s) if same(s, &col) => L::ColumnMajor,
        Some(s) if s.iter().all(|&v| v >= 0) => L::Strided {
            strides: s.to_vec(),
        },
        Some(_) => {
            return Err(UnsupportedError::new_err(
                "a DLPack tensor with negative strides cannot be wrapped; copy it first",
            ))
        }
    };
    let item = usize::from(dl.dtype.bits / 8);
    let span_elems: u64 = match &layout {
        L::Strided { strides } if count > 0 => {
            1 + strides
                .iter()
                .zip(&shape)
                .map(|(&s, &n)| s as u64 * (n - 1))
                .sum::<u64>()
        }
        _ => count,
    };
    let len = span_elems as usize * item;
    // SAFETY: the producer's data starts `byte_offset` bytes after `data`.
    let ptr = unsafe { (dl.data as *const u8).add(dl.byte_offset as usize) };
    // From here the capsule is ours: rename it so its destructor leaves it alone.
    let used: &CStr = if versioned {
        c"used_dltensor_versioned"
    } else {
        c"used_dltensor"
    };
    // SAFETY: a valid capsule; the name is a static C string.
    if unsafe { ffi::PyCapsule_SetName(cap, used.as_ptr()) } != 0 {
        return Err(PyErr::fetch(py));
    }
    let owner = std::sync::Arc::new(Imported {
        ptr,
        len,
        managed,
        versioned,
    });
    let (buf, taken) = if t == ElementType::Bool {
        let bytes: Vec<u8> = hurray_io::BufferOwner::bytes(&*owner)
            .iter()
            .map(|&b| u8::from(b != 0))
            .collect();
        let packed = hurray_core::packing::pack(t, &bytes)
            .map_err(|e| UnsupportedError::new_err(format!("cannot pack bool: {e}")))?;
        (hurray_io::Buffer::copy_from(&packed), Taken::Fresh)
    } else {
        // A read-only producer's memory is wrapped as it is (or copied once when
        // below the declared 64-byte alignment, decision 5); the tensor is marked
        // read-only below, so none of its views is writable.
        crate::interop::take_host(hurray_io::Buffer::new(owner), take)?
    };
    let wrapped_read_only = taken.read_only(read_only);
    let layout = if t == ElementType::Bool && !matches!(layout, L::RowMajor | L::ColumnMajor) {
        return Err(UnsupportedError::new_err(
            "a strided DLPack bool tensor cannot be packed; make it contiguous first",
        ));
    } else {
        layout
    };
    let cpu = crate::device::cpu(py)?;
    let mut d = hurray_core::TensorDescriptor::dense(t, &shape)
        .map_err(|e| crate::errors::descriptor(&e))?;
    d.layout = layout;
    d.buffers[0] = crate::tensor::handle_for(buf.len(), cpu.get());
    Ok(crate::tensor::assemble(py, d, vec![buf], None, Some(cpu))?
        .with_read_only(wrapped_read_only))
}
