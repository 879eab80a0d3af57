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
        hurray.save(p, {"a": object()})
    with pytest.raises(hurray.UnsupportedError):
        hurray.save(p, {"a": np.array(["s"])})
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


def flip_data_byte(path, values):
    """Flips one bit inside the bytes of ``values`` (a NumPy array) in the file."""
    raw = bytearray(open(path, "rb").read())
    at = raw.find(values.tobytes())
    assert at > 0, "the tensor's data is not in the file"
    raw[at + 5] ^= 0x01
    open(path, "wb").write(bytes(raw))


def test_data_crc32c_names_the_tensor_whose_byte_flipped(tmp_path):
    p = str(tmp_path / "crc.hrry")
    weight = np.arange(5000, 5016, dtype=np.float32)
    tensors = {"bias": hurray.from_numpy(np.arange(8, dtype=np.float32)), "weight": hurray.from_numpy(weight)}
    hurray.save(p, tensors, kv={"k": 1}, data_crc32c=True)
    assert hurray.verify_data_crc32c(p) is True
    assert list(hurray.load(p, verify_data_crc32c=True)) == ["bias", "weight"]
    flip_data_byte(p, weight)
    # Opening does not read data: a plain load still succeeds and shows the flip.
    assert np.asarray(hurray.load(p)["weight"])[1] != 5001
    for check in (lambda: hurray.verify_data_crc32c(p), lambda: hurray.load(p, verify_data_crc32c=True)):
        with pytest.raises(hurray.FileError) as e:
            check()
        assert "DataCrcMismatch" in str(e.value) and 'tensor "weight"' in str(e.value), str(e.value)
        assert "crc.hrry" in str(e.value)
    # The reserved key is refused as user metadata, with or without the option.
    for crc in (True, False):
        with pytest.raises(hurray.FileError, match="ReservedKey"):
            hurray.save(str(tmp_path / "dup.hrry"), tensors, kv={"hurray.data_crc32c": 1}, data_crc32c=crc)


def test_data_crc32c_is_off_by_default_and_absence_is_its_own_answer(tmp_path):
    a, b = str(tmp_path / "a.hrry"), str(tmp_path / "b.hrry")
    weight = np.arange(5000, 5016, dtype=np.float32)
    hurray.save(a, {"weight": hurray.from_numpy(weight)})
    hurray.save(b, {"weight": hurray.from_numpy(weight)}, data_crc32c=False)
    assert open(a, "rb").read() == open(b, "rb").read()
    assert hurray.verify_data_crc32c(a) is False
    flip_data_byte(a, weight)
    assert hurray.verify_data_crc32c(a) is False  # unchecked, never "verified"
    with pytest.raises(hurray.FileError, match="records no data CRC-32C"):
        hurray.load(a, verify_data_crc32c=True)
    with pytest.raises(hurray.FileNotFoundError):
        hurray.verify_data_crc32c(str(tmp_path / "missing.hrry"))


def test_save_durable_and_scratch_write_the_same_file_atomically(tmp_path):
    a, b = tmp_path / "a.hrry", tmp_path / "b.hrry"
    a.write_bytes(b"an older file")
    hurray.save(a, sample(), kv={"k": 1})  # durable by default: fsync, rename, fsync dir
    hurray.save(b, sample(), kv={"k": 1}, durable=False)
    assert a.read_bytes() == b.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["a.hrry", "b.hrry"], "no temporary file is left"
    with pytest.raises(TypeError):
        hurray.save(a, sample(), None, False)  # durable is keyword-only
    # A save that fails at the rename (over a non-empty directory) leaves it as it was.
    d = tmp_path / "dir.hrry"
    d.mkdir()
    (d / "inside").write_bytes(b"keep")
    with pytest.raises(hurray.FileError):
        hurray.save(d, sample())
    assert (d / "inside").read_bytes() == b"keep"
    assert sorted(os.listdir(tmp_path)) == ["a.hrry", "b.hrry", "dir.hrry"]


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


def test_stream_reader_reuses_the_memory_of_freed_tensors():
    # 1 MiB, then 768 KiB: a fresh mapping of the smaller size would not start where
    # the freed one did; the reader's pool hands back the same allocation.
    sizes = [1 << 18, 3 << 16, 1 << 18, 1 << 18]
    w = hurray.StreamWriter()
    for k, n in enumerate(sizes):
        w.write(hurray.from_numpy(np.full(n, k, dtype=np.float32)))
    r = hurray.StreamReader(w.getvalue())  # the bytes object lives only in the reader
    a = next(r)
    addr = a._buffer_address(0)
    assert np.asarray(a)[-1] == 0
    del a  # its memory goes back to the reader's pool
    b = next(r)
    assert b._buffer_address(0) == addr
    arr = np.asarray(b)
    assert arr.shape == (3 << 16,) and (arr == 1).all()
    c = next(r)  # b is alive: c gets other memory, and b keeps its values
    assert c._buffer_address(0) != addr
    assert (np.asarray(c) == 2).all() and (arr == 1).all()
    del arr, b, c
    (d,) = list(r)
    assert (np.asarray(d) == 3).all()


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

    # io.BytesIO works both ways since issue 14 (tests/test_issue14_io.py)
    assert list(hurray.StreamReader(io.BytesIO(b""))) == []
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


DEVICE_KINDS = ["cuda", "rocm", "metal", "vulkan", "opencl", "webgpu", "hexagon", "level_zero"]


def device_tensor(kind, memory_class=None):
    dev = hurray.Device(kind, 3, memory_class)
    return hurray.Tensor(bytes(range(6)), hurray.int8, [2, 3], dev,
                         aux_buffers=[struct.pack("<3f", 1, 2, 3)],
                         quantization=hurray.PerChannelAffine.symmetric(1, 1))


@pytest.mark.parametrize("kind", DEVICE_KINDS)
def test_pickle_protocol_5_of_device_tensors(kind):
    # Device buffers here are host memory tagged with a device: protocol 5 carries
    # their bytes (NumPy's DLPack import refuses non-CPU devices, so the buffers
    # are viewed as CPU bytes) and the device, memory class and id come back.
    tried = 0
    for mc in (None, "host_pinned", "unified", "peer"):
        try:
            t = device_tensor(kind, mc)
        except hurray.InvalidDescriptorError:
            continue  # a memory class this device kind does not have
        tried += 1
        want = [t._buffer_bytes(i) for i in range(t.buffer_count)]
        for oob in (False, True):
            bufs = []
            payload = pickle.dumps(t, protocol=5, buffer_callback=bufs.append if oob else None)
            assert len(bufs) == (2 if oob else 0)
            u = pickle.loads(payload, buffers=bufs)
            assert u.device == t.device and u.device.device_id == 3, (kind, mc)
            assert u._descriptor_bytes() == t._descriptor_bytes()
            assert [u._buffer_bytes(i) for i in range(u.buffer_count)] == want
            if oob:  # out of band and writable: no copy
                assert u._buffer_address(0) == t._buffer_address(0)
        for proto in (2, 4):
            u = pickle.loads(pickle.dumps(t, protocol=proto))
            assert u.device == t.device and u._buffer_bytes(0) == want[0]
    assert tried >= 1


def test_unpickling_never_hands_out_writable_views_of_read_only_buffers(aligned):
    t = hurray.from_numpy(np.arange(4, dtype=np.uint8))
    bufs = []
    payload = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    raw = bytes(bufs[0].raw())
    keep = bytes(raw)

    # bytes (an in-band copy, maybe a shared cached object): copied, writable.
    u = pickle.loads(payload, buffers=[raw])
    a = np.asarray(u)
    assert a.flags.writeable and not u.read_only
    a[:] = 99
    assert raw == keep
    # A read-only memoryview (an object store's buffer, issue 19): wrapped without
    # a copy when 64-byte aligned (decision 5), and the tensor is read-only: no
    # export writes into it. Memory below 64 bytes (a bytes object's, a small
    # bytearray's) is copied once into aligned memory and stays read-only.
    al = aligned(np.frombuffer(raw, np.uint8))
    for given in (memoryview(al).toreadonly(), memoryview(raw), memoryview(bytearray(raw)).toreadonly()):
        u = pickle.loads(payload, buffers=[given])
        assert u.read_only
        src = np.frombuffer(given, np.uint8).ctypes.data
        if given.obj is al:
            assert u._buffer_address(0) == src
        else:
            assert u._buffer_address(0) % 64 == 0
            assert src % 64 == 0 or u._buffer_address(0) != src
        a = np.asarray(u)
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[:] = 99
        assert bytes(given) == keep, type(given)
    for proto in (2, 4):
        u = pickle.loads(pickle.dumps(t, protocol=proto))
        np.asarray(u)[:] = 7  # writes into the tensor's own copy
        assert np.asarray(u).tolist() == [7] * 4

    # Writable out-of-band memory is still wrapped without a copy (when aligned).
    wa = aligned(np.frombuffer(raw, np.uint8))
    u = pickle.loads(payload, buffers=[wa])
    assert not u.read_only and u._buffer_address(0) == wa.ctypes.data
    np.asarray(u)[0] = 42
    assert wa[0] == 42
    ba = bytearray(raw)
    u = pickle.loads(payload, buffers=[ba])
    assert not u.read_only and np.asarray(u).tolist() == list(keep)
    del u
    ba.append(0)  # the tensor's export is gone, so the bytearray may resize again

    # A producer that pickled a read-only buffer: the unpickler hands the
    # out-of-band buffer back as a read-only memoryview (READONLY_BUFFER), even
    # over writable memory; the tensor wraps it read-only (no copy, no write).
    class ReadOnlyPickled:
        def __reduce_ex__(self, protocol):
            return (hurray._native._rebuild,
                    (t._descriptor_bytes(), [pickle.PickleBuffer(keep)], 0))

    bufs = []
    payload = pickle.dumps(ReadOnlyPickled(), protocol=5, buffer_callback=bufs.append)
    ba = aligned(np.frombuffer(raw, np.uint8))
    u = pickle.loads(payload, buffers=[ba])
    assert u.read_only and u._buffer_address(0) == np.frombuffer(ba, np.uint8).ctypes.data
    with pytest.raises(ValueError):
        np.asarray(u)[:] = 5
    assert bytes(ba) == keep
    # Asked for a writable tensor (read_only=False), the same buffer is copied.
    w = hurray._native._rebuild(t._descriptor_bytes(), [memoryview(ba).toreadonly()], 0, False)
    np.asarray(w)[:] = 5
    assert bytes(ba) == keep and np.asarray(w).tolist() == [5] * 4


def test_stream_objects_are_bound_to_their_thread(tmp_path, capfd):
    import threading

    p = str(tmp_path / "s.stream")
    with hurray.StreamWriter(p) as w:
        w.write(hurray.arange(4))
    r = hurray.StreamReader(p)
    w = hurray.StreamWriter()
    errors = []

    def other():
        for call in (lambda: next(r), r.close, lambda: iter(r), lambda: r.__enter__(),
                     lambda: w.write(hurray.arange(2)), w.getvalue, w.finish):
            try:
                call()
                errors.append(None)
            except BaseException as e:  # noqa: BLE001 (a PyO3 PanicException is a BaseException)
                errors.append(e)

    th = threading.Thread(target=other)
    th.start()
    th.join()
    assert len(errors) == 7
    assert capfd.readouterr().err == ""  # no panic message or backtrace
    assert all(type(e) is RuntimeError and "thread" in str(e) for e in errors), errors
    # Still fully usable on the creating thread.
    assert [x.shape for x in r] == [(4,)]
    w.write(hurray.arange(2))
    assert w.getvalue()


DROP_ELSEWHERE = r"""
import os, sys, threading, hurray
p = sys.argv[1]
with hurray.StreamWriter(p) as w:
    w.write(hurray.arange(4))
def fds():
    return len(os.listdir("/proc/self/fd"))
base = fds()
box = [hurray.StreamReader(p) for _ in range(8)] + [hurray.StreamWriter(p + str(i)) for i in range(8)]
assert fds() == base + 16, (fds(), base)
def drop():
    box.clear()  # the last references go away on this thread
th = threading.Thread(target=drop)
th.start(); th.join()
assert fds() == base, (fds(), base)
print("ok")
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_stream_objects_dropped_on_another_thread_close_their_descriptor(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", DROP_ELSEWHERE, str(tmp_path / "d.stream")],
                       capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout.strip(), r.stderr) == (0, "ok", ""), r.stderr


def test_load_of_a_directory_or_non_file_says_so(tmp_path):
    with pytest.raises(hurray.FileError, match="(?i)is a directory"):
        hurray.load(str(tmp_path))
    if os.path.exists("/dev/null"):
        with pytest.raises(hurray.FileError, match="not a regular file"):
            hurray.load("/dev/null")


def test_replacing_or_deleting_a_loaded_file_leaves_its_tensors_intact(tmp_path):
    # What docs/python.md promises for mapped files: save (write + rename) over a
    # loaded path, and deleting it, keep the old contents visible. (Truncating it
    # in place is undefined, SIGBUS; not tested.)
    p = str(tmp_path / "m.hrry")
    hurray.save(p, {"x": hurray.from_numpy(np.arange(100_000, dtype=np.float64))})
    x = hurray.load(p)["x"]
    a = np.asarray(x)
    hurray.save(p, {"x": hurray.zeros([5])})
    assert hurray.load(p)["x"].shape == (5,)
    os.remove(p)
    assert a[-1] == 99_999 and np.asarray(x)[:3].tolist() == [0, 1, 2]
    owned = pickle.loads(pickle.dumps(x))  # an owned copy, for any layout
    assert np.asarray(owned)[-1] == 99_999 and owned._buffer_address(0) != x._buffer_address(0)


def test_five_bad_inputs_raise_the_conventional_errors(tmp_path):
    """Missing path, directory, empty file, truncated file, random bytes: each the
    conventional Python error (an OSError subclass with errno and filename where the
    OS reported it) that is also hurray.FileError, with a message naming the path."""
    import builtins
    import errno

    good = tmp_path / "good.hrry"
    hurray.save(good, sample(), durable=False)
    raw = good.read_bytes()
    missing = tmp_path / "missing.hrry"
    with pytest.raises(builtins.FileNotFoundError) as e:
        hurray.load(missing)
    assert isinstance(e.value, hurray.FileError) and isinstance(e.value, hurray.FileNotFoundError)
    assert e.value.errno == errno.ENOENT and e.value.filename == str(missing)
    assert str(missing) in str(e.value)

    with pytest.raises(builtins.IsADirectoryError) as e:
        hurray.load(tmp_path)
    assert isinstance(e.value, hurray.FileError)
    assert e.value.errno == errno.EISDIR and e.value.filename == str(tmp_path)
    assert str(tmp_path) in str(e.value)

    empty = tmp_path / "empty.hrry"
    empty.write_bytes(b"")
    cut = tmp_path / "cut.hrry"
    cut.write_bytes(raw[:-100])
    rnd = tmp_path / "random.hrry"
    rnd.write_bytes(bytes((i * 7919 + 13) % 256 for i in range(4096)))
    for path, text in (
        (empty, "Truncated at byte 0"),
        (cut, f"Truncated at byte {len(raw) - 100}"),
        (rnd, "Magic at byte 0"),
    ):
        with pytest.raises(hurray.FileError) as e:
            hurray.load(path)
        # Not an OS error: no errno, and the path is in the message (Python prints
        # OSError with a filename as "[Errno None] ...", so filename stays unset).
        assert isinstance(e.value, OSError) and e.value.errno is None
        assert str(path) in str(e.value) and text in str(e.value), str(e.value)
