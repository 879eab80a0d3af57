"""Issue 19, Build 4 on a real ``distributed.LocalCluster``: Dask arrays over
``.hrry`` files in both directions. A 1 GiB tensor written from the workers,
read back as a Dask array whose chunks the workers map, reduced on the cluster:
equal to NumPy's result, with each worker's private (anonymous) memory flat."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
import cloudpickle  # noqa: E402

import hurray  # noqa: E402
import hurray.dask as hd  # noqa: E402

from conftest import children_alive  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])

MiB = 1 << 20
GiB = 1 << 30


@pytest.fixture(scope="module")
def client():
    before = {pid for pid, _ in children_alive(0)}
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
        silence_logs=40,
    ) as c, distributed.Client(c, timeout="60s") as cl:
        yield cl
    assert [p for p in children_alive() if p[0] not in before] == []


def rss_anon() -> int:
    """This process's anonymous (private, not file-backed) resident bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no RssAnon in /proc/self/status")


def start_sampler(dask_worker):
    """Samples RssAnon every 20 ms in a thread until stop_sampler."""
    import threading

    state = {"base": rss_anon(), "max": rss_anon(), "stop": threading.Event()}

    def loop():
        while not state["stop"].wait(0.02):
            state["max"] = max(state["max"], rss_anon())

    state["thread"] = threading.Thread(target=loop, daemon=True)
    state["thread"].start()
    dask_worker.hurray_sampler = state
    return state["base"]


def stop_sampler(dask_worker):
    state = dask_worker.hurray_sampler
    state["stop"].set()
    state["thread"].join()
    return {"base": state["base"], "max": state["max"]}


def test_1_gib_tensor_written_from_workers_then_reduced_on_mapped_chunks(client, tmp_path):
    n = GiB // 4
    p = tmp_path / "big.hrry"
    # The way back first: 1 GiB of int32 computed on the workers, written as one
    # tensor (each worker writes its chunks into a shared raw mapping).
    src = da.arange(n, chunks=64 * MiB // 4, dtype=np.int32)
    assert hd.to_hrry(src, p, "x", partition=False, durable=False) == str(p)
    assert os.path.getsize(p) > GiB
    assert [f for f in os.listdir(tmp_path)] == ["big.hrry"]  # the scratch is gone
    # Read: chunks mapped by each worker; only path, name and box in the graph.
    x = hd.from_hrry(p, "x")
    assert x.shape == (n,) and x.dtype == np.int32 and len(x.chunks[0]) == 16
    graph = dict(x.__dask_graph__())
    assert sum(len(cloudpickle.dumps(v)) for v in graph.values()) < 64 * 1024

    client.run(start_sampler)
    total = x.sum(dtype=np.int64).compute()
    peak = client.run(stop_sampler)
    # NumPy's result over the same bytes (mapped here, read-only).
    want = np.asarray(hurray.load(p, read_only=True)["x"]).sum(dtype=np.int64)
    assert total == want == n * (n - 1) // 2
    grown = {w: (v["max"] - v["base"]) / MiB for w, v in peak.items()}
    print(f"\nworker private memory growth while reducing 1 GiB (MiB): {grown}")
    for w, g in grown.items():
        assert g < 96, (w, g)  # a 64 MiB chunk copied would show; 512 MiB read each
    os.unlink(p)


def test_partition_composite_round_trip_through_the_workers(client, tmp_path):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((300, 40)).astype(np.float32)
    x = da.from_array(a, chunks=(64, 16))
    p = tmp_path / "part.hrry"
    hd.to_hrry(x * 3, p, "w", durable=False)
    r = hurray.FileReader(str(p))
    shape, dtype, boxes = r._partition("w")
    assert shape == [300, 40] and dtype == "float32" and len(boxes) == 5 * 3
    m = r._member("w", 4)
    assert m.shard.parent_shape == (300, 40)
    r.close()
    back = hd.from_hrry(p, "w")
    assert back.chunks == x.chunks
    assert np.array_equal(back.compute(), a * 3)
    assert float(back.sum().compute()) == pytest.approx(float((a * 3).sum()), rel=1e-4)
    # Along another axis, with a chunk size.
    q = tmp_path / "one.hrry"
    hurray.save(str(q), {"t": a})
    y = hd.from_hrry(q, "t", axis=1, chunk=7)
    assert y.chunks == ((300,), (7,) * 5 + (5,))
    assert np.array_equal((y + 1).compute(), a + 1)
    assert sorted(hd.from_hrry(p)) == ["w"]


def _try_write(b):
    """A task that tries to write into its chunk: the chunk, and the mapped
    tensor under it, are read-only, so NumPy refuses even to flip the flag."""
    try:
        b.flags.writeable = True
        b[...] = -1
        wrote = 1
    except ValueError:
        wrote = 0
    return np.full((1,) * b.ndim, wrote)


def test_chunks_cannot_be_written_and_0d_tensors_and_bad_axes(client, tmp_path):
    p = str(tmp_path / "m.hrry")
    m = np.arange(24, dtype=np.float64).reshape(4, 6)
    hurray.save(p, {"m": m, "z": np.array(5.0)})
    x = hd.from_hrry(p, "m", chunk=2)
    wrote = x.map_blocks(_try_write, chunks=(1, 1)).compute()
    assert wrote.sum() == 0, "a task could write into a mapped chunk"
    # The workers' cached mappings are intact: later graphs read the file's values.
    assert hd.from_hrry(p, "m").sum().compute() == m.sum()
    assert hd.from_hrry(p, "z").compute() == 5.0
    assert hd.from_hrry(p)["z"].compute() == 5.0
    with pytest.raises(np.exceptions.AxisError):
        hd.from_hrry(p, "m", axis=2, chunk=1)
    assert hd.from_hrry(p, "m", axis=-1, chunk=3).chunks == ((4,), (3, 3))
    q = str(tmp_path / "zz.hrry")
    hd.to_hrry(da.from_array(np.array(2.5)), q, "s")
    s = hurray.load(q)["s"]
    assert s.shape == () and float(np.asarray(s)) == 2.5
