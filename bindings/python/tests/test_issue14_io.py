"""Issue 14, Python items 2-5: KV readable, arrays into save, streams over what
Python code has, load order and errors."""

import collections
import io
import pickle
import os
import pathlib
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

import hurray


# ---------------------------------------------------------------- item 2: KV


def test_kv_and_names_read_without_loading(tmp_path):
    p = tmp_path / "kv.hrry"
    kv = {"model": "tiny", "step": 7, "lr": 0.5, "ok": True, "blob": b"\x00\x01",
          "dims": [3, 4], "tags": ["a", "b"]}
    hurray.save(p, {"w": hurray.arange(4), "b": hurray.ones([2])}, kv=kv)
    assert hurray.load_kv(p) == kv
    assert list(hurray.load_kv(p)) == list(kv)  # file order
    with hurray.FileReader(p) as f:
        assert f.names == ["w", "b"] and list(f) == ["w", "b"] and len(f) == 2
        assert "w" in f and "x" not in f
        assert f.kv == kv
        w = f["w"]
        with pytest.raises(KeyError):
            f["x"]
    assert np.asarray(w).tolist() == [0, 1, 2, 3]  # outlives the reader
    with pytest.raises(hurray.FileError, match="closed"):
        f.kv
    assert hurray.load_kv(tmp_path / "kv.hrry") == kv
    hurray.save(p, {"w": hurray.arange(1)}, data_crc32c=True)
    assert list(hurray.load_kv(p)) == ["hurray.data_crc32c"]
    with pytest.raises(FileNotFoundError):
        hurray.load_kv(tmp_path / "nope.hrry")


def test_whole_kv_reads_are_bounded_and_kv_range_reaches_past_the_bound(tmp_path):
    # The library's HURRAY_KV_WHOLE_ARRAY_MAX, the same bound in every binding.
    bound = 1 << 20
    p = tmp_path / "big.hrry"
    big = [False] * (bound + 1)
    big[bound] = True
    hurray.save(p, {"w": hurray.arange(1)}, kv={"at_bound": big[:bound], "past_bound": big})
    for read in (lambda: hurray.load_kv(p), lambda: hurray.FileReader(p).kv):
        with pytest.raises(hurray.FileError) as e:
            read()
        assert '"past_bound" is an array of 1048577 elements, more than the 1048576' in str(e.value)
    with hurray.FileReader(p) as f:
        assert f.kv_len("past_bound") == bound + 1
        assert f.kv_range("past_bound", bound - 1, 2) == [False, True]
        assert f.kv_range("at_bound", 0, 3) == [False, False, False]
        assert f.kv_range("at_bound", bound, 0) == []
        with pytest.raises(ValueError, match="past the array"):
            f.kv_range("past_bound", bound, 2)
        with pytest.raises(KeyError):
            f.kv_len("nope")
    q = tmp_path / "small.hrry"
    hurray.save(q, {"w": hurray.arange(1)}, kv={"s": "héllo", "n": 3, "tags": ["a", "b c"]})
    with hurray.FileReader(q) as f:
        assert (f.kv_len("s"), f.kv_len("n"), f.kv_len("tags")) == (6, 1, 2)
        assert f.kv_range("tags", 1, 1) == ["b c"]
        with pytest.raises(ValueError, match="not an array"):
            f.kv_range("n", 0, 1)


# ---------------------------------------------------------------- item 3: save


def test_save_takes_arrays_dlpack_and_any_mapping(tmp_path):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)

    class Frozen(collections.abc.Mapping):
        def __init__(self, d):
            self.d = d

        def __getitem__(self, k):
            return self.d[k]

        def __iter__(self):
            return iter(self.d)

        def __len__(self):
            return len(self.d)

    values = {
        "c": base,
        "t": base.T,  # Fortran order: written column-major, no copy
        "slice": base[:, ::2],  # strided: copied
        "f": np.asfortranarray(base),
        "tensor": hurray.arange(3),
        "dl": hurray.arange(5, dtype=hurray.int32),  # a Tensor has __dlpack__ too
    }
    p = tmp_path / "arrays.hrry"
    hurray.save(p, Frozen(values))
    back = hurray.load(p)
    assert list(back) == list(values)
    assert back["t"].layout == hurray.ColMajorLayout()
    for k in ("c", "t", "slice", "f"):
        np.testing.assert_array_equal(np.asarray(back[k]), values[k])
    np.testing.assert_array_equal(np.asarray(back["dl"]), np.arange(5, dtype=np.int32))


def test_save_takes_a_dlpack_only_producer(tmp_path):
    class Producer:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    p = tmp_path / "dl.hrry"
    hurray.save(p, {"x": Producer(a), "y": Producer(a[:, ::2])})
    back = hurray.load(p)
    np.testing.assert_array_equal(np.asarray(back["x"]), a)
    np.testing.assert_array_equal(np.asarray(back["y"]), a[:, ::2])


def test_from_numpy_wraps_fortran_order_without_copy(aligned):
    a = aligned(np.arange(6.0).reshape(2, 3)).T
    t = hurray.from_numpy(a)
    assert t.layout == hurray.ColMajorLayout() and t.shape == (3, 2)
    assert t._buffer_address(0) == a.__array_interface__["data"][0]
    np.testing.assert_array_equal(np.asarray(t), a)
    with pytest.raises(hurray.UnsupportedError, match="ascontiguousarray"):
        hurray.from_numpy(np.arange(6.0)[::2])


# ---------------------------------------------------------------- item 4: streams


def stream_bytes(*tensors):
    w = hurray.StreamWriter()
    for t in tensors:
        w.write(t)
    return w.getvalue()


def test_stream_reader_takes_path_bytesio_and_readers(tmp_path):
    data = stream_bytes(hurray.arange(3), hurray.ones([2]))
    p = tmp_path / "s.stream"
    p.write_bytes(data)
    assert [t.shape for t in hurray.StreamReader(p)] == [(3,), (2,)]  # pathlib.Path
    assert [t.shape for t in hurray.StreamReader(io.BytesIO(data))] == [(3,), (2,)]

    class OnlyRead:  # read(n) only, short reads
        def __init__(self, b):
            self.b, self.i = b, 0

        def read(self, n):
            n = min(n, 7)
            out = self.b[self.i:self.i + n]
            self.i += len(out)
            return out

    assert [np.asarray(t).tolist() for t in hurray.StreamReader(OnlyRead(data))] == [[0, 1, 2], [1.0, 1.0]]


def test_stream_reader_starts_at_the_buffered_position(tmp_path):
    data = stream_bytes(hurray.arange(3))
    p = tmp_path / "h.stream"
    p.write_bytes(b"HDR!" + data)
    with open(p, "rb") as f:
        assert f.read(4) == b"HDR!"  # the buffered file read ahead past this
        got = [np.asarray(t).tolist() for t in hurray.StreamReader(f)]
    assert got == [[0, 1, 2]]


def test_stream_writer_lands_after_buffered_bytes(tmp_path):
    p = tmp_path / "w.stream"
    with open(p, "wb") as f:
        f.write(b"HDR!")  # still in f's buffer
        with hurray.StreamWriter(f) as w:
            w.write(hurray.arange(3))
        f.write(b"END")
    raw = p.read_bytes()
    assert raw.startswith(b"HDR!") and raw.endswith(b"END")
    assert [np.asarray(t).tolist() for t in hurray.StreamReader(raw[4:-3])] == [[0, 1, 2]]
    # the same through a raw descriptor owner after a flushable buffer
    b = io.BytesIO()
    b.write(b"X")
    with hurray.StreamWriter(b) as w:
        w.write(hurray.ones([1]))
    assert b.getvalue()[:1] == b"X"
    assert [t.shape for t in hurray.StreamReader(b.getvalue()[1:])] == [(1,)]
    # pathlib.Path destination
    q = tmp_path / "p.stream"
    with hurray.StreamWriter(q) as w:
        w.write(hurray.arange(2))
    assert [t.shape for t in hurray.StreamReader(q)] == [(2,)]


def test_stream_errors_from_python_objects_are_raised_as_they_are():
    class Failing:
        def write(self, b):
            raise ValueError("disk on fire")

    w = hurray.StreamWriter(Failing())
    with pytest.raises(ValueError, match="disk on fire"):
        w.write(hurray.arange(100))

    class BadRead:
        def readinto(self, b):
            raise KeyError("gone")

    with pytest.raises(KeyError, match="gone"):
        next(hurray.StreamReader(BadRead()))


def test_sources_that_cannot_be_streamed_are_errors_not_an_early_end():
    buf = io.BytesIO()
    with hurray.StreamWriter(buf) as w:
        w.write(hurray.arange(10))
    data = buf.getvalue()

    class NonBlocking:  # a non-blocking raw file with no bytes ready
        def read(self, n):
            return None

    with pytest.raises(BlockingIOError, match="non-blocking"):
        next(hurray.StreamReader(NonBlocking()))

    class NonBlockingInto:
        def readinto(self, b):
            return None

    with pytest.raises(BlockingIOError, match="non-blocking"):
        next(hurray.StreamReader(NonBlockingInto()))

    class TooMuch:  # read(n) returning more than n would lose stream bytes
        def __init__(self):
            self.src = io.BytesIO(data)

        def read(self, n):
            return self.src.read(n + 3)

    with pytest.raises(ValueError, match="more than asked"):
        list(hurray.StreamReader(TooMuch()))

    class Honest:  # the same bytes, read as asked, decode
        def __init__(self):
            self.src = io.BytesIO(data)

        def read(self, n):
            return self.src.read(n)

    [t] = list(hurray.StreamReader(Honest()))
    assert np.array_equal(np.asarray(t), np.arange(10))


def test_stream_writer_with_block_lets_the_first_error_through(tmp_path):
    p = tmp_path / "text.txt"
    with pytest.raises(TypeError, match="str"):
        # A text file cannot take bytes: that TypeError is what the user sees,
        # not the writer's follow-up "abandoned" error from __exit__.
        with open(p, "w") as f, hurray.StreamWriter(f) as w:
            w.write(hurray.arange(4))
    with pytest.raises(ZeroDivisionError):
        with hurray.StreamWriter(io.BytesIO()) as w:
            w.write(hurray.arange(4))
            1 / 0


def test_layout_sequences_refuse_str_in_python_terms():
    for make in (hurray.StridedLayout, hurray.MortonLayout, lambda s: hurray.CsfLayout(1, s),
                 hurray.TiledLayout, lambda s: hurray.Shard(s, [0])):
        with pytest.raises(TypeError) as e:
            make("x")
        assert "Vec" not in str(e.value) and "sequence of integers, not str" in str(e.value)
    assert hurray.StridedLayout((4, 1)).strides == (4, 1)
    with pytest.raises(TypeError):
        hurray.StridedLayout([1, "a"])


# ---------------------------------------------------------------- item 5: order, errors


def test_load_returns_index_order_for_a_sorted_index(tmp_path):
    p = tmp_path / "u.hrry"
    tensors = {"z": hurray.arange(1), "a": hurray.arange(2), "m": hurray.arange(3)}
    hurray.save(p, tensors)
    assert list(hurray.load(p)) == ["z", "a", "m"]  # unsorted index: write order
    s = tmp_path / "s.hrry"
    hurray.save(s, tensors, sorted_index=True)  # data in write order, index sorted
    assert list(hurray.load(s)) == ["a", "m", "z"]
    assert hurray.FileReader(s).names == ["a", "m", "z"]
    assert [t.shape for t in hurray.load(s).values()] == [(2,), (3,), (1,)]
    assert list(hurray.load(s, names=["z", "a"])) == ["z", "a"]  # names: order given


def test_missing_file_and_bad_names():
    with pytest.raises(FileNotFoundError) as e:
        hurray.load("/nonexistent/x.hrry")
    assert e.value.filename == "/nonexistent/x.hrry" and isinstance(e.value, hurray.FileError)
    with pytest.raises(FileNotFoundError) as e:
        hurray.StreamReader("/nonexistent/s.stream")
    assert e.value.filename == "/nonexistent/s.stream"
    with pytest.raises(FileNotFoundError) as e:
        hurray.StreamWriter(pathlib.Path("/nonexistent/dir/s.stream"))
    assert e.value.filename == "/nonexistent/dir/s.stream"
    with pytest.raises(FileNotFoundError):
        hurray.FileReader("/nonexistent/x.hrry")


def test_names_errors_have_no_pyo3_internals(tmp_path):
    p = tmp_path / "n.hrry"
    hurray.save(p, {"x": hurray.arange(2)})
    with pytest.raises(TypeError) as e:
        hurray.load(p, names="x")
    assert "Vec" not in str(e.value) and "list of str" in str(e.value)
    with pytest.raises(TypeError, match="int"):
        hurray.load(p, names=[1])
    with pytest.raises(TypeError, match="list of str"):
        hurray.load(p, names=3)
    assert list(hurray.load(p, names=("x",))) == ["x"]


def test_broken_pipe_is_broken_pipe_error():
    a, b = socket.socketpair()
    b.close()
    with a:
        w = hurray.StreamWriter(a)
        with pytest.raises(BrokenPipeError) as e:
            for _ in range(100):
                w.write(hurray.zeros([1 << 16]))
        assert isinstance(e.value, hurray.FileError)
    r, wfd = os.pipe()
    os.close(r)
    with os.fdopen(wfd, "wb") as f:
        w = hurray.StreamWriter(f)
        with pytest.raises(BrokenPipeError):
            for _ in range(100):
                w.write(hurray.zeros([1 << 16]))
        try:
            f.close()
        except BrokenPipeError:
            pass


def test_star_import_keeps_builtins():
    ns = {}
    exec("from hurray import *", ns)
    assert "bool" not in ns and "BufferError" not in ns
    assert "load_kv" in ns and "FileReader" in ns and "save" in ns
    out = subprocess.run(
        [sys.executable, "-c", "from hurray import *; print(bool(1), BufferError.__module__)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert out == ["True", "builtins"]


# ---------------------------------------------------------------- must show 2


def test_twenty_arrays_of_every_dtype_round_trip(tmp_path):
    """Saves 20 arrays covering every NumPy dtype the format has (bfloat16 through
    ml_dtypes), a slice and a transposed array included, and loads them back equal."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(14)
    base = rng.standard_normal((6, 8)).astype(np.float32)
    arrays = {
        "bool": rng.random((5, 7)) > 0.5,
        "int8": rng.integers(-128, 127, (9,), dtype=np.int8),
        "uint8": rng.integers(0, 255, (3, 3), dtype=np.uint8),
        "int16": rng.integers(-9999, 9999, (4, 5), dtype=np.int16),
        "uint16": rng.integers(0, 65535, (17,), dtype=np.uint16),
        "int32": rng.integers(-(2**31), 2**31 - 1, (2, 3, 4), dtype=np.int32),
        "uint32": rng.integers(0, 2**32 - 1, (8,), dtype=np.uint32),
        "int64": rng.integers(-(2**62), 2**62, (6,), dtype=np.int64),
        "uint64": rng.integers(0, 2**63, (6,), dtype=np.uint64),
        "float16": rng.standard_normal((4, 4)).astype(np.float16),
        "bfloat16": rng.standard_normal((3, 5)).astype(ml_dtypes.bfloat16),
        "float32": base,
        "float64": rng.standard_normal((2, 2, 2)),
        "complex64": (rng.standard_normal(5) + 1j * rng.standard_normal(5)).astype(np.complex64),
        "complex128": rng.standard_normal(3) + 1j * rng.standard_normal(3),
        "slice": base[1:5, ::3],
        "transposed": base.T,
        "bool_transposed": (rng.random((3, 4)) > 0.5).T,
        "scalar": np.array(2.5, dtype=np.float64),
        "empty": np.zeros((0, 3), dtype=np.int32),
    }
    assert len(arrays) == 20
    p = tmp_path / "every.hrry"
    hurray.save(p, arrays)
    back = hurray.load(p)
    assert list(back) == list(arrays)
    for name, want in arrays.items():
        got = np.asarray(back[name])
        assert got.dtype == want.dtype, name
        assert got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    assert back["bool"].dtype == hurray.bool and back["bfloat16"].dtype == hurray.bfloat16


# ---------------------------------------------------------------- item 6: pickling


def test_pickle_below_protocol_5_carries_numpy_buffers():
    import pickle

    t = hurray.arange(1 << 16, dtype=hurray.float32)
    for proto in (2, 3, 4):
        payload = pickle.dumps(t, protocol=proto)
        # the buffer travels as a NumPy array (unpickled over the pickle's bytes,
        # wrapped without a second copy), once
        assert b"numpy" in payload
        if proto == 4:  # binary bytes: the 256 KiB once, plus the descriptor
            assert len(payload) < (1 << 18) + 4096
        u = pickle.loads(payload)
        a = np.asarray(u)
        assert a.tolist() == list(range(1 << 16)) and a.flags.writeable
        a[0] = 5.0
        assert np.asarray(u)[0] == 5.0 and np.asarray(t)[0] == 0.0


def test_multiprocessing_reducer_registered_at_import():
    code = ("import multiprocessing.reduction as r, hurray; "
            "print(r.ForkingPickler._extra_reducers.get(hurray.Tensor).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "mp_reduce"
    # and hurray alone does not import multiprocessing
    code = "import sys, hurray; print('multiprocessing' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _mp_child(conn):
    while True:
        obj = conn.recv()
        if obj is None:
            return
        a = np.asarray(obj).reshape(-1)
        a[0] += 1  # writable, and private to this process
        conn.send((obj.dtype.name, obj.shape, float(a[0]), float(a[-1]), float(a.sum(dtype=np.float64))))


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_multiprocessing_sends_large_tensors_through_a_memfd(method):
    import multiprocessing as mp
    import multiprocessing.reduction as red

    from hurray import _glue

    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    # hurray was imported before multiprocessing here: the first pickling of a
    # tensor registers the reducer (a program importing multiprocessing first
    # gets it at `import hurray`: test_multiprocessing_reducer_registered_at_import)
    pickle.dumps(hurray.arange(1))
    assert red.ForkingPickler._extra_reducers.get(hurray.Tensor) is _glue.mp_reduce
    big = hurray.from_numpy(np.arange(1 << 19, dtype=np.float32).reshape(512, 1024))  # 2 MiB
    if hasattr(os, "memfd_create"):
        # the pickle carries a descriptor handle, not the 2 MiB
        assert len(red.ForkingPickler.dumps(big)) < 4096
    small = hurray.arange(5)
    ctx = mp.get_context(method)
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_mp_child, args=(child,))
    p.start()
    try:
        parent.send(big)
        n = 1 << 19
        assert parent.recv() == ("float32", (512, 1024), 1.0, float(n - 1), n * (n - 1) / 2 + 1)
        parent.send(small)
        assert parent.recv() == ("int64", (5,), 1.0, 4.0, 11.0)
    finally:
        parent.send(None)
        p.join(60)
    assert np.asarray(big)[0, 0] == 0.0  # the child's write stayed there
