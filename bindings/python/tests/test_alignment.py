"""ARCHITECTURE decision 5 in Python: a tensor never declares more alignment than its
memory has. Wrapping NumPy (or DLPack, pickled) memory is zero-copy when its address
is a multiple of the 64 bytes the buffer declares, one copy into aligned memory
otherwise, and ``copy=False`` refuses instead; ``hurray.empty_aligned`` and
``hurray.zeros_aligned`` allocate NumPy arrays that are wrapped without a copy."""

import pickle

import pytest

import hurray
from hurray import _native

np = pytest.importorskip("numpy")


def addr(a):
    return a.__array_interface__["data"][0]


def misaligned(n=63, dtype=np.float32):
    """``n`` elements starting one element past a 64-byte boundary: never aligned."""
    a = hurray.empty_aligned(n + 1, dtype)[1:]
    a[:] = np.arange(n)
    assert addr(a) % 64 == np.dtype(dtype).itemsize
    return a


def test_the_measured_case_is_copied_into_aligned_memory():
    a = np.arange(64, dtype=np.float32)[1:]  # the example: addr % 64 != 0
    assert addr(a) % 64 != 0
    t = hurray.from_numpy(a)
    assert t._buffer_alignment(0) == 64
    assert t._buffer_address(0) % 64 == 0 and t._buffer_address(0) != addr(a)
    assert np.asarray(t).tolist() == a.tolist()
    # A copy: neither side sees the other's writes.
    a[0] = -1
    assert np.asarray(t)[0] == 1.0
    np.asarray(t)[1] = -2
    assert a[1] == 2.0
    assert not t.read_only


def test_an_aligned_array_is_wrapped_without_a_copy():
    a = hurray.zeros_aligned((3, 5), np.float32)
    for copy in (None, False):
        t = hurray.from_numpy(a, copy=copy)
        assert t._buffer_address(0) == addr(a) and t._buffer_alignment(0) == 64
        np.asarray(t)[2, 4] = 7
        assert a[2, 4] == 7
    f = hurray.zeros_aligned((3, 5), np.int16, order="F")
    t = hurray.from_numpy(f, copy=False)
    assert t.layout == hurray.ColMajorLayout() and t._buffer_address(0) == addr(f)


def test_copy_true_always_copies_into_aligned_memory():
    a = hurray.zeros_aligned(8, np.float64)
    t = hurray.from_numpy(a, copy=True)
    assert t._buffer_address(0) != addr(a) and t._buffer_address(0) % 64 == 0
    np.asarray(t)[0] = 5
    assert a[0] == 0


def test_copy_false_refuses_misaligned_memory_and_says_how_to_get_aligned_memory():
    a = misaligned()
    with pytest.raises(hurray.CopyRequiredError, match=r"4-byte aligned.*64 bytes.*empty_aligned"):
        hurray.from_numpy(a, copy=False)
    b = misaligned(8, np.float64)
    with pytest.raises(hurray.CopyRequiredError, match="8-byte aligned"):
        hurray.from_numpy(b, copy=False)
    # Packing a sub-byte type is a copy too.
    with pytest.raises(hurray.CopyRequiredError, match="bit-packed"):
        hurray.from_numpy(hurray.zeros_aligned(4, np.bool_), copy=False)


def test_empty_arrays_meet_any_alignment():
    e = np.empty((2, 0), np.float32)
    t = hurray.from_numpy(e, copy=False)
    assert t.shape == (2, 0) and t._buffer_alignment(0) == 1


def test_zero_d_arrays_follow_the_rule():
    s = misaligned(3)[1:2].reshape(())
    assert s.shape == () and addr(s) % 64 != 0
    t = hurray.from_numpy(s)
    assert t.shape == () and t._buffer_address(0) % 64 == 0 and np.asarray(t).item() == 1.0
    with pytest.raises(hurray.CopyRequiredError):
        hurray.from_numpy(s, copy=False)
    z = hurray.zeros_aligned((), np.float64)
    assert hurray.from_numpy(z, copy=False)._buffer_address(0) == addr(z)


def test_a_read_only_array_stays_read_only_through_the_alignment_copy():
    a = misaligned()
    a.flags.writeable = False
    t = hurray.from_numpy(a)
    assert t.read_only and t._buffer_address(0) != addr(a) and t._buffer_address(0) % 64 == 0
    with pytest.raises(ValueError):
        np.asarray(t)[0] = 1
    # An explicit copy is the caller's own: writable.
    u = hurray.from_numpy(a, copy=True)
    assert not u.read_only
    np.asarray(u)[0] = 1


def test_sparse_constructors_follow_the_rule():
    vals = misaligned(2)
    idx = hurray.zeros_aligned((2, 2), np.uint64)
    idx[1] = 1
    t = hurray.sparse_coo(vals, idx, [2, 2])
    assert t._buffer_address(0) % 64 == 0 and t._buffer_address(0) != addr(vals)
    assert t._buffer_address(1) == addr(idx)
    assert np.asarray(t.values).tolist() == [0.0, 1.0]
    with pytest.raises(hurray.CopyRequiredError):
        hurray.sparse_coo(vals, idx, [2, 2], copy=False)
    sparse = pytest.importorskip("scipy.sparse")
    m = sparse.csr_matrix(np.array([[1.0, 0, 2], [0, 0, 3]]))
    m.data = misaligned(3, np.float64) + 1
    m.indices = m.indices.astype(np.uint64)
    m.indptr = m.indptr.astype(np.uint64)
    t = hurray.from_scipy(m)
    assert all(t._buffer_address(i) % 64 == 0 for i in range(3))
    assert np.asarray(t.values).tolist() == m.data.tolist()
    aligned = {k: hurray.empty_aligned(v.shape, v.dtype) for k, v in
               (("data", m.data), ("indices", m.indices), ("indptr", m.indptr))}
    for k, v in aligned.items():
        v[...] = getattr(m, k)
        setattr(m, k, v)
    t = hurray.from_scipy(m, copy=False)
    assert t._buffer_address(0) == addr(m.data) and t._buffer_address(2) == addr(m.indptr)


def test_dlpack_and_asarray_honour_copy():
    a = misaligned()
    t = hurray.from_dlpack(a)
    assert t._buffer_address(0) % 64 == 0 and np.asarray(t).tolist() == a.tolist()
    with pytest.raises(hurray.CopyRequiredError):
        hurray.from_dlpack(a, copy=False)
    with pytest.raises(hurray.CopyRequiredError):
        hurray.asarray(a, copy=False)
    b = hurray.zeros_aligned(16, np.float32)
    assert hurray.from_dlpack(b, copy=False)._buffer_address(0) == addr(b)
    assert hurray.asarray(b, copy=False)._buffer_address(0) == addr(b)
    c = hurray.asarray(b, copy=True)
    assert c._buffer_address(0) != addr(b) and c._buffer_address(0) % 64 == 0
    # The capsule importer (what NumPy cannot import goes there) follows the rule.
    u = _native._from_dlpack_capsule(a.__dlpack__(max_version=(1, 0)))
    assert u._buffer_address(0) % 64 == 0 and np.asarray(u).tolist() == a.tolist()
    with pytest.raises(hurray.CopyRequiredError):
        _native._from_dlpack_capsule(a.__dlpack__(max_version=(1, 0)), False)
    r = misaligned(8, np.int32)
    r.flags.writeable = False
    v = _native._from_dlpack_capsule(r.__dlpack__(max_version=(1, 0)))
    assert v.read_only and v._buffer_address(0) % 64 == 0 and np.asarray(v).tolist() == list(range(8))


def test_unpickled_out_of_band_buffers_follow_the_rule():
    t = hurray.arange(16, dtype=hurray.float32)
    bufs = []
    payload = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    raw = np.frombuffer(bufs[0].raw(), np.uint8)
    odd = hurray.empty_aligned(raw.size + 8, np.uint8)[8:]  # 8-byte aligned, like a small Ray frame
    odd[:] = raw
    u = pickle.loads(payload, buffers=[odd])
    assert not u.read_only and u._buffer_address(0) % 64 == 0 and u._buffer_address(0) != addr(odd)
    assert np.asarray(u).tolist() == list(range(16))
    odd.flags.writeable = False
    u = pickle.loads(payload, buffers=[odd])
    assert u.read_only and u._buffer_address(0) % 64 == 0


def test_save_writes_a_misaligned_array_as_it_is(tmp_path):
    a = misaligned(1000)
    f = np.asfortranarray(misaligned(12).reshape(3, 4))
    p = tmp_path / "m.hrry"
    hurray.save(p, {"a": a, "f": f, "t": hurray.from_numpy(a)})
    back = hurray.load(p)
    for k in ("a", "t"):
        assert back[k]._buffer_address(0) % 64 == 0 and np.asarray(back[k]).tolist() == a.tolist()
    assert back["f"].layout == hurray.ColMajorLayout()
    np.testing.assert_array_equal(np.asarray(back["f"]), f)


DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
SHAPES = [(), (0,), (2, 0, 3), (1,), (7,), (3, 5), (2, 3, 4), 9]


@pytest.mark.parametrize("dtype", DTYPES)
def test_allocators_give_aligned_arrays_of_every_dtype_and_shape(dtype):
    for shape in SHAPES:
        for order in ("C", "F"):
            want = (shape,) if isinstance(shape, int) else shape
            e = hurray.empty_aligned(shape, dtype, order=order)
            z = hurray.zeros_aligned(shape, dtype, order=order)
            for x in (e, z):
                assert x.shape == want and x.dtype == np.dtype(dtype), (shape, order)
                assert addr(x) % 64 == 0, (dtype, shape, order)
                assert x.flags.writeable
                assert x.flags.c_contiguous if order == "C" else x.flags.f_contiguous
            assert not z.any()
            if dtype != "bool" and z.size:
                t = hurray.from_numpy(z, copy=False)
                assert t._buffer_address(0) == addr(z) and t.shape == want


def test_allocators_take_hurray_dtypes_and_refuse_bad_arguments():
    assert hurray.empty_aligned(3, hurray.float32).dtype == np.float32
    assert hurray.zeros_aligned((2, 2), hurray.int64).dtype == np.int64
    assert hurray.zeros_aligned(4).dtype == np.float64  # NumPy's default
    with pytest.raises(ValueError, match="negative"):
        hurray.empty_aligned((2, -1), np.float32)
    with pytest.raises(ValueError, match="order"):
        hurray.empty_aligned(2, np.float32, order="K")
    with pytest.raises(TypeError):
        hurray.empty_aligned(2, "not a dtype")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    b = hurray.zeros_aligned((4, 4), hurray.bfloat16)
    assert b.dtype == ml_dtypes.bfloat16 and addr(b) % 64 == 0
    assert hurray.from_numpy(b, copy=False)._buffer_address(0) == addr(b)


def test_unpickling_declares_only_the_alignment_the_new_memory_has():
    import struct

    t = hurray.arange(256, dtype=hurray.float32)  # one buffer of 1024 bytes
    d = t._descriptor_bytes()
    # The pickled tensor declared 4096 (a file written with a larger data alignment):
    # byte_size (u64 LE) then alignment (u32 LE) in its buffer handle.
    handle = struct.pack("<QI", 1024, 64)
    assert d.count(handle) == 1
    d4k = d.replace(handle, struct.pack("<QI", 1024, 4096))
    data = np.asarray(t).view(np.uint8)
    # In-band bytes land in a 64-byte-aligned copy: it declares 4096 only when the
    # copy happens to lie on a 4096-byte boundary, else 64; never more than it has.
    u = _native._rebuild(d4k, [data.tobytes()], 0)
    declared, at = u._buffer_alignment(0), u._buffer_address(0)
    assert at % 64 == 0 and at % declared == 0
    assert declared == (4096 if at % 4096 == 0 else 64)
    assert np.asarray(u).tolist() == list(range(256))
    # Memory that does meet 4096 is wrapped and keeps the declaration.
    block = hurray.empty_aligned(1024 + 4096, np.uint8)
    start = -addr(block) % 4096
    page = block[start:start + 1024]
    page[:] = data
    w = _native._rebuild(d4k, [page], 0)
    assert w._buffer_alignment(0) == 4096 and w._buffer_address(0) == addr(page)
