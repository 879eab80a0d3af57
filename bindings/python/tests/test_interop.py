"""NumPy, DLPack, SciPy and PyTorch interop; zero-copy asserted by pointer equality."""

import pytest

import hurray

np = pytest.importorskip("numpy")


def addr(a):
    return a.__array_interface__["data"][0]


def test_from_numpy_then_asarray_is_zero_copy_both_ways(aligned):
    a = aligned(np.arange(12, dtype=np.float32).reshape(3, 4))
    t = hurray.from_numpy(a)
    b = np.asarray(t)
    assert addr(b) == addr(a) == t._buffer_address(0)
    assert (t.shape, t.dtype) == ((3, 4), hurray.float32)
    b[0, 0] = 42  # views are writable and shared
    assert a[0, 0] == 42


def test_numpy_from_dlpack_of_a_tensor_is_zero_copy():
    t = hurray.arange(10, dtype=hurray.int16)
    a = np.from_dlpack(t)
    assert addr(a) == t._buffer_address(0) and a.dtype == np.int16 and a.tolist() == list(range(10))


def test_hurray_from_dlpack_of_an_array_is_zero_copy(aligned):
    a = aligned(np.linspace(0, 1, 7))
    t = hurray.from_dlpack(a)
    assert t._buffer_address(0) == addr(a)
    u = hurray.from_dlpack(t)
    assert u._buffer_address(0) == addr(a)


def test_array_keeps_the_tensor_alive():
    a = np.asarray(hurray.arange(1000, dtype=hurray.float64))
    import gc

    gc.collect()
    assert a[-1] == 999.0 and a.sum() == sum(range(1000))


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                                  "float16", "float32", "float64", "complex64", "complex128"])
def test_dtype_mapping(name):
    a = np.ones(3, dtype=name)
    t = hurray.from_numpy(a)
    assert t.dtype.name == name
    assert np.asarray(t).dtype == np.dtype(name)


def test_array_protocol_options():
    t = hurray.arange(4, dtype=hurray.int32)
    cast = t.__array__(dtype=np.float64)
    assert cast.dtype == np.float64 and cast.tolist() == [0, 1, 2, 3]
    with pytest.raises(hurray.CopyRequiredError):
        t.__array__(dtype=np.float64, copy=False)
    assert addr(t.__array__(copy=False)) == t._buffer_address(0)
    assert addr(t.__array__(copy=True)) != t._buffer_address(0)
    col = hurray.Tensor(np.arange(6, dtype=np.float32).tobytes(), hurray.float32, [2, 3], layout=hurray.ColMajorLayout())
    assert np.asarray(col).tolist() == [[0, 2, 4], [1, 3, 5]]
    st = hurray.Tensor(np.arange(6, dtype=np.int8).tobytes(), hurray.int8, [2, 2], layout=hurray.StridedLayout([1, 2]))
    assert np.asarray(st).tolist() == [[0, 2], [1, 3]]
    # A strided view reaching before buffer 0 is refused when built, so DLPack never
    # exports an out-of-bounds view.
    with pytest.raises(hurray.InvalidDescriptorError, match="before buffer 0"):
        hurray.Tensor(np.arange(4, dtype=np.int8).tobytes(), hurray.int8, [2], layout=hurray.StridedLayout([-1]))


def test_array_and_dlpack_rejections():
    coo = hurray.sparse_coo(np.ones(2, np.float32), np.array([[0, 0], [1, 1]], np.uint64), [3, 3])
    with pytest.raises(hurray.UnsupportedError, match="coo"):
        np.asarray(coo)
    with pytest.raises(BufferError, match="coo"):
        coo.__dlpack__()
    b = hurray.ones([3], dtype=hurray.bool)
    # bool is bit-packed: NumPy gets an unpacked copy (issue 14), never a view.
    assert np.asarray(b).tolist() == [True, True, True]
    with pytest.raises(hurray.CopyRequiredError, match="bool"):
        np.asarray(b, copy=False)
    with pytest.raises(BufferError):
        b.__dlpack__()
    with pytest.raises(hurray.UnsupportedError):
        np.asarray(hurray.zeros([2], dtype=hurray.dtype.float128))
    with pytest.raises(hurray.UnsupportedError):
        np.asarray(hurray.zeros([2], device=hurray.device.cuda))
    tiled = hurray.Tensor(bytes(16), hurray.uint8, [4, 4], layout=hurray.TiledLayout([2, 2]))
    with pytest.raises(hurray.UnsupportedError):
        tiled.__dlpack__()
    with pytest.raises(TypeError):
        hurray.zeros([1]).__dlpack__(None)  # keyword-only


def test_dlpack_device_and_capsules():
    t = hurray.zeros([2], device=hurray.Device("cuda", 0, "host_pinned"))
    assert t.__dlpack_device__() == (3, 0)
    assert hurray.zeros([1]).__dlpack_device__() == (1, 0)
    assert hurray.Tensor(bytes(1), hurray.uint8, [1], hurray.Device("rocm", 2)).__dlpack_device__() == (10, 2)
    with pytest.raises(hurray.UnsupportedError):
        hurray.zeros([1], device=hurray.Device("cuda", 0, "peer")).__dlpack_device__()
    cap = hurray.zeros([1]).__dlpack__(max_version=(1, 0), stream=-1)
    assert "dltensor_versioned" in repr(cap)
    assert "dltensor" in repr(hurray.zeros([1]).__dlpack__())


def test_from_numpy_rules():
    with pytest.raises(hurray.UnsupportedError, match="Fortran-contiguous"):
        hurray.from_numpy(np.arange(12.0).reshape(3, 4)[:, ::2])
    with pytest.raises(hurray.UnsupportedError):
        hurray.from_numpy(np.array(["a"]))
    with pytest.raises(hurray.UnsupportedError):
        hurray.from_numpy(np.arange(3, dtype=">f4"))
    with pytest.raises(AttributeError):
        hurray.from_numpy([1, 2])
    s = hurray.from_numpy(np.float32(2.5))
    assert s.shape == () and np.asarray(s).item() == 2.5
    b = hurray.from_numpy(np.array([True, False, True]))
    assert b.dtype == hurray.bool and b.buffer_count == 1 and bytes(np.asarray(b.buffer(0))) == b"\x05"


def test_asarray():
    t = hurray.arange(3)
    assert hurray.asarray(t)._buffer_address(0) == t._buffer_address(0)
    assert hurray.asarray(t, copy=True)._buffer_address(0) != t._buffer_address(0)
    assert np.asarray(hurray.asarray([1, 2])).tolist() == [1, 2] and hurray.asarray([1, 2]).dtype == hurray.int64
    assert hurray.asarray([1.5]).dtype == hurray.float64
    assert hurray.asarray(t, dtype=hurray.float32).dtype == hurray.float32
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.asarray([1], dtype="float32")
    # bfloat16 and int4 come through ml_dtypes (issue 14); float128 has no NumPy form.
    assert np.asarray(hurray.asarray([1.5], dtype=hurray.bfloat16)).tolist() == [1.5]
    assert hurray.asarray([-3], dtype=hurray.dtype.int4).dtype == hurray.dtype.int4
    with pytest.raises(hurray.UnsupportedError):
        hurray.asarray([1], dtype=hurray.dtype.float128)
    with pytest.raises(hurray.CopyRequiredError):
        hurray.asarray([1, 2], copy=False)


def test_sparse_coo_rules(aligned):
    vals, idx = aligned(np.ones(2, np.float32)), aligned(np.array([[0, 0], [1, 1]], np.uint64))
    t = hurray.sparse_coo(vals, idx, [2, 2])
    assert t.layout == hurray.CooLayout(2, is_sorted=False) and t._buffer_address(1) == addr(idx)
    assert np.asarray(t.indices).tolist() == [[0, 0], [1, 1]]
    for args, exc in [
        ((vals, idx, [-1, 2]), hurray.InvalidDescriptorError),
        ((vals, np.asfortranarray(np.zeros((2, 2), np.uint64)), [2, 2]), hurray.UnsupportedError),
        ((vals, idx, [2, 2, 2]), hurray.InvalidDescriptorError),
        ((vals, idx.astype(np.int64), [2, 2]), hurray.UnsupportedError),
        ((np.ones(4, np.float32)[::2], idx, [2, 2]), hurray.UnsupportedError),
        ((np.ones(3, np.float32), idx, [2, 2]), hurray.InvalidDescriptorError),
        ((np.array(["a", "b"]), idx, [2, 2]), hurray.UnsupportedError),
    ]:
        with pytest.raises(exc):
            hurray.sparse_coo(*args)


def test_scipy_round_trip(aligned):
    sparse = pytest.importorskip("scipy.sparse")
    dense = np.array([[1.0, 0, 2], [0, 0, 3]])
    m = sparse.csr_matrix(dense)
    m.data = aligned(m.data)
    m.indices = aligned(m.indices.astype(np.uint64))
    m.indptr = aligned(m.indptr.astype(np.uint64))
    t = hurray.from_scipy(m)
    assert t.layout == hurray.CsrLayout(3) and t._buffer_address(0) == addr(m.data)
    back = t.to_scipy()
    # SciPy's kernels want int32/int64 indices: compare through a converted copy.
    as_int = sparse.csr_matrix((back.data, back.indices.astype(np.int64), back.indptr.astype(np.int64)), shape=back.shape)
    assert (as_int.toarray() == dense).all() and back.format == "csr"
    c = sparse.csc_matrix(dense)
    c.indices, c.indptr = c.indices.astype(np.uint64), c.indptr.astype(np.uint64)
    assert hurray.from_scipy(c).to_scipy().format == "csc"
    with pytest.raises(hurray.UnsupportedError, match="sparse_coo"):
        hurray.from_scipy(sparse.coo_matrix(dense))
    with pytest.raises(hurray.UnsupportedError):
        hurray.from_scipy(sparse.csr_matrix(dense))  # int32 indices
    with pytest.raises(AttributeError):
        hurray.from_scipy(np.zeros(2))
    with pytest.raises(hurray.UnsupportedError):
        hurray.sparse_coo(np.ones(1, np.float32), np.zeros((1, 2), np.uint64), [2, 2]).to_scipy()
    with pytest.raises(hurray.UnsupportedError):
        hurray.zeros([2]).to_scipy()


def test_bad_csr_index_arrays_never_reach_scipy():
    """Constructors and to_scipy raise InvalidDescriptorError naming the content rule."""
    sparse = pytest.importorskip("scipy.sparse")
    m = sparse.csr_matrix(np.array([[1.0, 0, 2], [0, 0, 3]]))
    # Assigned after construction: SciPy does not check them (check_format is not rerun).
    m.indices = np.array([0, 2, 2], np.uint64)
    m.indptr = np.array([0, 2, 1], np.uint64)
    with pytest.raises(hurray.InvalidDescriptorError, match="PointerOrder"):
        hurray.from_scipy(m)
    values = np.ones(3, np.float32).tobytes()
    with pytest.raises(hurray.InvalidDescriptorError, match="IndexRange"):
        hurray.Tensor(values, hurray.float32, [2, 3], layout=hurray.CsrLayout(3),
                      aux_buffers=[np.array([0, 2, 3], np.uint64).tobytes(),
                                   np.array([0, 2, 3], np.uint64).tobytes()])
    m.indices = np.array([0, 2, 2], np.uint64)
    m.indptr = np.array([0, 2, 3], np.uint64)
    t = hurray.from_scipy(m)
    np.asarray(t.col_indices)[1] = 7  # the views are writable
    with pytest.raises(hurray.InvalidDescriptorError, match="IndexRange"):
        t.to_scipy()


def test_torch_interop_or_import_error():
    try:
        import torch
    except ImportError:
        with pytest.raises(ImportError, match="torch"):
            hurray.from_torch(object())
        with pytest.raises(ImportError, match="torch"):
            hurray.zeros([1]).to_torch()
        return
    x = torch.arange(6, dtype=torch.float32)
    t = hurray.from_torch(x)
    assert t._buffer_address(0) == x.data_ptr()
    y = t.to_torch()
    assert y.data_ptr() == x.data_ptr()


@pytest.mark.parametrize("shape", [[0, 2**62], [0, 2**40, 2**40], [2**63 - 1, 0]])
def test_empty_tensor_numpy_cannot_represent_raises_the_library_error(shape):
    t = hurray.zeros(shape, dtype=hurray.float32)
    assert t.size == 0
    for convert in (np.asarray, lambda x: np.array(x, copy=True)):
        with pytest.raises(hurray.UnsupportedError, match="NumPy cannot represent shape"):
            convert(t)



@pytest.mark.parametrize("dim", [2**63, 2**64, 2**200])
def test_a_dimension_past_int64_is_an_overflow_error_that_says_so(dim):
    # python-api.md: shape entries above int64 raise OverflowError; the message is
    # this library's, not CPython's "C long" text.
    with pytest.raises(OverflowError, match=r"above the largest the API takes, 2\*\*63 - 1") as e:
        hurray.Tensor(b"", hurray.float32, (0, dim))
    assert "C long" not in str(e.value)
