"""Issue 19, Build 1: a tensor knows whether its memory is read-only, and no export
of a read-only tensor is writable (NumPy, DLPack, views, pickles)."""

import pickle

import numpy as np
import pytest

import hurray
from hurray import _native


def ro_array(n=16, dtype=np.float32):
    # 64-byte aligned: wrapped without a copy (a NumPy allocation may be copied).
    a = hurray.empty_aligned(n, dtype)
    a[:] = np.arange(n)
    a.flags.writeable = False
    return a


def assert_no_write(t):
    """Every export of ``t`` refuses writes; the memory is unchanged."""
    before = np.asarray(t).copy()
    a = np.asarray(t)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[...] = 0
    d = np.from_dlpack(t)
    assert not d.flags.writeable
    with pytest.raises(ValueError):
        d[...] = 0
    b = np.asarray(t.buffer(0))
    assert not b.flags.writeable
    with pytest.raises(ValueError):
        b[0] = 1
    assert t.buffer(0).read_only
    assert np.array_equal(np.asarray(t), before)


def test_writable_is_the_default():
    t = hurray.from_numpy(np.arange(4.0))
    assert not t.read_only
    np.asarray(t)[0] = 7
    assert np.asarray(t)[0] == 7
    assert not hurray.arange(3).read_only


def test_from_numpy_of_a_read_only_array_is_read_only_and_zero_copy():
    a = ro_array()
    t = hurray.from_numpy(a)
    assert t.read_only
    assert t._buffer_address(0) == a.ctypes.data
    assert_no_write(t)
    # Fortran order too; a packed (sub-byte) copy is the tensor's own, writable.
    f = np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))
    f.flags.writeable = False
    assert hurray.from_numpy(f).read_only
    b = np.array([True, False, True])
    b.flags.writeable = False
    assert not hurray.from_numpy(b).read_only


def test_frombuffer_over_bytes_is_read_only():
    raw = bytes(range(8))
    t = hurray.from_numpy(np.frombuffer(raw, dtype=np.uint8))
    assert t.read_only
    with pytest.raises(ValueError):
        np.asarray(t)[0] = 9
    assert raw == bytes(range(8))


def test_dlpack_versioned_capsule_carries_the_read_only_flag():
    t = hurray.from_numpy(ro_array(8))
    a = np.from_dlpack(t)  # NumPy asks for DLPack 1.x
    assert not a.flags.writeable and a.ctypes.data == t._buffer_address(0)
    # A legacy capsule has no flag: the consumer gets a copy; copy=False refuses.
    with pytest.raises(BufferError):
        t.__dlpack__(copy=False)
    cap = t.__dlpack__()
    u = _native._from_dlpack_capsule(cap)
    assert u._buffer_address(0) != t._buffer_address(0)
    np.asarray(u)[0] = 42  # the copy is writable; the original is unchanged
    assert np.asarray(t)[0] == 0


def test_importing_a_read_only_dlpack_capsule_wraps_it_read_only():
    a = ro_array(8, np.int32)
    cap = a.__dlpack__(max_version=(1, 0))
    t = _native._from_dlpack_capsule(cap)
    assert t.read_only and t._buffer_address(0) == a.ctypes.data
    assert_no_write(t)
    t2 = hurray.from_dlpack(a)
    assert t2.read_only and t2._buffer_address(0) == a.ctypes.data


def test_native_capsule_keeps_the_flag():
    t = hurray.from_numpy(ro_array(4))
    u = hurray.from_hurray(t)
    assert u is not t and u.read_only
    assert_no_write(u)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickling_keeps_the_flag(protocol):
    t = hurray.from_numpy(ro_array(32))
    u = pickle.loads(pickle.dumps(t, protocol=protocol))
    assert u.read_only
    assert np.asarray(u).tolist() == list(range(32))
    assert_no_write(u)


def test_out_of_band_read_only_buffer_is_wrapped_without_a_copy():
    a = ro_array(64)
    t = hurray.from_numpy(a)
    bufs = []
    payload = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    assert len(bufs) == 1 and bufs[0].raw().readonly
    u = pickle.loads(payload, buffers=bufs)
    assert u.read_only and u._buffer_address(0) == a.ctypes.data
    assert_no_write(u)
    # A writable tensor whose out-of-band buffer comes back read-only (an object
    # store): wrapped, no copy, and read-only.
    w = hurray.from_numpy(np.arange(64, dtype=np.float32))
    bufs = []
    payload = pickle.dumps(w, protocol=5, buffer_callback=bufs.append)
    u = pickle.loads(payload, buffers=[memoryview(b).toreadonly() for b in bufs])
    assert u.read_only and u._buffer_address(0) == w._buffer_address(0)
    assert_no_write(u)
    # ... and writable ones stay writable and shared.
    u = pickle.loads(payload, buffers=bufs)
    assert not u.read_only and u._buffer_address(0) == w._buffer_address(0)


def test_multiprocessing_pickler_keeps_the_flag():
    from multiprocessing.reduction import ForkingPickler

    a = np.arange(1 << 18, dtype=np.float32)  # 1 MiB: the memfd path
    a.flags.writeable = False
    t = hurray.from_numpy(a)
    u = pickle.loads(ForkingPickler.dumps(t))
    assert u.read_only and np.array_equal(np.asarray(u), a)
    with pytest.raises(ValueError):
        np.asarray(u)[0] = 1
    small = pickle.loads(ForkingPickler.dumps(hurray.from_numpy(ro_array(4))))
    assert small.read_only


def test_load_read_only(tmp_path):
    p = tmp_path / "f.hrry"
    hurray.save(str(p), {"x": np.arange(10, dtype=np.int64), "y": np.ones((2, 3))})
    got = hurray.load(str(p), read_only=True)
    assert all(t.read_only for t in got.values())
    for t in got.values():
        assert_no_write(t)
    got = hurray.load(str(p), names=["x"], read_only=True)
    assert got["x"].read_only
    assert not hurray.load(str(p))["x"].read_only
    u = pickle.loads(pickle.dumps(hurray.load(str(p), read_only=True)["x"], protocol=5))
    assert u.read_only and np.asarray(u).tolist() == list(range(10))


def test_bfloat16_bits_view_is_read_only():
    ml = pytest.importorskip("ml_dtypes")
    a = np.arange(4, dtype=ml.bfloat16)
    a.flags.writeable = False
    t = hurray.from_numpy(a)
    assert t.read_only and t._as_bits().read_only
    v = np.asarray(t)
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0] = 1
