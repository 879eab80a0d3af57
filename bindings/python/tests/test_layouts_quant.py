"""Layout classes, quantization schemes, Statistics and Shard."""

import struct

import pytest

import hurray

LAYOUTS = [
    (hurray.RowMajorLayout(), 0x01, "row_major", 1, True, "RowMajorLayout()"),
    (hurray.ColMajorLayout(), 0x02, "col_major", 1, True, "ColMajorLayout()"),
    (hurray.StridedLayout([4, 1]), 0x03, "strided", 1, True, "StridedLayout(strides=(4, 1))"),
    (hurray.TiledLayout([4, 4]), 0x04, "tiled", 1, True,
     "TiledLayout(tile_shape=(4, 4), outer_layout='row_major', inner_layout='row_major')"),
    (hurray.MortonLayout([3, 3]), 0x05, "morton", 1, True, "MortonLayout(morton_bits=(3, 3))"),
    (hurray.HilbertLayout(3, 2), 0x40, "hilbert", 1, True, "HilbertLayout(hilbert_order=3, hilbert_rank=2)"),
    (hurray.CooLayout(2), 0x06, "coo", 2, False, "CooLayout(nnz=2, is_sorted=False)"),
    (hurray.CsrLayout(4), 0x07, "csr", 3, False, "CsrLayout(nnz=4)"),
    (hurray.CscLayout(4), 0x08, "csc", 3, False, "CscLayout(nnz=4)"),
    (hurray.CsfLayout(5, [0, 1, 2]), 0x09, "csf", 7, False, "CsfLayout(nnz=5, mode_order=(0, 1, 2))"),
    (hurray.BlockPagedLayout(16, 64, 0, 2), 0x0A, "block_paged", 3, False,
     "BlockPagedLayout(page_size=16, num_pages=64, paged_axis=0, num_seqs=2, kv_role='key', "
     "layer_index=None, block_table_index_type='uint32')"),
    (hurray.CompositeLayout("group", 2), 0x0B, "composite", 0, False,
     "CompositeLayout(composition_rule='group', member_count=2)"),
    (hurray.PrivateExtensionLayout(0xF0, 7, b"x"), 0xF0, "extension", None, False,
     "PrivateExtensionLayout(tag=0xF0, extension_layout_id=7, extension_data=1 bytes)"),
    (hurray.UnknownLayout(0x0C), 0x0C, "extension", None, False, "UnknownLayout(tag=0x0C, raw_bytes=0 bytes)"),
]


@pytest.mark.parametrize("layout,tag,name,count,dense,text", LAYOUTS, ids=[l[2] + str(l[1]) for l in LAYOUTS])
def test_layout_common_members(layout, tag, name, count, dense, text):
    assert isinstance(layout, hurray.Layout)
    assert (layout.tag, layout.name, layout.buffer_count, layout.is_dense) == (tag, name, count, dense)
    assert layout.is_virtual == (name == "composite")
    assert repr(layout) == text
    assert layout != name and layout == layout
    assert hash(layout) == hash(layout)
    with pytest.raises(TypeError):
        layout < layout
    with pytest.raises(AttributeError):
        layout.tag = 1


def test_layout_equality_is_by_value():
    assert hurray.CsrLayout(3) == hurray.CsrLayout(3) != hurray.CsrLayout(4)
    assert hurray.CscLayout(3) != hurray.CsrLayout(3)
    assert len({hurray.StridedLayout([2, 1]), hurray.StridedLayout([2, 1])}) == 1


def test_layout_properties():
    t = hurray.TiledLayout([2, 2], outer_layout="strided", outer_strides=[1, 2],
                           inner_layout="tiled", inner_tiled=hurray.TiledLayout([1, 1]))
    assert t.tile_shape == (2, 2) and t.outer_layout == "strided" and t.outer_strides == (1, 2)
    assert t.inner_layout == "tiled" and t.inner_strides is None
    assert t.inner_tiled == hurray.TiledLayout([1, 1]) and t.inner_tiled is not t.inner_tiled
    assert "inner_tiled=TiledLayout(tile_shape=(1, 1)" in repr(t)
    assert repr(hurray.TiledLayout([4])) .startswith("TiledLayout(tile_shape=(4,),")
    b = hurray.BlockPagedLayout(8, 4, 0, 1, kv_role="value", layer_index=3, block_table_index_type="uint64")
    assert (b.page_size, b.num_pages, b.paged_axis, b.num_seqs) == (8, 4, 0, 1)
    assert (b.kv_role, b.layer_index, b.block_table_index_type) == ("value", 3, "uint64")
    c = hurray.CompositeLayout("overlay", 3, combine_op="add")
    assert (c.composition_rule, c.combine_op, c.member_count) == ("overlay", "add", 3)
    assert repr(c).endswith(", combine_op='add')")
    p = hurray.PrivateExtensionLayout(0xF3, 9)
    assert (p.extension_layout_id, p.extension_data) == (9, b"")
    assert hurray.UnknownLayout(0x0C, b"ab").raw_bytes == b"ab"
    assert hurray.CooLayout(5, is_sorted=True).is_sorted
    assert hurray.CsfLayout(1, [2, 0, 1]).mode_order == (2, 0, 1)
    assert hurray.MortonLayout([1, 2]).morton_bits == (1, 2)
    h = hurray.HilbertLayout(hilbert_order=2, hilbert_rank=3)
    assert (h.hilbert_order, h.hilbert_rank) == (2, 3)


@pytest.mark.parametrize(
    "make,exc",
    [
        (lambda: hurray.TiledLayout([4, 4], outer_layout="zigzag"), ValueError),
        (lambda: hurray.TiledLayout([]), hurray.InvalidDescriptorError),
        (lambda: hurray.TiledLayout([4, 0]), hurray.InvalidDescriptorError),
        (lambda: hurray.TiledLayout([4], outer_layout="strided"), hurray.InvalidDescriptorError),
        (lambda: hurray.TiledLayout([4], outer_strides=[1]), hurray.InvalidDescriptorError),
        (lambda: hurray.TiledLayout([4], inner_layout="tiled"), hurray.InvalidDescriptorError),
        (lambda: hurray.TiledLayout([4], outer_layout="tiled"), hurray.InvalidDescriptorError),
        (lambda: hurray.MortonLayout([]), hurray.InvalidDescriptorError),
        (lambda: hurray.MortonLayout([2, 0]), hurray.InvalidDescriptorError),
        (lambda: hurray.HilbertLayout(0, 2), hurray.InvalidDescriptorError),
        (lambda: hurray.BlockPagedLayout(1, 1, 0, 1, kv_role="query"), ValueError),
        (lambda: hurray.BlockPagedLayout(1, 1, 0, 1, block_table_index_type="int8"), ValueError),
        (lambda: hurray.CompositeLayout("stack", 2), ValueError),
        (lambda: hurray.CompositeLayout("overlay", 2), ValueError),
        (lambda: hurray.CompositeLayout("group", 2, combine_op="add"), ValueError),
        (lambda: hurray.CompositeLayout("overlay", 2, combine_op="mul"), ValueError),
        (lambda: hurray.CompositeLayout("group", 0xFFFFFFFF), hurray.InvalidDescriptorError),
        (lambda: hurray.PrivateExtensionLayout(0x10, 1), hurray.InvalidDescriptorError),
        (lambda: hurray.UnknownLayout(0x00), hurray.InvalidDescriptorError),
        (lambda: hurray.UnknownLayout(0xF5), ValueError),
        (lambda: hurray.CooLayout(-1), OverflowError),
    ],
)
def test_layout_constructor_errors(make, exc):
    with pytest.raises(exc):
        make()


def test_unknown_layout_names_the_class_to_use():
    with pytest.raises(ValueError, match="CsrLayout"):
        hurray.UnknownLayout(0x07)


def test_quantization_schemes():
    p = hurray.PerTensorAffine(0.5, 3)
    assert (p.scale, p.zero_point) == (0.5, 3) and repr(p) == "PerTensorAffine(scale=0.5, zero_point=3)"
    assert repr(hurray.PerTensorAffine(-1.0, 0)) == "PerTensorAffine(scale=-1, zero_point=0)"
    assert p != hurray.PerTensorAffine(0.5, 3)  # identity equality
    c = hurray.PerChannelAffine.asymmetric(0, 1, 2)
    assert (c.axis, c.scale_buffer_index, c.zero_point_buffer_index) == (0, 1, 2)
    assert repr(hurray.PerChannelAffine.symmetric(1, 1)) == "PerChannelAffine.symmetric(axis=1, scale_buffer_index=1)"
    b = hurray.PerBlockAffine.asymmetric(1, 32, 1, 2, hurray.float16)
    assert (b.block_size, b.zero_point_buffer_index, b.scale_type) == (32, 2, hurray.float16)
    assert repr(b) == "PerBlockAffine(axis=1, block_size=32, scale_buffer_index=1, zero_point_buffer_index=2)"
    assert hurray.PerBlockAffine.symmetric(0, 2, 1, hurray.bfloat16).zero_point_buffer_index is None
    assert repr(hurray.NF4(1, 64, 1)) == "NF4(axis=1, block_size=64, scale_buffer_index=1)"
    assert repr(hurray.MXFP(1, 32, 1)) == "MXFP(axis=1, block_size=32, scale_buffer_index=1)"
    for bad in (lambda: hurray.PerTensorAffine(0.0, 0), lambda: hurray.PerTensorAffine(float("nan"), 0),
                lambda: hurray.PerBlockAffine.symmetric(0, 3, 1, hurray.float32),
                lambda: hurray.PerBlockAffine.symmetric(0, 4, 1, hurray.int8),
                lambda: hurray.NF4(0, 4, 1), lambda: hurray.MXFP(0, 4096, 1), lambda: hurray.MXFP(0, 8, 1)):
        with pytest.raises(hurray.InvalidDescriptorError):
            bad()
    with pytest.raises(TypeError):
        hurray.PerBlockAffine.symmetric(0, 4, 1, "float32")
    with pytest.raises(TypeError):
        hurray.PerChannelAffine()


def test_quantized_tensor_round_trips_through_its_properties():
    scales = struct.pack("<2f", 0.5, 0.25)
    t = hurray.Tensor(bytes(4), hurray.int8, [2, 2], aux_buffers=[scales],
                      quantization=hurray.PerChannelAffine.symmetric(0, 1))
    q = t.quantization
    assert isinstance(q, hurray.PerChannelAffine) and q.scale_buffer_index == 1 and t.buffer_count == 2
    u = hurray.Tensor(bytes(4), hurray.int8, [2, 2], aux_buffers=[scales], quantization=q)
    assert u.quantization.axis == 0
    with pytest.raises(hurray.InvalidDescriptorError, match="quantization buffer index 2"):
        hurray.Tensor(bytes(4), hurray.int8, [2, 2], aux_buffers=[scales],
                      quantization=hurray.PerChannelAffine.symmetric(0, 2))
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor(bytes(4), hurray.int8, [2, 2], quantization="int8")


def test_statistics_and_shard():
    s = hurray.Statistics(nnz=3, sparsity_ratio=0.25, value_min=-1.0, value_max=2.0, value_abs_max=2.0,
                          value_mean=0.5, value_stddev=1.0, nm_n=2, nm_m=4, has_nan=False, has_inf=True)
    assert s.computed_mask == 0x3F and repr(s) == "Statistics(computed_mask=0x3F)"
    assert (s.nnz, s.value_min, s.nm_m, s.has_inf, s.has_nan) == (3, -1.0, 4, True, False)
    e = hurray.Statistics(nnz=1)
    assert e.computed_mask == 1 and e.value_min is None and repr(e) == "Statistics(computed_mask=0x1)"
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Statistics(value_min=1.0)
    with pytest.raises(TypeError):
        hurray.Statistics(3)
    sh = hurray.Shard([4, 3], [2, 0])
    assert sh.parent_shape == (4, 3) and repr(sh) == "Shard(parent_shape=[4, 3], shard_offset=[2, 0])"
    with pytest.raises(OverflowError):
        hurray.Shard([-1], [0])
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Shard([4], [0, 0])
    t = hurray.Tensor(bytes(8), hurray.uint8, [2, 4], statistics=s, shard=hurray.Shard([4, 4], [2, 0]))
    assert t.statistics.computed_mask == 0x3F and t.shard.shard_offset == (2, 0)
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor(bytes(8), hurray.uint8, [2, 4], shard=hurray.Shard([4], [0]))
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(8), hurray.uint8, [2, 4], statistics="x")
