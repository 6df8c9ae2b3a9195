"""File-system steps of a snapshot write: fsyncs, and work handed to a small thread pool."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["fsync_dir", "fsync_file", "submit"]

T = TypeVar("T")


def submit(pool: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> Future[T]:
    """``pool.submit``, or the call made here when the pool takes no new work.

    That is once the interpreter is exiting: a merge deferred until the process ends runs then.
    """
    try:
        return pool.submit(fn, *args)
    except RuntimeError:
        done: Future[T] = Future()
        done.set_result(fn(*args))
        return done


def fsync_file(path: Path) -> None:
    """Persist a file's data."""
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def fsync_dir(folder: Path) -> None:
    """Persist a folder's entries where the platform allows it (not on Windows)."""
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
