//! `hurray.Tensor`: one Python object owning one `HurrayTensor` handle.
//!
//! Every way of making a tensor ends in [`assemble`]: a descriptor model plus host
//! buffers (shared views whose owners keep the memory alive: an aligned copy, a
//! NumPy array, a mapped file, a foreign handle) becomes a validated descriptor
//! handle and a `HurrayTensor` from hurray-ffi.

use crate::device::{self, Device};
use crate::dtype::{self, Dtype};
use crate::errors::{self, BufferError, InvalidDescriptorError, UnsupportedError};
use crate::layout::{self, Layout, Repr};
use crate::quant::{self, Shard, Statistics};
use hurray_core::{
    BufferHandle, DeviceTag, ElementType, Layout as L, MemoryClass, Quantization, SyncMode,
    TensorDescriptor, DYN,
};
use hurray_ffi::{AlignmentPolicy, HurrayBuffer, HurrayDescriptor, HurrayTensor, Placement};
use hurray_io::Buffer;
use pyo3::exceptions::{PyAttributeError, PyIndexError, PyNotImplementedError, PyTypeError};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyTuple};
use std::sync::Arc;

/// The owned handle.
pub struct Handle(Box<HurrayTensor>);

// SAFETY: the handle is immutable after construction; what it owns (descriptor,
// buffers with `Arc` owners, release guards) is `Send + Sync` and its release
// callbacks may run on any thread by contract. Raw pointers inside only point at
// its own heap parts.
unsafe impl Send for Handle {}
// SAFETY: as above; shared access never mutates.
unsafe impl Sync for Handle {}

impl Handle {
    pub fn get(&self) -> &HurrayTensor {
        &self.0
    }
}

/// A tensor: element type, shape, layout and buffers, plus optional quantization,
/// statistics and shard sections.
///
/// ``Tensor(buffer, dtype, shape, device=None, *, aux_buffers=None, layout=None,
/// quantization=None, statistics=None, shard=None)`` copies ``buffer`` (``bytes``)
/// as buffer 0 and each of ``aux_buffers`` as buffers 1..N. ``shape`` is a sequence
/// of non-negative ints (elements per dimension); ``layout`` defaults to
/// :class:`RowMajorLayout`.
///
/// Raises:
///     hurray.BufferError: ``buffer`` or an aux buffer is not ``bytes``, or too small
///         for the layout (the message names the buffer's role).
///     hurray.InvalidDescriptorError: negative dimension, rank > 64, too few buffers,
///         a bad quantization/statistics/shard, any other descriptor rule, or buffer
///         contents that break a content rule (see :meth:`validate_content`).
///     hurray.UnsupportedError: a :class:`CompositeLayout` (it owns no buffers).
///     TypeError: ``layout`` is not a :class:`hurray.Layout`; wrong argument types.
#[pyclass(module = "hurray", frozen)]
pub struct Tensor {
    pub h: Handle,
    dtype: Py<Dtype>,
    device: Py<Device>,
    shape: Py<PyTuple>,
}

/// The alignment a buffer of `len` bytes built by this binding declares
/// (`descriptor.md` §6.1): 64 when non-empty, 1 when empty. Its memory must meet it
/// (ARCHITECTURE decision 5; see `interop::take_host`).
pub fn declared_alignment(len: usize) -> u32 {
    if len == 0 {
        1
    } else {
        64
    }
}

/// The descriptor buffer-table entry for a host buffer of `len` bytes on `dev`.
pub fn handle_for(len: usize, dev: &Device) -> BufferHandle {
    BufferHandle {
        byte_size: len as u64,
        alignment: declared_alignment(len),
        device: dev.tag,
        sync_mode: SyncMode::ProducerSynced,
        memory_class: dev.class,
    }
}

/// A view of the first `n` bytes of `b` (same owner, no copy).
pub fn prefix(b: &Buffer, n: usize) -> Buffer {
    let owner = b.owner().clone();
    let base = owner.bytes().as_ptr() as usize;
    let start = b.as_slice().as_ptr() as usize - base;
    Buffer::slice_of(owner, start..start + n.min(b.len())).expect("prefix lies inside its owner")
}

/// Builds a tensor from a descriptor model and its host buffers.
///
/// A buffer whose address does not meet its declared alignment is copied once into
/// aligned memory here (ARCHITECTURE decision 5: the tensor never declares more
/// alignment than its memory has). Callers wrapping foreign memory apply the rule
/// before ([`crate::interop::take_host`], which honours `copy=False`); this is the
/// net under every other path.
///
/// Errors: descriptor rules (`InvalidDescriptorError`, `BufferError` for sizes),
/// buffer mismatch (`InvalidDescriptorError`), an alignment no copy can promise
/// (the library's mapping of `HURRAY_ERR_INVALID_ARGUMENT`), `MemoryError` (the
/// copy cannot be allocated).
pub fn assemble(
    py: Python<'_>,
    d: TensorDescriptor,
    bufs: Vec<Buffer>,
    dtype: Option<Py<Dtype>>,
    device: Option<Py<Device>>,
) -> PyResult<Tensor> {
    d.validate().map_err(|e| errors::descriptor(&e))?;
    if bufs.len() != d.buffers.len() {
        return Err(InvalidDescriptorError::new_err(format!(
            "{} buffer(s) supplied, the descriptor declares {}",
            bufs.len(),
            d.buffers.len()
        )));
    }
    let hb = bufs
        .into_iter()
        .zip(&d.buffers)
        .map(|(b, h)| {
            let (b, _) = hurray_ffi::align_host(b, h.alignment, AlignmentPolicy::CopyWhenUnaligned)
                .map_err(crate::interop::align_error)?;
            Ok(Box::new(HurrayBuffer::host(
                b,
                Placement {
                    alignment: h.alignment,
                    device: h.device,
                    sync_mode: h.sync_mode,
                    memory_class: h.memory_class,
                },
            )))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let dtype = match dtype {
        Some(d) => d,
        None => dtype::object(py, d.element_type)?,
    };
    let device = match device {
        Some(d) => d,
        None => device_object(py, &d, 0)?,
    };
    let shape = shape_tuple(py, &d.shape)?;
    let desc = HurrayDescriptor::new(Arc::new(d)).map_err(errors::ffi)?;
    let t = HurrayTensor::new(desc, hb, None).map_err(errors::ffi)?;
    Ok(Tensor {
        h: Handle(Box::new(t)),
        dtype,
        device,
        shape,
    })
}

/// A Python tensor owning `t`, a handle hurray-ffi's face made (a file reader's
/// tensor, a stream decoder's): dtype, device and shape objects come from its
/// descriptor; nothing is copied or checked again.
pub fn from_handle(py: Python<'_>, t: HurrayTensor) -> PyResult<Tensor> {
    let d = t.model();
    let dtype = dtype::object(py, d.element_type)?;
    let device = device_object(py, d, 0)?;
    let shape = shape_tuple(py, &d.shape)?;
    Ok(Tensor {
        h: Handle(Box::new(t)),
        dtype,
        device,
        shape,
    })
}

fn shape_tuple(py: Python<'_>, shape: &[u64]) -> PyResult<Py<PyTuple>> {
    let items: Vec<Option<u64>> = shape.iter().map(|&v| (v != DYN).then_some(v)).collect();
    Ok(PyTuple::new(py, items)?.unbind())
}

/// The `Device` of a descriptor's buffer 0 (CPU when it has none), with `id`.
pub fn device_object(py: Python<'_>, d: &TensorDescriptor, id: u32) -> PyResult<Py<Device>> {
    let (tag, class) = d
        .buffers
        .first()
        .map_or((DeviceTag::Cpu, MemoryClass::Standard), |b| {
            (b.device, b.memory_class)
        });
    if tag == DeviceTag::Cpu && class == MemoryClass::Standard && id == 0 {
        return device::cpu(py);
    }
    Py::new(py, Device { tag, id, class })
}

/// Parses a shape argument: ints >= 0, rank <= 64.
///
/// Errors: `TypeError` for non-ints, `OverflowError` beyond int64,
/// `InvalidDescriptorError` for negatives and rank > 64.
pub fn parse_shape(shape: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    if shape.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(
            "shape must be a sequence of ints, not str",
        ));
    }
    let mut out = Vec::new();
    for item in shape.try_iter()? {
        let item = item?;
        if item.is_instance_of::<pyo3::types::PyBool>()
            || !item.is_instance_of::<pyo3::types::PyInt>()
        {
            let is_index =
                item.hasattr("__index__")? && !item.is_instance_of::<pyo3::types::PyBool>();
            if !is_index {
                return Err(PyTypeError::new_err(format!(
                    "shape entries must be ints, not {}",
                    item.get_type().name()?
                )));
            }
        }
        // The API takes dimensions up to int64 (python-api.md: larger is an
        // OverflowError); say so rather than CPython's "C long" text.
        let v: i64 = item.extract().map_err(|_| {
            pyo3::exceptions::PyOverflowError::new_err(format!(
                "shape dimension {item} is above the largest the API takes, 2**63 - 1"
            ))
        })?;
        if v < 0 {
            return Err(InvalidDescriptorError::new_err(format!(
                "shape dimension {v} is negative"
            )));
        }
        out.push(v as u64);
    }
    if out.len() > hurray_core::MAX_RANK {
        return Err(InvalidDescriptorError::new_err(format!(
            "rank {} exceeds the format's limit of {}",
            out.len(),
            hurray_core::MAX_RANK
        )));
    }
    Ok(out)
}

/// Bytes of a `bytes` argument (`hurray.BufferError` for anything else).
fn bytes_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Buffer> {
    match obj.cast::<PyBytes>() {
        Ok(b) => Ok(Buffer::copy_from(b.as_bytes())),
        Err(_) => Err(BufferError::new_err(format!(
            "{what} must be bytes, not {}",
            obj.get_type().name()?
        ))),
    }
}

fn layout_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<L> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(L::RowMajor);
    };
    let l = obj.cast::<Layout>().map_err(|_| {
        PyTypeError::new_err(format!(
            "layout must be a hurray.Layout instance (e.g. hurray.CsrLayout(nnz)), not {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    match &l.get().repr {
        Repr::Core(L::CompositeHead(_)) => Err(UnsupportedError::new_err(
            "a CompositeLayout owns no buffers: it cannot be the layout of a Tensor",
        )),
        Repr::Core(l) => Ok(l.clone()),
        Repr::Unknown { tag, .. } => Err(UnsupportedError::new_err(format!(
            "UnknownLayout(tag=0x{tag:02X}) cannot be encoded by this build: its fields are opaque"
        ))),
    }
}

fn layout_name(l: &L) -> &'static str {
    layout::name_of(&Repr::Core(l.clone()))
}

impl Tensor {
    /// This tensor marked read-only (`true`) or writable (`false`) on its handle
    /// (`HurrayTensor::set_read_only`): a read-only tensor's NumPy and DLPack views
    /// are read-only (a write raises), and pickling keeps the flag.
    pub fn with_read_only(mut self, read_only: bool) -> Tensor {
        self.h.0.set_read_only(read_only);
        self
    }

    /// The tensor with `device` as its Python device object (the descriptor has
    /// the device kind, not the id: a rebuilt tensor takes its source's).
    pub fn with_device(mut self, device: Py<Device>) -> Tensor {
        self.device = device;
        self
    }

    /// The Python device object (kind and id).
    pub fn device_object(&self, py: Python<'_>) -> Py<Device> {
        self.device.clone_ref(py)
    }

    /// True when the handle is read-only (see [`with_read_only`](Self::with_read_only)).
    pub fn is_read_only(&self) -> bool {
        self.h.get().read_only()
    }

    /// The descriptor model.
    pub fn model(&self) -> &TensorDescriptor {
        self.h.get().model()
    }

    /// Buffer `i`'s host bytes (shared view).
    pub fn host(&self, i: usize) -> PyResult<&Buffer> {
        let b = self
            .h
            .get()
            .buffer_list()
            .buffers()
            .nth(i)
            .ok_or_else(|| PyIndexError::new_err(format!("buffer index {i} out of range")))?;
        b.host_bytes()
            .ok_or_else(|| UnsupportedError::new_err(format!("buffer {i} is device memory")))
    }

    /// All host buffers, in buffer-table order.
    pub fn host_buffers(&self) -> PyResult<Vec<Buffer>> {
        (0..self.model().buffers.len())
            .map(|i| self.host(i).cloned())
            .collect()
    }

    /// The tensor's `Device` value.
    pub fn device_value(&self) -> Device {
        *self.device.get()
    }

    /// A fresh row-major view over the first bytes of buffer `index`, on this
    /// tensor's device (id 0).
    fn view(
        &self,
        py: Python<'_>,
        index: usize,
        t: ElementType,
        shape: &[u64],
    ) -> PyResult<Tensor> {
        let dev = Device {
            id: 0,
            ..self.device_value()
        };
        self.view_on(py, index, t, shape, dev)
    }

    /// A fresh row-major view over the first bytes of buffer `index`, tagged `dev`.
    fn view_on(
        &self,
        py: Python<'_>,
        index: usize,
        t: ElementType,
        shape: &[u64],
        dev: Device,
    ) -> PyResult<Tensor> {
        let mut d = TensorDescriptor::dense(t, shape).map_err(|e| errors::descriptor(&e))?;
        let need = d.buffers[0].byte_size as usize;
        let src = self.host(index)?;
        if src.len() < need {
            return Err(BufferError::new_err(format!(
                "buffer {index} holds {} bytes, the view needs {need}",
                src.len()
            )));
        }
        d.buffers[0] = handle_for(need, &dev);
        let dev_obj = device_object(py, &d, 0)?;
        let ro = self.is_read_only();
        Ok(assemble(py, d, vec![prefix(src, need)], None, Some(dev_obj))?.with_read_only(ro))
    }

    /// The checks every NumPy path shares: a dense layout on a CPU device.
    fn check_numpy_copyable(&self) -> PyResult<()> {
        let d = self.model();
        if !d.layout.is_dense() {
            return Err(UnsupportedError::new_err(format!(
                "a {} tensor has no dense NumPy form; use its component views (values, indices, ...)",
                layout_name(&d.layout)
            )));
        }
        if self.device_value().tag != DeviceTag::Cpu {
            return Err(UnsupportedError::new_err(format!(
                "a NumPy array needs a cpu tensor, this one is on {}",
                self.device_value().tag.name()
            )));
        }
        Ok(())
    }

    fn no_attr(&self, attr: &str) -> PyErr {
        PyAttributeError::new_err(format!(
            "'Tensor' object has no attribute '{attr}'; this is a {} tensor",
            layout_name(&self.model().layout)
        ))
    }

    fn nnz_of(&self) -> Option<u64> {
        match self.model().layout {
            L::Coo { nnz, .. } | L::Csr { nnz } | L::Csc { nnz } => Some(nnz),
            _ => None,
        }
    }

    /// A copy of this tensor with fresh owned buffers (used by `copy=True` paths).
    pub fn deep_copy(&self, py: Python<'_>) -> PyResult<Tensor> {
        let bufs = self
            .host_buffers()?
            .iter()
            .map(|b| Buffer::copy_from(b.as_slice()))
            .collect();
        assemble(
            py,
            self.model().clone(),
            bufs,
            Some(self.dtype.clone_ref(py)),
            Some(self.device.clone_ref(py)),
        )
    }
}

#[pymethods]
impl Tensor {
    #[new]
    #[pyo3(signature = (buffer, dtype, shape, device=None, *, aux_buffers=None, layout=None, quantization=None, statistics=None, shard=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        buffer: &Bound<'_, PyAny>,
        dtype: &Bound<'_, Dtype>,
        shape: &Bound<'_, PyAny>,
        device: Option<&Bound<'_, Device>>,
        aux_buffers: Option<&Bound<'_, PyAny>>,
        layout: Option<&Bound<'_, PyAny>>,
        quantization: Option<&Bound<'_, PyAny>>,
        statistics: Option<&Bound<'_, Statistics>>,
        shard: Option<&Bound<'_, Shard>>,
    ) -> PyResult<Tensor> {
        let shape = parse_shape(shape)?;
        let layout = layout_arg(layout)?;
        let data = bytes_arg(buffer, "buffer")?;
        let t = dtype.get().t;
        if layout.is_dense() && matches!(layout, L::RowMajor | L::ColumnMajor) {
            if let Some(need) = t.storage().and_then(|s| {
                hurray_core::element_count(&shape)
                    .ok()
                    .and_then(|n| s.bytes_for(n))
            }) {
                if (data.len() as u64) < need {
                    return Err(BufferError::new_err(format!(
                        "data buffer holds {} bytes but {} {} elements of shape {shape:?} need {need}",
                        data.len(),
                        hurray_core::element_count(&shape).unwrap_or(0),
                        t.name()
                    )));
                }
            }
        }
        let mut bufs = vec![data];
        if let Some(aux) = aux_buffers.filter(|a| !a.is_none()) {
            for (i, item) in aux.try_iter()?.enumerate() {
                bufs.push(bytes_arg(&item?, &format!("aux_buffers[{i}]"))?);
            }
        }
        let need = match &layout {
            L::Csf { mode_order, .. } => Some(2 * mode_order.len() + 1),
            l => l.layout_buffer_count(shape.len()),
        };
        if let Some(n) = need {
            if bufs.len() < n {
                return Err(InvalidDescriptorError::new_err(format!(
                    "layout {} needs {n} buffer(s); got {} (buffer + aux_buffers)",
                    layout_name(&layout),
                    bufs.len()
                )));
            }
        }
        let quantization = match quantization.filter(|q| !q.is_none()) {
            None => None,
            Some(q) => {
                let scheme = quant::scheme_of(q)?;
                let layout_bufs = need.unwrap_or(1);
                for idx in scheme.parameter_buffers() {
                    let i = idx as usize;
                    if i == 0 || i < layout_bufs || i >= bufs.len() {
                        return Err(InvalidDescriptorError::new_err(format!(
                            "quantization buffer index {idx} must name an auxiliary buffer after the layout's {layout_bufs} buffer(s) (the tensor has {})",
                            bufs.len()
                        )));
                    }
                }
                Some(Quantization::from(scheme))
            }
        };
        let shard = match shard {
            None => None,
            Some(s) => {
                let s = s.get().s.clone();
                if s.parent_shape.len() != shape.len() {
                    return Err(InvalidDescriptorError::new_err(format!(
                        "shard has rank {} but the tensor has rank {}",
                        s.parent_shape.len(),
                        shape.len()
                    )));
                }
                Some(s)
            }
        };
        let dev_obj = match device {
            Some(d) => d.clone().unbind(),
            None => device::cpu(py)?,
        };
        let dev = *dev_obj.get();
        let d = TensorDescriptor {
            version_minor: 0,
            element_type: t,
            shape,
            byte_offset: 0,
            layout,
            buffers: bufs.iter().map(|b| handle_for(b.len(), &dev)).collect(),
            quantization,
            shard,
            statistics: statistics.map(|s| s.get().s),
            extension_type: None,
            composite_member: None,
        };
        assemble(py, d, bufs, Some(dtype.clone().unbind()), Some(dev_obj))
    }

    /// The element type (the same object on every access).
    #[getter]
    fn dtype(&self, py: Python<'_>) -> Py<Dtype> {
        self.dtype.clone_ref(py)
    }

    /// Elements per dimension (a tuple of ints; ``None`` marks a dynamic dimension).
    #[getter]
    fn shape(&self, py: Python<'_>) -> Py<PyTuple> {
        self.shape.clone_ref(py)
    }

    /// The rank.
    #[getter]
    fn ndim(&self) -> usize {
        self.model().shape.len()
    }

    /// Number of elements (1 for a 0-d tensor), or ``None`` with a dynamic dimension.
    #[getter]
    fn size(&self) -> Option<u128> {
        let s = &self.model().shape;
        if s.contains(&DYN) {
            return None;
        }
        Some(
            s.iter()
                .fold(1u128, |a, &v| a.saturating_mul(u128::from(v))),
        )
    }

    /// Where the buffers live (the same object on every access).
    #[getter]
    fn device(&self, py: Python<'_>) -> Py<Device> {
        self.device.clone_ref(py)
    }

    /// Number of buffers (data plus auxiliary).
    #[getter]
    fn buffer_count(&self) -> usize {
        self.model().buffers.len()
    }

    /// The layout (a fresh object of the matching :class:`Layout` subclass).
    #[getter]
    fn layout(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        layout::to_object(py, &Repr::Core(self.model().layout.clone()))
    }

    /// The quantization scheme object, or ``None``.
    #[getter]
    fn quantization(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match &self.model().quantization {
            None => Ok(None),
            Some(q) => quant::scheme_object(py, &q.scheme),
        }
    }

    /// The statistics section (a fresh :class:`Statistics`), or ``None``.
    #[getter]
    fn statistics(&self) -> Option<Statistics> {
        self.model().statistics.map(|s| Statistics { s })
    }

    /// The shard section (a fresh :class:`Shard`), or ``None``.
    #[getter]
    fn shard(&self) -> Option<Shard> {
        self.model().shard.clone().map(|s| Shard { s })
    }

    /// The overlay role of a composite member (its composite-member section,
    /// ``layouts.md`` §2.11): ``"base"``, ``"correction"``, or ``None``.
    #[getter]
    fn role(&self) -> Option<&'static str> {
        self.model()
            .composite_member
            .map(crate::composite::role_name)
    }

    /// Not implemented: always raises ``NotImplementedError`` (no transposed views).
    #[getter(T)]
    fn transposed(&self) -> PyResult<()> {
        Err(PyNotImplementedError::new_err(
            "Tensor.T is not implemented: hurray tensors carry data, not array operations",
        ))
    }

    /// The bytes of all buffers together (the descriptor's declared buffer sizes;
    /// a bit-packed type counts its packed bytes): what the tensor's memory costs,
    /// and what ``dask.sizeof`` reports for it.
    #[getter]
    fn nbytes(&self) -> u64 {
        self.model().buffers.iter().map(|b| b.byte_size).sum()
    }

    /// True when the tensor's memory is read-only: it wraps a read-only NumPy
    /// array or DLPack tensor, a read-only buffer an unpickler handed out (an
    /// object store's, say), or a file loaded with ``read_only=True``. Its NumPy
    /// arrays are not writeable, its DLPack capsules carry DLPack 1.0's read-only
    /// flag (a legacy, unversioned capsule gets a copy instead), and pickling keeps
    /// the flag. A writable copy: ``hurray.asarray(t, copy=True)`` (any dense
    /// tensor) or ``numpy.array(t)``.
    #[getter]
    fn read_only(&self) -> bool {
        self.is_read_only()
    }

    /// Stored elements of a COO/CSR/CSC tensor (``AttributeError`` for other layouts).
    #[getter]
    fn nnz(&self) -> PyResult<u64> {
        self.nnz_of().ok_or_else(|| self.no_attr("nnz"))
    }

    /// COO/CSR/CSC: the ``(nnz,)`` values (a view of buffer 0).
    #[getter]
    fn values(&self, py: Python<'_>) -> PyResult<Tensor> {
        let nnz = self.nnz_of().ok_or_else(|| self.no_attr("values"))?;
        self.view(py, 0, self.model().element_type, &[nnz])
    }

    /// COO: the ``(nnz, rank)`` uint64 coordinates (a view of buffer 1).
    #[getter]
    fn indices(&self, py: Python<'_>) -> PyResult<Tensor> {
        match self.model().layout {
            L::Coo { nnz, .. } => {
                let rank = self.model().shape.len() as u64;
                self.view(py, 1, ElementType::Uint64, &[nnz, rank])
            }
            _ => Err(self.no_attr("indices")),
        }
    }

    /// CSR: the ``(nnz,)`` uint64 column indices (buffer 1).
    #[getter]
    fn col_indices(&self, py: Python<'_>) -> PyResult<Tensor> {
        match self.model().layout {
            L::Csr { nnz } => self.view(py, 1, ElementType::Uint64, &[nnz]),
            _ => Err(self.no_attr("col_indices")),
        }
    }

    /// Checks the buffer contents against the layout's and quantization scheme's
    /// content rules: sparse indices below their extents and increasing inside each
    /// row, column or fiber, pointer arrays from 0 to ``nnz`` without decreasing, COO
    /// tuples distinct, block tables inside the page pool, scales finite (and
    /// non-zero or non-negative as the scheme says), zero points in range, e8m0
    /// bytes other than 0x00 and 0xFF. Reads every index and parameter buffer each
    /// time (their arrays are writable); dense tensors cost nothing. Strict loads
    /// and streams check on read, and ``to_scipy`` calls this before SciPy sees the
    /// arrays.
    ///
    /// Raises:
    ///     hurray.InvalidDescriptorError: a rule is broken (the message names it, the
    ///         buffer and the byte offset).
    ///     hurray.UnsupportedError: the buffers are device memory.
    fn validate_content(&self, py: Python<'_>) -> PyResult<()> {
        let h = &self.h;
        match py.detach(|| h.get().check_content()) {
            Ok(()) => Ok(()),
            Err(e) if e.is_content() => Err(errors::InvalidDescriptorError::new_err(e.message)),
            Err(e) => Err(errors::UnsupportedError::new_err(e.message)),
        }
    }

    /// CSR: the ``(shape[0] + 1,)`` uint64 row pointers (buffer 2).
    #[getter]
    fn row_ptr(&self, py: Python<'_>) -> PyResult<Tensor> {
        match self.model().layout {
            L::Csr { .. } => self.view(py, 2, ElementType::Uint64, &[self.model().shape[0] + 1]),
            _ => Err(self.no_attr("row_ptr")),
        }
    }

    /// CSC: the ``(nnz,)`` uint64 row indices (buffer 1).
    #[getter]
    fn row_indices(&self, py: Python<'_>) -> PyResult<Tensor> {
        match self.model().layout {
            L::Csc { nnz } => self.view(py, 1, ElementType::Uint64, &[nnz]),
            _ => Err(self.no_attr("row_indices")),
        }
    }

    /// CSC: the ``(shape[1] + 1,)`` uint64 column pointers (buffer 2).
    #[getter]
    fn col_ptr(&self, py: Python<'_>) -> PyResult<Tensor> {
        match self.model().layout {
            L::Csc { .. } => self.view(py, 2, ElementType::Uint64, &[self.model().shape[1] + 1]),
            _ => Err(self.no_attr("col_ptr")),
        }
    }

    /// A 1-D uint8 view of buffer ``index`` (its declared byte size; no copy).
    ///
    /// Raises:
    ///     IndexError: ``index >= buffer_count``.
    ///     OverflowError: negative ``index``.
    fn buffer(&self, py: Python<'_>, index: u64) -> PyResult<Tensor> {
        let n = self.model().buffers.len() as u64;
        if index >= n {
            return Err(PyIndexError::new_err(format!(
                "buffer index {index} out of range for a tensor with {n} buffer(s)"
            )));
        }
        let size = self.model().buffers[index as usize].byte_size;
        self.view(py, index as usize, ElementType::Uint8, &[size])
    }

    /// The checks of ``Tensor.__array__`` (defined in Python, ``hurray._glue``):
    /// returns ``None`` when a zero-copy NumPy view exists.
    ///
    /// Raises:
    ///     hurray.UnsupportedError: non-dense or tiled/Morton/Hilbert layout, non-CPU
    ///         device, dtype without a NumPy equivalent (incl. bfloat16), or a shape
    ///         NumPy cannot represent (even an empty one, e.g. ``[0, 2**62]``).
    ///     BufferError: (builtin) for ``bool``, which is bit-packed.
    fn _check_array(&self) -> PyResult<()> {
        let d = self.model();
        if !d.layout.is_dense() {
            return Err(UnsupportedError::new_err(format!(
                "a {} tensor has no dense NumPy view; use its component views (values, indices, ...)",
                layout_name(&d.layout)
            )));
        }
        if self.device_value().tag != DeviceTag::Cpu {
            return Err(UnsupportedError::new_err(format!(
                "__array__ needs a cpu tensor, this one is on {}",
                self.device_value().tag.name()
            )));
        }
        let t = d.element_type;
        if !dtype::in_interop_set(t) || t == ElementType::Bfloat16 {
            return Err(UnsupportedError::new_err(format!(
                "dtype {} has no NumPy equivalent",
                t.name()
            )));
        }
        if t == ElementType::Bool {
            return Err(pyo3::exceptions::PyBufferError::new_err(
                "hurray bool is bit-packed (8 per byte) and has no zero-copy NumPy or DLPack form",
            ));
        }
        // NumPy refuses a shape whose non-zero dimensions times the item size exceed
        // its index type, even for an empty array (one with a 0 dimension): say so
        // here, with the library's error, instead of NumPy's ValueError.
        let item = d.storage().map_or(1, |s| u64::from(s.bits().div_ceil(8)));
        let fits = d
            .shape
            .iter()
            .filter(|&&n| n != 0)
            .try_fold(item, |acc, &n| acc.checked_mul(n))
            .is_some_and(|bytes| bytes <= isize::MAX as u64);
        if !fits {
            return Err(UnsupportedError::new_err(format!(
                "NumPy cannot represent shape {:?} of {}: its non-zero dimensions times the item size exceed {} bytes",
                d.shape,
                t.name(),
                isize::MAX
            )));
        }
        Ok(())
    }

    /// DLPack export: a ``dltensor_versioned`` capsule (or a legacy ``dltensor``
    /// one when the consumer does not ask for ``max_version >= (1, 0)``) viewing
    /// buffer 0; the capsule keeps this tensor alive. A read-only tensor's
    /// versioned capsule carries ``DLPACK_FLAG_BITMASK_READ_ONLY``; its legacy
    /// capsule, which cannot, views a copy (``copy=False`` then raises
    /// ``BufferError``).
    ///
    /// Raises:
    ///     BufferError: (builtin) non-dense layout or dtype without a DLPack code.
    ///     hurray.UnsupportedError: device/memory class without a DLPack device, or a
    ///         tiled/Morton/Hilbert layout.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        slf: &Bound<'_, Self>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<&Bound<'_, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (stream, dl_device);
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        let me = slf.get();
        if me.is_read_only() && !versioned {
            // A legacy capsule has no read-only flag: its consumer would write.
            if copy == Some(false) {
                return Err(pyo3::exceptions::PyBufferError::new_err(
                    "the tensor is read-only and a legacy (unversioned) DLPack capsule cannot say so; \
                     ask with max_version=(1, 0), or allow a copy",
                ));
            }
            let c = Bound::new(slf.py(), me.deep_copy(slf.py())?)?;
            return crate::dlpack::export(&c, false);
        }
        if copy == Some(true) {
            let c = Bound::new(slf.py(), me.deep_copy(slf.py())?)?;
            return crate::dlpack::export(&c, versioned);
        }
        crate::dlpack::export(slf, versioned)
    }

    /// ``(dl_device_type, device_id)`` of this tensor's device for DLPack.
    ///
    /// Raises:
    ///     hurray.UnsupportedError: the device/memory class has no DLPack device.
    fn __dlpack_device__(&self) -> PyResult<(i32, u32)> {
        let d = self.device_value();
        Ok((crate::dlpack::device_type(d.tag, d.class)?, d.id))
    }

    /// Native protocol: a fresh PyCapsule named ``"hurray_tensor_handle"`` whose
    /// pointer is a new ``HurrayTensor *`` (owner: a strong reference to this
    /// tensor). A consumer renames it ``"used_hurray_tensor_handle"`` and destroys
    /// the handle with ``hurray_tensor_destroy``; an unconsumed capsule destroys it.
    #[pyo3(signature = (stream=None))]
    fn __hurray__(slf: &Bound<'_, Self>, stream: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let _ = stream;
        crate::capsule::export(slf)
    }

    fn __hash__(&self) -> PyResult<isize> {
        Err(PyTypeError::new_err("unhashable type: 'Tensor'"))
    }

    fn __richcmp__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let same = slf.as_any().is(other);
        let b = |v: bool| -> PyResult<Py<PyAny>> {
            Ok(v.into_pyobject(py)?.to_owned().into_any().unbind())
        };
        match op {
            CompareOp::Eq => b(same),
            CompareOp::Ne => b(!same),
            _ => Ok(py.NotImplemented()),
        }
    }

    /// The encoded descriptor (bytes); used by pickling.
    fn _descriptor_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.h.get().descriptor_handle().bytes())
    }

    /// A copy of buffer ``index``'s bytes (used by pickling without NumPy).
    fn _buffer_bytes<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, self.host(index)?.as_slice()))
    }

    /// A 1-D uint8 view of buffer ``index`` tagged as CPU memory whatever the
    /// tensor's device (every buffer of this build is host memory); used by
    /// pickling, so that ``numpy.from_dlpack`` can view a device tensor's bytes.
    fn _host_buffer(&self, py: Python<'_>, index: usize) -> PyResult<Tensor> {
        let size = self
            .model()
            .buffers
            .get(index)
            .ok_or_else(|| PyIndexError::new_err(format!("buffer index {index} out of range")))?
            .byte_size;
        let cpu = *device::cpu(py)?.get();
        self.view_on(py, index, ElementType::Uint8, &[size], cpu)
    }

    /// A zero-copy view of this dense CPU tensor's elements as unsigned integers
    /// of the same width (``uint16`` for ``bfloat16``, ``uint8`` for the float8
    /// types), same shape and layout, sharing every buffer: what
    /// ``numpy.asarray`` reinterprets as the matching ``ml_dtypes`` dtype.
    ///
    /// Raises:
    ///     hurray.UnsupportedError: a type that is not ``bfloat16``/``float8_*``, a
    ///         non-dense layout, or a non-CPU device.
    fn _as_bits(&self, py: Python<'_>) -> PyResult<Tensor> {
        let d = self.model();
        let bits = match d.element_type {
            ElementType::Bfloat16 => ElementType::Uint16,
            ElementType::Float8E4m3 | ElementType::Float8E5m2 | ElementType::Float8E8m0 => {
                ElementType::Uint8
            }
            t => {
                return Err(UnsupportedError::new_err(format!(
                    "_as_bits is for bfloat16 and float8 tensors, not {}",
                    t.name()
                )))
            }
        };
        self.check_numpy_copyable()?;
        let mut m = d.clone();
        m.element_type = bits;
        let ro = self.is_read_only();
        Ok(assemble(
            py,
            m,
            self.host_buffers()?,
            None,
            Some(self.device.clone_ref(py)),
        )?
        .with_read_only(ro))
    }

    /// An unpacked copy of this dense CPU sub-byte tensor (``bool``, ``int4``,
    /// ``uint4``, ``int2``, ``uint2``, ``float4_e2m1``, ``float6_*``): one byte per
    /// element (``element-types.md`` §5; signed integers sign-extended, the float
    /// codes in the low bits), same shape and layout (row- or column-major), as
    /// ``int8`` for ``int4``/``int2`` and ``uint8`` otherwise.
    ///
    /// Raises:
    ///     hurray.UnsupportedError: not a sub-byte type, a layout other than row- or
    ///         column-major, or a non-CPU device.
    ///     hurray.BufferError: buffer 0 is shorter than the shape needs.
    fn _unpacked(&self, py: Python<'_>) -> PyResult<Tensor> {
        let d = self.model();
        let t = d.element_type;
        let wide = match t {
            ElementType::Int4 | ElementType::Int2 => ElementType::Int8,
            ElementType::Bool
            | ElementType::Uint4
            | ElementType::Uint2
            | ElementType::Float4E2m1
            | ElementType::Float6E2m3
            | ElementType::Float6E3m2 => ElementType::Uint8,
            other => {
                return Err(UnsupportedError::new_err(format!(
                    "_unpacked is for sub-byte types, not {}",
                    other.name()
                )))
            }
        };
        self.check_numpy_copyable()?;
        if !matches!(d.layout, L::RowMajor | L::ColumnMajor) || d.byte_offset != 0 {
            return Err(UnsupportedError::new_err(format!(
                "an unpacked copy of {} needs a row- or column-major tensor at byte offset 0, not {}",
                t.name(),
                layout_name(&d.layout)
            )));
        }
        let count = d
            .shape
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n))
            .ok_or_else(|| UnsupportedError::new_err("the element count overflows"))?;
        let src = self.host(0)?;
        let bytes = hurray_core::packing::unpack(t, src.as_slice(), count)
            .map_err(|e| BufferError::new_err(format!("cannot unpack buffer 0: {e}")))?;
        let mut m = TensorDescriptor::dense(wide, &d.shape).map_err(|e| errors::descriptor(&e))?;
        m.layout = d.layout.clone();
        let dev = self.device_value();
        m.buffers[0] = handle_for(bytes.len(), &dev);
        assemble(
            py,
            m,
            vec![Buffer::copy_from(&bytes)],
            None,
            Some(self.device.clone_ref(py)),
        )
    }

    /// Does nothing: the baseline of the attribute-cost benchmark.
    fn _noop(&self) {}

    /// Address of buffer ``index``'s first byte (for tests and diagnostics).
    fn _buffer_address(&self, index: usize) -> PyResult<usize> {
        Ok(self.host(index)?.as_slice().as_ptr() as usize)
    }

    /// The alignment buffer ``index`` declares in the descriptor, in bytes (for
    /// tests: its memory meets it, ARCHITECTURE decision 5).
    ///
    /// Raises:
    ///     IndexError: no buffer ``index``.
    fn _buffer_alignment(&self, index: usize) -> PyResult<u32> {
        self.model()
            .buffers
            .get(index)
            .map(|h| h.alignment)
            .ok_or_else(|| {
                PyIndexError::new_err(format!(
                    "buffer {index} out of range (the tensor has {})",
                    self.model().buffers.len()
                ))
            })
    }
}
