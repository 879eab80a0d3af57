"""Module surface, dtypes, devices, exceptions and print options."""

import copy
import sys
import threading

import pytest

import hurray

TIER1 = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
         "float16", "bfloat16", "float32", "float64"]
TIER2 = ["float8_e4m3", "float8_e5m2", "float8_e8m0", "float4_e2m1", "float6_e2m3",
         "float6_e3m2", "float128", "int4", "uint4", "int2", "uint2", "complex64", "complex128"]


def test_all_has_74_names_that_exist():
    assert len(hurray.__all__) == 74 == len(set(hurray.__all__))
    for name in hurray.__all__:
        assert hasattr(hurray, name), name
    assert isinstance(hurray.__version__, str) and hurray.__version__.count(".") == 2


def test_submodules_import_and_share_constants():
    import hurray.device
    import hurray.dtype
    from hurray.device import cpu

    assert sys.modules["hurray.dtype"] is hurray.dtype
    assert cpu is hurray.device.cpu
    for n in TIER1:
        assert getattr(hurray, n) is getattr(hurray.dtype, n)
    for n in TIER2:
        assert not hasattr(hurray, n)
        assert isinstance(getattr(hurray.dtype, n), hurray.Dtype)
    assert len(hurray.dtype.__all__) == 26


@pytest.mark.parametrize(
    "name,tag,bits,tier,integer,floating,signed,sub",
    [
        ("float16", 0x01, 16, 1, False, True, True, False),
        ("bfloat16", 0x02, 16, 1, False, True, True, False),
        ("uint32", 0x15, 32, 1, True, False, False, False),
        ("bool", 0x20, 1, 1, False, False, False, True),
        ("float8_e8m0", 0x42, 8, 2, False, True, False, False),
        ("float6_e2m3", 0x44, 6, 2, False, True, True, True),
        ("int4", 0x48, 4, 2, True, False, True, True),
        ("uint2", 0x4B, 2, 2, True, False, False, True),
        ("complex128", 0x51, 128, 2, False, True, True, False),
    ],
)
def test_dtype_properties(name, tag, bits, tier, integer, floating, signed, sub):
    d = hurray.Dtype.from_name(name)
    assert d == getattr(hurray.dtype, name)
    assert (d.name, d.bit_width, d.tier, d.is_array_api) == (name, bits, tier, tier == 1)
    assert (d.is_integer, d.is_float, d.is_signed, d.is_sub_byte) == (integer, floating, signed, sub)
    assert hash(d) == tag
    assert repr(d) == f"hurray.Dtype('{name}')" and str(d) == name


def test_dtype_value_semantics():
    assert hurray.float32 != hurray.float64
    assert hurray.float32 != "float32" and not (hurray.float32 == 3)
    assert {hurray.float32: 1}[hurray.Dtype.from_name("float32")] == 1
    with pytest.raises(NotImplementedError):
        hurray.float32 < hurray.float64
    with pytest.raises(TypeError):
        hurray.Dtype()
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Dtype.from_name("extension")
    with pytest.raises(AttributeError):
        hurray.float32.name = "x"
    with pytest.raises(TypeError):
        class Sub(hurray.Dtype):  # noqa: F841
            pass


def test_tag_names_render_one_way():
    # The rendering every language shares (hurray_core::tables), beside the
    # reference API's names ("extension", "col_major", "composite").
    from hurray import _tables
    for tag in range(256):
        want = _tables.ELEMENT_TYPES[tag][0] if tag in _tables.ELEMENT_TYPES else (
            f"private(0x{tag:02x})" if 0xF0 <= tag <= 0xFE else f"unknown(0x{tag:02x})")
        assert hurray.type_name(tag) == want
        want = _tables.LAYOUTS.get(tag) or (
            f"private(0x{tag:02x})" if 0xF0 <= tag <= 0xFE else f"unknown(0x{tag:02x})")
        assert hurray.layout_name(tag) == want
    assert hurray.type_name(0x2A) == "unknown(0x2a)"
    assert hurray.type_name(0xF3) == "private(0xf3)"
    assert hurray.layout_name(0x02) == "column_major" != hurray.ColMajorLayout().name
    assert hurray.layout_name(0xF1) == "private(0xf1)"
    assert hurray.PrivateExtensionLayout(0xF1, 9).name == "extension"
    assert hurray.float32.tag == 0x03 and hurray.dtype.int4.tag == 0x48
    assert hurray.type_name(hurray.dtype.float8_e4m3.tag) == "float8_e4m3"
    for bad in (-1, 256):
        with pytest.raises(OverflowError):
            hurray.type_name(bad)
    assert "type_name" not in hurray.__all__


def test_devices():
    d = hurray.Device("cuda", 2, "host_pinned")
    assert (d.kind, d.device_id, d.memory_class) == ("cuda", 2, "host_pinned")
    assert repr(d) == str(d) == "hurray.Device(kind='cuda', device_id=2, memory_class='host_pinned')"
    assert d == hurray.Device("cuda", 2, "host_pinned") and d != hurray.Device("cuda", 1, "host_pinned")
    assert len({d, hurray.Device("cuda", 2, "host_pinned")}) == 1
    assert hurray.Device("cpu") == hurray.device.cpu
    assert hurray.Device("cpu", 0, "peer").memory_class == "peer"  # no validity check here
    for k in ("cpu", "cuda", "rocm", "metal", "vulkan", "webgpu", "hexagon", "level_zero", "opencl"):
        c = getattr(hurray.device, k)
        assert (c.kind, c.device_id, c.memory_class) == (k, 0, "standard")
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("tpu")
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("cpu", -1)
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("cpu", 0, "fast")
    with pytest.raises(TypeError):
        hurray.Device(3)
    with pytest.raises(NotImplementedError):
        d < d
    assert d != "cuda"


def test_exception_hierarchy():
    h = hurray
    assert issubclass(h.InvalidDescriptorError, ValueError)
    assert issubclass(h.BufferError, ValueError) and not issubclass(h.BufferError, BufferError)
    assert h.BufferError is not BufferError
    assert issubclass(h.CopyRequiredError, ValueError)
    assert issubclass(h.UnsupportedError, NotImplementedError) and issubclass(h.UnsupportedError, RuntimeError)
    assert issubclass(h.InternalError, RuntimeError)
    assert issubclass(h.FileError, OSError) and issubclass(h.StreamError, OSError)
    for e in (h.InvalidDescriptorError, h.BufferError, h.CopyRequiredError, h.UnsupportedError,
              h.InternalError, h.FileError, h.StreamError):
        assert e.__module__ == "hurray"


def test_classes_are_final_frozen_and_unpicklable():
    for cls in (hurray.Device, hurray.Tensor, hurray.CsrLayout, hurray.NF4, hurray.Statistics):
        with pytest.raises(TypeError):
            type("Sub", (cls,), {})
    class MyLayout(hurray.Layout):
        pass
    with pytest.raises(TypeError):
        MyLayout()
    with pytest.raises(TypeError):
        hurray.Layout()
    with pytest.raises(TypeError):
        copy.copy(hurray.CsrLayout(3))
    d = hurray.Device("cpu")
    with pytest.raises(AttributeError):
        d.kind = "cuda"
    with pytest.raises(AttributeError):
        d.anything = 1


def test_print_options_are_per_context():
    assert hurray.get_print_options() == {"sparse_display": "metadata"}
    with hurray.print_options(sparse_display="content") as ctx:
        assert ctx is None
        assert hurray.get_print_options()["sparse_display"] == "content"
        seen = []
        th = threading.Thread(target=lambda: seen.append(hurray.get_print_options()))
        th.start()
        th.join()
        assert seen == [{"sparse_display": "metadata"}]
        with hurray.PrintOptionsCtx(sparse_display="metadata"):
            assert hurray.get_print_options()["sparse_display"] == "metadata"
        assert hurray.get_print_options()["sparse_display"] == "content"
    assert hurray.get_print_options()["sparse_display"] == "metadata"
    hurray.set_print_options(sparse_display=None)
    assert hurray.get_print_options()["sparse_display"] == "metadata"
    with pytest.raises(ValueError):
        hurray.set_print_options(sparse_display="all")
    with pytest.raises(ValueError):
        hurray.print_options(sparse_display="all")
    with pytest.raises(TypeError):
        hurray.set_print_options("content")


def test_import_needs_no_numpy():
    import subprocess

    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "import hurray\n"
        "t = hurray.arange(3)\n"
        "assert 'shape=(3,)' in repr(t), repr(t)\n"
        "try:\n    t.__array__()\nexcept ImportError: pass\nelse: raise SystemExit('no ImportError')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
