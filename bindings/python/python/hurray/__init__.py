"""Hurray: tensors in one binary format, shared across runtimes without copies.

A :class:`Tensor` owns one native ``HurrayTensor`` handle (descriptor, buffers and
an owner that keeps the memory alive). Tensors come from the construction
functions (:func:`zeros`, :func:`arange`, ...), from other libraries' memory
without copying when it is 64-byte aligned, else with one copy
(:func:`from_numpy`, :func:`from_dlpack`, :func:`from_torch`, :func:`from_scipy`,
:func:`sparse_coo`, :func:`from_hurray`; :func:`empty_aligned` allocates such
NumPy arrays), from files
(:func:`load`, memory-mapped) and streams (:class:`StreamReader`), and go back out
the same ways (``numpy.asarray(t)``, ``__dlpack__``, ``__hurray__``, :func:`save`,
:class:`StreamWriter`, pickle protocol 5).

Zero-copy rule: a view handed out (a NumPy array, a DLPack capsule, a component
view like ``t.values``) keeps what it views alive; dropping the last Python
reference releases the memory exactly once, from any thread.
"""

from __future__ import annotations

try:
    from hurray import _native
except ImportError as _e:  # the compiled extension is missing or does not load
    raise ImportError(
        "hurray: the native extension hurray._native could not be loaded "
        f"({_e}); reinstall the package (pip install --force-reinstall hurray-tensors), "
        "or in a checkout of the repository build it with `cargo xtask test --only python` "
        "(maturin develop)"
    ) from _e
from hurray import _dask, _glue
from hurray import dtype, device
# OSError subclasses that are also hurray.FileError (errno and filename set); not
# in __all__, so `from hurray import *` never shadows the builtins.
from hurray._native import BrokenPipeError, FileNotFoundError, IsADirectoryError  # noqa: A004
# A wire tag rendered as every language renders it ("float32", "private(0xf3)",
# "unknown(0x2a)"); additions to the reference API, so not in __all__ either.
from hurray._native import layout_name, type_name
# The network client (issue 18: hurray.connect -> hurray.Client, docs/python.md
# "Network") and composites (docs/python.md "Composites"; the reference has none);
# additions to the reference API, so not in __all__ either.
from hurray._native import Client, Composite, NotFoundError, connect
from hurray._native import (
    BlockPagedLayout,
    BufferError,
    ColMajorLayout,
    CompositeLayout,
    CooLayout,
    CopyRequiredError,
    CscLayout,
    CsfLayout,
    CsrLayout,
    Device,
    Dtype,
    FileError,
    FileReader,
    HilbertLayout,
    InternalError,
    InvalidDescriptorError,
    Layout,
    MortonLayout,
    MXFP,
    NF4,
    PerBlockAffine,
    PerChannelAffine,
    PerTensorAffine,
    PrivateExtensionLayout,
    RowMajorLayout,
    Shard,
    Statistics,
    StreamError,
    StreamReader,
    StreamWriter,
    StridedLayout,
    Tensor,
    TiledLayout,
    UnknownLayout,
    UnsupportedError,
    arange,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    load,
    load_kv,
    ones,
    ones_like,
    sparse_coo,
    verify_data_crc32c,
    zeros,
    zeros_like,
)
from hurray._interop import asarray, from_dlpack, from_hurray, from_scipy, from_torch, save

# Allocators of 64-byte-aligned NumPy arrays (ARCHITECTURE decision 5: what
# from_numpy wraps without copying); additions to the reference API, so not in
# __all__ (which lists the reference's names exactly).
from hurray._interop import empty_aligned, zeros_aligned
from hurray._printing import (
    PrintOptionsCtx,
    get_print_options,
    print_options,
    set_print_options,
)

__version__: str = _native.__version__

# Tensor methods written in Python (NumPy, pickle, repr): see hurray._glue.
_glue.install(_native.Tensor)
# Dask: sizeof and distributed serializers, registered without user code (issue 19).
_dask.install()

# Tier-1 element types at top level (the same objects as in hurray.dtype).
# These names shadow builtins inside this module only: `bool` (like
# `BufferError`) is left out of __all__, so `from hurray import *` keeps the
# builtins; use `hurray.bool` and `hurray.BufferError`.
float16 = dtype.float16
bfloat16 = dtype.bfloat16
float32 = dtype.float32
float64 = dtype.float64
int8 = dtype.int8
uint8 = dtype.uint8
int16 = dtype.int16
uint16 = dtype.uint16
int32 = dtype.int32
uint32 = dtype.uint32
int64 = dtype.int64
uint64 = dtype.uint64
bool = dtype.bool  # noqa: A001

__all__ = [
    "__version__",
    "dtype",
    "device",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "InvalidDescriptorError",
    "CopyRequiredError",
    "UnsupportedError",
    "InternalError",
    "FileError",
    "StreamError",
    "Dtype",
    "Device",
    "Tensor",
    "Layout",
    "RowMajorLayout",
    "ColMajorLayout",
    "StridedLayout",
    "TiledLayout",
    "MortonLayout",
    "HilbertLayout",
    "CooLayout",
    "CsrLayout",
    "CscLayout",
    "CsfLayout",
    "BlockPagedLayout",
    "CompositeLayout",
    "PrivateExtensionLayout",
    "UnknownLayout",
    "PerTensorAffine",
    "PerChannelAffine",
    "PerBlockAffine",
    "NF4",
    "MXFP",
    "Statistics",
    "Shard",
    "StreamReader",
    "StreamWriter",
    "PrintOptionsCtx",
    "set_print_options",
    "get_print_options",
    "print_options",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "arange",
    "linspace",
    "eye",
    "asarray",
    "from_dlpack",
    "from_numpy",
    "from_torch",
    "from_scipy",
    "sparse_coo",
    "from_hurray",
    "save",
    "load",
    "load_kv",
    "FileReader",
]
