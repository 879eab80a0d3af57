//! Containers from Python: `save`/`load` (HRRYFILE; `load` maps the file
//! copy-on-write and hands out zero-copy views) and `StreamReader`/`StreamWriter`
//! (the streaming format over bytes, a file descriptor or a path). The GIL is
//! released while bytes move.

use crate::errors::{self, FileError, Origin, StreamError, UnsupportedError};
use crate::tensor::{assemble, device_object, from_handle, Tensor};
use hurray_ffi::{
    DataCrc, FfiResult, HurrayFileReader, HurrayFileWriter, HurrayWriteOptions, KvArray, KvValue,
    ReadOptions, HURRAY_ERR_NOT_FOUND,
};
use hurray_io::file::KvValueRef;
use hurray_io::{BufferPool, Item, StreamDecoder};
use pyo3::exceptions::{PyBlockingIOError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::thread::ThreadId;

/// A Python tensor over a tensor the containers produced (no copy).
pub fn from_io(py: Python<'_>, t: hurray_io::Tensor) -> PyResult<Tensor> {
    let (d, bufs) = t.into_parts();
    let d = Arc::unwrap_or_clone(d);
    let dev = device_object(py, &d, 0)?;
    assemble(py, d, bufs, None, Some(dev))
}

fn kv_value(v: &Bound<'_, PyAny>) -> PyResult<KvValue> {
    let bad = |what: String| FileError::new_err(format!("unsupported kv value: {what}"));
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(KvValue::Bool(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        return v
            .extract::<i64>()
            .map(KvValue::Int64)
            .map_err(|_| bad("int outside int64".into()));
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return Ok(KvValue::Float64(f.value()));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(KvValue::String(s.to_str()?.to_owned()));
    }
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(KvValue::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(l) = v.cast::<PyList>() {
        let items: Vec<KvValue> = l
            .iter()
            .map(|x| {
                if x.is_instance_of::<PyList>() {
                    Err(bad("nested list".into()))
                } else {
                    kv_value(&x)
                }
            })
            .collect::<PyResult<_>>()?;
        let first = items.first().ok_or_else(|| bad("empty list".into()))?;
        macro_rules! all {
            ($var:ident) => {
                items
                    .iter()
                    .map(|i| match i {
                        KvValue::$var(x) => Ok(x.clone()),
                        _ => Err(bad("mixed list".into())),
                    })
                    .collect::<PyResult<Vec<_>>>()?
            };
        }
        return Ok(KvValue::Array(match first {
            KvValue::Bool(_) => KvArray::Bool(all!(Bool)),
            KvValue::Int64(_) => KvArray::Int64(all!(Int64)),
            KvValue::Float64(_) => KvArray::Float64(all!(Float64)),
            KvValue::String(_) => KvArray::String(all!(String)),
            KvValue::Bytes(_) => KvArray::Bytes(all!(Bytes)),
            _ => return Err(bad("list of unsupported values".into())),
        }));
    }
    Err(bad(v.get_type().name()?.to_string()))
}

/// One value of [`save`]'s mapping.
enum SaveItem {
    /// A tensor, written from its handle.
    Tensor(Py<Tensor>),
    /// A C- or Fortran-contiguous NumPy array's descriptor and a borrowed view of
    /// its bytes (whatever their alignment: read only while writing).
    Array(hurray_io::Tensor),
    /// A composite, its members sharing their tensors' buffers.
    Composite(Item),
}

/// Writes an HRRYFILE container at ``path`` holding every ``(name, tensor)`` of
/// ``tensors`` in iteration order (all buffers of each: sparse, quantized and
/// multi-buffer tensors round-trip; a :class:`Composite` is written whole, its
/// members named ``name/0``, ``name/1``, ...), plus optional file-level key-value metadata
/// ``kv`` (values: bool, int (int64), float, str, bytes, or a non-empty
/// homogeneous list of one of those). The file appears atomically (written to a
/// temporary file, then renamed): an existing file at ``path`` is replaced only by
/// the complete new one, even if the process is killed part-way. With ``durable``
/// (the default) the file is ``fsync``-ed before the rename and its directory
/// after, so it survives a power loss; ``durable=False`` skips both, for scratch
/// files. With ``data_crc32c=True`` the CRC-32C of every tensor's data is recorded
/// in the reserved KV entry ``"hurray.data_crc32c"`` (one uint64 per tensor in file
/// order; other readers see one more KV entry), so :func:`verify_data_crc32c`,
/// ``load(..., verify_data_crc32c=True)`` and ``hurray validate`` can name a tensor
/// whose bytes changed; off by default (the file is then byte for byte what it
/// was). With ``sorted_index=True`` the index is sorted by name and flagged
/// ``SORTED_INDEX`` (``file-format.md`` §3; readers may binary-search it); the data
/// stays in write order, and :func:`load` then returns the sorted (index) order.
/// The GIL is released while writing. A value may also be a C- or
/// Fortran-contiguous NumPy array: its bytes are written as they are, without the
/// aligned copy :func:`from_numpy` would make of an array not 64-byte aligned
/// (only the file's copy of them is ever declared aligned).
///
/// Raises:
///     TypeError: ``path`` is not a str/path, ``tensors`` not a dict, a non-str key.
///     hurray.UnsupportedError: a value is neither a :class:`Tensor`, a
///         :class:`Composite` nor a contiguous NumPy array, or the array's dtype
///         has no hurray type.
///     hurray.FileError: empty/duplicate/over-long names, a bad ``kv`` (with
///         ``data_crc32c=True``, a ``kv`` key ``"hurray.data_crc32c"`` is a
///         duplicate), I/O errors.
///     hurray.InvalidDescriptorError: a descriptor cannot be encoded.
#[pyfunction]
#[pyo3(signature = (path, tensors, *, kv=None, durable=true, data_crc32c=false, sorted_index=false))]
pub fn save(
    py: Python<'_>,
    path: PathBuf,
    tensors: &Bound<'_, PyDict>,
    kv: Option<&Bound<'_, PyDict>>,
    durable: bool,
    data_crc32c: bool,
    sorted_index: bool,
) -> PyResult<()> {
    let mut items = Vec::with_capacity(tensors.len());
    for (k, v) in tensors.iter() {
        let name: String = k
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("tensor names must be str"))?
            .to_str()?
            .to_owned();
        let item = if let Ok(t) = v.cast::<Tensor>() {
            SaveItem::Tensor(t.clone().unbind())
        } else if v.is_instance_of::<crate::composite::Composite>() {
            SaveItem::Composite(crate::composite::item_from_py(&v)?)
        } else if v.hasattr("__array_interface__")? {
            // A NumPy array's bytes go to the writer as they are: no aligned copy
            // just to write them (the file places them at its own alignment), and
            // no tensor over them is ever made (decision 5).
            let (d, buf) = crate::interop::write_parts(py, &v)?;
            SaveItem::Array(
                hurray_io::Tensor::new(d, vec![buf])
                    .map_err(|e| errors::ffi(hurray_ffi::FfiError::from(e)))?,
            )
        } else {
            return Err(UnsupportedError::new_err(format!(
                "value for {name:?} is a {}, not a hurray.Tensor, a hurray.Composite or a NumPy array",
                v.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            )));
        };
        items.push((name, item));
    }
    let mut kvs = Vec::new();
    if let Some(kv) = kv {
        for (k, v) in kv.iter() {
            let key: String = k
                .extract()
                .map_err(|_| FileError::new_err("kv keys must be str"))?;
            kvs.push((key, kv_value(&v)?));
        }
    }
    let opts = HurrayWriteOptions {
        durable: u8::from(durable),
        data_crc32c: u8::from(data_crc32c),
        sorted_index: u8::from(sorted_index),
        ..HurrayWriteOptions::default()
    };
    py.detach(|| -> FfiResult<()> {
        let mut w = HurrayFileWriter::create(&path, &opts)?;
        for (name, t) in &items {
            match t {
                SaveItem::Tensor(t) => w.write_tensor(name, t.get().h.get())?,
                SaveItem::Array(t) => w.write_io_tensor(name, t)?,
                SaveItem::Composite(c) => {
                    w.write_item(name, &hurray_ffi::HurrayItem::from_io(c.clone())?)?
                }
            }
        }
        for (k, v) in kvs {
            w.add_kv(&k, v)?;
        }
        w.finish()
    })
    .map_err(|e| errors::map(e, Origin::File(&path)))
}

/// Reads an HRRYFILE container: every tensor in the file's index order, or only
/// ``names`` (a list of ``str``) in the order given. The file is memory-mapped copy-on-write: tensors are
/// zero-copy views of the mapping, writing into an array obtained from one never
/// reaches the file, and the mapping lives until the last view is gone.
/// Composite items are skipped (Python has no composite type). Key-value metadata
/// is not returned: read it with :func:`load_kv`, or open the file with
/// :class:`FileReader` for its names and metadata without loading tensors.
///
/// Mapping means the tensors read the file's pages while they are alive: if
/// another process truncates the file or rewrites it in place meanwhile, what
/// they read is undefined, and touching a page past the new end kills the
/// process with SIGBUS. Replacing the file by writing a new one and renaming it
/// over the old (what :func:`save` does) is safe: the mapping keeps the old
/// contents. For data that must outlive changes to the file, take an owned copy:
/// ``numpy.array(t, copy=True)`` or ``hurray.asarray(t, copy=True)`` (dense), or
/// ``pickle.loads(pickle.dumps(t))`` (any layout).
///
/// With ``read_only=True`` every tensor is read-only (:attr:`Tensor.read_only`):
/// its NumPy and DLPack views are not writable, so the mapped pages are only ever
/// read and stay shared with the page cache (no copy-on-write copies), and pickling
/// keeps the flag. The default gives writable copy-on-write views.
///
/// With ``verify_data_crc32c=True`` the data of every tensor in the file is first
/// checked against the CRC-32C values a writer recorded (``save(...,
/// data_crc32c=True)``): one pass over all data bytes, before any tensor is handed
/// out (see :func:`verify_data_crc32c`). A file that records none raises, since its
/// data cannot be checked.
///
/// Raises:
///     TypeError: ``names`` is a ``str`` or not an iterable of ``str``.
///     hurray.FileNotFoundError: a missing file (also the builtin
///         ``FileNotFoundError``, ``filename`` set).
///     hurray.FileError: a directory or other non-regular file, bad
///         magic, CRC mismatch, truncation, unknown name; with
///         ``verify_data_crc32c=True``, a tensor whose data differs from its
///         recorded CRC-32C (the message names it: ``DataCrcMismatch ... tensor
///         "weight"``) or a file that records no data CRC.
///     hurray.InvalidDescriptorError: a descriptor that does not decode.
#[pyfunction]
#[pyo3(signature = (path, *, names=None, verify_data_crc32c=false, read_only=false))]
pub fn load<'py>(
    py: Python<'py>,
    path: PathBuf,
    names: Option<&Bound<'py, PyAny>>,
    verify_data_crc32c: bool,
    read_only: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let names = names.filter(|n| !n.is_none()).map(name_list).transpose()?;
    let reader = open_for_python(py, &path, "load")?;
    if verify_data_crc32c && !verify_reader(py, &reader, &path)? {
        return Err(FileError::new_err(format!(
            "{}: the file records no data CRC-32C (it was written without \
             data_crc32c=True), so its data cannot be verified",
            path.display()
        )));
    }
    let out = PyDict::new(py);
    let at = |e| errors::map(e, Origin::File(&path));
    match names {
        Some(names) => {
            for n in names {
                out.set_item(
                    &n,
                    named_tensor(py, &reader, &n, &path)?.with_read_only(read_only),
                )?;
            }
        }
        None => {
            // Top-level items in index order, one at a time: a composite is
            // assembled (its contents checked, as for any item) and dropped, since
            // Python has no composite type, so no more than one item is held at a time.
            for (name, composite) in reader.top_level_in_index_order() {
                if composite {
                    reader.item(name).map_err(at)?;
                    continue;
                }
                let t = from_handle(py, reader.tensor(name).map_err(at)?)?;
                out.set_item(name, t.with_read_only(read_only))?;
            }
        }
    }
    Ok(out)
}

/// `names` of `load`: a list (or other iterable) of `str`, never one `str`.
///
/// Errors: `TypeError` naming what was passed.
fn name_list(names: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if names.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "names must be a list of str, not a str; for one tensor pass [name]",
        ));
    }
    let iter = names.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "names must be a list of str, not {}",
            type_name(names)
        ))
    })?;
    iter.map(|n| {
        let n = n?;
        n.cast::<PyString>()
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "names must be a list of str; it holds an item of type {}",
                    type_name(&n)
                ))
            })
            .and_then(|s| Ok(s.to_str()?.to_owned()))
    })
    .collect()
}

/// The type name of `obj`, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// The tensor named `name` of `reader` as a Python tensor (a zero-copy view of the
/// mapping). Errors: `FileError` naming the tensor and the path when absent.
fn named_tensor(
    py: Python<'_>,
    reader: &HurrayFileReader,
    name: &str,
    path: &std::path::Path,
) -> PyResult<Tensor> {
    let t = reader.tensor(name).map_err(|e| {
        if e.status == HURRAY_ERR_NOT_FOUND {
            FileError::new_err(format!("no tensor named {name:?} in {}", path.display()))
        } else {
            errors::map(e, Origin::File(path))
        }
    })?;
    if let hurray_core::Layout::CompositeHead(h) = &t.model().layout {
        // The head alone is no tensor (it owns no data): the whole composite
        // comes from FileReader.item.
        return Err(UnsupportedError::new_err(format!(
            "{name:?} in {} is a composite of {} members, not a tensor: read it with FileReader.item({name:?})",
            path.display(),
            h.member_count
        )));
    }
    from_handle(py, t)
}

/// A file's KV metadata as a `dict` in file order: ``str``, ``int`` (int64 and
/// uint64), ``float``, ``bool``, ``bytes``, or a ``list`` of one of those.
fn kv_dict<'py>(
    py: Python<'py>,
    reader: &HurrayFileReader,
    path: &Path,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for i in 0..reader.kv_count() {
        let key = reader.kv_key(i).map_err(errors::ffi)?;
        // A whole value: the same bound on a huge array as every binding
        // (HURRAY_KV_WHOLE_ARRAY_MAX; larger arrays through FileReader.kv_range).
        reader
            .kv_check_whole(i)
            .map_err(|e| errors::map(e, errors::Origin::File(path)))?;
        let value = reader.kv_value(i).map_err(errors::ffi)?;
        out.set_item(key, kv_to_python(py, value)?)?;
    }
    Ok(out)
}

fn kv_to_python<'py>(py: Python<'py>, v: KvValueRef<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        KvValueRef::String(s) => PyString::new(py, s).into_any(),
        KvValueRef::Int64(x) => x.into_pyobject(py)?.into_any(),
        KvValueRef::UInt64(x) => x.into_pyobject(py)?.into_any(),
        KvValueRef::Float64(x) => PyFloat::new(py, x).into_any(),
        KvValueRef::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        KvValueRef::Bytes(b) => PyBytes::new(py, b).into_any(),
        KvValueRef::Array(a) => {
            let items = a
                .iter()
                .map(|x| kv_to_python(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
    })
}

/// Reads the key-value metadata of the HRRYFILE at ``path`` (what ``save(...,
/// kv=...)`` wrote, plus entries other writers add, such as
/// ``"hurray.data_crc32c"``) as a ``dict`` in file order, without loading any
/// tensor. Values: ``str``, ``int`` (int64 and uint64 entries), ``float``,
/// ``bool``, ``bytes``, or a ``list`` of one of those. For names and tensors too,
/// open the file with :class:`FileReader`.
///
/// An array of more than 1,048,576 elements is refused (the library's bound on what
/// a whole-value read materialises from an untrusted file, the same in every
/// binding): read it with :meth:`FileReader.kv_len` and :meth:`FileReader.kv_range`.
///
/// Raises:
///     hurray.FileError: as :func:`load` (``hurray.FileNotFoundError`` for a
///         missing file); for an array past the bound (the message names the key and
///         its length).
#[pyfunction]
pub fn load_kv<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let reader = open_for_python(py, &path, "read")?;
    kv_dict(py, &reader, &path)
}

/// An open HRRYFILE: its tensor names and key-value metadata, read without loading
/// any tensor, and its tensors one at a time (``reader["weight"]``: a zero-copy
/// view of the mapping, as :func:`load` gives). ``FileReader(path)`` maps and
/// validates the file (header, index, KV, descriptors; no payload bytes). Use it as
/// a context manager or call :meth:`close`; tensors already taken stay valid after
/// it (they keep the mapping alive). With ``read_only=True`` every tensor it hands
/// out is read-only (:attr:`Tensor.read_only`), as ``load(..., read_only=True)``
/// gives: a reader shared by several consumers (``hurray.dask``'s per-process
/// cache) then cannot have one consumer's write change what the next one reads.
///
/// Raises:
///     hurray.FileError: as :func:`load` (``hurray.FileNotFoundError`` for a
///         missing file).
#[pyclass(module = "hurray", frozen)]
pub struct FileReader {
    path: PathBuf,
    names: Vec<String>,
    /// Every top-level item's name (tensors and composites), index order.
    items: Vec<String>,
    read_only: bool,
    reader: Mutex<Option<HurrayFileReader>>,
}

impl FileReader {
    fn with<R>(&self, f: impl FnOnce(&HurrayFileReader) -> PyResult<R>) -> PyResult<R> {
        let g = self.reader.lock().unwrap_or_else(|e| e.into_inner());
        match g.as_ref() {
            Some(r) => f(r),
            None => Err(FileError::new_err(format!(
                "the FileReader of {} is closed",
                self.path.display()
            ))),
        }
    }
}

#[pymethods]
impl FileReader {
    #[new]
    #[pyo3(signature = (path, *, read_only=false))]
    fn new(py: Python<'_>, path: PathBuf, read_only: bool) -> PyResult<Self> {
        let reader = open_for_python(py, &path, "open")?;
        let top = reader.top_level_in_index_order();
        let names = top
            .iter()
            .filter(|(_, composite)| !composite)
            .map(|(n, _)| (*n).to_owned())
            .collect();
        let items = top.iter().map(|(n, _)| (*n).to_owned()).collect();
        Ok(FileReader {
            path,
            names,
            items,
            read_only,
            reader: Mutex::new(Some(reader)),
        })
    }

    /// The tensor names in the file's index order (the order :func:`load` returns;
    /// composites left out: see :attr:`item_names`). Available after :meth:`close`.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// Every top-level item's name, tensors and composites, in the file's index
    /// order (a composite's members are not listed: they come with it). Available
    /// after :meth:`close`.
    #[getter]
    fn item_names(&self) -> Vec<String> {
        self.items.clone()
    }

    /// The top-level item ``name``: a :class:`Tensor`, or a :class:`Composite`
    /// whose members are zero-copy views of the mapping (checked whole, as every
    /// item the reader hands out).
    ///
    /// Raises:
    ///     KeyError: no top-level item ``name`` (a composite's member is reached
    ///         through the composite).
    ///     hurray.FileError: the reader is closed; the item breaks a rule.
    fn item(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        if !self.items.iter().any(|n| n == name) {
            return Err(pyo3::exceptions::PyKeyError::new_err(name.to_owned()));
        }
        let item = self.with(|r| {
            r.item(name)
                .map_err(|e| errors::map(e, Origin::File(&self.path)))
        })?;
        crate::composite::handle_to_py(py, &item, self.read_only)
    }

    /// The key-value metadata as a ``dict`` in file order (see :func:`load_kv`).
    ///
    /// Raises:
    ///     hurray.FileError: the reader is closed.
    #[getter]
    fn kv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.with(|r| kv_dict(py, r, &self.path))
    }

    /// The length of the KV value under ``key``: the number of elements of an array,
    /// of bytes of a ``str`` (UTF-8) or ``bytes`` value, 1 for other scalars.
    ///
    /// Raises:
    ///     KeyError: no such key.
    ///     hurray.FileError: the reader is closed.
    fn kv_len(&self, key: &str) -> PyResult<u64> {
        self.with(|r| {
            let i = r
                .kv_find(key)
                .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_owned()))?;
            Ok(match r.kv_value(i).map_err(errors::ffi)? {
                KvValueRef::Array(a) => a.len() as u64,
                KvValueRef::String(s) => s.len() as u64,
                KvValueRef::Bytes(b) => b.len() as u64,
                _ => 1,
            })
        })
    }

    /// Elements ``[start, start + count)`` of the KV array under ``key``, as a
    /// ``list`` typed as :attr:`kv` types a whole array. This reads an array of any
    /// length a window at a time (whole reads stop at 1,048,576 elements); a window
    /// costs only its elements.
    ///
    /// Raises:
    ///     KeyError: no such key.
    ///     ValueError: the value is not an array, or the window passes its end.
    ///     hurray.FileError: the reader is closed.
    fn kv_range<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        start: usize,
        count: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        self.with(|r| {
            let i = r
                .kv_find(key)
                .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_owned()))?;
            let KvValueRef::Array(a) = r.kv_value(i).map_err(errors::ffi)? else {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "KV value {key:?} is not an array"
                )));
            };
            let n = a.len();
            if start.checked_add(count).is_none_or(|end| end > n) {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "the window [{start}, +{count}) is past the array's {n} elements"
                )));
            }
            let items = (start..start + count)
                .map(|k| {
                    let v = a.get(k).expect("index checked against the length");
                    kv_to_python(py, v)
                })
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)
        })
    }

    /// The names of the top-level composite items, in index order (what
    /// :attr:`names` leaves out); used by ``hurray.dask``.
    fn _composites(&self) -> PyResult<Vec<String>> {
        self.with(|r| {
            Ok(r.top_level_in_index_order()
                .into_iter()
                .filter(|(_, composite)| *composite)
                .map(|(n, _)| n.to_owned())
                .collect())
        })
    }

    /// The partition composite ``name``: ``(shape, dtype name, boxes)`` where
    /// ``boxes[i]`` is ``(offset, shape)`` of member ``i`` in the head's index space
    /// (its shard section), in member order. Used by ``hurray.dask``.
    ///
    /// Raises:
    ///     KeyError: no item of that name.
    ///     hurray.UnsupportedError: not a partition composite, or a member that is
    ///         itself a composite.
    ///     hurray.FileError: the reader is closed; a member breaks a composite rule.
    #[allow(clippy::type_complexity)]
    fn _partition(&self, name: &str) -> PyResult<(Vec<u64>, String, Vec<(Vec<u64>, Vec<u64>)>)> {
        self.with(|r| {
            let item = partition_item(r, name, &self.path)?;
            let head = item.tensor_handle().model();
            let mut boxes = Vec::with_capacity(item.members_iter().len());
            for (i, m) in item.members_iter().enumerate() {
                if m.is_composite() {
                    return Err(UnsupportedError::new_err(format!(
                        "member {i} of {name:?} is itself a composite; hurray.dask reads flat partitions"
                    )));
                }
                let d = m.tensor_handle().model();
                let offset = d.shard.as_ref().map(|s| s.offset.clone()).ok_or_else(|| {
                    FileError::new_err(format!("member {i} of {name:?} has no shard section"))
                })?;
                boxes.push((offset, d.shape.clone()));
            }
            Ok((head.shape.clone(), head.element_type.name().to_owned(), boxes))
        })
    }

    /// Member ``index`` of the partition composite ``name``: a zero-copy view of
    /// the mapping (its :attr:`Tensor.shard` says where it lies in the whole).
    ///
    /// Raises: as :meth:`_partition`, and ``IndexError`` for an index past the
    /// members.
    fn _member(&self, py: Python<'_>, name: &str, index: usize) -> PyResult<Tensor> {
        let t = self.with(|r| {
            let item = partition_item(r, name, &self.path)?;
            let n = item.members_iter().len();
            let m = item.members_iter().nth(index).ok_or_else(|| {
                pyo3::exceptions::PyIndexError::new_err(format!(
                    "member {index} of {name:?}, which has {n}"
                ))
            })?;
            m.tensor_handle()
                .to_io()
                .map_err(|e| errors::map(e, Origin::File(&self.path)))
        })?;
        Ok(from_io(py, t)?.with_read_only(self.read_only))
    }

    /// The tensor named ``name`` (a zero-copy view of the mapping).
    ///
    /// Raises:
    ///     KeyError: no tensor of that name.
    ///     hurray.FileError: the reader is closed.
    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<Tensor> {
        if !self.names.iter().any(|n| n == name) {
            return Err(pyo3::exceptions::PyKeyError::new_err(name.to_owned()));
        }
        self.with(|r| named_tensor(py, r, name, &self.path))
            .map(|t| t.with_read_only(self.read_only))
    }

    fn __contains__(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    fn __len__(&self) -> usize {
        self.names.len()
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(PyList::new(py, &self.names)?
            .as_any()
            .try_iter()?
            .into_any()
            .unbind())
    }

    /// The tensor names (as :attr:`names`), for ``dict``-like use.
    fn keys(&self) -> Vec<String> {
        self.names.clone()
    }

    /// Unmaps the file (tensors already taken keep their part of it alive). Idempotent.
    fn close(&self) {
        *self.reader.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        format!(
            "hurray.FileReader({:?}, {} tensors)",
            self.path.display().to_string(),
            self.names.len()
        )
    }
}

/// Opens and validates the file at `path` through hurray-ffi's reader (mapped
/// copy-on-write; GIL released), mapping errors to Python; `what` names the call in
/// the message for a non-regular file (a pipe, socket or device cannot be mapped).
fn open_for_python(
    py: Python<'_>,
    path: &std::path::Path,
    what: &str,
) -> PyResult<HurrayFileReader> {
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() && !meta.is_dir() {
            return Err(FileError::new_err(format!(
                "cannot {what} {}: it is not a regular file (load maps files; read streams with hurray.StreamReader)",
                path.display()
            )));
        }
    }
    py.detach(|| HurrayFileReader::open(path, &ReadOptions::default()))
        .map_err(|e| errors::map(e, Origin::File(path)))
}

/// The item `name` of `reader` when it is a partition composite.
///
/// Errors: `KeyError` (no such item), `UnsupportedError` (another kind of item),
/// the reader's errors as `FileError`.
fn partition_item(
    r: &HurrayFileReader,
    name: &str,
    path: &std::path::Path,
) -> PyResult<hurray_ffi::HurrayItem> {
    let item = r.item(name).map_err(|e| {
        if e.status == HURRAY_ERR_NOT_FOUND {
            pyo3::exceptions::PyKeyError::new_err(name.to_owned())
        } else {
            errors::map(e, Origin::File(path))
        }
    })?;
    match &item.tensor_handle().model().layout {
        hurray_core::Layout::CompositeHead(h)
            if h.rule == hurray_core::CompositionRule::Partition =>
        {
            Ok(item)
        }
        _ => Err(UnsupportedError::new_err(format!(
            "{name:?} in {} is not a partition composite",
            path.display()
        ))),
    }
}

/// Runs the data CRC-32C check on `reader` (GIL released): true when every tensor
/// matched, false when the file records none.
fn verify_reader(
    py: Python<'_>,
    reader: &HurrayFileReader,
    path: &std::path::Path,
) -> PyResult<bool> {
    match py.detach(|| reader.verify_data_crc32c()) {
        Ok(DataCrc::Verified(_)) => Ok(true),
        Ok(DataCrc::Absent) => Ok(false),
        Err(e) => Err(errors::map(e, Origin::File(path))),
    }
}

/// Checks the data of the HRRYFILE at ``path`` against the CRC-32C values a writer
/// recorded (``save(..., data_crc32c=True)``, or any Hurray writer with the data
/// CRC option): recomputes every tensor's CRC-32C, one pass over all data bytes
/// (the file is mapped; nothing is kept). Loading never does this unless asked
/// (``load(..., verify_data_crc32c=True)``). The GIL is released meanwhile.
///
/// Returns:
///     ``True`` when every tensor's data matched; ``False`` when the file records
///     no data CRC (its data cannot be checked).
///
/// Raises:
///     hurray.FileError: a tensor's data differs from its recorded CRC-32C (the
///         message names the tensor, both values and the byte offset:
///         ``DataCrcMismatch at byte N: tensor "weight": ...``), the entry is
///         malformed, or the file cannot be opened (as :func:`load`).
///     hurray.InvalidDescriptorError: a descriptor that does not decode.
#[pyfunction]
pub fn verify_data_crc32c(py: Python<'_>, path: PathBuf) -> PyResult<bool> {
    let reader = open_for_python(py, &path, "verify")?;
    verify_reader(py, &reader, &path)
}

/// Where a stream reader gets bytes.
enum Source {
    /// A Python `bytes` object, read in place (no copy up front).
    Bytes(BytesSource),
    /// A copy of a mutable bytes-like object.
    Mem(std::io::Cursor<Vec<u8>>),
    File(File),
    /// A Python object read through its own `readinto` or `read` (a buffered file,
    /// `io.BytesIO`, a custom reader): reading starts at the object's position.
    Py(PyIo),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::Bytes(b) => b.read(buf),
            Source::Mem(c) => c.read(buf),
            Source::File(f) => f.read(buf),
            Source::Py(p) => p.read(buf),
        }
    }
}

/// `PyBUF_WRITE` of CPython's `memoryobject.h` (a writable memoryview).
const PYBUF_WRITE: std::ffi::c_int = 0x200;

/// A Python file-like object the stream classes call back into (attaching to the
/// interpreter for each call). The first exception a call raises is kept in
/// `error` and re-raised as it is, in place of the stream's I/O error.
struct PyIo {
    obj: Py<PyAny>,
    /// Read with `readinto` (no intermediate bytes) rather than `read`.
    readinto: bool,
    error: Arc<Mutex<Option<PyErr>>>,
}

impl PyIo {
    fn new(obj: &Bound<'_, PyAny>, readinto: bool) -> PyIo {
        PyIo {
            obj: obj.clone().unbind(),
            readinto,
            error: Arc::new(Mutex::new(None)),
        }
    }

    /// Runs `f` attached to the interpreter, or fails with an I/O error once it is
    /// finalizing: a thread attaching then may be ended by a forced unwind, which
    /// must not cross these Rust frames (see `crate::owner`).
    fn attached<R>(&self, f: impl FnOnce(Python<'_>) -> std::io::Result<R>) -> std::io::Result<R> {
        let gone = || std::io::Error::other("the Python interpreter is shutting down");
        if crate::owner::finalizing() {
            return Err(gone());
        }
        Python::try_attach(f).unwrap_or_else(|| Err(gone()))
    }

    /// Keeps `e` (the first one) and turns it into an I/O error for the stream code.
    fn fail(&self, e: PyErr) -> std::io::Error {
        let msg = e.to_string();
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
        std::io::Error::other(msg)
    }
}

/// The error for a source whose `read`/`readinto` returned None: a non-blocking
/// object with no bytes yet. A reader blocks until bytes come or the stream ends,
/// so this is not the end of the stream (which would silently drop the rest).
fn would_block(method: &str) -> PyErr {
    PyBlockingIOError::new_err(format!(
        "{method}() returned None: the source is non-blocking and had no bytes ready; \
         StreamReader needs a blocking source (or bytes read ahead)"
    ))
}

impl Read for PyIo {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.attached(|py| {
            let obj = self.obj.bind(py);
            let got: PyResult<usize> = if self.readinto {
                // SAFETY: `buf` is valid for writes of `buf.len()` bytes for this call;
                // the memoryview is released before returning, so the object cannot
                // keep a usable reference to it.
                let mv = unsafe {
                    let p = pyo3::ffi::PyMemoryView_FromMemory(
                        buf.as_mut_ptr().cast(),
                        buf.len() as pyo3::ffi::Py_ssize_t,
                        PYBUF_WRITE,
                    );
                    Bound::from_owned_ptr_or_err(py, p)
                };
                mv.and_then(|mv| {
                    let r = obj.call_method1("readinto", (&mv,));
                    mv.call_method0("release")?;
                    let r = r?;
                    if r.is_none() {
                        return Err(would_block("readinto"));
                    }
                    let n = r.extract::<usize>()?;
                    if n > buf.len() {
                        return Err(PyValueError::new_err(format!(
                            "readinto() of a {}-byte buffer returned {n}",
                            buf.len()
                        )));
                    }
                    Ok(n)
                })
            } else {
                obj.call_method1("read", (buf.len(),)).and_then(|r| {
                    if r.is_none() {
                        return Err(would_block("read"));
                    }
                    let b = r.cast::<PyBytes>().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "read() returned {}, not bytes",
                            type_name(&r)
                        ))
                    })?;
                    let data = b.as_bytes();
                    if data.len() > buf.len() {
                        // Keeping only a prefix would silently drop stream bytes.
                        return Err(PyValueError::new_err(format!(
                            "read({}) returned {} bytes, more than asked",
                            buf.len(),
                            data.len()
                        )));
                    }
                    buf[..data.len()].copy_from_slice(data);
                    Ok(data.len())
                })
            };
            got.map_err(|e| self.fail(e))
        })
    }
}

impl Write for PyIo {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.attached(|py| {
            // A bytes copy, not a view of `buf`: the object may keep what it is given.
            let r = self
                .obj
                .bind(py)
                .call_method1("write", (PyBytes::new(py, buf),));
            match r {
                Ok(n) if n.is_none() => Ok(buf.len()),
                Ok(n) => n
                    .extract::<usize>()
                    .map(|n| n.min(buf.len()))
                    .map_err(|e| self.fail(e)),
                Err(e) => Err(self.fail(e)),
            }
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.attached(|py| {
            let obj = self.obj.bind(py);
            if obj.hasattr("flush").unwrap_or(false) {
                obj.call_method0("flush").map_err(|e| self.fail(e))?;
            }
            Ok(())
        })
    }
}

/// The Python exception a Python transport raised, if any (taken: raised once).
fn transport_error(slot: Option<&Arc<Mutex<Option<PyErr>>>>) -> Option<PyErr> {
    slot.and_then(|s| s.lock().unwrap_or_else(|p| p.into_inner()).take())
}

/// The path a `str` or `os.PathLike` names, or `None` for any other object.
fn fs_path(obj: &Bound<'_, PyAny>) -> PyResult<Option<PathBuf>> {
    if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")? {
        return obj.extract::<PathBuf>().map(Some);
    }
    Ok(None)
}

/// True for an `io.FileIO` (an unbuffered file: its descriptor's offset is its
/// position, so the descriptor can be used directly).
fn is_raw_file(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let file_io = obj.py().import("io")?.getattr("FileIO")?;
    obj.is_instance(&file_io)
}

/// A Python `bytes` object read in place: `bytes` are immutable, so the reader can
/// take its bytes straight from the object's buffer instead of copying the whole
/// input up front.
struct BytesSource {
    /// Keeps the object, and so its buffer, alive.
    _obj: Py<PyBytes>,
    ptr: *const u8,
    len: usize,
    pos: usize,
}

// SAFETY: the pointed-to bytes are immutable and owned by `_obj`, which is `Send`
// and kept alive as long as this value; reading them needs no GIL.
unsafe impl Send for BytesSource {}

impl BytesSource {
    fn new(b: &Bound<'_, PyBytes>) -> BytesSource {
        let bytes = b.as_bytes();
        BytesSource {
            _obj: b.clone().unbind(),
            ptr: bytes.as_ptr(),
            len: bytes.len(),
            pos: 0,
        }
    }
}

impl Read for BytesSource {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // SAFETY: `ptr..ptr + len` is the buffer of a live, immutable bytes object
        // (see the `Send` impl), and `pos <= len` always holds.
        let rest =
            unsafe { std::slice::from_raw_parts(self.ptr.add(self.pos), self.len - self.pos) };
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

fn dup_fileno(obj: &Bound<'_, PyAny>) -> PyResult<Option<File>> {
    let Ok(f) = obj.getattr("fileno") else {
        return Ok(None);
    };
    let fd = match f.call0().and_then(|v| v.extract::<i64>()) {
        Ok(fd) if fd >= 0 => fd,
        _ => return Ok(None),
    };
    let fd = i32::try_from(fd)
        .map_err(|_| FileError::new_err(format!("fileno() {fd} is out of range")))?;
    #[cfg(unix)]
    {
        use std::os::fd::BorrowedFd;
        // SAFETY: the object says fd is open; we only duplicate it (the caller's stays open).
        let owned = unsafe { BorrowedFd::borrow_raw(fd) }
            .try_clone_to_owned()
            .map_err(|e| {
                FileError::new_err(format!("cannot duplicate file descriptor {fd}: {e}"))
            })?;
        Ok(Some(File::from(owned)))
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        Ok(None)
    }
}

/// The thread a stream object was created on: its methods work only there.
///
/// The objects themselves are `Send` (their state sits behind a mutex), so the
/// last reference may be dropped on any thread and the transport is then closed
/// there; only *using* one from another thread is refused, with a `RuntimeError`.
struct Owner {
    thread: ThreadId,
    class: &'static str,
}

impl Owner {
    fn here(class: &'static str) -> Owner {
        Owner {
            thread: std::thread::current().id(),
            class,
        }
    }

    /// Locks `state` on the owning thread.
    ///
    /// Errors: `RuntimeError` on another thread, or when the object is already in
    /// use on this one (a re-entrant call from Python code run under a method).
    fn lock<'a, T>(&self, state: &'a Mutex<T>) -> PyResult<MutexGuard<'a, T>> {
        if std::thread::current().id() != self.thread {
            return Err(PyRuntimeError::new_err(format!(
                "this {} belongs to the thread that created it and cannot be used from another thread; create one per thread",
                self.class
            )));
        }
        match state.try_lock() {
            Ok(g) => Ok(g),
            Err(TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(format!(
                "this {} is already in use (a re-entrant call)",
                self.class
            ))),
        }
    }
}

/// Reads tensors from a stream, one at a time, as they arrive.
///
/// ``source`` is bytes-like (``bytes``: read in place, kept alive by the reader;
/// ``bytearray``, ``memoryview``, a list of ints: copied), a ``str`` or
/// ``os.PathLike`` path, an object with ``readinto`` or ``read`` (a buffered file,
/// ``io.BytesIO``, a pipe opened with ``open``, any reader: read through those
/// methods, starting at the object's current position, so bytes the caller already
/// read or that sit in its buffer are accounted for), or an object with
/// ``fileno()`` only (a socket, an unbuffered ``io.FileIO``: the descriptor is
/// duplicated, yours stays open). Iterate it, or use it as a context manager.
/// Tensors own their buffers. Memory of tensors from this reader that have been
/// freed is reused for the next ones it reads (up to 1 GiB of it is kept while the
/// reader lives), so a loop that reads, uses and drops tensors does not fault in
/// fresh pages for each one.
///
/// A reader is bound to the thread that created it: using it from another thread
/// raises ``RuntimeError``. Dropping the last reference on any thread closes it.
///
/// Raises:
///     TypeError: any other source.
///     hurray.FileNotFoundError: a path that does not exist (``filename`` set).
///     hurray.FileError: the path or descriptor cannot be opened or read.
///     hurray.StreamError: a truncated or malformed frame.
///     hurray.InvalidDescriptorError: a descriptor that does not decode.
///     hurray.UnsupportedError: iterating meets a composite item (the reader is
///         then closed); :meth:`items` and :meth:`read_item` yield composites.
///     RuntimeError: used from a thread other than the creating one.
///     (any exception the source's ``readinto``/``read`` raises, as it is)
#[pyclass(module = "hurray", frozen)]
pub struct StreamReader {
    owner: Owner,
    inner: Mutex<Option<hurray_io::StreamReader<Source>>>,
    /// A composite iteration stopped at: kept (never skipped) for the next
    /// `read_item`, and refused again by the next `__next__`.
    pending: Mutex<Option<Item>>,
    /// What a Python source raised, re-raised in place of the stream's error.
    py_error: Option<Arc<Mutex<Option<PyErr>>>>,
}

impl StreamReader {
    /// The next item as the stream decoder yields it (`None` at the end, after
    /// which the reader is exhausted); an error also exhausts it.
    fn next_io(&self, py: Python<'_>) -> PyResult<Option<Item>> {
        if let Some(item) = self.owner.lock(&self.pending)?.take() {
            return Ok(Some(item));
        }
        let mut inner = self.owner.lock(&self.inner)?;
        let Some(r) = inner.as_mut() else {
            return Ok(None);
        };
        match py.detach(|| r.next()) {
            None => {
                *inner = None;
                Ok(None)
            }
            Some(Ok(item)) => Ok(Some(item)),
            Some(Err(e)) => {
                *inner = None;
                Err(transport_error(self.py_error.as_ref())
                    .unwrap_or_else(|| errors::map(e.into(), Origin::Stream)))
            }
        }
    }
}

#[pymethods]
impl StreamReader {
    #[new]
    fn new(source: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut py_error = None;
        let src = if let Ok(b) = source.cast::<PyBytes>() {
            Source::Bytes(BytesSource::new(b))
        } else if let Ok(b) = source.cast::<PyByteArray>() {
            Source::Mem(std::io::Cursor::new(b.to_vec()))
        } else if let Some(p) = fs_path(source)? {
            Source::File(File::open(&p).map_err(|e| errors::io_error(&e, Some(&p)))?)
        } else if let Ok(v) = source.extract::<Vec<u8>>() {
            Source::Mem(std::io::Cursor::new(v))
        } else if (source.hasattr("readinto")? || source.hasattr("read")?) && !is_raw_file(source)?
        {
            let io = PyIo::new(source, source.hasattr("readinto")?);
            py_error = Some(io.error.clone());
            Source::Py(io)
        } else if let Some(f) = dup_fileno(source)? {
            Source::File(f)
        } else {
            return Err(PyTypeError::new_err(format!(
                "StreamReader needs bytes, a path, an object with readinto/read or a file descriptor owner, not {}",
                source.get_type().name()?
            )));
        };
        Ok(StreamReader {
            owner: Owner::here("StreamReader"),
            // Tensors this reader hands out return their memory to its pool when
            // they are freed, and the next tensors are read into it (no fresh-page
            // faults in a read-process-drop loop); the pool goes with the reader.
            inner: Mutex::new(Some(hurray_io::StreamReader::with_decoder(
                src,
                StreamDecoder::default().with_pool(BufferPool::default()),
            ))),
            pending: Mutex::new(None),
            py_error,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        drop(slf.owner.lock(&slf.inner)?);
        Ok(slf)
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Tensor>> {
        match self.next_io(py)? {
            None => Ok(None),
            Some(Item::Tensor(t)) => from_io(py, t).map(Some),
            Some(Item::Composite(c)) => {
                let n = c.members.len();
                // Kept, not skipped: read_item() or items() on this reader
                // returns it next; iterating again refuses it again.
                *self.owner.lock(&self.pending)? = Some(Item::Composite(c));
                Err(UnsupportedError::new_err(format!(
                    "the stream holds a composite ({n} members), which iterating a StreamReader \
                     does not yield; read it with StreamReader.items() or read_item()"
                )))
            }
        }
    }

    /// The next item: a :class:`Tensor`, or a :class:`Composite` (its head and
    /// every member, pre-order, read whole); ``None`` at the end of the stream.
    /// Iterating the reader yields tensors only and raises
    /// ``hurray.UnsupportedError`` at a composite; use this (or :meth:`items`)
    /// for streams that may hold composites.
    ///
    /// Raises: as iterating, but never ``UnsupportedError`` for a composite.
    fn read_item(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.next_io(py)?
            .map(|item| crate::composite::item_to_py(py, item, false))
            .transpose()
    }

    /// An iterator over the remaining items (:meth:`read_item` until ``None``):
    /// tensors and composites, in stream order.
    fn items<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import("builtins")?
            .getattr("iter")?
            .call1((slf.getattr("read_item")?, py.None()))
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        drop(slf.owner.lock(&slf.inner)?);
        Ok(slf)
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    /// Releases the source; the reader then behaves as exhausted.
    ///
    /// Raises:
    ///     RuntimeError: called from a thread other than the creating one.
    fn close(&self) -> PyResult<()> {
        *self.owner.lock(&self.inner)? = None;
        *self.owner.lock(&self.pending)? = None;
        Ok(())
    }
}

/// Where a stream writer puts bytes.
enum Sink {
    Mem(Arc<Mutex<Vec<u8>>>),
    File(File),
    /// A Python object written through its own `write` (after what it buffered).
    Py(PyIo),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Mem(v) => {
                v.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend_from_slice(buf);
                Ok(buf.len())
            }
            Sink::File(f) => f.write(buf),
            Sink::Py(p) => p.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Mem(_) => Ok(()),
            Sink::File(f) => f.flush(),
            Sink::Py(p) => p.flush(),
        }
    }
}

/// What a `StreamWriter` holds: the writer until `finish`, and the in-memory
/// sink (for `getvalue`) when it has no destination.
struct WriterState {
    inner: Option<hurray_io::StreamWriter<Sink>>,
    mem: Option<Arc<Mutex<Vec<u8>>>>,
}

/// Writes tensors as a stream: to memory (``destination=None``; read the bytes with
/// :meth:`getvalue`), to a ``str`` or ``os.PathLike`` path (created or truncated),
/// to an object with ``write`` (a buffered file, ``io.BytesIO``, any writer: written
/// through that method, so the stream lands after what the object already holds or
/// buffers; :meth:`finish` calls its ``flush``), or to an object with ``fileno()``
/// only (a socket, an unbuffered ``io.FileIO``: its ``flush()``, when it has one, is
/// called first, then the descriptor is duplicated). Use it as a context manager to
/// :meth:`finish`.
///
/// A writer is bound to the thread that created it: using it from another thread
/// raises ``RuntimeError``. Dropping the last reference on any thread closes it
/// (call :meth:`finish` to have a failing flush reported).
///
/// Raises:
///     TypeError: any other destination (omit it for an in-memory stream).
///     hurray.FileError: the path or descriptor cannot be opened
///         (``hurray.FileNotFoundError`` for a missing directory).
///     RuntimeError: used from a thread other than the creating one.
#[pyclass(module = "hurray", frozen)]
pub struct StreamWriter {
    owner: Owner,
    state: Mutex<WriterState>,
    /// What a Python destination raised, re-raised in place of the stream's error.
    py_error: Option<Arc<Mutex<Option<PyErr>>>>,
}

#[pymethods]
impl StreamWriter {
    #[new]
    #[pyo3(signature = (destination=None))]
    fn new(destination: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let dest = destination.filter(|d| !d.is_none());
        let mut py_error = None;
        let (sink, mem) = match dest {
            None => {
                let v = Arc::new(Mutex::new(Vec::new()));
                (Sink::Mem(v.clone()), Some(v))
            }
            Some(d) => {
                if let Some(p) = fs_path(d)? {
                    let f = File::create(&p).map_err(|e| errors::io_error(&e, Some(&p)))?;
                    (Sink::File(f), None)
                } else if d.hasattr("write")? && !is_raw_file(d)? {
                    let io = PyIo::new(d, false);
                    py_error = Some(io.error.clone());
                    (Sink::Py(io), None)
                } else {
                    // Bytes the object buffered go first (a descriptor write would
                    // land before them).
                    if d.hasattr("fileno")? && d.hasattr("flush")? {
                        d.call_method0("flush")?;
                    }
                    match dup_fileno(d)? {
                        Some(f) => (Sink::File(f), None),
                        None => {
                            return Err(PyTypeError::new_err(format!(
                                "StreamWriter needs a path, an object with write or a file descriptor owner, not {}; omit the argument for an in-memory stream and call getvalue()",
                                d.get_type().name()?
                            )))
                        }
                    }
                }
            }
        };
        Ok(StreamWriter {
            owner: Owner::here("StreamWriter"),
            state: Mutex::new(WriterState {
                inner: Some(hurray_io::StreamWriter::new(sink)),
                mem,
            }),
            py_error,
        })
    }

    /// Writes one tensor with all its buffers, in descriptor order, or a
    /// :class:`Composite`: its head, then every member (pre-order).
    ///
    /// Raises:
    ///     hurray.StreamError: the writer was finished.
    ///     hurray.FileError: the transport failed.
    ///     hurray.InvalidDescriptorError: the descriptor cannot be written.
    ///     TypeError: neither a Tensor nor a Composite.
    ///     RuntimeError: called from a thread other than the creating one.
    fn write(&self, py: Python<'_>, tensor: &Bound<'_, PyAny>) -> PyResult<()> {
        let item = crate::composite::item_from_py(tensor)?;
        let mut state = self.owner.lock(&self.state)?;
        let w = state.inner.as_mut().ok_or_else(|| {
            StreamError::new_err("the StreamWriter was finished; create a new one")
        })?;
        py.detach(|| w.write_item(&item)).map_err(|e| {
            transport_error(self.py_error.as_ref())
                .unwrap_or_else(|| errors::map(e.into(), Origin::Stream))
        })
    }

    /// Flushes and closes the stream. Idempotent.
    ///
    /// Raises:
    ///     hurray.FileError: the transport failed.
    ///     RuntimeError: called from a thread other than the creating one.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        let mut state = self.owner.lock(&self.state)?;
        if let Some(mut w) = state.inner.take() {
            py.detach(|| w.flush()).map_err(|e| {
                transport_error(self.py_error.as_ref())
                    .unwrap_or_else(|| errors::map(e.into(), Origin::Stream))
            })?;
        }
        Ok(())
    }

    /// The bytes written so far to an in-memory stream, removing them from the
    /// writer (a second call returns only what was written since).
    ///
    /// Raises:
    ///     hurray.StreamError: the writer has a destination.
    ///     RuntimeError: called from a thread other than the creating one.
    fn getvalue<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let state = self.owner.lock(&self.state)?;
        let m = state.mem.as_ref().ok_or_else(|| {
            StreamError::new_err(
                "getvalue() is only for in-memory writers; this one has a destination",
            )
        })?;
        let bytes = std::mem::take(&mut *m.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(PyBytes::new(py, &bytes))
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        drop(slf.owner.lock(&slf.state)?);
        Ok(slf)
    }

    #[pyo3(signature = (*args))]
    /// Finishes the stream. When the block is left by an exception, that exception
    /// is what the caller sees: an error finishing (typically "an earlier write ...
    /// abandoned", caused by the same failure) is dropped rather than raised in its
    /// place.
    fn __exit__(&self, py: Python<'_>, args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        let unwinding = args.get_item(0).is_ok_and(|t| !t.is_none());
        match self.finish(py) {
            Err(_) if unwinding => Ok(false),
            r => r.map(|()| false),
        }
    }
}

/// Registers the functions and classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(verify_data_crc32c, m)?)?;
    m.add_function(wrap_pyfunction!(load_kv, m)?)?;
    m.add_class::<FileReader>()?;
    m.add_class::<StreamReader>()?;
    m.add_class::<StreamWriter>()?;
    Ok(())
}
