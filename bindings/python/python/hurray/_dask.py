"""Dask integration (issue 19): ``dask.sizeof`` for tensors and Dask
``distributed`` serializers that send a tensor's buffers as out-of-band frames on
every connection (the scheduler's included). Not public API; nothing here needs
user code:

- ``dask.sizeof``: the ``dask.sizeof`` entry point of this package
  (:func:`sizeof_plugin`), which Dask calls when ``dask.sizeof`` is imported;
  also registered at ``import hurray`` when Dask is already loaded.
- ``distributed``: registered at ``import hurray`` when
  ``distributed.protocol.serialize`` is loaded, else right after that module is
  imported (a one-shot import hook, :class:`_AfterImport`; ``distributed`` offers no
  entry point for serializers), and by every pickling of a tensor as a fallback.

What travels: a header with the encoded descriptor, the device id and whether the
tensor is writable; one frame per buffer, viewing the tensor's memory (no copy on
the sending side). The receiving side wraps the frames (no copy) when they are
64-byte aligned, except that a writable tensor whose frame arrives read-only is
copied once, as Dask does for NumPy arrays; a read-only tensor stays read-only. A
frame below 64-byte alignment is copied once (ARCHITECTURE decision 5): over TCP
``distributed`` reads each large frame into its own ``numpy.empty`` buffer, which
is 16-byte aligned, so a large tensor received over TCP is copied once.
"""

from __future__ import annotations

import sys
from typing import Any

from hurray import _native

_SERIALIZE_MODULE = "distributed.protocol.serialize"
_SIZEOF_MODULE = "dask.sizeof"
_done: set = set()


def tensor_sizeof(t: "_native.Tensor") -> int:
    """``dask.sizeof`` of a tensor: its buffers' bytes (:attr:`Tensor.nbytes`)."""
    return int(t.nbytes)


def sizeof_plugin(sizeof: Any) -> None:
    """Entry point (group ``dask.sizeof``): registers :func:`tensor_sizeof` on
    Dask's ``sizeof`` dispatch, and the ``distributed`` serializers when possible."""
    sizeof.register(_native.Tensor)(tensor_sizeof)
    _done.add(_SIZEOF_MODULE)
    register_distributed()


def serialize(t: "_native.Tensor", context: Any = None) -> tuple[dict, list]:
    """Dask ``distributed`` serializer: ``(header, frames)`` with one frame per
    buffer viewing the tensor's memory (no copy)."""
    try:
        import numpy as np
    except ImportError:
        np = None
    frames: list[Any] = []
    for i in range(t.buffer_count):
        if np is None:
            frames.append(t._buffer_bytes(i))
        else:
            frames.append(memoryview(np.from_dlpack(t._host_buffer(i))).cast("B"))
    header = {
        "descriptor": t._descriptor_bytes(),
        "device_id": t.device.device_id,
        "writeable": not t.read_only,
    }
    return header, frames


def deserialize(header: dict, frames: list) -> "_native.Tensor":
    """Dask ``distributed`` deserializer: wraps the frames without copying when
    64-byte aligned (a frame below that, and a writable tensor's read-only frame,
    is copied once; see the module doc)."""
    return _native._rebuild(
        header["descriptor"], list(frames), header["device_id"], not header["writeable"]
    )


def register_sizeof() -> bool:
    """Registers :func:`tensor_sizeof` if ``dask.sizeof`` is loaded; True when done."""
    if _SIZEOF_MODULE in _done:
        return True
    mod = sys.modules.get(_SIZEOF_MODULE)
    sizeof = getattr(mod, "sizeof", None)
    if sizeof is None:
        return False
    sizeof.register(_native.Tensor)(tensor_sizeof)
    _done.add(_SIZEOF_MODULE)
    return True


def register_distributed() -> bool:
    """Registers :func:`serialize`/:func:`deserialize` with ``distributed`` if
    its serialization module is loaded (fully); True when done."""
    if _SERIALIZE_MODULE in _done:
        return True
    mod = sys.modules.get(_SERIALIZE_MODULE)
    ser = getattr(mod, "dask_serialize", None)
    de = getattr(mod, "dask_deserialize", None)
    if ser is None or de is None:
        return False
    ser.register(_native.Tensor)(serialize)
    de.register(_native.Tensor)(deserialize)
    _done.add(_SERIALIZE_MODULE)
    return True


class _AfterImport:
    """A one-shot ``sys.meta_path`` finder: when ``distributed.protocol.serialize``
    or ``dask.sizeof`` is imported, lets the other finders find it and runs the
    matching registration right after the module has executed. Removes itself when
    both are done. It never changes what is imported."""

    _HOOKS = {_SERIALIZE_MODULE: register_distributed, _SIZEOF_MODULE: register_sizeof}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        hook = self._HOOKS.get(name)
        if hook is None or name in _done:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        inner = getattr(loader, "exec_module", None)
        if inner is None:
            return spec
        me = self

        def exec_module(module: Any) -> None:
            inner(module)
            hook()
            if all(n in _done for n in me._HOOKS) and me in sys.meta_path:
                sys.meta_path.remove(me)

        try:
            loader.exec_module = exec_module  # this module's own loader instance
        except (AttributeError, TypeError):
            pass
        return spec


def install() -> None:
    """At ``import hurray``: registers with Dask and ``distributed`` where they are
    loaded, and watches for their import otherwise."""
    register_sizeof()
    register_distributed()
    if not all(n in _done for n in _AfterImport._HOOKS):
        if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
            sys.meta_path.insert(0, _AfterImport())
