"""Issue 19 on a local Ray (``ray.init(num_cpus=2)``, dashboard off): ``ray.get``
of a tensor is zero-copy from the object store and read-only, in a task and in
the driver, and costs about what NumPy's get costs."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")

import hurray  # noqa: E402

from conftest import children_alive  # noqa: E402

# Ray workers cannot import this test module: ship its functions by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

MiB = 1 << 20


@pytest.fixture(scope="module")
def local_ray():
    before = {pid for pid, _ in children_alive(0)}
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=400 * MiB,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()
    left = [p for p in children_alive(30) if p[0] not in before]
    assert left == [], f"Ray processes left after shutdown: {left}"


def mapping_of(addr: int) -> str:
    """The /proc/self/maps line of the mapping holding ``addr`` ('' if none)."""
    with open("/proc/self/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= addr < hi:
                return line.strip()
    return ""


@ray.remote
def probe(t):
    """Runs in a Ray worker: where the tensor's bytes are, whether a write through
    any export raises, and a checksum."""
    import numpy as np

    raised = []
    for view in (np.asarray(t), np.from_dlpack(t), np.asarray(t.buffer(0))):
        try:
            view[...] = 0
            raised.append(False)
        except ValueError:
            raised.append(True)
    return {
        "read_only": t.read_only,
        "mapping": mapping_of(t._buffer_address(0)),
        "raised": raised,
        "sum": float(np.asarray(t)[::1024].sum()),
    }


def test_get_in_a_task_is_zero_copy_from_the_object_store(local_ray):
    t = hurray.from_numpy(np.full(32 * MiB // 4, 3.0, dtype=np.float32))
    ref = ray.put(t)
    facts = ray.get(probe.remote(ref), timeout=120)
    assert facts["read_only"] is True
    assert "plasma" in facts["mapping"], facts["mapping"]  # Ray's shared object store
    assert facts["raised"] == [True, True, True]
    assert facts["sum"] == 3.0 * (32 * MiB // 4 // 1024)
    # The sender's tensor stays writable and unchanged.
    assert not t.read_only and np.asarray(t)[0] == 3.0


def test_get_in_the_driver_is_zero_copy_and_read_only(local_ray):
    t = hurray.from_numpy(np.arange(8 * MiB // 4, dtype=np.float32))
    ref = ray.put(t)
    u = ray.get(ref)
    assert u.read_only and "plasma" in mapping_of(u._buffer_address(0))
    a = np.asarray(u)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 1
    assert np.array_equal(a, np.asarray(t))
    # Pickling the gotten tensor keeps the flag.
    import pickle

    assert pickle.loads(pickle.dumps(u, protocol=5)).read_only


def test_get_time_is_close_to_numpy(local_ray):
    n = 64 * MiB
    rt = ray.put(hurray.from_numpy(np.ones(n // 4, np.float32)))
    ra = ray.put(np.ones(n // 4, np.float32))

    def best(ref):
        ts = []
        for _ in range(15):
            t0 = time.perf_counter()
            x = ray.get(ref)
            ts.append(time.perf_counter() - t0)
            del x
        return min(ts)

    th, tn = best(rt), best(ra)
    print(f"\nray.get 64 MiB: hurray {th * 1e3:.3f} ms, NumPy {tn * 1e3:.3f} ms, ratio {th / tn:.2f}")
    # Both are zero-copy (well under a copy of 64 MiB, ~10 ms); 2x is the target,
    # with slack for a shared 2-CPU machine.
    assert th < 0.005 and th / tn < 3.0, (th, tn)
