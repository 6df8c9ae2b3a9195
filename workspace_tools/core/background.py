"""Background work: one daemon thread per owner that runs the owner's jobs in order.

The core's one thread start, for work a caller must not wait for (checkpoints, merges, graph
rounds, section vectors). A worker's thread starts with its first job and ends once idle. At exit
:data:`EXITING` is set (jobs read it to finish early) and ``finish_at_exit`` workers are waited for.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["EXITING", "BackgroundWorker"]

_T = TypeVar("_T")

EXITING = threading.Event()
"""Set when the interpreter exits: jobs finish early, workers are waited for."""
_WORKERS: weakref.WeakSet[BackgroundWorker] = weakref.WeakSet()


class BackgroundWorker:
    """Runs jobs one at a time on a daemon thread of its own.

    Args:
        name: The thread's name (shown by debuggers and ``py-spy``).
        finish_at_exit: The interpreter waits for this worker's jobs at exit.
    """

    def __init__(self, name: str, *, finish_at_exit: bool = False) -> None:
        self.name = name
        self._cond = threading.Condition()
        self._jobs: deque[tuple[Callable[[], Any], Future[Any]]] = deque()
        self._thread: threading.Thread | None = None
        self._running = False
        self._pid = os.getpid()
        if finish_at_exit:
            _WORKERS.add(self)

    def submit(self, job: Callable[[], _T]) -> Future[_T]:
        """Queue ``job``; its result or exception is the returned future's."""
        future: Future[_T] = Future()
        with self._cond:
            if self._pid != os.getpid():  # a forked child: the parent's thread is not here
                self._pid, self._thread, self._running = os.getpid(), None, False
                self._jobs.clear()
            self._jobs.append((job, future))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        return future

    def busy(self) -> bool:
        """Whether a job runs or waits."""
        with self._cond:
            return self._running or bool(self._jobs)

    def on_thread(self) -> bool:
        """Whether the caller is this worker's thread (a job)."""
        return threading.current_thread() is self._thread

    def wait(self, timeout: float | None = None) -> bool:
        """Return once no job runs or waits (at once when called from a job).

        Returns:
            ``False`` when ``timeout`` seconds passed first.
        """
        if self.on_thread():
            return True
        with self._cond:
            return self._cond.wait_for(lambda: not (self._running or self._jobs), timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._jobs:
                    self._thread = None
                    self._cond.notify_all()
                    return
                job, future = self._jobs.popleft()
                self._running = True
            try:
                if future.set_running_or_notify_cancel():
                    future.set_result(job())
            except BaseException as exc:  # the future holds it (the job logs what it must)
                future.set_exception(exc)
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()


def _finish_at_exit() -> None:
    EXITING.set()
    for worker in list(_WORKERS):
        worker.wait()


atexit.register(_finish_at_exit)
