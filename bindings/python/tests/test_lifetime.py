"""Lifetime: every handle released exactly once, from any thread, and at
interpreter shutdown without a crash."""

import gc
import subprocess
import sys
import threading
import weakref

import pytest

import hurray
from hurray import _native
from conftest import live_after_gc

np = pytest.importorskip("numpy")


class Watched(np.ndarray):
    """An ndarray that can be watched with a weakref."""


def watched(n=16):
    # 64-byte aligned, so from_numpy wraps it (keeps it alive) instead of copying.
    a = hurray.empty_aligned(n, np.float32).view(Watched)
    a[:] = np.arange(n)
    return a, weakref.ref(a)


def test_producer_memory_released_once_with_the_last_view():
    a, ref = watched()
    t = hurray.from_numpy(a)
    del a
    view = np.asarray(t.buffer(0))
    cap = t.__dlpack__(max_version=(1, 0))
    del t
    gc.collect()
    assert ref() is not None  # the view and the capsule keep it alive
    del view
    gc.collect()
    assert ref() is not None
    del cap
    gc.collect()
    assert ref() is None
    assert live_after_gc() == 0


def test_release_from_another_thread():
    a, ref = watched()
    box = [hurray.from_numpy(a), np.asarray(hurray.from_numpy(a))]
    del a
    done = []

    def drop():
        box.clear()
        gc.collect()
        done.append(True)

    th = threading.Thread(target=drop)
    th.start()
    th.join()
    assert done and ref() is None and live_after_gc() == 0


def test_release_from_a_native_thread_via_saved_stream():
    # save() releases the GIL while writing; tensors dropped meanwhile elsewhere are fine.
    ts = {f"t{i}": hurray.arange(1000) for i in range(8)}
    results = []

    def writer(path):
        hurray.save(path, dict(ts))
        results.append(path)

    import tempfile, os

    d = tempfile.mkdtemp()
    ths = [threading.Thread(target=writer, args=(os.path.join(d, f"{i}.hrry"),)) for i in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    ts.clear()
    assert len(results) == 4 and live_after_gc() == 0
    assert hurray.load(results[0])["t7"].shape == (1000,)


def test_views_keep_parents_and_count_returns_to_zero():
    t = hurray.sparse_coo(np.ones(3, np.float32), np.array([[0, 0], [1, 1], [2, 3]], np.uint64), [4, 4])
    parts = [t.values, t.indices, t.buffer(0), t.__hurray__(), hurray.from_hurray(t)]
    del t
    gc.collect()
    assert np.asarray(parts[0]).tolist() == [1, 1, 1]
    assert _native._live_objects() > 0
    del parts
    assert live_after_gc() == 0


SHUTDOWN = r"""
import threading, hurray, numpy as np
keep = []
a = np.arange(100, dtype=np.float32)
t = hurray.from_numpy(a)
keep += [t, np.asarray(t), t.__hurray__(), t.__dlpack__(max_version=(1, 0)), t.__dlpack__()]
keep += [hurray.sparse_coo(np.ones(2, np.float32), np.array([[0, 0], [1, 2]], np.uint64), [3, 3]).__hurray__()]
c = t.__hurray__(); keep.append(hurray.from_hurray(t))
# a daemon thread still holding tensors when the interpreter exits
def hold():
    local = [hurray.arange(10), np.asarray(hurray.arange(10))]
    threading.Event().wait()
threading.Thread(target=hold, daemon=True).start()
print("ok")
"""


def test_exit_with_live_tensors_capsules_and_views_is_clean():
    r = subprocess.run([sys.executable, "-c", SHUTDOWN], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok" and r.stderr == ""


def test_exit_after_explicit_collection_is_clean():
    code = "import gc, hurray\nc = hurray.ones([4]).__hurray__()\ndel c\ngc.collect()\nprint(hurray._native._live_objects())"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout.strip(), r.stderr) == (0, "0", "")


# A daemon thread busy in a Tensor method when the interpreter exits. CPython
# < 3.14 ends such a thread with pthread_exit (a forced unwind) when it next
# needs the GIL; that used to cross the extension's Rust frames (the methods
# called back into Python) and abort the process ("FATAL: exception not
# rethrown", exit 134) in most runs.
DAEMON_AT_EXIT = r"""
import hurray, numpy as np, pickle, threading, time
ts = [hurray.from_numpy(np.arange(5.)) for i in range(1000)]
class Producer:  # a native-protocol producer written in Python
    def __init__(self, t):
        self.t = t
    def __hurray__(self):
        return self.t.__hurray__()
def f():
    while True:
        for t in ts:
            OP
threading.Thread(target=f, daemon=True).start()
time.sleep(0.2)
"""


def test_exit_with_a_daemon_thread_inside_a_tensor_method_is_clean():
    ops = [
        "np.asarray(t)",
        "repr(t)",
        "str(t)",
        "pickle.loads(pickle.dumps(t, protocol=5))",
        "hurray.from_hurray(Producer(t))",
    ]
    runs = [
        (op, subprocess.Popen([sys.executable, "-c", DAEMON_AT_EXIT.replace("OP", op)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for op in ops
        for _ in range(5)
    ]
    for op, proc in runs:
        _, err = proc.communicate(timeout=120)
        assert (proc.returncode, err) == (0, ""), f"{op}: exit {proc.returncode}\n{err}"


def test_python_defined_tensor_methods_look_native():
    # __array__, pickling, repr/str, to_scipy and to_torch are Python functions
    # installed on the native class at import (see hurray._glue).
    for name in ("__array__", "__reduce_ex__", "__repr__", "__str__", "to_scipy", "to_torch"):
        fn = vars(hurray.Tensor)[name]
        assert fn.__qualname__ == f"Tensor.{name}" and fn.__doc__, name
    t = hurray.arange(3, dtype=hurray.int32)
    assert repr(t) == "hurray.Tensor([0 1 2], dtype=int32)" and str(t) == "[0 1 2]"
