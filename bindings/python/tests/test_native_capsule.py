"""The native capsule protocol: ``Tensor.__hurray__`` producer, ``from_hurray``
consumer, and a C consumer built here against include/hurray.h that links its own
copy of hurray-ffi."""

import ctypes
import gc
import shutil
import subprocess
import sysconfig

import pytest

import hurray
from hurray import _native
from conftest import REPO_ROOT, live_after_gc

PyCapsule_GetName = ctypes.pythonapi.PyCapsule_GetName
PyCapsule_GetName.restype = ctypes.c_char_p
PyCapsule_GetName.argtypes = [ctypes.py_object]
PyCapsule_GetContext = ctypes.pythonapi.PyCapsule_GetContext
PyCapsule_GetContext.restype = ctypes.c_void_p
PyCapsule_GetContext.argtypes = [ctypes.py_object]
PyCapsule_SetName = ctypes.pythonapi.PyCapsule_SetName
PyCapsule_SetName.restype = ctypes.c_int
PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def f32(values):
    import struct

    return struct.pack(f"<{len(values)}f", *values)


def test_capsule_name_pointer_and_no_context():
    t = hurray.Tensor(f32([1, 2, 3]), hurray.float32, [3])
    cap = t.__hurray__()
    assert type(cap).__name__ == "PyCapsule"
    assert PyCapsule_GetName(cap) == b"hurray_tensor_handle"
    assert PyCapsule_GetContext(cap) is None
    # the capsule's handle is a live native handle until the capsule goes away
    assert _native._live_objects() > 0
    del cap
    gc.collect()


def test_each_call_is_fresh_and_source_unaffected():
    t = hurray.arange(4, dtype=hurray.int32)
    a, b = t.__hurray__(), t.__hurray__(stream=7)
    assert a is not b
    u = hurray.from_hurray(t)
    v = hurray.from_hurray(obj=t)
    assert u.shape == v.shape == t.shape == (4,)
    assert t.dtype == u.dtype == hurray.int32


def test_round_trip_keeps_every_section_and_is_zero_copy(np):
    q = hurray.PerTensorAffine(0.5, 3)
    s = hurray.Statistics(nnz=3, value_min=0.0, value_max=2.0, value_abs_max=2.0)
    sh = hurray.Shard([8, 2], [4, 0])
    dev = hurray.Device("cuda", 3, "unified")
    t = hurray.Tensor(bytes(range(4)), hurray.int8, [2, 2], dev, quantization=q, statistics=s, shard=sh)
    u = hurray.from_hurray(t)
    assert u.quantization.scale == 0.5 and u.quantization.zero_point == 3
    assert u.statistics.nnz == 3 and u.statistics.computed_mask == 0x5
    assert u.shard.parent_shape == (8, 2) and u.shard.shard_offset == (4, 0)
    assert (u.device.kind, u.device.memory_class, u.device.device_id) == ("cuda", "unified", 0)
    assert u._buffer_address(0) == t._buffer_address(0)


def test_sparse_round_trip(np):
    vals = np.array([1.0, 2.0], dtype=np.float32)
    idx = np.array([[0, 1], [2, 0]], dtype=np.uint64)
    t = hurray.sparse_coo(vals, idx, [3, 2])
    u = hurray.from_hurray(t)
    assert u.layout == hurray.CooLayout(2)
    assert u.buffer_count == 2
    assert np.array_equal(np.asarray(u.values), vals)
    assert np.array_equal(np.asarray(u.indices), idx)


def test_consumed_wrong_name_and_non_participants():
    t = hurray.zeros([2])

    class Used:
        def __hurray__(self):
            c = t.__hurray__()
            assert PyCapsule_SetName(c, b"used_hurray_tensor_handle") == 0
            # the consumer now owns the handle; hand it back so it is not leaked
            PyCapsule_SetName(c, b"hurray_tensor_handle")
            self.keep = c
            PyCapsule_SetName(c, b"used_hurray_tensor_handle")
            return c

    u = Used()
    with pytest.raises(hurray.BufferError, match="already consumed"):
        hurray.from_hurray(u)
    PyCapsule_SetName(u.keep, b"hurray_tensor_handle")  # let its destructor free it
    del u

    class WrongName:
        def __hurray__(self):
            return PyCapsule_New(1, b"dltensor", None)

    with pytest.raises(hurray.BufferError, match="hurray_tensor_handle") as e:
        hurray.from_hurray(WrongName())
    assert str(e.value) == 'capsule is named "dltensor", not "hurray_tensor_handle"'

    class NoName:
        def __hurray__(self):
            return PyCapsule_New(1, None, None)

    with pytest.raises(hurray.BufferError, match="no name"):
        hurray.from_hurray(NoName())

    class NotACapsule:
        def __hurray__(self):
            return 42

    with pytest.raises(hurray.BufferError):
        hurray.from_hurray(NotACapsule())
    with pytest.raises(TypeError):
        hurray.from_hurray(object())
    with pytest.raises(TypeError):
        hurray.from_hurray(t.__hurray__())  # a bare capsule has no __hurray__


def test_abi_mismatch_leaves_capsule_unconsumed():
    # A fake handle whose frozen first field says ABI 9.
    fake = (ctypes.c_uint32 * 16)(9)
    holder = {}

    class Old:
        def __hurray__(self):
            c = PyCapsule_New(ctypes.addressof(fake), b"hurray_tensor_handle", None)
            holder["c"] = c
            return c

    with pytest.raises(hurray.UnsupportedError, match="9.*10|10.*9"):
        hurray.from_hurray(Old())
    assert PyCapsule_GetName(holder["c"]) == b"hurray_tensor_handle"


def test_unconsumed_capsule_releases_its_handle():
    t = hurray.ones([16])
    base = live_after_gc()
    cap = t.__hurray__()
    assert live_after_gc() > base
    del cap
    assert live_after_gc() == base


def test_names_that_must_not_exist():
    t = hurray.zeros([1])
    for name in ("__hurray_buffer__", "__hurray_sparse_buffer__", "__array_namespace__"):
        assert not hasattr(t, name)
    # hurray.Composite exists: python-api.md §10 allows adding it (ADR-036's sketch).
    for name in ("from_hurray_buffer", "SparseTensor", "int4"):
        assert not hasattr(hurray, name)


# ---------------------------------------------------------------- C consumer


@pytest.fixture(scope="module")
def consumer(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    cargo = shutil.which("cargo")
    header = REPO_ROOT / "include" / "hurray.h"
    if not (cc and cargo and header.exists()):
        pytest.skip("needs a C compiler, cargo and include/hurray.h")
    subprocess.run(
        [cargo, "build", "--quiet", "--release", "-p", "hurray-ffi"], cwd=REPO_ROOT, check=True
    )
    lib = REPO_ROOT / "target" / "release" / "libhurray_ffi.a"
    out = tmp_path_factory.mktemp("c") / "consumer.so"
    src = REPO_ROOT / "bindings" / "python" / "tests" / "c" / "consumer.c"
    subprocess.run(
        [cc, "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-o", str(out), str(src),
         f"-I{REPO_ROOT / 'include'}", f"-I{sysconfig.get_paths()['include']}",
         str(lib), "-lpthread", "-ldl", "-lm"],
        check=True,
    )
    nogil = ctypes.CDLL(str(out))  # calls through CDLL release the GIL
    nogil.release_on_native_thread.argtypes = [ctypes.c_void_p]
    nogil.release_on_native_thread.restype = ctypes.c_int
    dll = ctypes.PyDLL(str(out))
    dll.nogil = nogil
    dll.consume.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    dll.consume.restype = ctypes.c_int
    dll.release.argtypes = [ctypes.c_void_p]
    dll.release.restype = ctypes.c_int
    dll.live_objects.restype = ctypes.c_int64
    return dll


class Summary(ctypes.Structure):
    _fields_ = [
        ("abi_version", ctypes.c_uint32),
        ("type_tag", ctypes.c_uint8),
        ("layout_tag", ctypes.c_uint8),
        ("rank", ctypes.c_uint32),
        ("shape", ctypes.c_uint64 * 8),
        ("buffer_count", ctypes.c_uint64),
        ("byte_size0", ctypes.c_uint64),
        ("sum_f32", ctypes.c_double),
    ]


def test_c_consumer_reads_and_releases_exactly_once(consumer, np):
    import weakref

    class Owner(np.ndarray):
        """An ndarray subclass so the producer's memory can be watched with a weakref."""

    # 64-byte aligned, so the tensor wraps the array (keeps it alive), not a copy.
    arr = hurray.empty_aligned((3, 4), np.float32).view(Owner)
    arr[...] = np.arange(12, dtype=np.float32).reshape(3, 4)
    watch = weakref.ref(arr)
    t = hurray.from_numpy(arr)
    del arr
    cap = t.__hurray__()
    s = Summary()
    handle = ctypes.c_void_p()
    assert consumer.consume(cap, ctypes.byref(s), ctypes.byref(handle)) == 0
    assert PyCapsule_GetName(cap) == b"used_hurray_tensor_handle"
    assert s.abi_version == 10 and s.type_tag == 3 and s.layout_tag == 1
    assert (s.rank, list(s.shape[:2])) == (2, [3, 4])
    assert s.buffer_count == 1 and s.byte_size0 == 48
    assert s.sum_f32 == sum(range(12))
    # The consumer's copy of the library made none of these handles.
    assert consumer.live_objects() == 0
    del cap, t
    gc.collect()
    # The consumer still holds the handle: the producer's memory is alive.
    assert watch() is not None
    assert _native._live_objects() > 0
    assert consumer.release(handle) == 0
    gc.collect()
    assert watch() is None, "the producer's array was not released"
    assert live_after_gc() == 0


def test_c_consumer_refuses_a_consumed_capsule(consumer):
    t = hurray.ones([2], dtype=hurray.float32)
    cap = t.__hurray__()
    s, h = Summary(), ctypes.c_void_p()
    assert consumer.consume(cap, ctypes.byref(s), ctypes.byref(h)) == 0
    with pytest.raises(ValueError):
        consumer.consume(cap, ctypes.byref(s), ctypes.byref(h))
    assert consumer.release(h) == 0


def test_release_on_a_native_thread_takes_the_gil(consumer, np):
    import weakref

    class Owner(np.ndarray):
        pass

    arr = hurray.empty_aligned(1000, np.float32).view(Owner)  # wrapped, not copied
    arr[:] = 1
    watch = weakref.ref(arr)
    cap = hurray.from_numpy(arr).__hurray__()
    del arr
    s, h = Summary(), ctypes.c_void_p()
    assert consumer.consume(cap, ctypes.byref(s), ctypes.byref(h)) == 0
    del cap
    gc.collect()
    assert watch() is not None
    assert consumer.nogil.release_on_native_thread(h) == 0
    gc.collect()
    assert watch() is None
