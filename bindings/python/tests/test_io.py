"""save/load (memory-mapped, copy-on-write), streams, and pickle protocol 5."""

import os
import pickle
import socket
import struct

import pytest

import hurray

np = pytest.importorskip("numpy")


def mapping_of(path):
    """(start, end) address ranges of mappings of ``path`` in this process."""
    real = os.path.realpath(path)
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == real:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi))
    return out


def sample():
    return {
        "w": hurray.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4)),
        "coo": hurray.sparse_coo(np.array([1, 2], np.int32), np.array([[0, 1], [1, 0]], np.uint64), [2, 2]),
        "q": hurray.Tensor(bytes(4), hurray.int8, [2, 2], aux_buffers=[struct.pack("<2f", 1, 2)],
                           quantization=hurray.PerChannelAffine.symmetric(0, 1),
                           statistics=hurray.Statistics(nnz=0)),
        "b": hurray.ones([3], dtype=hurray.bool, device=hurray.Device("cuda", 1, "unified")),
    }


def test_save_load_round_trip_in_order(tmp_path):
    p = str(tmp_path / "m.hrry")
    hurray.save(p, sample(), kv={"name": "x", "n": 3, "ok": True, "f": 0.5, "raw": b"\0", "xs": [1, 2]})
    got = hurray.load(p)
    assert list(got) == ["w", "coo", "q", "b"]
    assert np.asarray(got["w"]).tolist() == np.arange(12).reshape(3, 4).tolist()
    assert got["coo"].layout == hurray.CooLayout(2) and np.asarray(got["coo"].values).tolist() == [1, 2]
    assert isinstance(got["q"].quantization, hurray.PerChannelAffine) and got["q"].statistics.nnz == 0
    assert (got["b"].device.kind, got["b"].device.memory_class, got["b"].device.device_id) == ("cuda", "unified", 0)
    sub = hurray.load(p, names=["q", "w"])
    assert list(sub) == ["q", "w"]
    hurray.save(tmp_path / "pathlike.hrry", {"w": got["w"]})  # os.PathLike accepted too


def test_load_views_the_mapping_and_writes_stay_private(tmp_path):
    p = str(tmp_path / "big.hrry")
    hurray.save(p, {"x": hurray.arange(1 << 16, dtype=hurray.int32)})
    t = hurray.load(p)["x"]
    a = np.asarray(t)
    ranges = mapping_of(p)
    assert ranges, "the file is not mapped"
    ptr = a.__array_interface__["data"][0]
    assert any(lo <= ptr and ptr + a.nbytes <= hi for lo, hi in ranges)
    a[0] = -7  # copy-on-write: the process sees it, the file does not
    assert np.asarray(hurray.load(p)["x"])[0] == 0 and a[0] == -7


def test_save_errors(tmp_path):
    p = str(tmp_path / "e.hrry")
    t = hurray.zeros([1])
    with pytest.raises(TypeError):
        hurray.save(p, [("a", t)])
    with pytest.raises(TypeError):
        hurray.save(p, {1: t})
    with pytest.raises(hurray.UnsupportedError):
        hurray.save(p, {"a": np.zeros(1)})
    with pytest.raises(hurray.FileError):
        hurray.save(p, {"": t})
    with pytest.raises(hurray.FileError):
        hurray.save(p, {"a" * 70000: t})
    for bad in ({"k": []}, {"k": [1, "a"]}, {"k": [[1]]}, {"k": None}, {"": 1}, {"k": 2**70}):
        with pytest.raises(hurray.FileError):
            hurray.save(p, {"a": t}, kv=bad)
    with pytest.raises(hurray.FileError):
        hurray.save(str(tmp_path / "missing" / "x.hrry"), {"a": t})
    assert not os.path.exists(p), "a failed save left a file behind"


def test_load_bad_files(tmp_path):
    p = tmp_path / "ok.hrry"
    hurray.save(str(p), {"a": hurray.arange(100)})
    data = p.read_bytes()
    with pytest.raises(hurray.FileError):
        hurray.load(str(tmp_path / "nope.hrry"))
    with pytest.raises(hurray.FileError, match="no tensor named"):
        hurray.load(str(p), names=["zz"])
    trunc = tmp_path / "trunc.hrry"
    trunc.write_bytes(data[: len(data) - 7])
    with pytest.raises(hurray.FileError):
        hurray.load(str(trunc))
    magic = tmp_path / "magic.hrry"
    magic.write_bytes(b"XXXXFILE" + data[8:])
    with pytest.raises(hurray.FileError, match="Magic"):
        hurray.load(str(magic))
    # Corrupt the descriptor's own magic (the first tensor starts after the 64-byte header).
    at = data.index(b"HRRY", 64)
    bad = tmp_path / "desc.hrry"
    bad.write_bytes(data[:at] + b"HRRZ" + data[at + 4:])
    with pytest.raises((hurray.InvalidDescriptorError, hurray.FileError), match="Magic|magic"):
        hurray.load(str(bad))
    with pytest.raises(TypeError):
        hurray.load(3)


def test_stream_in_memory_round_trip():
    w = hurray.StreamWriter()
    for t in sample().values():
        w.write(t)
    data = w.getvalue()
    assert w.getvalue() == b""  # drained
    w.finish()
    w.finish()  # idempotent
    with pytest.raises(hurray.StreamError):
        w.write(hurray.zeros([1]))
    got = list(hurray.StreamReader(data))
    assert [t.layout.name for t in got] == ["row_major", "coo", "row_major", "row_major"]
    assert np.asarray(got[0]).sum() == 66 and got[2].quantization.scale_buffer_index == 1
    assert list(hurray.StreamReader(bytearray(data)))[0].shape == (3, 4)
    assert list(hurray.StreamReader(memoryview(data)))[0].shape == (3, 4)
    with hurray.StreamWriter() as empty:
        pass
    assert empty.getvalue() == b""


def test_stream_transports(tmp_path):
    p = str(tmp_path / "s.stream")
    with hurray.StreamWriter(p) as w:
        w.write(hurray.arange(3))
        with pytest.raises(hurray.StreamError, match="destination"):
            w.getvalue()
    with hurray.StreamReader(p) as r:
        assert [t.shape for t in r] == [(3,)]
    a, b = socket.socketpair()
    with a, b:
        w = hurray.StreamWriter(a)
        w.write(hurray.ones([2]))
        w.finish()
        a.shutdown(socket.SHUT_WR)
        r = hurray.StreamReader(b)
        assert next(r).shape == (2,)
        assert list(r) == []
        assert b.fileno() >= 0  # the caller's socket stays open
    import io

    with pytest.raises(TypeError, match="getvalue"):
        hurray.StreamReader(io.BytesIO(b""))
    with pytest.raises(TypeError):
        hurray.StreamWriter(io.BytesIO())
    with pytest.raises(TypeError):
        hurray.StreamWriter(b"")
    with pytest.raises(hurray.FileError):
        hurray.StreamReader(str(tmp_path / "missing"))
    with pytest.raises(TypeError):
        hurray.StreamWriter().write(np.zeros(1))


def test_stream_errors_and_close():
    w = hurray.StreamWriter()
    w.write(hurray.arange(100))
    w.write(hurray.arange(100))
    data = w.getvalue()
    r = hurray.StreamReader(data[: len(data) - 3])
    assert next(r).shape == (100,)  # items arrive before the stream ends
    with pytest.raises(hurray.StreamError, match="Truncated"):
        next(r)
    half = len(data) // 2
    assert len(list(hurray.StreamReader(data[:half]))) == 1  # a cut on a boundary is a shorter stream
    with pytest.raises((hurray.InvalidDescriptorError, hurray.StreamError)):
        list(hurray.StreamReader(b"garbage!" * 8))
    r = hurray.StreamReader(data)
    r.close()
    assert list(r) == []


def test_pickle_protocol_5_out_of_band_is_zero_copy():
    t = hurray.from_numpy(np.arange(1000, dtype=np.float64))
    bufs = []
    payload = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    assert len(payload) < 400 and len(bufs) == 1
    u = pickle.loads(payload, buffers=bufs)
    assert u._buffer_address(0) == t._buffer_address(0)
    assert np.asarray(u).sum() == sum(range(1000))


def test_pickle_in_band_and_sections():
    s = sample()
    for proto in (2, 4, 5):
        for name, t in s.items():
            u = pickle.loads(pickle.dumps(t, protocol=proto))
            assert u._descriptor_bytes() == t._descriptor_bytes(), name
            assert u.device == t.device or u.device.device_id == t.device.device_id
    d = hurray.Tensor(bytes(2), hurray.uint8, [2], hurray.Device("cuda", 7))
    assert pickle.loads(pickle.dumps(d)).device.device_id == 7


def test_pickle_across_processes():
    import multiprocessing as mp

    t = hurray.arange(10, dtype=hurray.int16)
    with mp.get_context("spawn").Pool(1) as pool:
        total = pool.apply(_sum, (t,))
    assert total == 45


def _sum(t):
    import numpy

    return int(numpy.asarray(t).sum())
