"""A bulk commit's WAL frames folded into the database file on a thread, not inside its COMMIT.

In WAL mode SQLite checkpoints after any commit that leaves the WAL past
``wal_autocheckpoint`` pages (1,000 by default): the connection that committed copies the WAL's
frames into the database file and fsyncs it, inside that ``COMMIT``. A bulk change writes
megabytes (10,000 chunks with their vectors: ~18 MB), so its ``COMMIT`` did that copy and a
second fsync on the writer's critical path: 100-200 ms per 10,000-chunk commit against 35-55 ms
without, measured on this machine's disk (a 10 MB WAL per commit, 5 commits, synchronous=FULL).

:meth:`BackgroundCheckpoint.deferred` turns the automatic checkpoint off around the ``COMMIT`` of
a change of :data:`BULK_ROWS` rows or more, and then starts a ``PASSIVE`` checkpoint on a thread
with its own connection (SQLite releases the GIL while it copies and syncs, and a passive
checkpoint waits for no reader or writer). Durability is unchanged: with ``synchronous=FULL`` the
commit is on disk once its WAL frames are fsynced, which the ``COMMIT`` still does; a checkpoint
only moves committed frames into the main file, and is safe to interrupt (a crash leaves them in
the WAL, which the next connection replays). Small writes keep SQLite's own automatic checkpoint.
``save()``, ``compact()`` and ``close()`` wait for a running checkpoint first (their own
checkpoint would otherwise find the lock taken and return without doing its work).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Final

__all__ = ["BULK_ROWS", "BackgroundCheckpoint"]

logger = logging.getLogger(__name__)

BULK_ROWS: Final = 200
"""Rows (sources, chunks, vectors, deletions) a commit writes before its WAL frames are left to a
background checkpoint (a few hundred KB and more: a one-document write stays as it was)."""
_AUTOCHECKPOINT_PAGES: Final = 1000
"""SQLite's default ``wal_autocheckpoint``, set again after a bulk commit."""


class BackgroundCheckpoint:
    """At most one passive checkpoint of one database file at a time, on a daemon thread.

    Args:
        path: The database file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._again = False
        """A bulk commit came while a checkpoint ran: the thread runs one more."""
        self.runs = 0
        """Checkpoints run (tests count them)."""

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
        """Checkpoint now on the thread (once more after the running one, if one runs)."""
        with self._lock:
            thread = self._thread
            if thread is not None and thread.is_alive():  # not in a forked child: it has none
                self._again = True
                return
            self._again = False
            thread = threading.Thread(
                target=self._run, name="workspace-tools-checkpoint", daemon=True
            )
            self._thread = thread
            thread.start()

    def wait(self) -> None:
        """Return once no checkpoint of this object runs."""
        while True:
            with self._lock:
                thread = self._thread
            if thread is None or thread is threading.current_thread() or not thread.is_alive():
                return
            thread.join()

    def _run(self) -> None:
        while True:
            self._checkpoint()
            with self._lock:
                if not self._again:
                    return
                self._again = False

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
