"""Benchmarks of the Python binding, reported as ratios from one run.

1. Load every tensor of all-MiniLM-L6-v2 as NumPy arrays: ``hurray.load`` +
   ``numpy.asarray`` vs safetensors ``safe_open(framework="np")`` + ``get_tensor``
   and vs ``safetensors.numpy.load_file``. The model comes from ``cargo xtask demo``
   (``target/demo/model.safetensors``); its ``.hrry`` is made with the CLI
   (``hurray convert``) when missing. Pass ``--model PATH.safetensors`` to use another.
   The safetensors rows need the ``safetensors`` package, which the test venv does
   not install: ``target/py-venv/bin/pip install safetensors`` (without it only the
   hurray row is printed, with a note).
2. Open + view one tensor of 1 MiB vs 1 GiB (and ``numpy.load(mmap_mode="r")`` for
   scale): mapping makes the cost independent of the size.
3. ``Tensor.shape`` vs a no-op native method.
4. ``StreamReader`` over ``bytes`` holding eight 64 MiB float32 tensors, each read,
   viewed as NumPy and dropped, vs ``numpy.copyto`` of 64 MiB into a warm array
   (one copy is the floor: the stream format has no padding, so a payload inside
   ``bytes`` cannot be lent out as an aligned view).

Run: ``target/py-venv/bin/python bindings/python/benchmarks/bench.py``
(``--quick`` skips the 1 GiB file).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import timeit

import numpy as np

import hurray

ROOT = pathlib.Path(__file__).resolve().parents[3]


def best(fn, repeat=7, number=1):
    """Best wall time of one call, in seconds (min over ``repeat`` runs)."""
    return min(timeit.repeat(fn, repeat=repeat, number=number)) / number


def ms(s):
    return f"{s * 1e3:8.3f} ms"


def model_files(arg):
    st = pathlib.Path(arg) if arg else ROOT / "target" / "demo" / "model.safetensors"
    if not st.exists():
        return None, None
    hr = st.with_suffix(".bench.hrry")
    if not hr.exists() or hr.stat().st_mtime < st.stat().st_mtime:
        cli = ROOT / "target" / "release" / "hurray"
        if not cli.exists():
            subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "hurray-cli"], cwd=ROOT, check=True)
        subprocess.run([str(cli), "convert", str(st), str(hr)], check=True, stdout=subprocess.DEVNULL)
    return st, hr


def bench_model(arg):
    st, hr = model_files(arg)
    if st is None:
        print("1. MiniLM: skipped (no model; run `cargo xtask demo` first or pass --model)")
        return
    def ours():
        return [np.asarray(t) for t in hurray.load(str(hr)).values()]

    try:
        from safetensors import safe_open
        from safetensors.numpy import load_file
    except ImportError:
        a = ours()
        t_ours = best(ours)
        print(f"1. MiniLM ({len(a)} tensors, {sum(x.nbytes for x in a) / 2**20:.1f} MiB), best of 7:")
        print(f"   hurray.load + numpy.asarray      {ms(t_ours)}")
        print("   (safetensors comparison skipped: the safetensors package is not installed;")
        print(f"    install it with `{sys.executable} -m pip install safetensors`)")
        return

    def st_open():
        with safe_open(str(st), framework="np") as f:
            return [f.get_tensor(k) for k in f.keys()]

    def st_load():
        return list(load_file(str(st)).values())

    a, b = ours(), st_open()
    assert len(a) == len(b) and sum(x.nbytes for x in a) == sum(x.nbytes for x in b)
    t_ours, t_open, t_load = best(ours), best(st_open), best(st_load)
    print(f"1. MiniLM ({len(a)} tensors, {sum(x.nbytes for x in a) / 2**20:.1f} MiB), best of 7:")
    print(f"   hurray.load + numpy.asarray      {ms(t_ours)}")
    print(f"   safe_open + get_tensor           {ms(t_open)}   ratio {t_open / t_ours:6.1f}x")
    print(f"   safetensors.numpy.load_file      {ms(t_load)}   ratio {t_load / t_ours:6.1f}x")


def bench_open(quick):
    print("2. open + view one tensor (page cache warm), best of 7:")
    with tempfile.TemporaryDirectory() as d:
        sizes = [1 << 20] if quick else [1 << 20, 1 << 30]
        rows = []
        for n in sizes:
            p = os.path.join(d, f"{n}.hrry")
            hurray.save(p, {"x": hurray.zeros([n], dtype=hurray.uint8)})
            npy = os.path.join(d, f"{n}.npy")
            np.save(npy, np.zeros(n, dtype=np.uint8))

            def ours():
                return np.asarray(hurray.load(p)["x"])[-1]

            def npload():
                return np.load(npy, mmap_mode="r")[-1]

            rows.append((n, best(ours), best(npload)))
            os.remove(p)
            os.remove(npy)
        for n, t, t_np in rows:
            print(f"   {n / 2**20:6.0f} MiB   hurray {ms(t)}   numpy.load(mmap_mode='r') {ms(t_np)}")
        if len(rows) == 2:
            print(f"   ratio 1 GiB / 1 MiB: hurray {rows[1][1] / rows[0][1]:.2f}x, numpy {rows[1][2] / rows[0][2]:.2f}x")


def bench_attr():
    t = hurray.zeros([2, 3])
    n = 1_000_000
    shape = min(timeit.repeat("t.shape", globals={"t": t}, repeat=5, number=n)) / n
    noop = min(timeit.repeat("t._noop()", globals={"t": t}, repeat=5, number=n)) / n
    print("3. attribute cost, best of 5 x 1e6:")
    print(f"   t.shape {shape * 1e9:6.1f} ns   t._noop() {noop * 1e9:6.1f} ns   ratio {shape / noop:.2f}x")


def bench_stream(quick):
    n = (16 if quick else 64) << 20
    count = 8
    a = np.arange(n // 4, dtype=np.float32)
    w = hurray.StreamWriter()
    t = hurray.from_numpy(a)
    for _ in range(count):
        w.write(t)
    data = w.getvalue()

    def read():
        for x in hurray.StreamReader(data):
            np.asarray(x)[-1]
            del x

    dst = np.empty_like(a)
    per_tensor = best(read, repeat=5) / count
    copy = best(lambda: np.copyto(dst, a), repeat=7)
    mib = n >> 20
    print(f"4. stream read, per {mib} MiB tensor (best of 5 readers x {count} tensors):")
    print(
        f"   StreamReader {ms(per_tensor)} ({n / per_tensor / 1e9:5.1f} GB/s)   numpy.copyto warm {ms(copy)}"
        f"   ratio {copy / per_tensor:.2f}x of memcpy"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a .safetensors file (default: target/demo/model.safetensors)")
    ap.add_argument("--quick", action="store_true", help="skip the 1 GiB file")
    args = ap.parse_args()
    print(f"hurray {hurray.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    bench_model(args.model)
    bench_open(args.quick)
    bench_attr()
    bench_stream(args.quick)


if __name__ == "__main__":
    main()
