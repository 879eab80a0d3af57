"""Python-side ``Tensor`` methods and helpers: the parts that talk to NumPy,
SciPy and PyTorch (imported lazily, only when a method needs them), ``repr``/
``str`` and pickling. Not public API.

:func:`install` puts the ``Tensor`` methods on the native class when the package
is imported. They are Python functions on purpose, not native methods that call
back into Python: on CPython < 3.14 a daemon thread that needs the GIL while the
interpreter finalizes is ended with ``pthread_exit``, a forced unwind, and one
crossing a Rust frame (a native method running Python code underneath) aborts
the process ("FATAL: exception not rethrown"). Here the only native frames are
the short calls below (``_check_array``, ``__dlpack__``, getters), which run no
Python code.
"""

from __future__ import annotations

import pickle
import sys
from typing import Any, Optional

from hurray import _dask, _native
from hurray._printing import _SPARSE_DISPLAY

# The "I-set": element types NumPy can represent (bfloat16 has no NumPy name).
NUMPY_NAMES = frozenset(
    [
        "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
        "uint64", "float16", "float32", "float64", "complex64", "complex128",
    ]
)
INTEROP_NAMES = NUMPY_NAMES | {"bfloat16"}
_COMPRESSED = ("coo", "csr", "csc")


def import_optional(name: str, extra: str) -> Any:
    """Import an optional dependency or raise ImportError with an install hint."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(
            f"this needs {extra}, which is not installed: pip install {extra}"
        ) from e


# Element types NumPy has no dtype for that the optional ``ml_dtypes`` package has
# (hurray name -> ml_dtypes name): bfloat16, float8, float6, float4, int4/2, uint4/2.
ML_DTYPES_NAMES = dict(_native._ml_dtypes_names())
# Sub-byte types: bit-packed in the format, one byte per element in NumPy.
_SUB_BYTE_INTS = frozenset(["int4", "uint4", "int2", "uint2"])
_SUB_BYTE_FLOATS = frozenset(["float4_e2m1", "float6_e2m3", "float6_e3m2"])


def ml_dtype(name: str) -> Any:
    """The ``ml_dtypes`` NumPy dtype for hurray element type ``name``, or None when
    ``ml_dtypes`` is not installed or has no such type."""
    ml = ML_DTYPES_NAMES.get(name)
    if ml is None:
        return None
    try:
        import ml_dtypes
    except ImportError:
        return None
    import numpy as np

    return np.dtype(getattr(ml_dtypes, ml))


def _need_ml_dtypes(name: str) -> Any:
    dt = ml_dtype(name)
    if dt is None:
        raise _native.UnsupportedError(
            f"dtype {name} has no NumPy dtype; install ml_dtypes (pip install ml_dtypes) "
            f"to get it as ml_dtypes.{ML_DTYPES_NAMES.get(name, name)}"
        )
    return dt


def to_numpy(t: "_native.Tensor", copy: Optional[bool]) -> Any:
    """The tensor's elements as a ``numpy.ndarray``: a zero-copy view where NumPy
    (or ``ml_dtypes``) has the element type's storage, else an unpacked copy.

    Zero-copy: every NumPy dtype but ``bool``; ``bfloat16`` and the float8 types as
    ``ml_dtypes`` arrays. Copy (``copy=False`` refuses): ``bool`` (bit-packed in the
    format) as ``numpy.bool_``; ``int4``/``uint4``/``int2``/``uint2`` as the
    ``ml_dtypes`` types when installed, else ``int8``/``uint8`` (sign-extended);
    ``float4_e2m1``/``float6_*`` as ``ml_dtypes`` types (required).
    """
    import numpy as np

    name = t.dtype.name
    if name == "bool" or name in _SUB_BYTE_INTS or name in _SUB_BYTE_FLOATS:
        if copy is False:
            raise _native.CopyRequiredError(
                f"{name} is bit-packed in hurray; a NumPy array of it is an unpacked "
                "copy, but copy=False was given"
            )
        want = np.dtype(np.bool_) if name == "bool" else ml_dtype(name)
        if want is None and name in _SUB_BYTE_FLOATS:
            _need_ml_dtypes(name)
        arr = np.from_dlpack(t._unpacked())
        return arr if want is None else arr.view(want)
    if name in ML_DTYPES_NAMES:
        want = _need_ml_dtypes(name)
        arr = np.from_dlpack(t._as_bits()).view(want)
    else:
        t._check_array()
        arr = np.from_dlpack(t)
    return arr.copy() if copy else arr


def tensor_array(self: "_native.Tensor", dtype: Any = None, copy: Optional[bool] = None) -> Any:
    """NumPy protocol: a zero-copy ``numpy.ndarray`` view (kept alive by the
    array), or a cast copy when ``dtype`` differs; ``copy=True`` copies.

    ``bfloat16`` and float8 tensors are viewed as ``ml_dtypes`` arrays (zero-copy,
    needs ``ml_dtypes``); ``bool`` and the other sub-byte types come back as an
    unpacked copy (see :func:`hurray._glue.to_numpy`).

    Raises:
        hurray.UnsupportedError: non-dense or tiled/Morton/Hilbert layout, non-CPU
            device, dtype without a NumPy equivalent (``float128``, extension
            types; ``bfloat16``/float8/float6/float4 without ``ml_dtypes``).
        hurray.CopyRequiredError: a cast, or a sub-byte type, with ``copy=False``.
    """
    import numpy as np

    arr = to_numpy(self, copy)
    if dtype is not None:
        want = np.dtype(dtype)
        if want != arr.dtype:
            if copy is False:
                raise _native.CopyRequiredError(
                    f"converting {self.dtype.name} to {want} needs a copy but copy=False"
                )
            return arr.astype(want)
    return arr


def to_torch(self: "_native.Tensor") -> Any:
    """A ``torch.Tensor`` sharing this tensor's memory (through DLPack).

    Raises:
        ImportError: PyTorch is not installed.
    """
    torch = import_optional("torch", "torch")
    return torch.utils.dlpack.from_dlpack(self)


def to_scipy(self: "_native.Tensor") -> Any:
    """The matching ``scipy.sparse`` matrix (CSR -> ``csr_matrix``, CSC ->
    ``csc_matrix``) over this tensor's memory.

    The index arrays are checked first (``Tensor.validate_content``): SciPy's
    kernels trust them, and a bad row pointer or column index would make them read
    or write out of bounds.

    Raises:
        hurray.UnsupportedError: non-NumPy dtype, or a layout other than CSR/CSC.
        hurray.InvalidDescriptorError: the index arrays break a CSR/CSC rule.
        ImportError: SciPy is not installed.
    """
    t = self
    if t.dtype.name not in NUMPY_NAMES or t.dtype.name == "bool":
        raise _native.UnsupportedError(
            f"dtype {t.dtype.name} has no NumPy equivalent; SciPy cannot hold it"
        )
    name = t.layout.name
    if name == "coo":
        raise _native.UnsupportedError(
            "to_scipy supports CSR and CSC; for a COO tensor build "
            "scipy.sparse.coo_matrix((t.values, t.indices.T)) from .values and .indices"
        )
    if name not in ("csr", "csc"):
        raise _native.UnsupportedError(f"to_scipy supports CSR and CSC, not {name}")
    sparse = import_optional("scipy.sparse", "scipy")
    import numpy as np

    t.validate_content()
    rows, cols = t.shape
    if name == "csr":
        parts = (np.asarray(t.values), np.asarray(t.col_indices), np.asarray(t.row_ptr))
        return sparse.csr_matrix(parts, shape=(rows, cols), copy=False)
    parts = (np.asarray(t.values), np.asarray(t.row_indices), np.asarray(t.col_ptr))
    return sparse.csc_matrix(parts, shape=(rows, cols), copy=False)


def reduce_ex(self: "_native.Tensor", protocol: int) -> Any:
    """Pickle support: the encoded descriptor, the buffers and the device id.
    With protocol 5 and NumPy the buffers are ``pickle.PickleBuffer`` objects over
    the tensor's memory (out of band, no copy, when the pickler has a
    ``buffer_callback``; in band otherwise); older protocols pickle them as NumPy
    uint8 arrays (one copy out, none back in), or as ``bytes`` without NumPy.
    Every device kind pickles (its buffers are host memory); the device, memory
    class, device id and read-only flag survive. Unpickling wraps a read-only
    out-of-band buffer (Ray's object store, say) without copying it; the tensor is
    then read-only (see ``hurray._native._rebuild``)."""
    t = self
    register_multiprocessing()
    # distributed imported after hurray and its import hook missed (a reloaded
    # module, another finder first): its next message uses the dask serializer.
    _dask.register_distributed()
    buffers: list[Any] = []
    try:
        import numpy as np
    except ImportError:
        np = None
    for i in range(t.buffer_count):
        if np is None:
            buffers.append(t._buffer_bytes(i))
            continue
        # A uint8 view of buffer i, tagged CPU whatever the tensor's device so
        # NumPy's DLPack import accepts it, that keeps the tensor alive.
        view = np.from_dlpack(t._host_buffer(i))
        # Protocol 5: out of band when the pickler takes buffers. Older protocols
        # (multiprocessing's default, 4, included): the NumPy array itself, which
        # pickles its bytes once and unpickles as an array over the pickle's own
        # bytes object (no second copy), which _rebuild then wraps.
        buffers.append(pickle.PickleBuffer(view) if protocol >= 5 else view)
    # A read-only tensor says so (its buffers may arrive writable, or as bytes);
    # a writable one lets the buffers decide (a read-only out-of-band buffer, an
    # object store's, is wrapped without a copy and makes the tensor read-only).
    ro = True if t.read_only else None
    return (_native._rebuild, (t._descriptor_bytes(), buffers, t.device.device_id, ro))


# Tensors at least this large (all buffers) travel between processes through a
# memfd when multiprocessing pickles them (see mp_reduce).
MP_MEMFD_MIN_BYTES = 1 << 20
_MP_ALIGN = 64


def register_multiprocessing() -> None:
    """Registers :func:`mp_reduce` with ``multiprocessing``'s pickler, once
    ``multiprocessing.reduction`` is imported (hurray does not import it: it costs
    ~20 ms). Called at ``import hurray`` and by every pickling of a tensor, so a
    program that imports multiprocessing later gets it from its next pickler on."""
    red = sys.modules.get("multiprocessing.reduction")
    if red is None:
        return
    fp = red.ForkingPickler
    if _native.Tensor not in fp._extra_reducers:
        fp.register(_native.Tensor, mp_reduce)


def mp_reduce(t: "_native.Tensor") -> Any:
    """``multiprocessing``'s pickling of a tensor (a ``ForkingPickler`` reducer):
    on Linux, a tensor of at least ``MP_MEMFD_MIN_BYTES`` is copied once into an
    anonymous memory file (``os.memfd_create``) whose descriptor travels the way
    multiprocessing sends descriptors (``multiprocessing.reduction.DupFd``: to a
    child being started, or to any receiver through the sender's resource sharer);
    the receiver maps it and its tensor views the mapping, with no further copy. A
    pickled NumPy array is copied about four times on the way (``tobytes``, the
    pickle stream, the pipe both ways). The sender must be alive when the receiver
    unpickles, and holds the memory until then. Smaller tensors, and platforms
    without ``memfd_create``, take the ordinary path (:func:`reduce_ex`)."""
    import os

    if not hasattr(os, "memfd_create") or t.buffer_count == 0:
        return reduce_ex(t, 4)
    import numpy as np

    views = [np.from_dlpack(t._host_buffer(i)) for i in range(t.buffer_count)]
    if sum(v.nbytes for v in views) < MP_MEMFD_MIN_BYTES:
        return reduce_ex(t, 4)
    from multiprocessing.reduction import DupFd

    fd = os.memfd_create("hurray-tensor", os.MFD_CLOEXEC)
    try:
        offsets, at = [], 0
        for v in views:
            at = -(-at // _MP_ALIGN) * _MP_ALIGN  # each buffer 64-byte aligned
            offsets.append(at)
            mv = memoryview(v).cast("B")
            done = 0
            while done < len(mv):
                done += os.pwrite(fd, mv[done:], at + done)
            at += len(mv)
        os.ftruncate(fd, max(at, 1))
        handle = DupFd(fd)
    finally:
        os.close(fd)
    sizes = [v.nbytes for v in views]
    return (
        _mp_rebuild,
        (t._descriptor_bytes(), handle, offsets, sizes, t.device.device_id, t.read_only),
    )


def _mp_rebuild(
    descriptor: bytes,
    handle: Any,
    offsets: list,
    sizes: list,
    device_id: int,
    read_only: bool = False,
) -> Any:
    """The receiving end of :func:`mp_reduce`: maps the memory file (shared,
    writable; only this process holds it) and wraps the buffers without copying."""
    import mmap
    import os

    import numpy as np

    fd = handle.detach()
    try:
        length = os.fstat(fd).st_size
        m = mmap.mmap(fd, length)
    finally:
        os.close(fd)
    whole = np.frombuffer(m, dtype=np.uint8)
    bufs = [whole[o:o + n] for o, n in zip(offsets, sizes)]
    return _native._rebuild(descriptor, bufs, device_id, read_only)


def _metadata(t: "_native.Tensor") -> str:
    return f"hurray.Tensor(shape={t.shape!r}, dtype={t.dtype.name}, device={t.device!r})"


def _sparse(t: "_native.Tensor") -> str:
    name = t.layout.name
    head = f"hurray.Tensor(layout='{name}', shape={t.shape!r}, nnz={t.nnz}, dtype={t.dtype.name}"
    if _SPARSE_DISPLAY.get() == "content":
        try:
            parts = {
                "coo": ("indices", "values"),
                "csr": ("values", "col_indices", "row_ptr"),
                "csc": ("values", "row_indices", "col_ptr"),
            }[name]
            items = "".join(f", {p}={_dense_str(getattr(t, p))}" for p in parts)
            return head + items + ")"
        except Exception:
            pass
    return head + ")"


def _dense_array(t: "_native.Tensor") -> Any:
    """The tensor's values as an ndarray (bool unpacked), or None when not printable."""
    import numpy as np

    name = t.dtype.name
    if t.device.kind != "cpu" or name not in NUMPY_NAMES:
        return None
    if t.layout.name not in ("row_major", "col_major", "strided"):
        return None
    if name == "bool":
        if t.layout.name != "row_major":
            return None
        n = t.size or 0
        bits = np.unpackbits(np.asarray(t.buffer(0)), bitorder="little")[:n]
        return bits.astype(bool).reshape(t.shape)
    return np.asarray(t)


def _dense_str(t: "_native.Tensor") -> str:
    import numpy as np

    arr = _dense_array(t)
    if arr is None:
        raise ValueError("not printable")
    return np.array2string(arr)


def tensor_repr(t: "_native.Tensor") -> str:
    """The values when NumPy can show them, else metadata (never raises for display reasons)."""
    try:
        if t.layout.name in _COMPRESSED:
            return _sparse(t)
        return f"hurray.Tensor({_dense_str(t)}, dtype={t.dtype.name})"
    except Exception:
        return _metadata(t)


def tensor_str(t: "_native.Tensor") -> str:
    """The bare values for dense tensors, else as ``repr``."""
    try:
        if t.layout.name in _COMPRESSED:
            return _sparse(t)
        return _dense_str(t)
    except Exception:
        return _metadata(t)


_METHODS = {
    "__array__": tensor_array,
    "__reduce_ex__": reduce_ex,
    "__repr__": tensor_repr,
    "__str__": tensor_str,
    "to_scipy": to_scipy,
    "to_torch": to_torch,
}


def install(cls: type) -> None:
    """Puts the Python-defined methods on the native ``Tensor`` class (once, at import)."""
    for name, fn in _METHODS.items():
        fn.__name__ = name
        fn.__qualname__ = f"{cls.__name__}.{name}"
        fn.__module__ = cls.__module__
        setattr(cls, name, fn)
    register_multiprocessing()
