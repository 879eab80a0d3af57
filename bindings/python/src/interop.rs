//! Wrapping memory owned by Python objects without copying: NumPy arrays (through
//! `__array_interface__`, so the extension does not link NumPy), the three arrays of
//! a SciPy CSR/CSC matrix, COO parts, and the buffers of an unpickled tensor.

use crate::device;
use crate::errors::{InvalidDescriptorError, UnsupportedError};
use crate::owner::{PyMemory, PyRef};
use crate::tensor::{assemble, device_object, handle_for, parse_shape, Tensor};
use hurray_core::{DecodeOptions, ElementType, Layout as L, TensorDescriptor};
use hurray_io::Buffer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Arc;

/// What `__array_interface__` and `.flags` say about an array.
struct ArrayInfo<'py> {
    obj: Bound<'py, PyAny>,
    ptr: usize,
    nbytes: usize,
    typestr: String,
    shape: Vec<u64>,
    c_contiguous: bool,
    readonly: bool,
}

impl<'py> ArrayInfo<'py> {
    fn of(obj: &Bound<'py, PyAny>) -> PyResult<ArrayInfo<'py>> {
        let py = obj.py();
        // A NumPy scalar's interface points into a temporary array: wrap it in a real one.
        let modules = py
            .import("sys")?
            .getattr("modules")?
            .cast_into::<PyDict>()?;
        let obj = match modules.get_item("numpy")? {
            Some(np) if obj.is_instance(&np.getattr("generic")?)? => {
                np.getattr("asarray")?.call1((obj,))?
            }
            _ => obj.clone(),
        };
        let flags = obj.getattr("flags")?;
        let iface = obj.getattr("__array_interface__")?;
        let nbytes: usize = obj.getattr("nbytes")?.extract()?;
        let c_contiguous: bool = flags.getattr("c_contiguous")?.extract()?;
        let typestr: String = iface.get_item("typestr")?.extract()?;
        let shape: Vec<u64> = iface.get_item("shape")?.extract()?;
        let (ptr, readonly): (usize, bool) = iface.get_item("data")?.extract()?;
        Ok(ArrayInfo {
            obj,
            ptr,
            nbytes,
            typestr,
            shape,
            c_contiguous,
            readonly,
        })
    }

    fn element_type(&self) -> PyResult<ElementType> {
        element_from_typestr(&self.typestr)
    }

    /// A zero-copy buffer over the array (the array is kept alive).
    fn buffer(&self) -> Buffer {
        let keep = Arc::new(PyRef::new(&self.obj));
        // SAFETY: the array's data is `nbytes` bytes at `ptr` and stays there while
        // the array (kept by `keep`) lives.
        unsafe { PyMemory::new(self.ptr as *const u8, self.nbytes, keep) }.into_buffer()
    }

    /// An owned copy of the array's bytes.
    fn copied(&self) -> Buffer {
        if self.nbytes == 0 || self.ptr == 0 {
            return Buffer::copy_from(&[]);
        }
        // SAFETY: the array (held by `self.obj`) has `nbytes` bytes at `ptr`.
        Buffer::copy_from(unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.nbytes) })
    }
}

/// The element type for a NumPy typestr (`"<f4"`, `"|b1"`, ...).
///
/// Errors: `UnsupportedError` for kinds Hurray has no type for and for
/// non-native byte order.
pub fn element_from_typestr(ts: &str) -> PyResult<ElementType> {
    use ElementType::*;
    let (order, rest) = ts.split_at(ts.len().min(1));
    let native_little = cfg!(target_endian = "little");
    let swapped = match order {
        "<" => !native_little,
        ">" => native_little,
        _ => false,
    };
    let t = match rest {
        "b1" => Bool,
        "i1" => Int8,
        "i2" => Int16,
        "i4" => Int32,
        "i8" => Int64,
        "u1" => Uint8,
        "u2" => Uint16,
        "u4" => Uint32,
        "u8" => Uint64,
        "f2" => Float16,
        "f4" => Float32,
        "f8" => Float64,
        "c8" => Complex64,
        "c16" => Complex128,
        _ => {
            return Err(UnsupportedError::new_err(format!(
                "NumPy dtype {ts:?} has no hurray element type"
            )))
        }
    };
    if swapped && !matches!(t, Bool | Int8 | Uint8) {
        return Err(UnsupportedError::new_err(format!(
            "NumPy dtype {ts:?} is not in native byte order; convert with .astype(dtype.newbyteorder('='))"
        )));
    }
    Ok(t)
}

/// Packs one-byte-per-element NumPy booleans into Hurray's bit-packed form (a copy).
fn pack_bools(a: &ArrayInfo<'_>) -> Buffer {
    // SAFETY: the array is alive for this call and holds nbytes bytes at ptr.
    let src = unsafe { std::slice::from_raw_parts(a.ptr as *const u8, a.nbytes) };
    let mut out = hurray_io::AlignedBuf::zeroed(a.nbytes.div_ceil(8)).expect("small allocation");
    let dst = out.as_mut_slice();
    for (i, &b) in src.iter().enumerate() {
        if b != 0 {
            dst[i / 8] |= 1 << (i % 8);
        }
    }
    Buffer::from_aligned(out)
}

/// Wraps a C-contiguous NumPy array (or NumPy scalar) without copying; the tensor
/// keeps the array alive. Row-major, CPU. A ``bool`` array is packed into
/// Hurray's bit-packed bool (a copy: the two representations differ).
///
/// Raises:
///     hurray.UnsupportedError: not C-contiguous, or a dtype Hurray has no type for
///         (strings, objects, datetimes, non-native byte order).
///     AttributeError: the object is not array-like (no ``flags`` /
///         ``__array_interface__`` / ``nbytes``).
#[pyfunction]
pub fn from_numpy(py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let a = ArrayInfo::of(array)?;
    if !a.c_contiguous {
        return Err(UnsupportedError::new_err(
            "the array is not C-contiguous (row-major); pass numpy.ascontiguousarray(a) to copy it",
        ));
    }
    let t = a.element_type()?;
    let mut d = TensorDescriptor::dense(t, &a.shape).map_err(|e| crate::errors::descriptor(&e))?;
    let buf = if t == ElementType::Bool {
        pack_bools(&a)
    } else {
        a.buffer()
    };
    let cpu = *device::cpu(py)?.get();
    d.buffers[0] = handle_for(buf.len(), &cpu);
    assemble(py, d, vec![buf], None, Some(device::cpu(py)?))
}

fn contiguous(a: &ArrayInfo<'_>, what: &str) -> PyResult<()> {
    if a.c_contiguous {
        Ok(())
    } else {
        Err(UnsupportedError::new_err(format!(
            "{what} is not C-contiguous"
        )))
    }
}

fn uint64(a: &ArrayInfo<'_>, what: &str) -> PyResult<()> {
    if a.element_type().ok() == Some(ElementType::Uint64) {
        Ok(())
    } else {
        Err(UnsupportedError::new_err(format!(
            "{what} must be uint64, not {:?}",
            a.typestr
        )))
    }
}

/// A COO tensor over NumPy arrays (no copy): ``values`` 1-D of length nnz,
/// ``indices`` 2-D uint64 ``[nnz, rank]`` (row-major), ``shape`` with ``rank``
/// entries. Layout ``CooLayout(nnz, is_sorted=False)``; buffers 0 = values, 1 = indices.
///
/// Raises:
///     hurray.InvalidDescriptorError: negative dimension, indices not ``[nnz, rank]``,
///         values not 1-D of length nnz.
///     hurray.UnsupportedError: non-contiguous arrays, indices not uint64, values of
///         a dtype Hurray has no type for.
#[pyfunction]
pub fn sparse_coo(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
) -> PyResult<Tensor> {
    let shape = parse_shape(shape)?;
    let idx = ArrayInfo::of(indices)?;
    contiguous(&idx, "indices")?;
    if idx.shape.len() != 2 || idx.shape[1] != shape.len() as u64 {
        return Err(InvalidDescriptorError::new_err(format!(
            "indices must have shape [nnz, {}], not {:?}",
            shape.len(),
            idx.shape
        )));
    }
    uint64(&idx, "indices")?;
    let nnz = idx.shape[0];
    let val = ArrayInfo::of(values)?;
    contiguous(&val, "values")?;
    if val.shape != [nnz] {
        return Err(InvalidDescriptorError::new_err(format!(
            "values must be 1-D of length nnz = {nnz}, not shape {:?}",
            val.shape
        )));
    }
    let t = val.element_type()?;
    let vbuf = if t == ElementType::Bool {
        pack_bools(&val)
    } else {
        val.buffer()
    };
    let bufs = vec![vbuf, idx.buffer()];
    let cpu = *device::cpu(py)?.get();
    let d = TensorDescriptor {
        shape,
        layout: L::Coo {
            nnz,
            is_sorted: false,
        },
        buffers: bufs.iter().map(|b| handle_for(b.len(), &cpu)).collect(),
        ..TensorDescriptor::dense(t, &[]).map_err(|e| crate::errors::descriptor(&e))?
    };
    assemble(py, d, bufs, None, Some(device::cpu(py)?))
}

/// CSR (``fmt == "csr"``) or CSC tensor over the three arrays of a SciPy matrix
/// (all kept alive; no copy). Used by ``hurray.from_scipy``.
#[pyfunction]
pub fn _compressed(
    py: Python<'_>,
    fmt: &str,
    shape: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    indptr: &Bound<'_, PyAny>,
) -> PyResult<Tensor> {
    let shape = parse_shape(shape)?;
    if shape.len() != 2 {
        return Err(InvalidDescriptorError::new_err(format!(
            "a {fmt} matrix has rank 2, not {}",
            shape.len()
        )));
    }
    let val = ArrayInfo::of(values)?;
    let idx = ArrayInfo::of(indices)?;
    let ptr = ArrayInfo::of(indptr)?;
    uint64(&idx, ".indices")?;
    uint64(&ptr, ".indptr")?;
    for (a, w) in [(&val, ".data"), (&idx, ".indices"), (&ptr, ".indptr")] {
        contiguous(a, w)?;
    }
    let t = val.element_type()?;
    let nnz = val.shape.first().copied().unwrap_or(0);
    let layout = if fmt == "csr" {
        L::Csr { nnz }
    } else {
        L::Csc { nnz }
    };
    let vbuf = if t == ElementType::Bool {
        pack_bools(&val)
    } else {
        val.buffer()
    };
    let bufs = vec![vbuf, idx.buffer(), ptr.buffer()];
    let cpu = *device::cpu(py)?.get();
    let d = TensorDescriptor {
        shape,
        layout,
        buffers: bufs.iter().map(|b| handle_for(b.len(), &cpu)).collect(),
        ..TensorDescriptor::dense(t, &[]).map_err(|e| crate::errors::descriptor(&e))?
    };
    assemble(py, d, bufs, None, Some(device::cpu(py)?))
}

/// Rebuilds a pickled tensor from its encoded descriptor and buffers. Writable
/// buffer-protocol objects (``bytearray``, a writable ``PickleBuffer`` or
/// ``memoryview``, arrays) are wrapped without copying when NumPy is available;
/// read-only ones (``bytes``, a read-only ``memoryview``, what an unpickler hands
/// out for a read-only out-of-band buffer) are copied, since every view of a
/// tensor is writable.
#[pyfunction]
pub fn _rebuild(
    py: Python<'_>,
    descriptor: &[u8],
    buffers: Vec<Bound<'_, PyAny>>,
    device_id: u32,
) -> PyResult<Tensor> {
    let opts = DecodeOptions {
        accept_private: true,
        ..DecodeOptions::default()
    };
    let d = TensorDescriptor::decode_with(descriptor, &opts)
        .map_err(|e| crate::errors::descriptor(&e))?;
    if buffers.len() != d.buffers.len() {
        return Err(InvalidDescriptorError::new_err(format!(
            "{} buffer(s) for a descriptor that declares {}",
            buffers.len(),
            d.buffers.len()
        )));
    }
    let mut bufs = Vec::with_capacity(buffers.len());
    for b in &buffers {
        let buf = if let Ok(bytes) = b.cast::<PyBytes>() {
            // Immutable (and possibly shared, e.g. the cached one-byte objects):
            // a zero-copy tensor over it would let NumPy write into it.
            Buffer::copy_from(bytes.as_bytes())
        } else {
            match py.import("numpy") {
                Ok(np) => {
                    let arr = np.getattr("frombuffer")?.call1((b, np.getattr("uint8")?))?;
                    let info = ArrayInfo::of(&arr)?;
                    if info.readonly {
                        info.copied()
                    } else {
                        info.buffer()
                    }
                }
                Err(_) => {
                    let copy = py.get_type::<PyBytes>().call1((b,))?;
                    Buffer::copy_from(copy.cast::<PyBytes>()?.as_bytes())
                }
            }
        };
        bufs.push(buf);
    }
    let dev = device_object(py, &d, device_id)?;
    assemble(py, d, bufs, None, Some(dev))
}

/// Live handles of the native library (tensors, descriptors, buffers, lists):
/// tests assert it returns to its baseline once every object is released.
#[pyfunction]
pub fn _live_objects() -> i64 {
    hurray_ffi::live_objects()
}

/// Consumes a ``"hurray_tensor_handle"`` capsule (what ``obj.__hurray__()``
/// returned; see :func:`hurray.from_hurray`).
#[pyfunction]
pub fn _from_hurray_capsule(capsule: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    crate::capsule::consume(capsule)
}

/// Registers the functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(sparse_coo, m)?)?;
    m.add_function(wrap_pyfunction!(_compressed, m)?)?;
    m.add_function(wrap_pyfunction!(_rebuild, m)?)?;
    m.add_function(wrap_pyfunction!(_live_objects, m)?)?;
    m.add_function(wrap_pyfunction!(_from_hurray_capsule, m)?)?;
    Ok(())
}
