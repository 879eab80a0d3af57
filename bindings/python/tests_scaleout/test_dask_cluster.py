"""Issue 19 on a real ``distributed.LocalCluster`` (worker processes, 127.0.0.1,
dashboard off): sizeof, out-of-band frames, results through the scheduler,
spilling under a 1 GiB limit, read-only tensors across processes."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
import cloudpickle  # noqa: E402  (a distributed dependency)
import dask  # noqa: E402
from dask.sizeof import sizeof  # noqa: E402

import hurray  # noqa: E402

from conftest import children_alive  # noqa: E402

# Worker processes cannot import this test module: ship its functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

MiB = 1 << 20


def cluster(**kw):
    opts = dict(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        # Dashboard off; the scheduler's plain HTTP routes on a free port, not 8787.
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
        silence_logs=40,
    )
    opts.update(kw)
    return distributed.LocalCluster(**opts)


@pytest.fixture(scope="module")
def client():
    with cluster() as c, distributed.Client(c, timeout="60s") as cl:
        yield cl
    assert children_alive() == [], "worker processes left after the cluster closed"


def make_tensor(nbytes, value=1.0, read_only=False):
    # 64-byte aligned, so the tensor wraps the worker's array without a copy
    # (decision 5: a NumPy allocation would be copied once, doubling the peak).
    a = hurray.empty_aligned(nbytes // 4, np.float32)
    a.fill(value)  # pages touched: real memory
    if read_only:
        a.flags.writeable = False
    return hurray.from_numpy(a)


def make_array(nbytes, value=1.0):
    return np.full(nbytes // 4, value, dtype=np.float32)


def worker_facts(t):
    """What a worker sees of a tensor: its sizeof (no user registration), the
    serializer distributed picks, and the read-only flag."""
    from distributed.protocol import serialize

    header, frames = serialize(t, serializers=("dask", "pickle"))
    return {
        "sizeof": sizeof(t),
        "serializer": header["serializer"],
        "frames": [memoryview(f).nbytes for f in frames],
        "read_only": t.read_only,
        "sum": float(np.asarray(t).sum()),
    }


def test_sizeof_is_the_tensor_bytes_everywhere(client):
    for t in (
        hurray.from_numpy(np.zeros((128, 1024), np.float32)),
        hurray.from_numpy(np.zeros(3, np.uint8)),
        hurray.arange(1000, dtype=hurray.int64),
    ):
        assert sizeof(t) == t.nbytes
    assert hurray.from_numpy(np.zeros((128, 1024), np.float32)).nbytes == 512 * 1024
    # In a worker process (hurray imported there by the task, after distributed):
    fut = client.submit(make_tensor, 8 * MiB, 2.0, pure=False)
    facts = client.submit(worker_facts, fut).result(timeout=60)
    assert facts["sizeof"] == 8 * MiB
    assert facts["serializer"] == "dask"
    assert facts["frames"] == [8 * MiB]  # one frame per buffer, out of band
    assert facts["sum"] == 2.0 * 2 * MiB
    # The scheduler's accounting of the stored result is the tensor's bytes.
    assert client.nbytes(keys=[fut.key], summary=False)[fut.key] == 8 * MiB


def test_dask_serializer_frames_view_the_tensor_memory():
    from distributed.protocol import deserialize, serialize

    t = make_tensor(1 * MiB, 3.0)
    header, frames = serialize(t, serializers=("dask",))
    assert header["serializer"] == "dask"
    (f,) = frames
    assert np.frombuffer(f, np.uint8).ctypes.data == t._buffer_address(0)
    u = deserialize(header, frames)
    assert not u.read_only and u._buffer_address(0) == t._buffer_address(0)
    r = hurray.from_numpy(np.arange(4, dtype=np.int32).copy())
    r2 = make_tensor(64, read_only=True)
    for x in (r, r2):
        h, fr = serialize(x, serializers=("dask",))
        y = deserialize(h, fr)
        assert y.read_only == x.read_only
        assert np.array_equal(np.asarray(y), np.asarray(x))
    # A writable tensor whose frame arrives read-only is copied, stays writable.
    h, fr = serialize(r, serializers=("dask",))
    y = deserialize(h, [memoryview(bytes(fr[0]))])
    assert not y.read_only
    np.asarray(y)[0] = 9
    assert np.asarray(r)[0] == 0


def test_results_travel_through_the_scheduler_out_of_band(client):
    """A tensor result returned through the scheduler (the client's default
    gather) arrives whole; its time is compared with NumPy's (the 256 MiB figures
    are in benchmarks/bench_scaleout.py and docs/scale-out.md)."""
    n = 64 * MiB

    def timed(fn):
        fut = client.submit(fn, n, 5.0, pure=False)
        distributed.wait(fut, timeout=60)
        t0 = time.perf_counter()
        got = client.gather(fut, direct=False)
        dt = time.perf_counter() - t0
        del fut
        return got, dt

    best_h, best_n = float("inf"), float("inf")
    for _ in range(3):
        t, dh = timed(make_tensor)
        assert isinstance(t, hurray.Tensor) and t.nbytes == n
        a = np.asarray(t)
        assert a[0] == 5.0 and a[-1] == 5.0 and not t.read_only
        del t, a
        arr, dn = timed(make_array)
        assert arr.nbytes == n
        del arr
        best_h, best_n = min(best_h, dh), min(best_n, dn)
    ratio = best_h / best_n
    print(f"\n64 MiB through the scheduler: hurray {best_h * 1e3:.1f} ms, "
          f"NumPy {best_n * 1e3:.1f} ms, ratio {ratio:.2f}")
    # Loose here (2 shared CPUs); the 1.5x target is the benchmark's.
    assert ratio < 2.5, ratio


def test_read_only_tensors_stay_read_only_across_processes(client):
    t = make_tensor(4 * MiB, 7.0, read_only=True)
    [fut] = client.scatter([t])
    facts = client.submit(worker_facts, fut).result(timeout=60)
    assert facts["read_only"] is True and facts["sum"] == 7.0 * MiB

    def write_through_every_export(x):
        errors = []
        for view in (np.asarray(x), np.from_dlpack(x), np.asarray(x.buffer(0))):
            try:
                view[...] = 0
                errors.append("wrote")
            except ValueError:
                errors.append("raised")
        return errors, float(np.asarray(x).sum())

    errors, total = client.submit(write_through_every_export, fut).result(timeout=60)
    assert errors == ["raised"] * 3 and total == 7.0 * MiB
    back = fut.result(timeout=60)
    assert back.read_only and not np.asarray(back).flags.writeable


def test_six_128_mib_tensors_spill_under_1_gib_without_pausing():
    """With sizeof = tensor bytes the worker spills ahead of time (target 60% of
    its limit, by managed memory) and never reaches the 80% pause threshold."""

    def install_pause_probe(dask_worker):
        from distributed.core import Status

        mm = dask_worker.memory_manager
        orig = mm._maybe_pause_or_unpause
        dask_worker.hurray_pauses = 0

        def probe(worker, memory):
            orig(worker, memory)
            if worker.status == Status.paused:
                worker.hurray_pauses += 1

        mm._maybe_pause_or_unpause = probe
        return True

    def spill_facts(dask_worker):
        return {
            "pauses": dask_worker.hurray_pauses,
            "spilled": len(dask_worker.data.slow),
            "in_memory": len(dask_worker.data.fast),
            # What the worker's accounting (sizeof) says it holds, in memory or not.
            "managed": sum(ts.nbytes for ts in dask_worker.state.tasks.values()
                           if ts.state == "memory"),
            "fast_bytes": dask_worker.data.fast.total_weight,
        }

    before = {pid for pid, _ in children_alive(0)}
    with cluster(n_workers=1, memory_limit="1GiB") as c, distributed.Client(c, timeout="60s") as cl:
        cl.run(install_pause_probe)
        futs = []
        for i in range(6):
            futs.append(cl.submit(make_tensor, 128 * MiB, float(i), pure=False))
            distributed.wait(futs[-1], timeout=120)
            time.sleep(0.3)  # let the memory monitor sample (every 100 ms)
        time.sleep(1.0)
        (facts,) = cl.run(spill_facts).values()
        logs = "\n".join(m for _, m in next(iter(cl.get_worker_logs().values())))
        sums = cl.gather([cl.submit(lambda t: float(np.asarray(t)[::4096].sum()), f) for f in futs])
        del futs
    assert [p for p in children_alive() if p[0] not in before] == []
    print(f"\nspill under 1 GiB: {facts}")
    assert facts["managed"] == 6 * 128 * MiB, facts
    # Spilled by managed memory, ahead of the memory monitor: what stays in memory
    # is at most the spill target (60% of the limit).
    assert facts["spilled"] >= 1 and facts["fast_bytes"] <= 0.6 * (1 << 30), facts
    assert facts["pauses"] == 0 and "Pausing worker" not in logs, (facts, logs[-2000:])
    assert sums == [float(i) * (32 * MiB // 4096) for i in range(6)]


@pytest.mark.parametrize(
    "imports",
    [
        "import hurray; import distributed",
        "import distributed; import hurray",
        "import dask; import hurray; import distributed.protocol",
        "import hurray; import dask.sizeof",
    ],
)
def test_registration_needs_no_user_code_in_any_import_order(imports):
    """sizeof through the entry point or at import, the distributed serializers at
    import or through the import hook, whatever was imported first."""
    import subprocess

    code = (
        f"{imports}\n"
        "import sys, numpy as np, hurray\n"
        "from dask.sizeof import sizeof\n"
        "t = hurray.from_numpy(np.zeros((256, 1024), np.float32))\n"
        "assert sizeof(t) == 1 << 20, sizeof(t)\n"
        "if 'distributed' in sys.modules:\n"
        "    from distributed.protocol import serialize, deserialize\n"
        "    h, f = serialize(t, serializers=('dask',))\n"
        "    assert h['serializer'] == 'dask' and len(f) == 1\n"
        "    u = deserialize(h, f)\n"
        "    assert u._buffer_address(0) == t._buffer_address(0)\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
