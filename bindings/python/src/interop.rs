//! Wrapping memory owned by Python objects without copying: NumPy arrays (through
//! `__array_interface__`, so the extension does not link NumPy), the three arrays of
//! a SciPy CSR/CSC matrix, COO parts, and the buffers of an unpickled tensor.
//!
//! ARCHITECTURE decision 5: a tensor never declares more alignment than its memory
//! has. Every wrap goes through [`take_host`]: zero-copy when the memory meets the
//! declared alignment (64 bytes for a non-empty buffer), else one copy into aligned
//! memory, or `CopyRequiredError` under `copy=False`.

use crate::device;
use crate::errors::{CopyRequiredError, InvalidDescriptorError, UnsupportedError};
use crate::owner::{PyMemory, PyRef};
use crate::tensor::{assemble, declared_alignment, device_object, handle_for, parse_shape, Tensor};
use hurray_core::{DecodeOptions, ElementType, Layout as L, TensorDescriptor};
use hurray_ffi::{address_alignment, align_host, meets_alignment, AlignmentPolicy, Wrapped};
use hurray_io::Buffer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Arc;

/// How a constructor takes memory a Python object holds: Python's `copy` keyword
/// (ARCHITECTURE decision 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// `copy=None`: zero-copy when the memory meets the alignment its buffer
    /// declares (64 bytes when non-empty), otherwise one copy into aligned memory.
    Auto,
    /// `copy=False`: zero-copy, or `CopyRequiredError` where a copy would be needed
    /// (memory below the declared alignment, a sub-byte type's packing).
    Never,
    /// `copy=True`: always an owned, writable copy.
    Always,
    /// Not a tensor: the bytes are only read during one writer call (`save` of a
    /// NumPy array writes them at the file's own alignment), so they are viewed as
    /// they are, whatever their alignment. Never build a tensor over such a view.
    WriteOnly,
}

impl Take {
    /// The policy for a `copy` keyword's value.
    pub fn from_copy(copy: Option<bool>) -> Take {
        match copy {
            None => Take::Auto,
            Some(false) => Take::Never,
            Some(true) => Take::Always,
        }
    }
}

/// What [`take_host`] (or a packing conversion) did with the producer's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// The tensor views the producer's memory.
    Shared,
    /// One copy made only because the memory was below the declared alignment; it
    /// stands for the producer's memory, so a read-only producer still gives a
    /// read-only tensor.
    Aligned,
    /// A copy asked for (`copy=True`) or made by a conversion (packing): writable.
    Fresh,
}

impl Taken {
    /// Whether a tensor over this memory is read-only when the producer's memory is
    /// (`producer_read_only`).
    pub fn read_only(self, producer_read_only: bool) -> bool {
        producer_read_only && self != Taken::Fresh
    }
}

/// `buf`, a view of host memory a Python object holds, under `take`, ready to be
/// declared with [`declared_alignment`] of its length (the rule is hurray-ffi's
/// [`align_host`], shared with Java and Node).
///
/// Errors: `CopyRequiredError` under [`Take::Never`] when the memory is below the
/// declared alignment (the message names the address's alignment and the aligned
/// allocators); `MemoryError` when the aligned copy cannot be allocated
/// ([`align_error`]).
pub fn take_host(buf: Buffer, take: Take) -> PyResult<(Buffer, Taken)> {
    let align = declared_alignment(buf.len());
    let addr = buf.as_slice().as_ptr() as usize;
    match take {
        Take::Always => Ok((Buffer::copy_from(buf.as_slice()), Taken::Fresh)),
        Take::Never if !meets_alignment(addr as *const _, buf.len() as u64, align) => {
            Err(CopyRequiredError::new_err(format!(
                "the data at {addr:#x} is {}-byte aligned, below the {align} bytes its buffer \
                 declares, and copy=False refuses to copy it; allocate the array with \
                 hurray.empty_aligned(shape, dtype) or hurray.zeros_aligned(shape, dtype) \
                 (64-byte-aligned NumPy arrays, wrapped without a copy), or pass copy=None \
                 to copy it once (ARCHITECTURE decision 5)",
                address_alignment(addr)
            )))
        }
        Take::Never | Take::WriteOnly => Ok((buf, Taken::Shared)),
        Take::Auto => {
            let (b, how) =
                align_host(buf, align, AlignmentPolicy::CopyWhenUnaligned).map_err(align_error)?;
            Ok((
                b,
                match how {
                    Wrapped::ZeroCopy => Taken::Shared,
                    Wrapped::Copied => Taken::Aligned,
                },
            ))
        }
    }
}

/// A Python exception for an error of [`align_host`]: `MemoryError` when the
/// aligned copy cannot be allocated (`HURRAY_ERR_LIMIT`), else the library's
/// mapping (`crate::errors::ffi`).
pub fn align_error(e: hurray_ffi::FfiError) -> PyErr {
    if e.status == hurray_ffi::status::HURRAY_ERR_LIMIT {
        pyo3::exceptions::PyMemoryError::new_err(e.message)
    } else {
        crate::errors::ffi(e)
    }
}

/// What `__array_interface__` and `.flags` say about an array.
struct ArrayInfo<'py> {
    obj: Bound<'py, PyAny>,
    ptr: usize,
    nbytes: usize,
    typestr: String,
    shape: Vec<u64>,
    c_contiguous: bool,
    f_contiguous: bool,
    readonly: bool,
    /// The element type named by an `ml_dtypes` dtype (`bfloat16`, `float8_e4m3fn`,
    /// `int4`, ...), which NumPy only knows as void or `f1` typestrs.
    ml_dtype: Option<ElementType>,
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
        let f_contiguous: bool = flags.getattr("f_contiguous")?.extract()?;
        let ml_dtype = ml_dtype_of(&obj)?;
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
            f_contiguous,
            readonly,
            ml_dtype,
        })
    }

    fn element_type(&self) -> PyResult<ElementType> {
        match self.ml_dtype {
            Some(t) => Ok(t),
            None => element_from_typestr(&self.typestr),
        }
    }

    /// A zero-copy view of the array's bytes (the array is kept alive). Never
    /// hand it to a tensor directly: [`ArrayInfo::buffer`] applies decision 5.
    fn view(&self) -> Buffer {
        let keep = Arc::new(PyRef::new(&self.obj));
        // SAFETY: the array's data is `nbytes` bytes at `ptr` and stays there while
        // the array (kept by `keep`) lives.
        unsafe { PyMemory::new(self.ptr as *const u8, self.nbytes, keep) }.into_buffer()
    }

    /// The array's bytes for a tensor under `take` ([`take_host`]): a view of the
    /// array (kept alive) when aligned, else an aligned copy.
    ///
    /// Errors: those of [`take_host`].
    fn buffer(&self, take: Take) -> PyResult<(Buffer, Taken)> {
        take_host(self.view(), take)
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

/// The element type of an array whose dtype comes from the `ml_dtypes` package
/// (its scalar type's module is `ml_dtypes`), by the dtype's name; `None` for every
/// other dtype. Errors: `UnsupportedError` for an `ml_dtypes` type the format has
/// no element type for (`float8_e4m3fnuz`, `float8_e4m3b11fnuz`, ...).
fn ml_dtype_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<ElementType>> {
    let Ok(dt) = obj.getattr("dtype") else {
        return Ok(None);
    };
    let module: Option<String> = dt
        .getattr("type")
        .and_then(|t| t.getattr("__module__"))
        .and_then(|m| m.extract())
        .ok();
    if module.as_deref() != Some("ml_dtypes") {
        return Ok(None);
    }
    let name: String = dt.getattr("name")?.extract()?;
    element_from_ml_dtypes(&name).map(Some).ok_or_else(|| {
        UnsupportedError::new_err(format!(
            "ml_dtypes.{name} has no hurray element type (the format has bfloat16, \
             float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn, float6_e2m3fn, \
             float6_e3m2fn, int4, uint4, int2, uint2)"
        ))
    })
}

/// The element type for an `ml_dtypes` dtype name, the inverse of
/// [`ml_dtypes_name`].
pub fn element_from_ml_dtypes(name: &str) -> Option<ElementType> {
    use ElementType::*;
    Some(match name {
        "bfloat16" => Bfloat16,
        "float8_e4m3fn" => Float8E4m3,
        "float8_e5m2" => Float8E5m2,
        "float8_e8m0fnu" => Float8E8m0,
        "float4_e2m1fn" => Float4E2m1,
        "float6_e2m3fn" => Float6E2m3,
        "float6_e3m2fn" => Float6E3m2,
        "int4" => Int4,
        "uint4" => Uint4,
        "int2" => Int2,
        "uint2" => Uint2,
        _ => return None,
    })
}

/// The `ml_dtypes` dtype name for an element type NumPy itself has no dtype for
/// (`element-types.md` §2: OCP E4M3 is `float8_e4m3fn`, E8M0 `float8_e8m0fnu`).
pub fn ml_dtypes_name(t: ElementType) -> Option<&'static str> {
    use ElementType::*;
    Some(match t {
        Bfloat16 => "bfloat16",
        Float8E4m3 => "float8_e4m3fn",
        Float8E5m2 => "float8_e5m2",
        Float8E8m0 => "float8_e8m0fnu",
        Float4E2m1 => "float4_e2m1fn",
        Float6E2m3 => "float6_e2m3fn",
        Float6E3m2 => "float6_e3m2fn",
        Int4 => "int4",
        Uint4 => "uint4",
        Int2 => "int2",
        Uint2 => "uint2",
        _ => return None,
    })
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

/// The buffer of an array's elements in Hurray's storage for `t`: the array's own
/// memory under `take` ([`take_host`]: no copy when aligned), or for a sub-byte type
/// (`bool`, `int4`, `float4_e2m1`, ...), whose arrays hold one byte per element, a
/// packed copy (`hurray_core::packing::pack`, `element-types.md` §5).
///
/// Errors: `InvalidDescriptorError` when an element does not fit the type's code
/// (an `int4` byte outside -8..=7, say); `CopyRequiredError` under [`Take::Never`]
/// for a sub-byte type (packing is a copy) and as [`take_host`].
fn storage_buffer(a: &ArrayInfo<'_>, t: ElementType, take: Take) -> PyResult<(Buffer, Taken)> {
    let sub_byte = t.storage().is_some_and(|s| s.bits() < 8);
    if !sub_byte {
        return a.buffer(take);
    }
    if take == Take::Never {
        return Err(CopyRequiredError::new_err(format!(
            "{} elements are bit-packed in hurray (element-types.md §5): wrapping a \
             one-byte-per-element array packs it, a copy, but copy=False was given",
            t.name()
        )));
    }
    let src: &[u8] = if a.nbytes == 0 || a.ptr == 0 {
        &[]
    } else {
        // SAFETY: the array (held by `a.obj`) has `nbytes` bytes at `ptr`, one per
        // element, and lives for this call.
        unsafe { std::slice::from_raw_parts(a.ptr as *const u8, a.nbytes) }
    };
    let src: std::borrow::Cow<'_, [u8]> = match (t, a.ml_dtype.is_some()) {
        // NumPy bools are 0 or 1, but a view of other bytes as bool may hold any value.
        (ElementType::Bool, _) => src
            .iter()
            .map(|&b| u8::from(b != 0))
            .collect::<Vec<_>>()
            .into(),
        // ml_dtypes keeps a signed 4- or 2-bit value in the low bits of its byte
        // (-8 as 0x08): sign-extend it, the form `packing::pack` takes.
        (ElementType::Int4, true) => src
            .iter()
            .map(|&b| ((b & 0x0F) ^ 0x08).wrapping_sub(0x08))
            .collect::<Vec<_>>()
            .into(),
        (ElementType::Int2, true) => src
            .iter()
            .map(|&b| ((b & 0x03) ^ 0x02).wrapping_sub(0x02))
            .collect::<Vec<_>>()
            .into(),
        _ => src.into(),
    };
    let packed = hurray_core::packing::pack(t, &src).map_err(|e| {
        InvalidDescriptorError::new_err(format!("cannot pack the array as {}: {e}", t.name()))
    })?;
    Ok((Buffer::copy_from(&packed), Taken::Fresh))
}

/// The descriptor and elements of a C- or Fortran-contiguous NumPy array (or NumPy
/// scalar) under `take`, and whether a tensor over them is read-only.
///
/// Errors: those of [`from_numpy`].
fn dense_parts(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    take: Take,
) -> PyResult<(TensorDescriptor, Buffer, bool)> {
    let a = ArrayInfo::of(array)?;
    let col_major = !a.c_contiguous && a.f_contiguous;
    if !a.c_contiguous && !col_major {
        return Err(UnsupportedError::new_err(
            "the array is neither C- nor Fortran-contiguous (a strided view); pass numpy.ascontiguousarray(a) to copy it",
        ));
    }
    let t = a.element_type()?;
    let mut d = TensorDescriptor::dense(t, &a.shape).map_err(|e| crate::errors::descriptor(&e))?;
    if col_major {
        d.layout = L::ColumnMajor;
    }
    let (buf, taken) = storage_buffer(&a, t, take)?;
    let cpu = *device::cpu(py)?.get();
    d.buffers[0] = handle_for(buf.len(), &cpu);
    Ok((d, buf, taken.read_only(a.readonly)))
}

/// Wraps a C-contiguous NumPy array (or NumPy scalar); the tensor keeps the array
/// alive. Row-major, CPU; a Fortran-ordered array (``a.T``,
/// ``numpy.asfortranarray``) is wrapped as :class:`ColMajorLayout`. ``ml_dtypes``
/// arrays are accepted: ``bfloat16``, ``float8_e4m3fn``, ``float8_e5m2`` and
/// ``float8_e8m0fnu`` are wrapped as they are. Sub-byte types (``bool``, and
/// ``ml_dtypes``' ``int4``, ``uint4``, ``int2``, ``uint2``, ``float4_e2m1fn``,
/// ``float6_e2m3fn``, ``float6_e3m2fn``), held one byte per element in NumPy, are
/// packed into Hurray's storage (a copy, ``element-types.md`` §5).
///
/// Alignment (ARCHITECTURE decision 5): the tensor's buffer declares 64-byte
/// alignment (when non-empty), and its memory always has it. ``copy=None`` (the
/// default) wraps the array without copying when its data address is a multiple of
/// 64, and otherwise copies it once into 64-byte-aligned memory (NumPy allocates
/// large arrays only 16-byte aligned: allocate with :func:`hurray.empty_aligned` /
/// :func:`hurray.zeros_aligned` to stay zero-copy). ``copy=False`` never copies: it
/// raises instead. ``copy=True`` always copies (a writable tensor).
///
/// A read-only array (``a.flags.writeable`` false: an object store's, a
/// ``numpy.frombuffer`` over ``bytes``) gives a read-only tensor
/// (:attr:`Tensor.read_only`), whose exports are read-only too, also when it was
/// copied for alignment; a packed copy and a ``copy=True`` copy are writable.
///
/// Raises:
///     hurray.UnsupportedError: neither C- nor Fortran-contiguous (a strided slice:
///         ``hurray.save`` copies those), or a dtype Hurray has no type for
///         (strings, objects, datetimes, non-native byte order, other ml_dtypes).
///     hurray.InvalidDescriptorError: a sub-byte element out of its type's range.
///     hurray.CopyRequiredError: ``copy=False`` and the data is not 64-byte aligned
///         (the message names the address's alignment), or a sub-byte type.
///     AttributeError: the object is not array-like (no ``flags`` /
///         ``__array_interface__`` / ``nbytes``).
#[pyfunction]
#[pyo3(signature = (array, *, copy=None))]
pub fn from_numpy(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    copy: Option<bool>,
) -> PyResult<Tensor> {
    let (d, buf, ro) = dense_parts(py, array, Take::from_copy(copy))?;
    Ok(assemble(py, d, vec![buf], None, Some(device::cpu(py)?))?.with_read_only(ro))
}

/// The descriptor and a borrowed view of a NumPy array's elements for a file
/// writer (`save`): the bytes are read during the write only and placed at the
/// file's alignment, so a 16-byte-aligned array is written without an aligned copy
/// first. Never made into a tensor ([`Take::WriteOnly`]).
///
/// Errors: those of [`from_numpy`] but `CopyRequiredError`.
pub fn write_parts(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
) -> PyResult<(TensorDescriptor, Buffer)> {
    let (d, buf, _) = dense_parts(py, array, Take::WriteOnly)?;
    Ok((d, buf))
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
/// ``copy`` as in :func:`from_numpy`, for each array (an array whose data is not
/// 64-byte aligned is copied once, or refused under ``copy=False``).
///
/// Raises:
///     hurray.CopyRequiredError: ``copy=False`` and an array needs a copy.
///     hurray.InvalidDescriptorError: negative dimension, indices not ``[nnz, rank]``,
///         values not 1-D of length nnz.
///     hurray.UnsupportedError: non-contiguous arrays, indices not uint64, values of
///         a dtype Hurray has no type for.
#[pyfunction]
#[pyo3(signature = (values, indices, shape, *, copy=None))]
pub fn sparse_coo(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    copy: Option<bool>,
) -> PyResult<Tensor> {
    let take = Take::from_copy(copy);
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
    let (vbuf, vtaken) = storage_buffer(&val, t, take)?;
    let (ibuf, itaken) = idx.buffer(take)?;
    let ro = itaken.read_only(idx.readonly) || vtaken.read_only(val.readonly);
    let bufs = vec![vbuf, ibuf];
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
    Ok(assemble(py, d, bufs, None, Some(device::cpu(py)?))?.with_read_only(ro))
}

/// CSR (``fmt == "csr"``) or CSC tensor over the three arrays of a SciPy matrix
/// (all kept alive; no copy when 64-byte aligned, ``copy`` as in
/// :func:`from_numpy`). Used by ``hurray.from_scipy``.
#[pyfunction]
#[pyo3(signature = (fmt, shape, values, indices, indptr, copy=None))]
pub fn _compressed(
    py: Python<'_>,
    fmt: &str,
    shape: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    indptr: &Bound<'_, PyAny>,
    copy: Option<bool>,
) -> PyResult<Tensor> {
    let take = Take::from_copy(copy);
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
    let (vbuf, vtaken) = storage_buffer(&val, t, take)?;
    let (ibuf, itaken) = idx.buffer(take)?;
    let (pbuf, ptaken) = ptr.buffer(take)?;
    let ro = itaken.read_only(idx.readonly)
        || ptaken.read_only(ptr.readonly)
        || vtaken.read_only(val.readonly);
    let bufs = vec![vbuf, ibuf, pbuf];
    let cpu = *device::cpu(py)?.get();
    let d = TensorDescriptor {
        shape,
        layout,
        buffers: bufs.iter().map(|b| handle_for(b.len(), &cpu)).collect(),
        ..TensorDescriptor::dense(t, &[]).map_err(|e| crate::errors::descriptor(&e))?
    };
    Ok(assemble(py, d, bufs, None, Some(device::cpu(py)?))?.with_read_only(ro))
}

/// Rebuilds a pickled tensor from its encoded descriptor and buffers.
///
/// ``read_only`` is the pickled tensor's flag (:attr:`Tensor.read_only`):
///
/// - ``True``: every buffer is wrapped as it is (no copy; ``bytes`` too) and the
///   tensor is read-only.
/// - ``False``: a writable tensor is wanted: writable buffer-protocol objects
///   (``bytearray``, writable ``PickleBuffer``/``memoryview``, arrays) are wrapped,
///   read-only ones copied.
/// - ``None`` (what pickling passes for a writable tensor): as the buffers come.
///   A read-only buffer other than ``bytes`` (what an unpickler hands out for a
///   read-only out-of-band buffer: an object store's, a shared-memory frame) is
///   wrapped without a copy and makes the tensor read-only, as NumPy's arrays
///   over such buffers are; ``bytes`` (an in-band copy, possibly a shared cached
///   object) is copied and the tensor stays writable.
///
/// Without NumPy every buffer is copied (writable unless ``read_only``). A wrapped
/// buffer whose address is not a multiple of 64 is copied once into aligned memory
/// (ARCHITECTURE decision 5); the tensor's read-only flag is as above either way.
#[pyfunction]
#[pyo3(signature = (descriptor, buffers, device_id, read_only=None))]
pub fn _rebuild(
    py: Python<'_>,
    descriptor: &[u8],
    buffers: Vec<Bound<'_, PyAny>>,
    device_id: u32,
    read_only: Option<bool>,
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
    let np = py.import("numpy").ok();
    // First pass: what each buffer is (a NumPy view of it when NumPy is there).
    let mut infos = Vec::with_capacity(buffers.len());
    for b in &buffers {
        let info = match (&np, b.cast::<PyBytes>()) {
            (_, Ok(_)) if read_only != Some(true) => None,
            (Some(np), _) => {
                let arr = np.getattr("frombuffer")?.call1((b, np.getattr("uint8")?))?;
                Some(ArrayInfo::of(&arr)?)
            }
            (None, _) => None,
        };
        infos.push(info);
    }
    let ro = match read_only {
        Some(v) => v,
        None => infos.iter().flatten().any(|i| i.readonly),
    };
    let mut bufs = Vec::with_capacity(buffers.len());
    for (b, info) in buffers.iter().zip(&infos) {
        let buf = match info {
            // Out-of-band buffers not 64-byte aligned (a small frame Ray or Dask
            // packed at 8 bytes) are copied once (decision 5).
            Some(info) if ro || !info.readonly => info.buffer(Take::Auto)?.0,
            Some(info) => info.copied(),
            None => match b.cast::<PyBytes>() {
                Ok(bytes) => Buffer::copy_from(bytes.as_bytes()),
                Err(_) => {
                    let copy = py.get_type::<PyBytes>().call1((b,))?;
                    Buffer::copy_from(copy.cast::<PyBytes>()?.as_bytes())
                }
            },
        };
        bufs.push(buf);
    }
    // The pickled tensor may have declared more (a file written with a larger data
    // alignment); its bytes now lie in this memory, which promises 64: declare what
    // it has rather than copy again (decision 5).
    let mut d = d;
    for (h, b) in d.buffers.iter_mut().zip(&bufs) {
        let ptr = b.as_slice().as_ptr().cast();
        let len = b.len() as u64;
        if !meets_alignment(ptr, len, h.alignment) {
            h.alignment = declared_alignment(b.len());
        }
    }
    let dev = device_object(py, &d, device_id)?;
    Ok(assemble(py, d, bufs, None, Some(dev))?.with_read_only(ro))
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

/// Consumes a DLPack capsule (what ``x.__dlpack__()`` returned) as a CPU tensor;
/// used by :func:`hurray.from_dlpack` for what NumPy cannot import (``bfloat16``,
/// float8, ``bool``). ``copy`` as in :func:`from_numpy`.
#[pyfunction]
#[pyo3(signature = (capsule, copy=None))]
pub fn _from_dlpack_capsule(
    py: Python<'_>,
    capsule: &Bound<'_, PyAny>,
    copy: Option<bool>,
) -> PyResult<Tensor> {
    crate::dlpack::import(py, capsule, Take::from_copy(copy))
}

/// ``{hurray dtype name: ml_dtypes dtype name}`` for the element types NumPy has
/// no dtype for but the ``ml_dtypes`` package does (``bfloat16``, float8, float6,
/// float4 and the 4- and 2-bit integers).
#[pyfunction]
pub fn _ml_dtypes_names(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for &t in ElementType::ALL {
        if let Some(n) = ml_dtypes_name(t) {
            d.set_item(t.name(), n)?;
        }
    }
    Ok(d)
}

/// Registers the functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(sparse_coo, m)?)?;
    m.add_function(wrap_pyfunction!(_compressed, m)?)?;
    m.add_function(wrap_pyfunction!(_rebuild, m)?)?;
    m.add_function(wrap_pyfunction!(_live_objects, m)?)?;
    m.add_function(wrap_pyfunction!(_from_hurray_capsule, m)?)?;
    m.add_function(wrap_pyfunction!(_from_dlpack_capsule, m)?)?;
    m.add_function(wrap_pyfunction!(_ml_dtypes_names, m)?)?;
    Ok(())
}
