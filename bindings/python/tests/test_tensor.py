"""Tensor construction, properties, component views, and the construction functions."""

import struct

import pytest

import hurray


def u64(*v):
    return struct.pack(f"<{len(v)}Q", *v)


def f32(*v):
    return struct.pack(f"<{len(v)}f", *v)


def csr():
    # [[1, 0, 2], [0, 0, 3]]
    return hurray.Tensor(f32(1, 2, 3), hurray.float32, [2, 3], aux_buffers=[u64(0, 2, 2), u64(0, 2, 3)],
                         layout=hurray.CsrLayout(3))


def test_constructor_basics():
    dev = hurray.Device("cuda", 5)
    t = hurray.Tensor(f32(1, 2, 3, 4, 5, 6), hurray.float32, (2, 3), dev)
    assert t.dtype is hurray.float32 and t.device is dev and t.device.device_id == 5
    assert (t.shape, t.ndim, t.size, t.buffer_count) == ((2, 3), 2, 6, 1)
    assert t.layout == hurray.RowMajorLayout() and t.layout is not t.layout
    assert t.quantization is None and t.statistics is None and t.shard is None
    assert hurray.Tensor(f32(1), hurray.float32, []).size == 1
    assert hurray.Tensor(b"", hurray.float32, [0]).shape == (0,)
    assert hurray.Tensor(bytes(3), hurray.uint8, [3]).device is hurray.device.cpu
    with pytest.raises(AttributeError):
        t.layout = hurray.ColMajorLayout()
    with pytest.raises(NotImplementedError):
        t.T
    with pytest.raises(TypeError, match="unhashable"):
        hash(t)
    assert t == t and t != hurray.Tensor(f32(1, 2, 3, 4, 5, 6), hurray.float32, (2, 3))
    with pytest.raises(TypeError):
        memoryview(t)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(buffer=bytearray(4)), hurray.BufferError, "bytes"),
        (dict(buffer=b"\0"), hurray.BufferError, "data"),
        (dict(shape=[-1]), hurray.InvalidDescriptorError, "negative"),
        (dict(shape=[1] * 65), hurray.InvalidDescriptorError, "rank"),
        (dict(shape=[1.5]), TypeError, None),
        (dict(shape=[2**70]), OverflowError, None),
        (dict(dtype="float32"), TypeError, None),
        (dict(device="cpu"), TypeError, None),
        (dict(layout="csr"), TypeError, "hurray.Layout"),
        (dict(layout=object()), TypeError, "hurray.Layout"),
        (dict(layout=hurray.CompositeLayout("group", 2)), hurray.UnsupportedError, "owns no buffers"),
        (dict(layout=hurray.CsrLayout(1), shape=[1, 1]), hurray.InvalidDescriptorError, "3 buffer"),
        (dict(aux_buffers=[1]), hurray.BufferError, None),
        (dict(layout=hurray.StridedLayout([1]), shape=[2, 2]), hurray.InvalidDescriptorError, None),
        (dict(layout=hurray.CsfLayout(1, [0, 0, 1]), shape=[1, 1, 1]), hurray.InvalidDescriptorError, None),
        (dict(device=hurray.Device("webgpu", 0, "host_pinned")), hurray.InvalidDescriptorError, None),
    ],
)
def test_constructor_errors(kwargs, exc, match):
    args = dict(buffer=bytes(4), dtype=hurray.uint8, shape=[4])
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        hurray.Tensor(args.pop("buffer"), args.pop("dtype"), args.pop("shape"), **args)


def test_buffer_size_errors_name_the_role():
    with pytest.raises(hurray.BufferError, match="row_ptr"):
        hurray.Tensor(f32(1, 2, 3), hurray.float32, [2, 3], aux_buffers=[u64(0, 2, 2), u64(0, 2)],
                      layout=hurray.CsrLayout(3))
    with pytest.raises(hurray.BufferError, match="values"):
        hurray.Tensor(f32(1), hurray.float32, [2, 3], aux_buffers=[u64(0, 2, 2), u64(0, 2, 3)],
                      layout=hurray.CsrLayout(3))


def test_sparse_accessors_and_views(np):
    t = csr()
    assert t.nnz == 3 and t.layout.name == "csr"
    assert np.asarray(t.values).tolist() == [1, 2, 3]
    assert np.asarray(t.col_indices).tolist() == [0, 2, 2]
    assert np.asarray(t.row_ptr).tolist() == [0, 2, 3]
    v = t.values
    assert v.layout == hurray.RowMajorLayout() and v.shape == (3,) and v._buffer_address(0) == t._buffer_address(0)
    for attr in ("indices", "row_indices", "col_ptr"):
        assert not hasattr(t, attr)
    with pytest.raises(AttributeError, match="this is a csr tensor"):
        t.indices
    dense = hurray.zeros([2])
    for attr in ("nnz", "values", "indices", "col_indices", "row_ptr", "row_indices", "col_ptr"):
        assert not hasattr(dense, attr)
        assert attr in dir(dense)
    csc = hurray.Tensor(f32(1, 2), hurray.float32, [3, 2], aux_buffers=[u64(0, 1), u64(0, 1, 2)],
                        layout=hurray.CscLayout(2))
    assert np.asarray(csc.row_indices).tolist() == [0, 1] and np.asarray(csc.col_ptr).tolist() == [0, 1, 2]


def test_buffer_views():
    t = csr()
    b = t.buffer(2)
    assert (b.dtype, b.shape) == (hurray.uint8, (24,))
    with pytest.raises(IndexError):
        t.buffer(3)
    with pytest.raises(OverflowError):
        t.buffer(-1)
    csf = hurray.Tensor(f32(1), hurray.float32, [1, 1, 1], layout=hurray.CsfLayout(1, [0, 1, 2]),
                        aux_buffers=[u64(0, 1), u64(0)] * 3)
    assert csf.buffer_count == 7 and csf.buffer(6).shape == (8,) and not hasattr(csf, "nnz")
    assert csf.layout.nnz == 1


def test_rebuild_round_trip_gives_equal_descriptors():
    t = csr()
    u = hurray.Tensor(bytes(t.buffer(0).__array__()) if False else f32(1, 2, 3), t.dtype, list(t.shape),
                      aux_buffers=[u64(0, 2, 2), u64(0, 2, 3)], layout=t.layout,
                      quantization=t.quantization, statistics=t.statistics, shard=t.shard)
    assert u._descriptor_bytes() == t._descriptor_bytes()


def test_repr_and_str(np):
    t = hurray.arange(5)
    assert repr(t) == "hurray.Tensor([0 1 2 3 4], dtype=int64)" and str(t) == "[0 1 2 3 4]"
    s = csr()
    assert repr(s) == str(s) == "hurray.Tensor(layout='csr', shape=(2, 3), nnz=3, dtype=float32)"
    with hurray.print_options(sparse_display="content"):
        r = repr(s)
    assert r.startswith("hurray.Tensor(layout='csr'") and "values=[1. 2. 3.]" in r and "row_ptr=[0 2 3]" in r
    q = hurray.Tensor(bytes(1), hurray.dtype.int4, [2])
    assert repr(q) == ("hurray.Tensor(shape=(2,), dtype=int4, device=hurray.Device(kind='cpu', "
                       "device_id=0, memory_class='standard'))")
    assert repr(hurray.eye(2, dtype=hurray.bool)) == "hurray.Tensor([[ True False]\n [False  True]], dtype=bool)"
    col = hurray.Tensor(f32(1, 2, 3, 4), hurray.float32, [2, 2], layout=hurray.ColMajorLayout())
    assert str(col) == "[[1. 3.]\n [2. 4.]]"


def values(t, np):
    return np.asarray(t).tolist()


def test_construction_functions(np):
    assert values(hurray.zeros([2, 2], dtype=hurray.int16), np) == [[0, 0], [0, 0]]
    assert hurray.zeros([3]).dtype == hurray.float64
    assert values(hurray.ones([2], dtype=hurray.dtype.complex64), np) == [1 + 0j, 1 + 0j]
    assert values(hurray.full([2], 7), np) == [7, 7] and hurray.full([1], 7).dtype == hurray.int64
    assert hurray.full([1], 1.5).dtype == hurray.float64 and hurray.full([1], 1j).dtype == hurray.dtype.complex128
    assert hurray.full([1], True).dtype == hurray.bool
    assert values(hurray.full([2], 2.5, dtype=hurray.float16), np) == [2.5, 2.5]
    assert values(hurray.full([1], 3 + 4j, dtype=hurray.dtype.complex128), np) == [3 + 4j]
    assert hurray.empty([2], dtype=hurray.uint8).shape == (2,)
    assert values(hurray.arange(1, 2, 0.25), np) == [1.0, 1.25, 1.5, 1.75]
    assert values(hurray.arange(5, dtype=hurray.int8), np) == [0, 1, 2, 3, 4]
    assert values(hurray.arange(0, 2.5, dtype=hurray.int32), np) == [0, 1, 2]
    assert values(hurray.arange(3, 0, -1), np) == [3, 2, 1] and hurray.arange(3, 0).shape == (0,)
    assert hurray.arange(np.float32(3)).dtype == hurray.int64 and hurray.arange(np.float64(3)).dtype == hurray.float64
    assert values(hurray.linspace(0, 1, 5), np) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert values(hurray.linspace(0, 1, 4, endpoint=False), np) == [0.0, 0.25, 0.5, 0.75]
    assert values(hurray.linspace(2, 3, 1), np) == [2.0] and hurray.linspace(0, 1, 0).shape == (0,)
    assert values(hurray.linspace(0, 0.1, 7), np)[-1] == 0.1
    assert values(hurray.eye(2, 3, k=1), np) == [[0, 1, 0], [0, 0, 1]]
    e = hurray.eye(9, dtype=hurray.bool)
    assert bytes(np.asarray(e.buffer(0)))[:2] == b"\x01\x04"
    o = hurray.ones([10], dtype=hurray.bool)
    assert bytes(np.asarray(o.buffer(0))) == b"\xff\x03"
    x = hurray.arange(6, dtype=hurray.int32, device=hurray.Device("cuda", 4, "unified"))
    assert (x.device.kind, x.device.device_id, x.device.memory_class) == ("cuda", 0, "unified")
    z = hurray.zeros_like(x)
    assert (z.shape, z.dtype, z.device.kind) == ((6,), hurray.int32, "cuda")
    assert values(hurray.ones_like(hurray.zeros([2]), dtype=hurray.uint8), np) == [1, 1]
    assert values(hurray.full_like(hurray.zeros([2], dtype=hurray.int8), 3), np) == [3, 3]
    assert hurray.empty_like(csr()).layout == hurray.RowMajorLayout() and hurray.empty_like(csr()).shape == (2, 3)


@pytest.mark.parametrize(
    "call,exc",
    [
        (lambda: hurray.zeros([-1]), hurray.InvalidDescriptorError),
        (lambda: hurray.zeros(["a"]), TypeError),
        (lambda: hurray.zeros([2], dtype="float32"), hurray.InvalidDescriptorError),
        (lambda: hurray.zeros([2], device="cpu"), hurray.InvalidDescriptorError),
        (lambda: hurray.zeros([2], dtype=hurray.dtype.int4), hurray.UnsupportedError),
        (lambda: hurray.full([2], "x"), hurray.InvalidDescriptorError),
        (lambda: hurray.full([2], 300, dtype=hurray.uint8), OverflowError),
        (lambda: hurray.full([2], 1.5, dtype=hurray.int32), TypeError),
        (lambda: hurray.full([2], 1, dtype=hurray.bool), TypeError),
        (lambda: hurray.zeros_like([1, 2]), TypeError),
        (lambda: hurray.zeros_like(hurray.Tensor(bytes(1), hurray.dtype.int4, [2])), hurray.UnsupportedError),
        (lambda: hurray.arange(0, 5, 0), hurray.InvalidDescriptorError),
        (lambda: hurray.arange(5, dtype=hurray.bool), hurray.UnsupportedError),
        (lambda: hurray.arange("5"), TypeError),
        (lambda: hurray.linspace(0, 1, -1), hurray.InvalidDescriptorError),
        (lambda: hurray.linspace(0, 1, 3, dtype=hurray.bool), hurray.UnsupportedError),
        (lambda: hurray.eye(-1), hurray.InvalidDescriptorError),
    ],
)
def test_construction_errors(call, exc):
    with pytest.raises(exc):
        call()
