"""Python-side helpers behind native ``Tensor`` methods: the parts that talk to
NumPy, SciPy and PyTorch (imported lazily, only when a method needs them) and
the ``repr``/pickle glue. Not public API."""

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


def array_of(t: "_native.Tensor", dtype: Any, copy: Optional[bool]) -> Any:
    """``Tensor.__array__`` after the native checks: a DLPack view, cast or copied."""
    import numpy as np

    arr = np.from_dlpack(t)
    if dtype is not None:
        want = np.dtype(dtype)
        if want != arr.dtype:
            if copy is False:
                raise _native.CopyRequiredError(
                    f"converting {t.dtype.name} to {want} needs a copy but copy=False"
                )
            return arr.astype(want)
    if copy:
        return arr.copy()
    return arr


def to_torch(t: "_native.Tensor") -> Any:
    """``Tensor.to_torch``: ``torch.from_dlpack`` over the tensor (no copy)."""
    torch = import_optional("torch", "torch")
    return torch.utils.dlpack.from_dlpack(t)


def to_scipy(t: "_native.Tensor") -> Any:
    """``Tensor.to_scipy``: a ``csr_matrix``/``csc_matrix`` over the tensor's buffers."""
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

    rows, cols = t.shape
    if name == "csr":
        parts = (np.asarray(t.values), np.asarray(t.col_indices), np.asarray(t.row_ptr))
        return sparse.csr_matrix(parts, shape=(rows, cols), copy=False)
    parts = (np.asarray(t.values), np.asarray(t.row_indices), np.asarray(t.col_ptr))
    return sparse.csc_matrix(parts, shape=(rows, cols), copy=False)


def reduce_tensor(t: "_native.Tensor", protocol: int) -> Any:
    """``Tensor.__reduce_ex__``: descriptor bytes plus buffers (out of band with protocol 5)."""
    buffers: list[Any] = []
    np = None
    if protocol >= 5:
        try:
            import numpy as np
        except ImportError:
            np = None
    for i in range(t.buffer_count):
        if np is not None:
            # A uint8 view of buffer i that keeps the tensor alive, wrapped for
            # out-of-band transport (the pickler's buffer_callback decides).
            buffers.append(pickle.PickleBuffer(np.from_dlpack(t.buffer(i))))
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
    """``repr(Tensor)``: the values when NumPy can show them, else metadata."""
    try:
        if t.layout.name in _COMPRESSED:
            return _sparse(t)
        return f"hurray.Tensor({_dense_str(t)}, dtype={t.dtype.name})"
    except Exception:
        return _metadata(t)


def tensor_str(t: "_native.Tensor") -> str:
    """``str(Tensor)``: the bare values for dense tensors, else as ``repr``."""
    try:
        if t.layout.name in _COMPRESSED:
            return _sparse(t)
        return _dense_str(t)
    except Exception:
        return _metadata(t)
