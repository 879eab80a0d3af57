"""Issue 14, item 6: the two places Python was behind, measured in one run, same data.

1. ``hurray.save`` of one 256 MiB float32 array vs ``safetensors.numpy.save_file``
   of the same array. Two like-for-like rows: neither syncs (``durable=False`` vs
   ``save_file``), and both sync the file to disk (``save``'s default,
   ``durable=True``, which fsyncs the file and its directory, vs ``save_file``
   followed by ``os.fsync`` of the file and its directory).
2. Sending a 1 GiB tensor to another process through ``multiprocessing`` (a
   ``Pipe``; the child receives the object, checks one element and answers) vs
   sending the NumPy view of the same memory. On Linux the tensor travels through
   a memfd (one copy; see ``hurray._glue.mp_reduce``), the array through the pipe.

Every row prints ``ratio = peer_time / our_time`` (>= 1.0: hurray at parity or
ahead), from the best of ``--repeat`` interleaved runs (the machine may be shared:
best-of is the least noisy estimate).

Run: ``target/py-venv/bin/python bindings/python/benchmarks/bench_issue14.py``
(``--mp-mib 256`` for a smaller multiprocessing payload).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import tempfile
import time

import numpy as np

import hurray


def fsync_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def interleaved(fns: dict, repeat: int) -> dict:
    """Best wall time of each function, in seconds, over ``repeat`` rounds that
    run every function once in turn, in forward order on even rounds and reverse
    order on odd ones (what ran just before, e.g. dirty pages still being written
    back, then weighs on each side alike)."""
    best = {k: float("inf") for k in fns}
    for r in range(repeat):
        items = list(fns.items())
        for k, fn in items if r % 2 == 0 else reversed(items):
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def row(label: str, ours: float, peer: float, peer_name: str) -> None:
    print(f"{label:<44} hurray {ours * 1e3:9.1f} ms   {peer_name} {peer * 1e3:9.1f} ms   "
          f"ratio {peer / ours:5.2f}")


def bench_save(repeat: int) -> None:
    try:
        from safetensors.numpy import save_file
    except ImportError:
        print("save: safetensors is not installed (pip install safetensors); skipped")
        return
    a = np.random.default_rng(14).standard_normal(64 << 20, dtype=np.float32)  # 256 MiB
    # NumPy's 16-byte alignment: from_numpy would copy this array once
    # (ARCHITECTURE decision 5); save writes its bytes from where they are.
    print(f"save: the array's data address % 64 = {a.__array_interface__['data'][0] % 64}")
    with tempfile.TemporaryDirectory(dir=os.environ.get("HURRAY_BENCH_DIR")) as d:
        hr, st = os.path.join(d, "a.hrry"), os.path.join(d, "a.safetensors")

        def st_durable():
            save_file({"w": a}, st)
            fsync_path(st)
            fsync_path(d)

        t = interleaved(
            {
                "hr": lambda: hurray.save(hr, {"w": a}, durable=False),
                "st": lambda: save_file({"w": a}, st),
                "hr_durable": lambda: hurray.save(hr, {"w": a}),
                "st_durable": st_durable,
            },
            repeat,
        )
        back = hurray.load(hr)["w"]
        assert np.array_equal(np.asarray(back), a)
    row("save 256 MiB, no sync (durable=False)", t["hr"], t["st"], "safetensors")
    row("save 256 MiB, synced (durable=True default)", t["hr_durable"], t["st_durable"], "safetensors+fsync")


def _child(conn) -> None:
    while True:
        obj = conn.recv()
        if obj is None:
            return
        arr = np.asarray(obj)
        conn.send(float(arr[-1]))
        del obj, arr


def bench_multiprocessing(mib: int, repeat: int) -> None:
    n = (mib << 20) // 4
    a = np.arange(n, dtype=np.float32)
    t = hurray.from_numpy(a)
    want = float(a[-1])
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_child, args=(child,))
    p.start()
    try:
        def send(obj):
            def go():
                parent.send(obj)
                assert parent.recv() == want
            return go

        send(a)()  # warm the child
        r = interleaved({"hr": send(t), "np": send(a)}, repeat)
    finally:
        parent.send(None)
        p.join()
    row(f"multiprocessing send of {mib} MiB", r["hr"], r["np"], "numpy")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--mp-mib", type=int, default=1024)
    ap.add_argument("--only", choices=["save", "mp"])
    args = ap.parse_args()
    if args.only in (None, "save"):
        bench_save(args.repeat)
    if args.only in (None, "mp"):
        bench_multiprocessing(args.mp_mib, args.repeat)


if __name__ == "__main__":
    main()
