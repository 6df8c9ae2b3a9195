"""A small pool of warm worker processes that convert untrusted documents within budgets.

A worker caps its memory and is killed past its time budget (``time limit:``/``memory limit:``).
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from workspace_tools.core.convert.limits import Budget, format_bytes
from workspace_tools.core.errors import ConversionError
from workspace_tools.core.helper_process import LEAN_ENV, HelperProcess

__all__ = ["POOL_SIZE", "ConversionPool", "isolation_available", "shared_pool"]

POOL_SIZE: Final = 2
"""Workers kept at most (the conversions that can run at the same time)."""
_STARTUP_SECONDS: Final = 120.0
"""How long a new worker may take to import its libraries (not part of any file's budget)."""
_LEAN_ENV: Final = {**LEAN_ENV, "MALLOC_ARENA_MAX": "2"}
"""A worker runs one job at a time: no thread pools or per-thread malloc arenas to reserve."""


def isolation_available() -> bool:
    """Whether worker processes can be used here (POSIX: pipes can be waited on with select)."""
    return os.name == "posix"


class _Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        try:
            self.helper = HelperProcess("workspace_tools.core.convert.worker", env=_LEAN_ENV)
        except OSError as exc:
            msg = (
                f"unsupported: the conversion worker process could not start ({exc}); pass "
                "ConversionLimits(isolate=False) to convert in this process instead"
            )
            raise ConversionError(msg) from exc
        self.process = self.helper.process
        ready = self.helper.receive(time.monotonic() + _STARTUP_SECONDS)
        if ready is None or not json.loads(ready).get("ready"):
            self.kill()
            msg = (
                f"unsupported: the conversion worker process ({sys.executable}) did not start "
                f"within {_STARTUP_SECONDS:g} s; pass ConversionLimits(isolate=False) to convert "
                "in this process instead (without the time and memory budgets)"
            )
            raise ConversionError(msg)

    def run(self, header: bytes, data: bytes, deadline: float) -> dict[str, Any] | None:
        """Send one job and wait for its answer; ``None`` when the worker died or ran late."""
        try:
            self.helper.send(header, data)
        except OSError:
            return None
        raw = self.helper.receive(deadline)
        if raw is None:
            return None
        reply: dict[str, Any] = json.loads(raw.decode("utf-8", "replace"))
        return reply

    def alive(self) -> bool:
        return self.helper.alive()

    def kill(self) -> None:
        self.helper.stop(kill=True)

    def close(self) -> None:
        """Ask the worker to exit (end of input); kill it if it does not."""
        self.helper.stop(wait=2)


class ConversionPool:
    """Up to ``size`` warm worker processes, started on first use, shared by threads."""

    def __init__(self, size: int = POOL_SIZE, *, factory: Callable[[], _Worker] = _Worker) -> None:
        """Create an empty pool (no process starts before the first conversion)."""
        self.size = size
        self._factory = factory
        self._idle: list[_Worker] = []
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._closed = False

    def convert(self, name: str, data: bytes, budget: Budget) -> dict[str, Any]:
        """Convert ``data`` (a file called ``name``) in a worker within ``budget``.

        Returns:
            The worker's answer: ``text``, ``format``, ``markdown`` and ``metadata``.

        Raises:
            ConversionError: ``time limit:``, ``memory limit:``, or the converter's own error.
        """
        header = json.dumps(
            {
                "name": name,
                "format": budget.format,
                "seconds": budget.seconds,
                "memory_bytes": budget.memory_bytes,
                "unpacked_bytes": budget.unpacked_bytes,
            }
        ).encode("utf-8", "replace")
        with self._slots:
            worker = self._take()
            deadline = time.monotonic() + budget.seconds
            try:
                reply = worker.run(header, data, deadline)
            except BaseException:  # this worker's state is unknown
                worker.kill()
                raise
            if reply is None or reply.get("exit"):
                late = time.monotonic() >= deadline
                worker.kill()
                if reply is None:
                    raise _died(name, budget, late=late, code=worker.process.returncode)
            else:
                self._give_back(worker)
        if reply.get("ok"):
            return reply
        if reply.get("limit") == "memory":
            raise _memory_error(name, budget)
        raise ConversionError(str(reply.get("error") or f"corrupt: {name} could not be read"))

    def close(self) -> None:
        """Stop every idle worker (a busy one is stopped when its job ends)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive():
                    return worker
                worker.kill()
        return self._factory()

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed and worker.alive():
                self._idle.append(worker)
                return
        worker.close()


def _died(name: str, budget: Budget, *, late: bool, code: int | None) -> ConversionError:
    if late:
        seconds = f"{budget.seconds:g} s"
        msg = (
            f"time limit: {name} took longer than {seconds} to convert, the {budget.format} "
            f"budget; the conversion was stopped. Raise it with ConversionLimits(seconds=...) "
            f"or per_format={{{budget.format!r}: {{'seconds': ...}}}} if the file is trusted."
        )
        return ConversionError(msg)
    if code is not None and code < 0 and -code in _KILLED_BY_MEMORY:
        return _memory_error(name, budget)
    msg = (
        f"corrupt: the converter stopped while reading {name} ({budget.format}; worker exit "
        f"code {code}); the file may be damaged or hostile"
    )
    return ConversionError(msg)


def _memory_error(name: str, budget: Budget) -> ConversionError:
    msg = (
        f"memory limit: {name} needed more than {format_bytes(budget.memory_bytes)} to convert, "
        f"the {budget.format} budget; the conversion was stopped. Raise it with "
        f"ConversionLimits(memory_bytes=...) or per_format={{{budget.format!r}: "
        "{'memory_bytes': ...}} if the file is trusted."
    )
    return ConversionError(msg)


_KILLED_BY_MEMORY: Final = frozenset({9})
"""SIGKILL: what the kernel's out-of-memory killer sends."""

_shared: ConversionPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> ConversionPool:
    """The process-wide pool (stopped at interpreter exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ConversionPool()
            atexit.register(_shared.close)
        return _shared
