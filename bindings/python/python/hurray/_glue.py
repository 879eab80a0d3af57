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
from typing import Any, Optional

from hurray import _native
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


def tensor_array(self: "_native.Tensor", dtype: Any = None, copy: Optional[bool] = None) -> Any:
    """NumPy protocol: a zero-copy ``numpy.ndarray`` view (kept alive by the
    array), or a cast copy when ``dtype`` differs; ``copy=True`` copies.

    Raises:
        hurray.UnsupportedError: non-dense or tiled/Morton/Hilbert layout, non-CPU
            device, dtype without a NumPy equivalent (incl. bfloat16).
        BufferError: (builtin) for ``bool``, which is bit-packed.
        hurray.CopyRequiredError: a cast with ``copy=False``.
    """
    self._check_array()
    import numpy as np

    arr = np.from_dlpack(self)
    if dtype is not None:
        want = np.dtype(dtype)
        if want != arr.dtype:
            if copy is False:
                raise _native.CopyRequiredError(
                    f"converting {self.dtype.name} to {want} needs a copy but copy=False"
                )
            return arr.astype(want)
    if copy:
        return arr.copy()
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
    ``buffer_callback``; in band otherwise); older protocols copy them in band.
    Every device kind pickles (its buffers are host memory); the device, memory
    class and device id survive."""
    t = self
    buffers: list[Any] = []
    np = None
    if protocol >= 5:
        try:
            import numpy as np
        except ImportError:
            np = None
    for i in range(t.buffer_count):
        if np is not None:
            # A uint8 view of buffer i, tagged CPU whatever the tensor's device so
            # NumPy's DLPack import accepts it, that keeps the tensor alive.
            buffers.append(pickle.PickleBuffer(np.from_dlpack(t._host_buffer(i))))
        else:
            buffers.append(t._buffer_bytes(i))
    return (_native._rebuild, (t._descriptor_bytes(), buffers, t.device.device_id))


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
