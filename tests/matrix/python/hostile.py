"""The Python consumer of the hostile corpus (tests/matrix/rust/src/hostile.rs).

    python matrix.py hostile DIR

For every line of ``DIR/manifest.tsv`` (``CASE RULE LAYOUT DTYPE SHAPE BUFFER_BYTES``)
it prints ``result hostile CONTAINER CASE pass|fail DETAIL`` for:

``file``
    ``hurray.load(CASE.hrry)``, then a NumPy view of every buffer of every tensor
    (the calls ``consume`` makes);
``stream``
    ``hurray.StreamReader(CASE.hrrys)`` to its end, viewing every buffer the same way;

and, for the CSR and CSC cases, the SciPy path (SciPy's kernels trust the index
arrays, so a hostile one must never reach them):

``build``
    ``hurray.Tensor(values, dtype, shape, aux_buffers=[indices, pointers],
    layout=CsrLayout/CscLayout)`` over the hostile buffers;
``scipy-build``
    ``hurray.from_scipy`` of a SciPy matrix holding the hostile arrays (assigned to
    ``.indices``/``.indptr`` after construction, so SciPy's own ``check_format``
    never looks at them);
``scipy-view``
    a valid tensor of the same shape and ``nnz``, the hostile bytes written into its
    index arrays through their writable NumPy views, then ``Tensor.to_scipy()``.

Each passes when ``hurray.InvalidDescriptorError`` was raised with a message naming
``RULE``. The hostile buffers for the SciPy path are the stream's last
``sum(BUFFER_BYTES)`` bytes (the corpus writes them there, in buffer order).
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np

import hurray


def _view_all(tensors) -> None:
    """A NumPy view of every buffer of every tensor, every byte read."""
    for t in tensors:
        for i in range(t.buffer_count):
            np.asarray(t.buffer(i)).tobytes()


def read_file(path: str) -> None:
    _view_all(hurray.load(path).values())


def read_stream(path: str) -> None:
    with hurray.StreamReader(path) as r:
        _view_all(r)


def judge(rule: str, run: Callable[[], object]) -> tuple[str, str]:
    """``("pass", message)`` when ``run`` raised ``InvalidDescriptorError`` naming
    ``rule``; otherwise ``("fail", what happened)``."""
    try:
        run()
    except hurray.InvalidDescriptorError as e:
        msg = f"{type(e).__name__}: {e}"
        if rule in str(e):
            return "pass", msg
        return "fail", f"error does not name {rule}: {msg}"
    except Exception as e:  # any other outcome is a failure of the cell
        return "fail", f"expected InvalidDescriptorError naming {rule}, got {type(e).__name__}: {e}"
    return "fail", f"no error; expected {rule}"


class Case:
    """One manifest line, with the hostile buffers cut from the end of its stream."""

    def __init__(self, directory: str, line: str) -> None:
        f = line.split("\t")
        self.name, self.rule, self.layout, self.dtype = f[0], f[1], f[2], f[3]
        self.shape = tuple(int(x) for x in f[4].split(","))
        sizes = [int(x) for x in f[5].split(",")]
        self.file = os.path.join(directory, self.name + ".hrry")
        self.stream = os.path.join(directory, self.name + ".hrrys")
        with open(self.stream, "rb") as s:
            data = s.read()
        at = len(data) - sum(sizes)
        self.buffers = []
        for n in sizes:
            self.buffers.append(data[at:at + n])
            at += n


# ---------------------------------------------------------------- the SciPy path


def _sparse_layout(c: Case):
    nnz = len(c.buffers[1]) // 8
    return nnz, (hurray.CsrLayout(nnz) if c.layout == "csr" else hurray.CscLayout(nnz))


def build(c: Case) -> None:
    """The generic constructor over the hostile buffers."""
    _, layout = _sparse_layout(c)
    hurray.Tensor(c.buffers[0], hurray.Dtype.from_name(c.dtype), c.shape,
                  aux_buffers=c.buffers[1:], layout=layout)


def _scipy_matrix(c: Case, indices: np.ndarray, indptr: np.ndarray):
    """A SciPy matrix of the case's shape and format holding ``indices``/``indptr``
    as given: built valid (empty), then its arrays replaced, which SciPy does not
    check."""
    import scipy.sparse as sp

    m = (sp.csr_matrix if c.layout == "csr" else sp.csc_matrix)(c.shape, dtype=np.dtype(c.dtype))
    m.data = np.frombuffer(c.buffers[0], dtype=np.dtype(c.dtype)).copy()
    m.indices = indices
    m.indptr = indptr
    return m


def scipy_build(c: Case) -> None:
    idx = np.frombuffer(c.buffers[1], dtype=np.uint64).copy()
    ptr = np.frombuffer(c.buffers[2], dtype=np.uint64).copy()
    hurray.from_scipy(_scipy_matrix(c, idx, ptr))


def _valid_structure(c: Case) -> tuple[np.ndarray, np.ndarray]:
    """Valid indices and pointers for ``nnz`` entries of the case's shape: the first
    ``nnz`` positions in the compressed order."""
    nnz, _ = _sparse_layout(c)
    major, minor = c.shape if c.layout == "csr" else c.shape[::-1]
    if nnz > major * minor:
        raise ValueError(f"nnz {nnz} does not fit shape {c.shape}")
    k = np.arange(nnz, dtype=np.uint64)
    idx = k % np.uint64(minor)
    counts = np.bincount((k // np.uint64(minor)).astype(np.int64), minlength=major)
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.uint64)
    return idx, ptr


def scipy_view(c: Case) -> None:
    """A valid tensor, then the hostile bytes written through its NumPy views of the
    index arrays, then ``to_scipy``."""
    idx, ptr = _valid_structure(c)
    t = hurray.from_scipy(_scipy_matrix(c, idx, ptr))
    t.validate_content()  # valid before the write: the error below is the write's
    names = ("col_indices", "row_ptr") if c.layout == "csr" else ("row_indices", "col_ptr")
    for name, bad in zip(names, c.buffers[1:3]):
        view = np.asarray(getattr(t, name))
        if not view.flags.writeable:
            raise RuntimeError(f"np.asarray(t.{name}) is read-only: the hostile bytes cannot be written")
        view[:] = np.frombuffer(bad, dtype=np.uint64)
    t.to_scipy()


# ---------------------------------------------------------------- entry point


def hostile(directory: str) -> int:
    with open(os.path.join(directory, "manifest.tsv")) as f:
        lines = [ln for ln in f.read().splitlines() if ln.strip()]
    for line in lines:
        c = Case(directory, line)
        checks: list[tuple[str, Callable[[], object]]] = [
            ("file", lambda: read_file(c.file)),
            ("stream", lambda: read_stream(c.stream)),
        ]
        if c.layout in ("csr", "csc"):
            checks += [("build", lambda: build(c)), ("scipy-build", lambda: scipy_build(c)),
                       ("scipy-view", lambda: scipy_view(c))]
        for container, run in checks:
            status, detail = judge(c.rule, run)
            detail = detail.replace("\t", " ").replace("\n", " ")
            print(f"result\thostile\t{container}\t{c.name}\t{status}\t{detail}", flush=True)
    return 0
