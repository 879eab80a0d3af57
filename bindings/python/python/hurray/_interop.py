"""Constructors that go through NumPy, SciPy or PyTorch (imported lazily)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from hurray import _native
from hurray._glue import INTEROP_NAMES, ML_DTYPES_NAMES, import_optional, ml_dtype

__all__ = [
    "asarray",
    "empty_aligned",
    "from_dlpack",
    "from_hurray",
    "from_torch",
    "from_scipy",
    "save",
    "zeros_aligned",
]

#: The alignment, in bytes, every non-empty buffer a Python constructor makes
#: declares (``descriptor.md`` §6.1) and its memory has (ARCHITECTURE decision 5).
ALIGNMENT = 64


def _shape_tuple(shape: Any) -> tuple:
    try:
        return (int(shape),)
    except TypeError:
        return tuple(int(n) for n in shape)


def _numpy_dtype(dtype: Any) -> Any:
    """A NumPy dtype for ``dtype``: anything ``numpy.dtype`` takes, or a
    :class:`hurray.Dtype` (its ``ml_dtypes`` dtype for ``bfloat16``, float8, ...)."""
    import numpy as np

    if isinstance(dtype, _native.Dtype):
        if dtype.name in ML_DTYPES_NAMES:
            dt = ml_dtype(dtype.name)
            if dt is None:
                raise _native.UnsupportedError(
                    f"a NumPy array of {dtype.name} needs ml_dtypes (pip install ml_dtypes)"
                )
            return dt
        if dtype.name not in INTEROP_NAMES:
            raise _native.UnsupportedError(f"NumPy has no dtype for {dtype.name}")
        return np.dtype(dtype.name)
    return np.dtype(dtype)


def empty_aligned(shape: Any, dtype: Any = float, *, order: str = "C") -> Any:
    """A new, uninitialised ``numpy.ndarray`` whose data starts at an address that
    is a multiple of 64 bytes, like ``numpy.empty(shape, dtype, order)`` otherwise.

    :func:`hurray.from_numpy` (and ``from_dlpack``, ``asarray``, ``sparse_coo``,
    ``from_scipy``) wrap such an array without copying; NumPy's own allocations are
    only 16-byte aligned, which those functions copy once (or, with
    ``copy=False``, refuse) because a tensor's buffer declares 64-byte alignment
    (ARCHITECTURE decision 5). Views that start elsewhere (``a[1:]``) are not
    aligned any more. ``shape`` is an int or a sequence of ints (``()`` for 0-d);
    ``dtype`` anything ``numpy.dtype`` accepts or a :class:`hurray.Dtype`
    (``hurray.bfloat16`` and the other ``ml_dtypes`` types need ``ml_dtypes``);
    ``order`` ``"C"`` or ``"F"``. The array owns a block of ``nbytes + 64`` bytes
    (its ``.base``).

    Raises:
        ImportError: NumPy is not installed.
        TypeError: ``dtype`` is not a dtype.
        ValueError: a negative dimension, or ``order`` not ``"C"``/``"F"``.
        hurray.UnsupportedError: a :class:`hurray.Dtype` NumPy has no dtype for.
    """
    return _aligned(shape, dtype, order, zero=False)


def zeros_aligned(shape: Any, dtype: Any = float, *, order: str = "C") -> Any:
    """:func:`empty_aligned`, filled with zeros (like ``numpy.zeros``: fresh zero
    pages from the OS for large arrays, no write pass).

    Raises: as :func:`empty_aligned`.
    """
    return _aligned(shape, dtype, order, zero=True)


def _aligned(shape: Any, dtype: Any, order: str, *, zero: bool) -> Any:
    import numpy as np

    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', not {order!r}")
    dt = _numpy_dtype(dtype)
    shape = _shape_tuple(shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    count = 1
    for n in shape:
        count *= n
    nbytes = count * dt.itemsize
    raw = (np.zeros if zero else np.empty)(nbytes + ALIGNMENT, dtype=np.uint8)
    start = -raw.__array_interface__["data"][0] % ALIGNMENT
    # Not a slice of raw: NumPy points an empty slice at its base's start.
    return np.ndarray(shape, dtype=dt, buffer=raw, offset=start, order=order)


def from_dlpack(x: Any, *, device: Any = None, copy: Optional[bool] = None) -> "_native.Tensor":
    """Wrap any DLPack producer (a NumPy array, a PyTorch CPU tensor, a JAX CPU
    array, a :class:`hurray.Tensor`) without copying when its data is 64-byte
    aligned.

    ``numpy.from_dlpack(x)`` negotiates the capsule version, device and stream;
    the resulting array is wrapped with :func:`hurray.from_numpy` and kept alive by
    the tensor. What NumPy cannot import (``bfloat16``, float8 and ``bool``
    DLPack tensors, e.g. a JAX ``bfloat16`` array) is imported from the producer's
    capsule directly: zero-copy (the tensor calls the producer's deleter when its
    last view goes), except ``bool``, which is packed (a copy). ``copy`` follows
    the Array API and :func:`hurray.from_numpy`: ``None`` wraps memory that meets
    the buffer's declared 64-byte alignment and copies other memory once into
    aligned memory; ``False`` never copies (raises instead); ``True`` always
    copies. ``device`` is accepted for Array API compatibility and ignored.

    Raises:
        ImportError: NumPy is not installed.
        AttributeError: ``x`` has no ``__dlpack__`` (a bare capsule included).
        BufferError: (builtin) the producer cannot export (e.g. a sparse tensor).
        hurray.UnsupportedError: the result is neither C- nor Fortran-contiguous
            (and not importable directly: negative strides), not on the CPU, or its
            type has no hurray element type.
        hurray.CopyRequiredError: ``copy=False`` but the data is not 64-byte
            aligned, or is ``bool`` (packing is a copy).
    """
    import numpy as np

    try:
        arr = np.from_dlpack(x)
    except (RuntimeError, TypeError, ValueError, BufferError) as e:
        # NumPy refuses bfloat16/float8/bool capsules ("Unsupported dtype in
        # DLTensor"): take the capsule ourselves.
        if not hasattr(x, "__dlpack__"):
            raise
        try:
            capsule = x.__dlpack__(max_version=(1, 0))
        except TypeError:
            capsule = x.__dlpack__()
        try:
            return _native._from_dlpack_capsule(capsule, copy)
        except _native.UnsupportedError:
            raise e from None
    return _native.from_numpy(arr, copy=copy)


def from_torch(tensor: Any, *, copy: Optional[bool] = None) -> "_native.Tensor":
    """Wrap a PyTorch CPU tensor without copying (through DLPack, see
    :func:`from_dlpack`, which also says what ``copy`` does: PyTorch's own CPU
    allocations are 64-byte aligned, a view at an offset may not be).

    Raises:
        ImportError: PyTorch is not installed (checked first).
        hurray.CopyRequiredError: ``copy=False`` but a copy is needed.
    """
    import_optional("torch", "torch")
    return from_dlpack(tensor, copy=copy)


def asarray(
    obj: Any,
    *,
    dtype: Optional["_native.Dtype"] = None,
    device: Any = None,
    copy: Optional[bool] = None,
) -> "_native.Tensor":
    """Convert ``obj`` to a :class:`hurray.Tensor`.

    A :class:`hurray.Tensor` with no other ``dtype`` is shared (zero-copy; a
    ``bool`` or sub-byte tensor is repacked from its unpacked NumPy copy);
    anything else goes through ``numpy.asarray`` (lists get NumPy's default
    int64/float64). ``copy=True`` always copies (once, into 64-byte-aligned
    memory, when NumPy needs no conversion); ``copy=False`` raises when a copy is
    needed, including when the array's data is not 64-byte aligned (see
    :func:`hurray.from_numpy`); ``copy=None`` copies such an array once. ``device``
    is ignored. ``dtype`` may be ``bfloat16``, a float8,
    float6 or float4 type or a 4- or 2-bit integer when ``ml_dtypes`` is installed.

    Raises:
        hurray.InvalidDescriptorError: ``dtype`` is not a :class:`hurray.Dtype`.
        hurray.UnsupportedError: ``dtype`` has no NumPy equivalent (``float128``,
            extension types; the ``ml_dtypes`` types without ``ml_dtypes``).
        hurray.CopyRequiredError: ``copy=False`` but a copy is needed.
    """
    import numpy as np

    if dtype is not None:
        if not isinstance(dtype, _native.Dtype):
            raise _native.InvalidDescriptorError("dtype must be a hurray.Dtype (e.g. hurray.float32)")
        if dtype.name not in INTEROP_NAMES and dtype.name not in ML_DTYPES_NAMES:
            raise _native.UnsupportedError(f"asarray cannot produce dtype {dtype.name}")
        if dtype.name in ML_DTYPES_NAMES and ml_dtype(dtype.name) is None:
            raise _native.UnsupportedError(
                f"asarray to {dtype.name} needs ml_dtypes (pip install ml_dtypes)"
            )
    if isinstance(obj, _native.Tensor) and (dtype is None or dtype == obj.dtype):
        if copy is True:
            # Through __array__: bool and sub-byte tensors come back unpacked, and
            # from_numpy packs them again (or copies the view once).
            return _native.from_numpy(np.asarray(obj), copy=True)
        if obj.dtype.name in INTEROP_NAMES and obj.dtype.name not in ("bool", "bfloat16"):
            return from_dlpack(obj)
        return _native.from_numpy(np.asarray(obj))
    np_dtype = None
    if dtype is not None:
        np_dtype = ml_dtype(dtype.name) if dtype.name in ML_DTYPES_NAMES else np.dtype(dtype.name)
    if copy is False:
        try:
            arr = np.asarray(obj, dtype=np_dtype, copy=False)
        except ValueError as e:
            raise _native.CopyRequiredError(str(e)) from e
    else:
        arr = np.asarray(obj, dtype=np_dtype)
    # copy=True: from_numpy copies into aligned memory (no NumPy copy first).
    return _native.from_numpy(arr, copy=copy)


def from_scipy(matrix: Any, *, copy: Optional[bool] = None) -> "_native.Tensor":
    """Wrap a SciPy CSR or CSC matrix/array without copying its three arrays
    (all three are kept alive by the tensor). Index arrays must be uint64 (SciPy
    normalises index dtypes on construction: assign uint64 arrays to
    ``.indices``/``.indptr`` afterwards). An array whose data is not 64-byte
    aligned is copied once; ``copy`` as in :func:`hurray.from_numpy`.

    Raises:
        ImportError: SciPy is not installed.
        AttributeError: ``matrix`` has no ``.format``.
        hurray.UnsupportedError: a format other than csr/csc (repack COO with
            :func:`hurray.sparse_coo`), non-uint64 indices, an unmapped values dtype.
        hurray.InvalidDescriptorError: the shape is not rank 2, or the arrays break
            a CSR/CSC content rule (a pointer not starting at 0, decreasing or not
            ending at nnz; an index out of range or not increasing in its row or
            column), which SciPy does not check after construction.
        hurray.CopyRequiredError: ``copy=False`` and an array is not 64-byte
            aligned.
    """
    import_optional("scipy.sparse", "scipy")
    fmt = matrix.format
    if fmt == "coo":
        raise _native.UnsupportedError(
            "from_scipy supports csr and csc; for COO use hurray.sparse_coo(m.data, "
            "numpy.stack([m.row, m.col], axis=1).astype(numpy.uint64), m.shape)"
        )
    if fmt not in ("csr", "csc"):
        raise _native.UnsupportedError(f"from_scipy supports csr and csc, not {fmt!r}")
    return _native._compressed(
        fmt, matrix.shape, matrix.data, matrix.indices, matrix.indptr, copy
    )


def from_hurray(obj: Any) -> "_native.Tensor":
    """Consume ``obj.__hurray__()`` (the native capsule protocol) without copying:
    the capsule must be named ``"hurray_tensor_handle"`` and speak this library's
    ``HURRAY_C_ABI_VERSION``; it is renamed ``"used_hurray_tensor_handle"`` and the
    tensor owns the handle (releasing the producer when the last view goes).

    Raises:
        TypeError: ``obj`` has no ``__hurray__`` method (a bare capsule included).
        hurray.BufferError: ``__hurray__()`` returned something other than an
            unconsumed ``"hurray_tensor_handle"`` capsule (the message names it).
        hurray.UnsupportedError: the handle speaks another ABI version.
    """
    try:
        method = obj.__hurray__
    except AttributeError:
        raise TypeError(
            f"{type(obj).__name__} does not implement the hurray native protocol "
            "(no __hurray__ method)"
        ) from None
    # Called here, not in the extension: no Python code runs under a native frame.
    return _native._from_hurray_capsule(method())


def _to_tensor(value: Any) -> Any:
    """A value of ``save``'s mapping as ``_native.save`` takes it: a
    :class:`hurray.Tensor` as it is; a NumPy array (or anything with
    ``__array_interface__``) as a NumPy array, C- or Fortran-contiguous (else
    copied to C order), whose bytes the writer reads as they are (no aligned copy:
    whatever their alignment, the file places them itself); a DLPack producer
    through ``numpy.from_dlpack`` likewise, or wrapped as a tensor when NumPy
    cannot import it; anything else as it is (``_native.save`` names its type in
    the error)."""
    if isinstance(value, _native.Tensor):
        return value
    arr = None
    if hasattr(value, "__array_interface__"):
        arr = value
    elif hasattr(value, "__dlpack__"):
        import numpy as np

        try:
            arr = np.from_dlpack(value)
        except (RuntimeError, TypeError, ValueError, BufferError):
            return from_dlpack(value)
    if arr is None:
        return value
    import numpy as np

    arr = np.asarray(arr)
    flags = arr.flags
    if not (flags.c_contiguous or flags.f_contiguous):
        arr = np.ascontiguousarray(arr)
    return arr


def save(
    path: Any,
    tensors: Mapping,
    *,
    kv: Optional[dict] = None,
    durable: bool = True,
    data_crc32c: bool = False,
    sorted_index: bool = False,
) -> None:
    """Write an HRRYFILE container at ``path`` (``str`` or ``os.PathLike``) holding
    every ``(name, value)`` of the mapping ``tensors`` (a ``dict`` or any
    ``collections.abc.Mapping``) in iteration order, plus optional key-value
    metadata ``kv``; see ``hurray._native.save`` for ``kv``, ``durable``,
    ``data_crc32c`` and ``sorted_index`` (the file appears atomically; with
    ``durable`` it is fsync-ed).

    Values may be :class:`hurray.Tensor`, NumPy arrays (``ml_dtypes`` ones
    included) and anything with ``__dlpack__`` (a PyTorch or JAX CPU tensor). Their
    bytes are written from where they are, without copying (not even an array
    that is not 64-byte aligned: no tensor is made over it); a Fortran-ordered
    array (``a.T``) is written column-major, a strided view (``a[:, ::2]``) is
    copied to C order first. The GIL is released while writing.

    Raises:
        TypeError: ``tensors`` is not a mapping, a name is not a ``str``.
        hurray.UnsupportedError: a value that is none of the above, or whose dtype
            has no hurray element type.
        hurray.FileError: empty, duplicate or over-long names, a bad ``kv``, I/O
            errors (``hurray.FileNotFoundError`` for a missing directory).
        hurray.InvalidDescriptorError: a descriptor cannot be encoded.
    """
    if not isinstance(tensors, Mapping):
        raise TypeError(
            f"tensors must be a mapping of names to tensors or arrays, not {type(tensors).__name__}"
        )
    items = {name: _to_tensor(value) for name, value in tensors.items()}
    _native.save(
        path, items, kv=kv, durable=durable, data_crc32c=data_crc32c, sorted_index=sorted_index
    )


for _f in (
    from_dlpack,
    from_hurray,
    from_torch,
    asarray,
    from_scipy,
    save,
    empty_aligned,
    zeros_aligned,
):
    _f.__module__ = "hurray"
