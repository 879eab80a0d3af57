"""Shared fixtures. Every test ends with the native live-handle count back at zero:
whatever a test created (tensors, capsules, views, arrays over tensors) must be
released exactly once when its Python objects go away."""

import gc
import os
import pathlib

import pytest

import hurray
from hurray import _native

REPO_ROOT = pathlib.Path(os.environ.get("HURRAY_REPO_ROOT", pathlib.Path(__file__).resolve().parents[3]))


def live_after_gc() -> int:
    for _ in range(3):
        gc.collect()
    return _native._live_objects()


@pytest.fixture(autouse=True)
def no_leaked_handles():
    """Fails the test if native handles outlive its Python objects. The baseline
    is zero unless an earlier failure's traceback still holds objects."""
    before = live_after_gc()
    yield
    assert live_after_gc() == before, "native handles leaked (or were kept alive) by this test"


@pytest.fixture
def np():
    return pytest.importorskip("numpy")


def aligned_copy(a):
    """A copy of NumPy array ``a`` (same shape, dtype and C/Fortran order) in
    64-byte-aligned memory from ``hurray.empty_aligned``: what ``from_numpy`` wraps
    without copying (ARCHITECTURE decision 5). Zero-copy tests use it: NumPy's own
    allocations are 64-byte aligned only by chance."""
    fortran = a.flags.f_contiguous and not a.flags.c_contiguous
    out = hurray.empty_aligned(a.shape, a.dtype, order="F" if fortran else "C")
    out[...] = a
    assert out.__array_interface__["data"][0] % 64 == 0
    return out


@pytest.fixture
def aligned():
    """:func:`aligned_copy`, for tests that wrap NumPy memory zero-copy."""
    return aligned_copy
