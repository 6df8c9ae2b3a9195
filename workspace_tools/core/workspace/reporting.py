"""Progress of long work: tqdm bars that also tell a context-local listener.

Package-internal but public: a local sync, the tools' progress notifications and distributed
indexing report through the same bar and listener.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["ProgressListener", "listening", "progress_bar", "progress_listener"]

ProgressListener = Callable[[str, int, int], None]
"""Called as ``listener(stage, done, total)`` while long work runs (``stage``: "Reading",
"Embedding"...)."""

_listener: ContextVar[ProgressListener | None] = ContextVar(
    "workspace_tools_progress_listener", default=None
)


@contextlib.contextmanager
def progress_listener(listener: ProgressListener) -> Iterator[None]:
    """Send the progress of every sync and indexing call inside the block to ``listener``.

    Context-local (a :class:`~contextvars.ContextVar`), so concurrent runs each report to
    their own listener; it works with or without a visible progress bar.
    """
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def listening() -> bool:
    """True when a :func:`progress_listener` is set in this context."""
    return _listener.get() is not None


class _Reporter:
    """A progress bar that also tells the current listener (tqdm-like ``update``/``close``)."""

    def __init__(self, label: str, total: int, bar: Any, listener: ProgressListener) -> None:
        self._label, self._total, self._bar, self._listener = label, total, bar, listener
        self._done = 0
        listener(label, 0, total)

    def update(self, count: int) -> None:
        self._done += count
        if self._bar is not None:
            self._bar.update(count)
        self._listener(self._label, self._done, self._total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def progress_bar(total: int, label: str, *, show: bool) -> Any:
    """A tqdm bar (with the rate and an ETA), also reporting to the :func:`progress_listener`.

    ``None`` when hidden with no listener, or when there is nothing to do.
    """
    if total == 0:
        return None
    bar = None
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=label, unit="item", leave=False, dynamic_ncols=True)
    listener = _listener.get()
    if listener is None:
        return bar
    return _Reporter(label, total, bar, listener)
