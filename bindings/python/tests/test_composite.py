"""hurray.Composite (layouts.md §2.11): construction and its checks, the members'
shard and role sections, zero-copy members, and composites through save /
FileReader.item, StreamWriter / StreamReader.items() (the network client's are in
test_net.py). Every test ends with the live-handle count back at its baseline
(conftest)."""

from __future__ import annotations

import numpy as np
import pytest

import hurray


def t(values, dtype=np.float32):
    return hurray.from_numpy(np.array(values, dtype=dtype))


def partition():
    """An [2, 4] float32 whole split into two [2, 2] halves."""
    return hurray.Composite(
        "partition", shape=(2, 4), dtype=hurray.float32,
        members=[t([[0, 1], [4, 5]]), t([[2, 3], [6, 7]])],
        offsets=[(0, 0), (0, 2)])


def overlay():
    return hurray.Composite(
        "overlay", shape=(2, 2), dtype=hurray.float32,
        members=[t([[1, 1], [1, 1]]), t([[9]])], combine_op="replace",
        offsets=[(0, 0), (1, 0)], roles=["base", "correction"])


def assert_same(a, b):
    """Two items equal in every field the Python API shows, and every byte."""
    assert type(a) is type(b)
    if isinstance(a, hurray.Tensor):
        assert (a.dtype, a.shape, a.layout, a.role) == (b.dtype, b.shape, b.layout, b.role)
        assert (a.shard is None) == (b.shard is None)
        if a.shard is not None:
            assert a.shard.shard_offset == b.shard.shard_offset
        for i in range(a.buffer_count):
            assert a._buffer_bytes(i) == b._buffer_bytes(i)
        return
    assert (a.composition_rule, a.combine_op, a.shape, a.dtype, a.role, len(a)) == (
        b.composition_rule, b.combine_op, b.shape, b.dtype, b.role, len(b))
    for x, y in zip(a, b):
        assert_same(x, y)


def test_fields_and_sequence():
    p = partition()
    assert p.composition_rule == "partition" and p.combine_op is None
    assert p.shape == (2, 4) and p.ndim == 2 and p.dtype == hurray.float32
    assert p.layout == hurray.CompositeLayout("partition", 2)
    assert len(p) == 2 and len(p.members) == 2 and p.shard is None and p.role is None
    assert [tuple(m.shard.shard_offset) for m in p] == [(0, 0), (0, 2)]
    assert tuple(p[-1].shard.parent_shape) == (2, 4)
    assert np.asarray(p[1]).tolist() == [[2, 3], [6, 7]]
    with pytest.raises(IndexError, match="member 2 of a composite of 2"):
        p[2]
    assert repr(p) == "Composite('partition', shape=(2, 4), dtype=float32, members=2)"
    o = overlay()
    assert o.combine_op == "replace" and [m.role for m in o] == ["base", "correction"]
    assert "combine_op='replace'" in repr(o)
    # A plain tensor is no member of anything.
    assert t([1]).role is None


def test_members_share_the_buffers():
    a, b = t([[0, 1], [4, 5]]), t([[2, 3], [6, 7]])
    p = hurray.Composite("partition", shape=(2, 4), dtype=hurray.float32,
                         members=[a, b], offsets=[(0, 0), (0, 2)])
    # New member objects (they carry the shard), over the same memory.
    assert p[0] is not a and a.shard is None
    assert p[0]._buffer_address(0) == a._buffer_address(0)
    assert p[1]._buffer_address(0) == b._buffer_address(0)


def test_nested_group():
    g = hurray.Composite("group", shape=(3,), dtype=hurray.float32,
                         members=[t([1, 2, 3], np.int32), partition(), overlay()])
    assert isinstance(g[1], hurray.Composite) and g[1][0].shard is not None
    assert g[2][0].role == "base"


def test_rules_are_checked_at_construction():
    a, b = t([[0, 1], [4, 5]]), t([[2, 3], [6, 7]])
    with pytest.raises(hurray.InvalidDescriptorError, match="CompositeMember.*overlap"):
        hurray.Composite("partition", shape=(2, 4), dtype=hurray.float32,
                         members=[a, b], offsets=[(0, 0), (0, 1)])
    with pytest.raises(hurray.InvalidDescriptorError, match="CompositeMember"):
        hurray.Composite("partition", shape=(2, 5), dtype=hurray.float32,
                         members=[a, b], offsets=[(0, 0), (0, 2)])  # a gap
    with pytest.raises(hurray.InvalidDescriptorError, match="CompositeMember"):
        hurray.Composite("partition", shape=(2, 4), dtype=hurray.float32,
                         members=[a, t([[2, 3], [6, 7]], np.int32)], offsets=[(0, 0), (0, 2)])
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Composite("overlay", shape=(2, 2), dtype=hurray.float32, combine_op="add",
                         members=[t([[1, 1], [1, 1]])], offsets=[(0, 0)],
                         roles=["correction"])  # no base
    with pytest.raises(ValueError, match="needs combine_op"):
        hurray.Composite("overlay", shape=(2,), dtype=hurray.float32, members=[t([1, 2])])
    with pytest.raises(ValueError, match="composition_rule"):
        hurray.Composite("mosaic", shape=(2,), dtype=hurray.float32, members=[t([1, 2])])
    with pytest.raises(ValueError, match="offsets has 1 entries; the composite has 2"):
        hurray.Composite("partition", shape=(2, 4), dtype=hurray.float32,
                         members=[a, b], offsets=[(0, 0)])
    with pytest.raises(ValueError, match="role must be"):
        hurray.Composite("group", shape=(1,), dtype=hurray.float32, members=[a], roles=["top"])
    with pytest.raises(TypeError, match="hurray.Tensor or hurray.Composite, not int"):
        hurray.Composite("group", shape=(1,), dtype=hurray.float32, members=[a, 3])
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Composite("partition", shape=(2, 4), dtype=hurray.float32,
                         members=[a, b], offsets=[(0,), (0, 2)])  # offset of the wrong rank
    # Nine levels of nesting: past the readers' limit of 8.
    item = t([1.0])
    for level in range(9):
        if level == 8:
            with pytest.raises(hurray.InvalidDescriptorError, match="nested deeper than 8"):
                hurray.Composite("group", shape=(1,), dtype=hurray.float32, members=[item])
        else:
            item = hurray.Composite("group", shape=(1,), dtype=hurray.float32, members=[item])
    # The sources are untouched by a failed construction.
    assert a.shard is None and b.role is None


def test_file_round_trip(tmp_path):
    path = tmp_path / "c.hrry"
    p, o = partition(), overlay()
    hurray.save(path, {"first": t([1, 2]), "p": p, "o": o, "last": t([3], np.int8)})
    with hurray.FileReader(path) as r:
        assert r.names == ["first", "last"]  # tensors only, as load() returns them
        assert r.item_names == ["first", "p", "o", "last"]
        assert_same(r.item("p"), p)
        assert_same(r.item("o"), o)
        assert_same(r.item("first"), t([1, 2]))
        with pytest.raises(KeyError):
            r.item("p/0")  # a member comes with its composite
        members = r.item("p").members
    # Members are views of the mapping and outlive the reader.
    assert np.asarray(members[1]).tolist() == [[2, 3], [6, 7]]
    assert list(hurray.load(path)) == ["first", "last"]
    with hurray.FileReader(path, read_only=True) as r:
        assert all(m.read_only for m in r.item("o"))


def test_stream_round_trip():
    p, o = partition(), overlay()
    w = hurray.StreamWriter()
    w.write(t([1, 2]))
    w.write(p)
    w.write(o)
    w.finish()
    data = w.getvalue()
    items = list(hurray.StreamReader(data).items())
    assert len(items) == 3
    assert_same(items[1], p)
    assert_same(items[2], o)
    # Iterating the reader yields tensors only and stops at the composite, naming it.
    r = hurray.StreamReader(data)
    assert np.asarray(next(r)).tolist() == [1, 2]
    with pytest.raises(hurray.UnsupportedError, match=r"composite \(2 members\).*items\(\)"):
        next(r)
    r2 = hurray.StreamReader(data)
    assert isinstance(r2.read_item(), hurray.Tensor)
    assert isinstance(r2.read_item(), hurray.Composite)
    assert isinstance(r2.read_item(), hurray.Composite)
    assert r2.read_item() is None
    with pytest.raises(TypeError):
        hurray.StreamWriter().write(np.zeros(2))


def test_no_array_of_the_whole():
    p = partition()
    # Without a refusal NumPy would stack the two members as a (2, 2, 2) array.
    with pytest.raises(hurray.UnsupportedError, match="no array of the whole"):
        np.asarray(p)
    with pytest.raises(hurray.UnsupportedError):
        hurray.asarray(p)


def test_a_composite_name_is_no_tensor(tmp_path):
    path = tmp_path / "c.hrry"
    hurray.save(path, {"p": partition(), "t": t([1])})
    with pytest.raises(hurray.UnsupportedError, match=r"composite of 2 members.*FileReader.item"):
        hurray.load(path, names=["p"])
    with hurray.FileReader(path) as r:
        with pytest.raises(KeyError):
            r["p"]  # names lists tensors only
    # A member is a tensor of the file under its own name.
    assert np.asarray(hurray.load(path, names=["p/1"])["p/1"]).tolist() == [[2, 3], [6, 7]]


def test_iteration_keeps_the_composite_for_read_item():
    w = hurray.StreamWriter()
    w.write(t([1, 2]))
    w.write(partition())
    w.write(t([3], np.int8))
    w.finish()
    r = hurray.StreamReader(w.getvalue())
    next(r)
    for _ in range(2):  # never skipped: refused again
        with pytest.raises(hurray.UnsupportedError):
            next(r)
    assert isinstance(r.read_item(), hurray.Composite)
    assert np.asarray(next(r)).tolist() == [3]
    assert r.read_item() is None


def test_members_keep_device_id_and_read_only():
    dev = hurray.Device("cuda", 3)
    a = hurray.Tensor(bytes(16), hurray.float32, (4,), dev)
    frozen = hurray.zeros_aligned((4,), np.float32)
    frozen.flags.writeable = False
    ro = hurray.from_numpy(frozen)
    assert ro.read_only
    g = hurray.Composite("group", shape=(2,), dtype=hurray.float32,
                         members=[a, ro, t([1, 2, 3, 4])])
    assert g[0].device.device_id == 3 and g[0].device == a.device
    assert [m.read_only for m in g] == [False, True, False]
    inner = hurray.Composite("group", shape=(2,), dtype=hurray.float32, members=[a, ro])
    outer = hurray.Composite("group", shape=(1,), dtype=hurray.float32, members=[inner])
    assert outer[0][0].device.device_id == 3 and outer[0][1].read_only


def test_offset_errors_name_the_offset():
    a = t([[0, 1], [4, 5]])
    with pytest.raises(hurray.InvalidDescriptorError, match=r"offsets\[0\]"):
        hurray.Composite("partition", shape=(2, 2), dtype=hurray.float32, members=[a],
                         offsets=[(0, -1)])
    with pytest.raises(TypeError, match=r"offsets\[0\]"):
        hurray.Composite("partition", shape=(2, 2), dtype=hurray.float32, members=[a],
                         offsets=[(0, "x")])
