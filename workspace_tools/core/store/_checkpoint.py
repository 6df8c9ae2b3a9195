"""A bulk commit's WAL frames folded into the database file in the background, not in its COMMIT.

:meth:`BackgroundCheckpoint.deferred` turns the automatic checkpoint off around a bulk ``COMMIT``
and runs a ``PASSIVE`` one on a background worker; the ``COMMIT`` still fsyncs the WAL.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from workspace_tools.core.background import BackgroundWorker

__all__ = ["BULK_ROWS", "BackgroundCheckpoint"]

logger = logging.getLogger(__name__)

BULK_ROWS: Final = 200
"""Rows a commit writes before its WAL frames are left to a background checkpoint."""
_AUTOCHECKPOINT_PAGES: Final = 1000
"""SQLite's default ``wal_autocheckpoint``, set again after a bulk commit."""


class BackgroundCheckpoint:
    """Passive checkpoints of one database file, one at a time, on a background worker.

    Args:
        path: The database file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._worker = BackgroundWorker("workspace-tools-checkpoint", finish_at_exit=True)
        self._queued = False
        """A checkpoint is queued and has not started: another request adds nothing."""
        self.runs = 0

    @contextlib.contextmanager
    def deferred(self, conn: sqlite3.Connection, *, rows: int) -> Iterator[None]:
        """Around a ``COMMIT`` on ``conn``: a bulk one's frames go to a background checkpoint.

        Args:
            conn: The writer's connection, in its transaction.
            rows: Rows the transaction wrote.
        """
        if rows < BULK_ROWS:
            yield
            return
        conn.execute("PRAGMA wal_autocheckpoint=0")
        try:
            yield
        finally:
            with contextlib.suppress(sqlite3.Error):  # a broken connection is reopened anyway
                conn.execute(f"PRAGMA wal_autocheckpoint={_AUTOCHECKPOINT_PAGES}")
        self.start()

    def start(self) -> None:
        """Checkpoint soon (once more after the running one, if one runs)."""
        if not self._queued:
            self._queued = True
            self._worker.submit(self._run)

    def wait(self) -> None:
        """Return once no checkpoint of this object runs or waits."""
        self._worker.wait()

    def _run(self) -> None:
        self._queued = False  # a commit from now on asks for a checkpoint after this one
        self._checkpoint()

    def _checkpoint(self) -> None:
        try:
            uri = f"{self.path.resolve().as_uri()}?mode=rw"  # never creates a file
            conn = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            finally:
                conn.close()
        except (sqlite3.Error, OSError) as exc:  # committed frames stay in the WAL: nothing lost
            logger.debug("background checkpoint of %s failed: %s", self.path, exc)
        self.runs += 1
