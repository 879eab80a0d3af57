"""Scale-out benchmarks (issue 19), reported as ratios to NumPy from one run.

1. Dask: a 256 MiB float32 result returned through the scheduler
   (``client.gather(future, direct=False)``, the client's default path) from a
   ``distributed.LocalCluster`` of 2 worker processes on 127.0.0.1, dashboard off:
   ``hurray.Tensor`` vs the same data as a NumPy array. Target: within 1.5x.
3. Dask spilling: six 128 MiB tensors on one worker under a 1 GiB limit, with
   hurray's ``sizeof`` and with ``sizeof`` forced to 64 bytes (before issue 19):
   how often the worker paused and how many tensors it spilled.
2. Ray: ``ray.get`` of a 256 MiB object from the store (``ray.init(num_cpus=2)``),
   in the driver and inside a task: tensor vs NumPy array. Target: within 2x, both
   zero-copy (the tensor's address lies in the object store's mapping).

The best of ``--repeat`` runs (interleaved hurray/NumPy) is reported, with the
medians and the median of the per-pair ratios. Needs ``dask[array]``, ``distributed`` and ``ray`` (the ``python:
scale-out`` stage of ``cargo xtask test`` installs them into ``target/py-venv``).

Run: ``target/py-venv/bin/python bindings/python/benchmarks/bench_scaleout.py``
(``--mib 64`` for a smaller size, ``--only dask`` / ``ray`` / ``spill``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import hurray

MiB = 1 << 20


def make_tensor(nbytes):
    # 64-byte aligned, so the tensor wraps the task's array (decision 5: a NumPy
    # allocation would be copied once more than make_array's).
    a = hurray.empty_aligned(nbytes // 4, np.float32)
    a.fill(1.5)
    return hurray.from_numpy(a, copy=False)


def make_array(nbytes):
    return np.full(nbytes // 4, 1.5, dtype=np.float32)


def report(title, h, n):
    """Best and median of each side, the ratio of the bests, and the median of the
    ratios of interleaved pairs (steadier on a loaded machine)."""
    bh, bn = min(h), min(n)
    pairs = statistics.median(x / y for x, y in zip(h, n))
    print(
        f"{title}: hurray best {bh * 1e3:.3f} ms (median {statistics.median(h) * 1e3:.3f}), "
        f"NumPy best {bn * 1e3:.3f} ms (median {statistics.median(n) * 1e3:.3f}), "
        f"ratio of bests {bh / bn:.2f}, median pair ratio {pairs:.2f}"
    )


def bench_dask(nbytes, repeat):
    import cloudpickle
    import distributed

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
        silence_logs=40,
    ) as cluster, distributed.Client(cluster) as client:

        def once(fn):
            fut = client.submit(fn, nbytes, pure=False)
            distributed.wait(fut)
            t0 = time.perf_counter()
            got = client.gather(fut, direct=False)
            dt = time.perf_counter() - t0
            assert got.nbytes == nbytes
            del got, fut
            return dt

        once(make_tensor), once(make_array)  # warm: imports, connections
        h, n = [], []
        for _ in range(repeat):
            h.append(once(make_tensor))
            n.append(once(make_array))
        report(f"dask: {nbytes // MiB} MiB result through the scheduler", h, n)


def bench_spill(count=6, each=128 * MiB, limit="1GiB"):
    """Six 128 MiB tensors kept on one worker under a 1 GiB memory limit: with
    hurray's sizeof (the tensor's bytes) the worker spills by managed memory before
    its pause threshold; with sizeof forced to 64 bytes (the issue's "before") it
    only notices through process memory, and pauses."""
    import cloudpickle
    import distributed

    cloudpickle.register_pickle_by_value(sys.modules[__name__])

    def install(dask_worker, blind):
        from dask.sizeof import sizeof
        from distributed.core import Status

        import hurray as h

        if blind:
            sizeof.register(h.Tensor)(lambda t: 64)
        mm = dask_worker.memory_manager
        orig = mm._maybe_pause_or_unpause
        dask_worker.hurray_pauses = 0

        def probe(worker, memory):
            was = worker.status
            orig(worker, memory)
            if worker.status == Status.paused and was != Status.paused:
                worker.hurray_pauses += 1

        mm._maybe_pause_or_unpause = probe

    def facts(dask_worker):
        return dask_worker.hurray_pauses, len(dask_worker.data.slow), len(dask_worker.data.fast)

    for blind in (False, True):
        with distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None, memory_limit=limit,
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            silence_logs=50,
        ) as cluster, distributed.Client(cluster) as client:
            client.run(install, blind=blind)
            t0 = time.perf_counter()
            # All at once: the worker makes them back to back, as a map would.
            futs = [client.submit(make_tensor, each, pure=False) for _ in range(count)]
            distributed.wait(futs, timeout=300)
            time.sleep(2)
            (pauses, spilled, kept), = client.run(facts).values()
            dt = time.perf_counter() - t0
            del futs
        label = "sizeof forced to 64 B" if blind else "hurray sizeof"
        print(f"spill: {count} x {each // MiB} MiB under {limit}, {label}: "
              f"paused {pauses} time(s), spilled {spilled}, in memory {kept}, {dt:.1f} s")


def bench_ray(nbytes, repeat):
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             object_store_memory=max(3 * nbytes, 256 * MiB))
    try:
        rt, ra = ray.put(make_tensor(nbytes)), ray.put(make_array(nbytes))

        def get_time(ref):
            t0 = time.perf_counter()
            x = ray.get(ref)
            dt = time.perf_counter() - t0
            del x
            return dt

        @ray.remote
        def timed_get(ref_list):
            import time as _t

            t0 = _t.perf_counter()
            x = ray.get(ref_list[0])
            dt = _t.perf_counter() - t0
            addr = x._buffer_address(0) if hasattr(x, "_buffer_address") else x.ctypes.data
            with open("/proc/self/maps") as f:
                where = next((ln.split()[-2] if ln.strip().endswith("(deleted)") else ln.split()[-1]
                              for ln in f
                              if int(ln.split()[0].split("-")[0], 16) <= addr
                              < int(ln.split()[0].split("-")[1], 16)), "?")
            ro = x.read_only if hasattr(x, "read_only") else not x.flags.writeable
            return dt, where, ro

        get_time(rt), get_time(ra)
        h = [get_time(rt) for _ in range(repeat)]
        n = [get_time(ra) for _ in range(repeat)]
        report(f"ray: ray.get of {nbytes // MiB} MiB in the driver", h, n)
        h, n, facts = [], [], set()
        for _ in range(repeat):
            dt, where, ro = ray.get(timed_get.remote([rt]))
            h.append(dt)
            facts.add(("hurray", where, ro))
            dt, where, ro = ray.get(timed_get.remote([ra]))
            n.append(dt)
            facts.add(("numpy", where, ro))
        report(f"ray: ray.get of {nbytes // MiB} MiB in a task", h, n)
        for who, where, ro in sorted(facts):
            print(f"  {who}: mapped from {where}, read-only {ro}")
    finally:
        ray.shutdown()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--only", choices=["dask", "ray", "spill"])
    args = ap.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    if args.only in (None, "dask"):
        bench_dask(args.mib * MiB, args.repeat)
    if args.only in (None, "ray"):
        bench_ray(args.mib * MiB, args.repeat)
    if args.only in (None, "spill"):
        bench_spill()


if __name__ == "__main__":
    main()
