"""How far the running (or last) sync of a workspace got, readable from any thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from workspace_tools.core.text.within import is_within

__all__ = ["BATCH_CHUNKS", "BATCH_FILES", "BATCH_SECONDS", "SyncProgress", "SyncTracker"]

BATCH_FILES: Final = 256
"""A sync commits at least every this many changed files..."""
BATCH_CHUNKS: Final = 1_024
"""...or this many new chunks (about 10-30 s of embedding on two busy cores)..."""
BATCH_SECONDS: Final = 5.0
"""...or after reading for this long, so an interrupt loses at most one batch of work."""


@dataclass(frozen=True, kw_only=True)
class SyncProgress:
    """A snapshot of the running or last sync (``Workspace.sync_progress``)."""

    running: bool = False
    """A sync is running now."""
    files_total: int = 0
    """Files the sync looks at (what the scan found)."""
    files_done: int = 0
    """Files read so far (changed or not)."""
    files_committed: int = 0
    """Files whose result is committed (searchable and kept on interrupt)."""
    commits: int = 0
    """Batches committed so far."""
    started: float = 0.0
    """``time.time()`` when the sync started (0: never)."""
    finished: float = 0.0
    """``time.time()`` when it ended (0: running or never)."""
    error: str | None = None
    """Why the last sync failed or stopped, if it did."""
    files: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """The files the sync looks at, in the order it reads (and commits) them."""

    @property
    def pending(self) -> int:
        """Files looked at but not yet committed."""
        return max(0, self.files_total - self.files_committed) if self.running else 0

    def within(self, within: Sequence[str] | None) -> SyncProgress:
        """This progress counted over the files in ``within`` only (folders of the root).

        A sync reads and commits its files in order, so the files committed (read) are the
        first :attr:`files_committed` (:attr:`files_done`) of :attr:`files`. ``None``: itself.
        """
        if within is None:
            return self
        inside = [is_within(rel, within) for rel in self.files]
        return replace(
            self,
            files=tuple(rel for rel, keep in zip(self.files, inside, strict=True) if keep),
            files_total=sum(inside),
            files_done=sum(inside[: self.files_done]),
            files_committed=sum(inside[: self.files_committed]),
        )

    def line(self) -> str:
        """``indexing: 420 of 1000 files`` while running, else a short summary."""
        if self.running:
            return f"indexing: {self.files_committed} of {self.files_total} files"
        if self.error:
            return f"last sync stopped after {self.files_committed} files: {self.error}"
        if self.started:
            return f"indexed: {self.files_total} files checked"
        return "not indexed yet"


class SyncTracker:
    """The mutable side of :class:`SyncProgress`, updated by the sync under a small lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = SyncProgress()
        self._staged = 0

    def snapshot(self) -> SyncProgress:
        """The current state (immutable)."""
        with self._lock:
            return self._state

    def start(self, total: int, *, files: Sequence[str] = ()) -> None:
        """A sync that will look at ``total`` files (``files``, in reading order) begins."""
        with self._lock:
            self._state = SyncProgress(
                running=True, files_total=total, started=time.time(), files=tuple(files)
            )
            self._staged = 0

    def update(self, *, done: int) -> None:
        """Record files read."""
        with self._lock:
            self._state = replace(self._state, files_done=done)

    def stage(self, files: int) -> None:
        """The next commit, if it happens, makes the first ``files`` files committed."""
        self._staged = files

    def committed(self, *, wrote: bool = True) -> None:
        """The staged files are committed (``wrote``: by a write transaction, just now)."""
        with self._lock:
            state = self._state
            if state.running and self._staged > state.files_committed:
                self._state = replace(
                    state, files_committed=self._staged, commits=state.commits + wrote
                )

    def finish(self, *, error: str | None = None) -> None:
        """The sync ended (``error``: why it stopped early)."""
        with self._lock:
            self._state = replace(self._state, running=False, finished=time.time(), error=error)
