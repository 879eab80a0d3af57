"""Issue 14, Python item 1: every element type reaches NumPy.

bool and the sub-byte types come back as unpacked copies; bfloat16 and float8 as
zero-copy ml_dtypes views; from_numpy takes ml_dtypes arrays; from_dlpack takes a
JAX bfloat16 array (imported from its capsule, zero-copy)."""

import sys

import numpy as np
import pytest

import hurray

ml_dtypes = pytest.importorskip("ml_dtypes")


def addr(a):
    return a.__array_interface__["data"][0]


def test_bool_comes_back_as_an_unpacked_copy():
    src = np.array([[True, False, True, True, False], [False, False, False, True, True]])
    t = hurray.from_numpy(src)
    assert t.dtype == hurray.bool
    # bit-packed: element 0 is bit 0 (element-types.md §5): T,F,T,T,F,F,F,F = 0x0D
    assert np.asarray(t.buffer(0)).tolist() == [0x0D, 0x03]
    back = np.asarray(t)
    assert back.dtype == np.bool_ and back.tolist() == src.tolist()
    assert hurray.asarray(t, copy=True).dtype == hurray.bool
    assert np.asarray(hurray.asarray(t, copy=True)).tolist() == src.tolist()
    with pytest.raises(hurray.CopyRequiredError):
        np.asarray(t, copy=False)
    # column-major bool keeps its layout through the copy
    f = hurray.from_numpy(np.asfortranarray(src))
    assert f.layout == hurray.ColMajorLayout() and np.asarray(f).tolist() == src.tolist()


@pytest.mark.parametrize(
    "ml, name, values, packed",
    [
        ("int4", "int4", [-8, -1, 0, 7, 3], [0xF8, 0x70, 0x03]),
        ("uint4", "uint4", [15, 0, 9], [0x0F, 0x09]),
        ("int2", "int2", [-2, -1, 0, 1, 1], [0x4E, 0x01]),
        ("uint2", "uint2", [3, 2, 1, 0], [0x1B]),
        ("float4_e2m1fn", "float4_e2m1", [1.0, -6.0, 0.5, 0.0], [0xF2, 0x01]),
    ],
)
def test_sub_byte_types_pack_in_and_unpack_out(ml, name, values, packed):
    src = np.array(values, dtype=getattr(ml_dtypes, ml))
    t = hurray.from_numpy(src)
    assert t.dtype.name == name
    assert np.asarray(t.buffer(0)).tolist() == packed
    back = np.asarray(t)
    assert back.dtype == src.dtype
    assert back.astype(np.float32).tolist() == [float(v) for v in values]


def test_sub_byte_ints_without_ml_dtypes_are_int8(monkeypatch):
    t = hurray.from_numpy(np.array([-8, 7, -1], dtype=ml_dtypes.int4))
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)
    back = np.asarray(t)
    assert back.dtype == np.int8 and back.tolist() == [-8, 7, -1]
    with pytest.raises(hurray.UnsupportedError, match="ml_dtypes"):
        np.asarray(hurray.zeros([2], dtype=hurray.bfloat16))


def test_float6_round_trips():
    vals = [1.0, 2.0, 0.5, -6.0, 3.0]
    for ml in ("float6_e2m3fn", "float6_e3m2fn"):
        src = np.array(vals, dtype=getattr(ml_dtypes, ml))
        t = hurray.from_numpy(src)
        assert t.buffer_count == 1 and t.buffer(0).shape == (6,)  # 5 elements, 4 per 3 bytes
        assert np.asarray(t).astype(np.float32).tolist() == vals


@pytest.mark.parametrize("ml, name", [
    ("bfloat16", "bfloat16"),
    ("float8_e4m3fn", "float8_e4m3"),
    ("float8_e5m2", "float8_e5m2"),
    ("float8_e8m0fnu", "float8_e8m0"),
])
def test_bfloat16_and_float8_are_zero_copy_views(ml, name, aligned):
    src = aligned(np.array([[1.0, 2.0, 0.5], [4.0, 8.0, 0.25]], dtype=getattr(ml_dtypes, ml)))
    t = hurray.from_numpy(src)
    assert t.dtype.name == name and t._buffer_address(0) == addr(src)
    view = np.asarray(t)
    assert view.dtype == src.dtype and addr(view) == addr(src)
    assert view.astype(np.float32).tolist() == [[1.0, 2.0, 0.5], [4.0, 8.0, 0.25]]
    view[0, 0] = 2.0  # a view: the write reaches the source
    assert float(src[0, 0]) == 2.0
    with pytest.raises(hurray.CopyRequiredError):
        np.asarray(t, dtype=np.float32, copy=False)
    assert np.asarray(t, dtype=np.float32)[1].tolist() == [4.0, 8.0, 0.25]


def test_bfloat16_bits_are_the_format_bits():
    t = hurray.from_numpy(np.array([1.0, -2.0], dtype=ml_dtypes.bfloat16))
    # bfloat16 1.0 = 0x3F80, -2.0 = 0xC000, little-endian
    assert np.asarray(t.buffer(0)).tolist() == [0x80, 0x3F, 0x00, 0xC0]


def test_other_ml_dtypes_are_refused():
    with pytest.raises(hurray.UnsupportedError, match="float8_e4m3fnuz"):
        hurray.from_numpy(np.zeros(2, dtype=ml_dtypes.float8_e4m3fnuz))


def test_from_dlpack_jax_bfloat16_is_zero_copy():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.arange(6, dtype=jnp.bfloat16).reshape(2, 3) / 4
    t = hurray.from_dlpack(x)
    assert t.dtype == hurray.bfloat16 and t.shape == (2, 3)
    assert np.asarray(t).astype(np.float32).tolist() == [[0.0, 0.25, 0.5], [0.75, 1.0, 1.25]]
    assert t._buffer_address(0) == x.unsafe_buffer_pointer()
    del x
    assert np.asarray(t).astype(np.float32)[1, 2] == 1.25  # the tensor keeps it alive


def test_from_dlpack_capsule_import_of_bool_and_float8():
    jnp = pytest.importorskip("jax.numpy")
    b = hurray.from_dlpack(jnp.array([True, False, True]))
    assert b.dtype == hurray.bool and np.asarray(b).tolist() == [True, False, True]
    f8 = hurray.from_dlpack(jnp.array([1.0, 0.5], dtype=jnp.float8_e5m2))
    assert f8.dtype.name == "float8_e5m2"
    assert np.asarray(f8).astype(np.float32).tolist() == [1.0, 0.5]


def test_from_dlpack_capsule_importer_releases_the_producer():
    # A producer whose capsule NumPy refuses (bfloat16): a hurray tensor exported
    # through DLPack. Importing consumes the capsule; dropping the import releases it.
    import gc

    base = hurray._native._live_objects()
    src = hurray.from_numpy(np.array([1.5, 2.5], dtype=ml_dtypes.bfloat16))
    t = hurray._native._from_dlpack_capsule(src.__dlpack__(max_version=(1, 0)))
    assert t._buffer_address(0) == src._buffer_address(0)
    del src
    assert np.asarray(t).astype(np.float32).tolist() == [1.5, 2.5]
    del t
    gc.collect()
    assert hurray._native._live_objects() == base
    with pytest.raises(hurray.BufferError, match="DLPack"):
        hurray._native._from_dlpack_capsule(object())
    c = hurray.zeros([1]).__dlpack__()
    hurray._native._from_dlpack_capsule(c)
    with pytest.raises(hurray.BufferError, match="unconsumed"):
        hurray._native._from_dlpack_capsule(c)  # renamed used_dltensor
