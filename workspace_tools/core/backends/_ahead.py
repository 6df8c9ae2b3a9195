"""Work a write can do while its commit waits for the disk, on one helper thread per process.

A one-document write spends most of its wall time in SQLite's ``COMMIT``: the WAL frames
written and fsynced (``synchronous=FULL``), with the GIL released. What the write does after
the commit and that does not depend on it (the term ids of the texts it wrote: a pure function
of the texts and the vocabulary, which only the writer's thread changes while it holds the
workspace lock) can run in that time instead: :func:`ahead` hands it to this module's thread
right before the ``COMMIT``, and :meth:`Ahead.result` takes its result afterwards.

The thread never holds back the write: if it has not started the job by the time the writer
asks for the result (a busy machine left it unscheduled), the writer runs the job itself, so a
write costs at most what it cost before plus one hand-over (a few microseconds). The job is
handed over only right before the ``COMMIT`` statement releases the GIL: a job started earlier
would take the GIL from the writer's own statements.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from typing import Final, Generic, TypeVar

__all__ = ["Ahead", "ahead"]

_T = TypeVar("_T")

_QUEUED: Final = 0
_TAKEN: Final = 1


class Ahead(Generic[_T]):
    """One job handed to the helper thread: its result, or the job run here if not started."""

    __slots__ = ("_claim", "_done", "_error", "_job", "_result", "_state")

    def __init__(self, job: Callable[[], _T]) -> None:
        self._job: Callable[[], _T] | None = job
        self._claim = threading.Lock()
        """Held while one side decides who runs the job."""
        self._state = _QUEUED
        self._done = threading.Lock()
        """Held until the job ran (the helper releases it; :meth:`result` waits on it)."""
        self._done.acquire()
        self._result: _T | None = None
        self._error: BaseException | None = None

    @property
    def taken(self) -> bool:
        """The helper thread started (or finished) the job."""
        return self._state == _TAKEN

    def _take(self) -> Callable[[], _T] | None:
        """The job, for whoever asks first (``None`` for the other)."""
        with self._claim:
            job, self._job = self._job, None
            return job

    def _run_here(self) -> None:
        """On the helper thread: run the job unless the writer took it back."""
        job = self._take()
        if job is None:
            return
        self._state = _TAKEN
        try:
            self._result = job()
        except BaseException as exc:  # handed to the caller of result()
            self._error = exc
        finally:
            self._done.release()

    def result(self) -> _T:
        """The job's result: waited for if the helper runs it, else computed here now.

        Raises:
            BaseException: whatever the job raised.
        """
        job = self._take()
        if job is not None:  # the helper has not started it: no waiting for a thread
            return job()
        self._wait()
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]  # set when no error was raised

    def drop(self) -> None:
        """Give the job up: taken back if the helper has not started it, else waited for.

        Its result or error is dropped; once this returns, nothing runs the job any more.
        """
        if self._take() is None:
            self._wait()

    def _wait(self) -> None:
        with self._done:  # the helper holds this until the job ran
            pass


class _Helper:
    """The helper thread (a daemon, started on first use, again in a forked child)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Ahead[object]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pid = 0
        self.handed = 0
        """Jobs handed over (tests count them)."""

    def submit(self, job: Ahead[_T]) -> None:
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():  # none yet, or a forked child (no thread there)
                    self._jobs = queue.SimpleQueue()
                    threading.Thread(
                        target=self._run,
                        args=(self._jobs,),
                        name="workspace-tools-ahead",
                        daemon=True,
                    ).start()
                    self._pid = os.getpid()
        self.handed += 1
        self._jobs.put(job)  # type: ignore[arg-type]  # the queue holds jobs of any result

    @staticmethod
    def _run(jobs: queue.SimpleQueue[Ahead[object]]) -> None:
        while True:
            jobs.get()._run_here()


_HELPER: Final = _Helper()


def ahead(job: Callable[[], _T]) -> Ahead[_T]:
    """Hand ``job`` to the helper thread now; take its result with :meth:`Ahead.result`.

    The caller must not change what the job reads until it took the result (or the job ran).
    """
    handed = Ahead(job)
    _HELPER.submit(handed)
    return handed
