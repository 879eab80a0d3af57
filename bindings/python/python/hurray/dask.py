"""Dask arrays over ``.hrry`` files (issue 19, Build 4), both directions.

:func:`from_hrry` turns a tensor of an HRRYFILE (or all of them) into a
``dask.array.Array`` whose chunks each worker reads from its own memory mapping of
the file: only the path, the tensor's name and the chunk's box travel in the task
graph, and a chunk is a zero-copy view of mapped pages (a worker's private memory
does not grow with the data it reduces). Chunks run along one axis of a tensor,
or are the members of a partition composite.

:func:`to_hrry` writes a Dask array into an ``.hrry`` from the workers, without
materialising it in one process: as a partition composite whose members are the
chunks, or as one tensor.

Both need every worker to see the same file system path (one machine, or a shared
file system). Needs ``dask[array]`` (and ``numpy``).
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import OrderedDict
from typing import Any, Optional, Sequence, Union

import numpy as np

from hurray import _native

__all__ = ["from_hrry", "to_hrry"]

# Default chunk size along the chosen axis, in bytes.
DEFAULT_CHUNK_BYTES = 64 << 20

# Per-process readers, most recently used last: (path, size, mtime_ns) ->
# FileReader. A worker maps each file once and every chunk task views that
# mapping; at most _MAX_READERS files stay mapped (chunks already handed out keep
# their own part of a mapping alive).
_READERS: "OrderedDict[tuple, _native.FileReader]" = OrderedDict()
_MAX_READERS = 16
_READERS_LOCK = threading.Lock()


def _reader(path: str) -> "_native.FileReader":
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    with _READERS_LOCK:
        r = _READERS.get(key)
        if r is not None:
            _READERS.move_to_end(key)
            return r
        for k in [k for k in _READERS if k[0] == path]:
            del _READERS[k]  # the file changed: a new mapping
        # Read-only: the cached reader is shared by every task of this process, so a
        # task must not be able to change (its copy-on-write view of) the file
        # under the next one.
        r = _READERS[key] = _native.FileReader(path, read_only=True)
        while len(_READERS) > _MAX_READERS:
            _READERS.popitem(last=False)
        return r


def _numpy_dtype(name: str) -> np.dtype:
    from hurray._glue import ml_dtype

    try:
        return np.dtype(name)
    except TypeError:
        dt = ml_dtype(name)
        if dt is None:
            raise _native.UnsupportedError(f"dtype {name} has no NumPy dtype") from None
        return dt


class _TensorSource:
    """What ``dask.array.from_array`` slices: a tensor of a file, by path and name.
    Pickles as the path, the name, the shape and the dtype; ``self[box]`` (in a
    worker) returns a read-only zero-copy view of the worker's mapping."""

    def __init__(self, path: str, name: str, shape: tuple, dtype: np.dtype):
        self.path, self.name, self.shape, self.dtype = path, name, shape, dtype
        self.ndim = len(shape)

    def __getitem__(self, box: Any) -> np.ndarray:
        t = _reader(self.path)[self.name]
        a = np.asarray(t)  # read-only: the tensor is (see _reader)
        return a[box] if a.ndim else a  # a 0-d box would give a NumPy scalar


class _PartitionSource:
    """As :class:`_TensorSource` for a partition composite: ``self[box]`` for a
    box that is one member's returns that member's view."""

    def __init__(self, path: str, name: str, shape: tuple, dtype: np.dtype, boxes: list):
        self.path, self.name, self.shape, self.dtype = path, name, shape, dtype
        self.ndim = len(shape)
        self.index = {tuple(off): (i, tuple(shp)) for i, (off, shp) in enumerate(boxes)}

    def __getitem__(self, box: Any) -> np.ndarray:
        box = box if isinstance(box, tuple) else (box,)
        start = tuple(s.start or 0 for s in box)
        found = self.index.get(start)
        if found is None:
            raise IndexError(f"{box} is not the box of a member of {self.name!r}")
        i, shp = found
        a = np.asarray(_reader(self.path)._member(self.name, i))
        a.flags.writeable = False
        want = tuple(slice(0, (s.stop if s.stop is not None else n) - (s.start or 0))
                     for s, n in zip(box, shp))
        return a[want]


def _grid(shape: Sequence[int], boxes: list, name: str) -> tuple:
    """Dask chunks for partition member boxes that form a grid, else raises."""
    cuts = [sorted({off[d] for off, _ in boxes}) for d in range(len(shape))]
    chunks = []
    for d, starts in enumerate(cuts):
        ends = starts[1:] + [shape[d]]
        chunks.append(tuple(e - s for s, e in zip(starts, ends)))
    for off, shp in boxes:
        for d in range(len(shape)):
            k = cuts[d].index(off[d])
            if shp[d] != chunks[d][k]:
                raise _native.UnsupportedError(
                    f"the members of {name!r} do not form a grid (member at {off} has shape "
                    f"{shp}); dask.array needs grid chunks"
                )
    if np.prod([len(c) for c in chunks]) != len(boxes):
        raise _native.UnsupportedError(f"the members of {name!r} do not form a grid")
    return tuple(chunks)


def _one(path: str, r: "_native.FileReader", name: str, axis: int,
         chunk: Optional[int], partitions: set) -> Any:
    import dask.array as da
    from dask.base import tokenize

    if name in partitions:
        shape, dtype_name, boxes = r._partition(name)
        shape = tuple(shape)
        dtype = _numpy_dtype(dtype_name)
        src = _PartitionSource(path, name, shape, dtype, boxes)
        chunks = _grid(shape, boxes, name)
    else:
        t = r[name]
        if t.layout.name not in ("row_major", "col_major") or t.device.kind != "cpu":
            raise _native.UnsupportedError(
                f"{name!r}: from_hrry reads dense CPU tensors, not {t.layout.name} on "
                f"{t.device.kind}"
            )
        shape = tuple(t.shape)
        dtype = np.asarray(t).dtype
        src = _TensorSource(path, name, shape, dtype)
        if not shape:
            chunks = ()
        else:
            if not -len(shape) <= axis < len(shape):
                raise np.exceptions.AxisError(axis, len(shape))
            ax = axis % len(shape)
            row = max(1, int(np.prod(shape[:ax] + shape[ax + 1:])) * dtype.itemsize)
            step = chunk or max(1, DEFAULT_CHUNK_BYTES // row)
            chunks = tuple(shape[:ax]) + (step,) + tuple(shape[ax + 1:])
    return da.from_array(
        src,
        chunks=chunks,
        name=f"hurray-{tokenize(path, os.stat(path).st_mtime_ns, name, chunks)}",
        asarray=False,
        fancy=False,
        lock=False,
        meta=np.empty((0,) * len(shape), dtype=dtype),
    )


def from_hrry(
    path: Union[str, os.PathLike],
    name: Optional[str] = None,
    *,
    axis: int = 0,
    chunk: Optional[int] = None,
) -> Any:
    """A ``dask.array.Array`` over tensor ``name`` of the HRRYFILE at ``path``, or
    a ``dict`` name -> array of every dense tensor and partition composite in it
    (``name=None``), bool tensors left out: they are bit-packed, so each chunk
    would be an unpacked copy of the whole tensor; ask for one by name.

    A dense (row- or column-major, CPU) tensor is chunked along ``axis`` in runs
    of ``chunk`` elements (default: about 64 MiB per chunk). A partition composite
    is chunked by its members (their boxes must form a grid). Each chunk task
    carries only the path, the name and the chunk's box; the worker maps the file
    once (per process) and the chunk is a read-only zero-copy view of the mapping.

    Raises:
        KeyError: no tensor or composite ``name``.
        numpy.exceptions.AxisError: ``axis`` outside the tensor's dimensions.
        hurray.UnsupportedError: a sparse or device tensor, another composite
            rule, partition members that do not form a grid, a dtype without a
            NumPy dtype.
        hurray.FileError: the file cannot be read.
    """
    path = os.fspath(path)
    r = _native.FileReader(path)
    try:
        partitions = set(r._composites())
        if name is not None:
            if name not in partitions and name not in r:
                raise KeyError(name)
            return _one(path, r, name, axis, chunk, partitions)
        out = {}
        for n in r.names:
            t = r[n]
            if t.layout.name in ("row_major", "col_major") and t.dtype.name != "bool":
                out[n] = _one(path, r, n, axis, chunk, partitions)
        for n in sorted(partitions):
            try:
                out[n] = _one(path, r, n, axis, chunk, partitions)
            except _native.UnsupportedError:
                continue  # overlay/group composites have no single array
        return out
    finally:
        r.close()


# ---- writing ---------------------------------------------------------------


def _write_part(block: np.ndarray, part: str) -> str:
    """Task: saves one chunk as a one-tensor file ``part`` (the worker's memory
    holds the chunk it computed anyway)."""
    import hurray

    # Scratch: the composite written from it is what must survive.
    hurray.save(part, {"m": np.ascontiguousarray(block)}, durable=False)
    return part


def _assemble_partition(path: str, name: str, shape: list, parts: list, offsets: list,
                        workdir: str, durable: bool) -> str:
    """Task: one partition composite from the part files, each mapped read-only
    (mapped pages, not private memory), then the parts are removed."""
    import hurray

    members = [hurray.load(p, read_only=True)["m"] for p in parts]
    try:
        whole = hurray.Composite("partition", shape=shape, dtype=members[0].dtype,
                                 members=members, offsets=offsets)
        hurray.save(path, {name: whole}, durable=durable)
    finally:
        del members
        whole = None
        for p in parts:
            os.unlink(p)
        os.rmdir(workdir)
    return path


def _write_box(block: np.ndarray, raw: str, shape: tuple, dtype: str, box: tuple) -> int:
    """Task: writes one chunk into its box of the raw C-order file ``raw``
    (a shared mapping: page cache, not private memory)."""
    mm = np.memmap(raw, dtype=np.dtype(dtype), mode="r+", shape=shape)
    mm[box] = block
    mm.flush()
    del mm
    return 1


def _assemble_one(path: str, name: str, raw: str, shape: tuple, dtype: str, done: list,
                  workdir: str, durable: bool) -> str:
    """Task: one tensor over the raw file (mapped, read-only) saved to ``path``."""
    import hurray

    try:
        mm = np.memmap(raw, dtype=np.dtype(dtype), mode="r", shape=shape)
        hurray.save(path, {name: mm}, durable=durable)
        del mm
    finally:
        os.unlink(raw)
        os.rmdir(workdir)
    return path


def _save_small(value: np.ndarray, path: str, name: str, durable: bool) -> str:
    """Task: an empty or 0-d array saved as one tensor."""
    import hurray

    value = np.asarray(value)  # np.ascontiguousarray would make a 0-d array 1-d
    if not value.flags.c_contiguous:
        value = value.copy(order="C")
    hurray.save(path, {name: value}, durable=durable)
    return path


def to_hrry(
    array: Any,
    path: Union[str, os.PathLike],
    name: str,
    *,
    partition: bool = True,
    durable: bool = True,
    compute: bool = True,
) -> Any:
    """Writes the Dask array ``array`` to a new HRRYFILE at ``path`` from the
    workers, never holding the whole array in one process.

    ``partition=True``: each chunk becomes a member ``name/i`` of a partition
    composite ``name`` (shard offsets from the chunk grid); each worker saves the
    chunks it computed to part files beside ``path``, and one task writes the
    composite from their mappings and removes them. ``partition=False``: one
    tensor ``name``; each worker writes its chunks into a raw file beside
    ``path`` (a shared mapping), and one task saves it as one tensor from the
    mapping. Read it back with :func:`from_hrry` (or ``hurray.load`` for one tensor).
    ``durable`` is :func:`hurray.save`'s (the file is synced before it appears).

    Returns the path (``compute=True``) or the ``dask.delayed`` object that
    writes it.

    If a task fails, the scratch folder ``<path>.parts-<hex>`` beside ``path`` is
    left behind (remove it); nothing appears at ``path``.

    Raises:
        hurray.UnsupportedError: a dtype hurray has no element type for (on a
            worker, when computed).
        hurray.FileError: I/O.
    """
    import dask
    from dask import delayed

    path = os.path.abspath(os.fspath(path))
    shape = tuple(int(n) for n in array.shape)
    if 0 in shape or not shape:
        # Nothing to distribute (an empty or 0-d array): one small tensor.
        out = delayed(_save_small, pure=False)(array, path, name, durable)
        return dask.compute(out)[0] if compute else out
    workdir = f"{path}.parts-{uuid.uuid4().hex}"
    os.mkdir(workdir)
    blocks = array.to_delayed()
    starts = [np.cumsum((0,) + tuple(c))[:-1].tolist() for c in array.chunks]
    if partition:
        parts, offsets = [], []
        for idx in np.ndindex(*blocks.shape):
            part = os.path.join(workdir, f"{len(parts)}.hrry")
            parts.append(delayed(_write_part, pure=False)(blocks[idx], part))
            offsets.append([int(starts[d][k]) for d, k in enumerate(idx)])
        out = delayed(_assemble_partition, pure=False)(path, name, list(shape), parts, offsets,
                                                       workdir, durable)
    else:
        raw = os.path.join(workdir, "data.raw")
        dt = np.dtype(array.dtype)
        with open(raw, "wb") as f:
            f.truncate(int(np.prod(shape)) * dt.itemsize)
        done = []
        for idx in np.ndindex(*blocks.shape):
            box = tuple(slice(int(starts[d][k]), int(starts[d][k]) + int(array.chunks[d][k]))
                        for d, k in enumerate(idx))
            done.append(delayed(_write_box, pure=False)(blocks[idx], raw, shape, dt.str, box))
        out = delayed(_assemble_one, pure=False)(path, name, raw, shape, dt.str, done, workdir,
                                                 durable)
    if compute:
        return dask.compute(out)[0]
    return out
