"""Scale-out tests (issue 19): a real ``distributed.LocalCluster`` and a local Ray.
Run by the ``python: scale-out`` stage of ``cargo xtask test``, which installs
Dask, ``distributed`` and Ray into ``target/py-venv`` (xtask/src/python.rs); the
main Python stage does not collect this folder.

Every test is bounded: a test still running after ``HURRAY_SCALEOUT_TEST_TIMEOUT``
seconds (default 240) dumps its threads' stacks and ends the run (faulthandler),
so a hung cluster fails instead of blocking CI. Clusters are closed by their
fixtures, which then check that no child process is left."""

from __future__ import annotations

import faulthandler
import os
import sys
import time

import pytest

TIMEOUT = float(os.environ.get("HURRAY_SCALEOUT_TEST_TIMEOUT", "240"))


@pytest.fixture(autouse=True)
def bounded():
    faulthandler.dump_traceback_later(TIMEOUT, exit=True, file=sys.stderr)
    yield
    faulthandler.cancel_dump_traceback_later()


def children_alive(within: float = 20.0) -> list:
    """The child processes of this one still alive after waiting up to ``within``
    seconds for them to go."""
    import psutil

    def alive_now():
        out = []
        for p in psutil.Process().children(recursive=True):
            try:
                if p.status() == psutil.STATUS_ZOMBIE:
                    continue
                cmd = " ".join(p.cmdline())
            except psutil.Error:
                continue
            # multiprocessing's own helpers live as long as this process by design.
            if "resource_tracker" in cmd or "forkserver" in cmd:
                continue
            out.append((p.pid, cmd[:200]))
        return out

    deadline = time.monotonic() + within
    while True:
        alive = alive_now()
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.2)
