"""The index database file: opening it, checking it (before any write), and its one connection."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.errors import IndexCorruptError, WorkspaceError
from workspace_tools.core.store._checkpoint import BackgroundCheckpoint
from workspace_tools.core.store._checks import check_database
from workspace_tools.core.store._rows import (
    DB_NAME,
    FORMAT_VERSION,
    SCHEMA,
    storage_error,
    translate_error,
)

__all__ = ["PAGE_SIZE", "DatabaseFile"]

PAGE_SIZE: Final = 8192
"""SQLite page size of a new index database (an existing file keeps its own)."""


class DatabaseFile:
    """An index's SQLite file and its connection (created with the schema on first use)."""

    def __init__(self, directory: Path, *, read_only: bool, durable: bool = True) -> None:
        self.directory = directory
        self.path = directory / DB_NAME
        self.read_only = read_only
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._durable = durable
        self._immutable: tuple[int, int] | None = None
        self._reopens = 0
        self._parsed: dict[str, Any] = {}
        """JSON column values already parsed (``IndexDatabase.result_chunks``)."""
        self.checkpoints = BackgroundCheckpoint(self.path)

    def exists(self) -> bool:
        """An index was created here (the file exists and, seen read-only, holds the schema)."""
        if self._conn is not None:
            return True
        if not self.path.exists():
            return False
        if not self.read_only:
            return True
        with self._lock, self.guard("open"):
            # A writer killed while creating the file leaves one without tables: no index yet.
            self._check_file()
            conn = self._connect_read_only()
            try:
                found = check_database(conn, self.path, current=FORMAT_VERSION)
            except BaseException:
                conn.close()
                raise
            if found is None:
                conn.close()
                return False
            self._conn = conn
            return True

    def _connect_read_only(self) -> sqlite3.Connection:
        """A read-only connection that creates no file (``immutable`` while no writer is around)."""
        stamp = self._stamp()
        immutable = stamp is not None and not self._wal.exists()
        uri = f"{self.path.as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")
        self._immutable = stamp if immutable else None
        return sqlite3.connect(
            uri, uri=True, timeout=60, isolation_level=None, check_same_thread=False
        )

    @property
    def _wal(self) -> Path:
        return self.path.with_name(self.path.name + "-wal")

    def _stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return (stat.st_mtime_ns, stat.st_size)

    def connection(self) -> sqlite3.Connection:
        """The open connection (created, with the schema, on first use)."""
        if self._conn is not None:
            return self._conn
        with self._lock, self.guard("open"):
            if self._conn is not None:
                return self._conn
            self._check_file()
            if self.read_only:
                conn = self._connect_read_only()
                try:
                    check_database(conn, self.path, current=FORMAT_VERSION)
                except BaseException:
                    conn.close()
                    raise
            else:
                # Checked read-only first: a file it must not touch is refused unwritten.
                found = self._probe()
                self.directory.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(
                    self.path, timeout=60, isolation_level=None, check_same_thread=False
                )
                if found is None:  # a new file: these apply before the first table only
                    conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
                    conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
                conn.execute("PRAGMA secure_delete=ON")
                if found != FORMAT_VERSION:
                    # An existing index of this format has its tables already.
                    conn.executescript(SCHEMA)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA synchronous={'FULL' if self._durable else 'NORMAL'}")
            self._conn = conn
            return conn

    def _probe(self) -> int | None:
        """The format of the existing file, checked (``None``: no file or a new, empty one)."""
        with self._probing() as (found, _probe):
            return found

    @contextlib.contextmanager
    def _probing(self) -> Iterator[tuple[int | None, sqlite3.Connection | None]]:
        """A read-only connection to the existing file, checked, and its format (``None``: none)."""
        try:
            if self.path.stat().st_size == 0:
                yield None, None
                return
        except FileNotFoundError:
            yield None, None
            return
        immutable = "" if self._wal.exists() else "&immutable=1"
        probe = sqlite3.connect(
            f"{self.path.as_uri()}?mode=ro{immutable}", uri=True, timeout=60, isolation_level=None
        )
        try:
            found = check_database(probe, self.path, current=FORMAT_VERSION)
            yield found, probe
        finally:
            probe.close()

    def meta_before_open(self, key: str) -> tuple[bool, str | None]:
        """A ``meta`` value read before a writable open (no WAL files yet): ``(read, value)``."""
        if self.read_only or self._conn is not None:
            return False, None
        self._check_file()
        with self._probing() as (found, probe):
            if found is None or probe is None:
                return False, None
            row = probe.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            return True, None if row is None else str(row[0])

    def _check_file(self) -> None:
        """Refuse a database file that is cut short, or one replaced by something else."""
        try:
            size = self.path.stat().st_size
            with open(self.path, "rb") as handle:
                header = handle.read(100)
        except FileNotFoundError:
            return
        problem = None
        if size == 0:
            # Empty after a crash: a new index, unless snapshots show there was a database.
            if any(self.directory.glob("snapshot-*")):
                problem = "the file is empty"
        elif len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
            problem = "the file is not an SQLite database"
        else:
            page = int.from_bytes(header[16:18], "big")
            page = 65536 if page == 1 else page
            if page < 512 or size % page:
                problem = f"its size ({size} bytes) is not a whole number of {page}-byte pages"
        if problem is not None:
            msg = (
                f"The index database {self.path} is damaged ({problem}). Open the workspace "
                "with rebuild=True (CLI: --rebuild) to rebuild it."
            )
            raise IndexCorruptError(msg)

    def close(self) -> None:
        """Close the connection (reopened on next use), once no background checkpoint runs."""
        self.checkpoints.wait()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextlib.contextmanager
    def guard(self, action: str) -> Iterator[None]:
        """Turn SQLite and OS failures into :class:`WorkspaceError` subclasses with advice."""
        try:
            yield
        except WorkspaceError:
            raise
        except sqlite3.DatabaseError as exc:
            raise translate_error(exc, action, path=self.path) from exc
        except OSError as exc:
            raise storage_error(exc, self.directory, action) from exc
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            # A value the database returned does not parse: the file was altered.
            msg = (
                f"The index database {self.path} is damaged ({type(exc).__name__}: {exc}). "
                "Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
            )
            raise IndexCorruptError(msg) from exc
