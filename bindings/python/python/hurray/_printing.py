"""Print options: how ``repr``/``str`` show COO, CSR and CSC tensors.

One :class:`contextvars.ContextVar` holds the option, so it is per thread and per
asyncio task (new threads see the default, ``"metadata"``).
"""

from __future__ import annotations

import contextvars
from types import TracebackType
from typing import Any, Optional

_SPARSE_DISPLAY: contextvars.ContextVar[str] = contextvars.ContextVar(
    "hurray.print_options.sparse_display", default="metadata"
)
_CHOICES = ("metadata", "content")


def _check(sparse_display: Optional[str]) -> None:
    if sparse_display is not None and sparse_display not in _CHOICES:
        raise ValueError(
            f"sparse_display must be 'metadata' or 'content', not {sparse_display!r}"
        )


def set_print_options(*, sparse_display: Optional[str] = None) -> None:
    """Set print options for the current context.

    Args:
        sparse_display: ``"metadata"`` (layout, shape, nnz, dtype) or ``"content"``
            (also the component arrays) for COO/CSR/CSC tensors; ``None`` leaves
            the option unchanged.

    Raises:
        ValueError: an unknown value.
    """
    _check(sparse_display)
    if sparse_display is not None:
        _SPARSE_DISPLAY.set(sparse_display)


def get_print_options() -> dict[str, Any]:
    """Return the current print options as a new dict ``{"sparse_display": ...}``."""
    return {"sparse_display": _SPARSE_DISPLAY.get()}


class PrintOptionsCtx:
    """Context manager that sets print options on entry and restores them on exit.

    ``__enter__`` returns ``None``; contexts nest.

    Raises:
        ValueError: an unknown ``sparse_display`` (at construction).
    """

    __slots__ = ("_sparse_display", "_token")

    def __init__(self, *, sparse_display: Optional[str] = None) -> None:
        _check(sparse_display)
        self._sparse_display = sparse_display
        self._token: Optional[contextvars.Token[str]] = None

    def __enter__(self) -> None:
        if self._sparse_display is not None:
            self._token = _SPARSE_DISPLAY.set(self._sparse_display)
        return None

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_val: Optional[BaseException],
        exc_tb: Optional[TracebackType],
    ) -> bool:
        if self._token is not None:
            _SPARSE_DISPLAY.reset(self._token)
            self._token = None
        return False


def print_options(*, sparse_display: Optional[str] = None) -> PrintOptionsCtx:
    """Return a :class:`PrintOptionsCtx` for ``with hurray.print_options(...):``.

    Raises:
        ValueError: an unknown ``sparse_display``.
    """
    return PrintOptionsCtx(sparse_display=sparse_display)


for _obj in (PrintOptionsCtx, set_print_options, get_print_options, print_options):
    _obj.__module__ = "hurray"
