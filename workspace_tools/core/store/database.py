"""The index database: SQLite (WAL), the source of truth for everything an index holds.

One file, ``index.sqlite3``, holds the settings and format version, every source, every chunk
(text, metadata, terms), the embedding cache (content hash -> vector) and a pointer to the latest
derived snapshot (see ``snapshot.py``). Each change is one transaction: SQLite's atomic commit and
its locking replace hand-written generations, pointers and lock files, on every platform.

Every commit bumps ``version``. Upserted rows carry the version that wrote them and deletions are
logged in ``removed``, so a process at version ``v`` catches up with :meth:`changes_since`
without reloading anything; deletion rows older than the oldest snapshot are pruned (a process
that fell behind that horizon reloads in full). Rows carry a checksum, so a damaged row is an
:class:`IndexCorruptError`, never a silently different answer.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import IndexCorruptError, StorageError

__all__ = [
    "DB_NAME",
    "FORMAT_VERSION",
    "Changes",
    "ChunkRecord",
    "IndexDatabase",
    "SourceRow",
    "row_checksum",
]

FORMAT_VERSION: Final = 2
"""Version of the on-disk format (1 was generation folders of JSON and arrays)."""
DB_NAME: Final = "index.sqlite3"
TERM_SEPARATOR: Final = " "
"""Terms of a chunk are stored space-separated (the tokenizer never yields whitespace)."""

_SCHEMA: Final = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, hash TEXT NOT NULL, chunk_ids TEXT NOT NULL,
    metadata TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    format TEXT NOT NULL, version INTEGER NOT NULL, checksum TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sources_version ON sources(version);
CREATE TABLE IF NOT EXISTS chunks(
    key INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, source TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, headings TEXT NOT NULL,
    levels TEXT NOT NULL, hash TEXT NOT NULL, metadata TEXT NOT NULL, text TEXT NOT NULL,
    terms TEXT NOT NULL, version INTEGER NOT NULL, checksum TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_version ON chunks(version);
CREATE INDEX IF NOT EXISTS chunks_source ON chunks(source);
CREATE TABLE IF NOT EXISTS removed(
    version INTEGER NOT NULL, kind TEXT NOT NULL, ident TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS removed_version ON removed(version);
CREATE TABLE IF NOT EXISTS vectors(
    hash TEXT PRIMARY KEY, vector BLOB NOT NULL, checksum TEXT NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('format_version', '2');
INSERT OR IGNORE INTO meta VALUES ('version', '0');
INSERT OR IGNORE INTO meta VALUES ('horizon', '0');
COMMIT;
"""
"""Schema and first rows in one transaction: a crash leaves all of it or none (the format
version is :data:`FORMAT_VERSION`)."""


def row_checksum(*fields: Any) -> str:
    """Checksum of a row's fields (stored with the row, checked when it is read)."""
    parts = [
        value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogatepass")
        for value in fields
    ]
    return hashlib.blake2b(b"\x1f".join(parts), digest_size=8).hexdigest()


@dataclass(slots=True)
class SourceRow:
    """A source as stored."""

    id: str
    kind: str
    hash: str
    chunk_ids: list[str]
    metadata: dict[str, Any]
    mtime_ns: int
    size: int
    format: str


@dataclass(slots=True)
class ChunkRecord:
    """A chunk as stored (``key`` is assigned by the database)."""

    key: int
    id: str
    source: str
    start_line: int
    end_line: int
    headings: list[str]
    levels: list[int]
    hash: str
    metadata: dict[str, Any]
    text: str
    terms: str


@dataclass(slots=True)
class Changes:
    """What changed after a version: upserted rows and deleted ids, in commit order."""

    version: int
    sources: list[SourceRow]
    source_versions: list[int]
    """Version that wrote each of ``sources``."""
    removed: list[tuple[int, str, str]]
    """``(version, kind, ident)`` of every deletion: kind ``s`` (source id) or ``c`` (chunk key)."""
    chunks: list[tuple[int, str, str, str, int]]
    """``(key, source, hash, terms, version)`` of every chunk written after the version."""


class IndexDatabase:
    """The SQLite file of one index. Thread-safe (one connection behind a lock)."""

    def __init__(self, directory: Path, *, read_only: bool, durable: bool = True) -> None:
        self.directory = directory
        self.path = directory / DB_NAME
        self.read_only = read_only
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._durable = durable
        self._immutable: tuple[int, int] | None = None
        self._reopens = 0

    # -- connection ----------------------------------------------------------------------------

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
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone() is None:
                conn.close()
                return False
            self._conn = conn
            self._check_format()
            return True

    def _connect_read_only(self) -> sqlite3.Connection:
        """A read-only connection that creates no file.

        With no writer around (no ``-wal`` file) the database is opened ``immutable``, so SQLite
        creates no ``-wal``/``-shm`` files either: a read-only workspace leaves the folder byte
        for byte as it was. :meth:`data_version` notices when a writer appears (or the file
        changes) and reopens normally, so later commits are still seen.
        """
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
            else:
                self.directory.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(
                    self.path, timeout=60, isolation_level=None, check_same_thread=False
                )
                conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # before the first table
                conn.execute("PRAGMA secure_delete=ON")
                conn.executescript(_SCHEMA)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA synchronous={'FULL' if self._durable else 'NORMAL'}")
            self._conn = conn
            self._check_format()
            return conn

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
            # A crash right after creating the file leaves it empty: a new index, unless derived
            # snapshots show there was a database here.
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

    def set_durable(self, durable: bool) -> None:  # noqa: FBT001 - a plain switch
        """``FULL`` (every commit fsynced) or ``NORMAL`` (crash-safe, fsync at checkpoints)."""
        self._durable = durable
        if self._conn is not None and not self.read_only:
            self._conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")

    def close(self) -> None:
        """Close the connection (reopened on next use)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _check_format(self) -> None:
        found = self.meta("format_version")
        if found != str(FORMAT_VERSION):
            msg = (
                f"The index database {self.path} has format version {found}, this version of "
                f"workspace-tools reads {FORMAT_VERSION}. Rebuild it with "
                "Workspace(root, rebuild=True) or `workspace-tools index --rebuild`."
            )
            raise IndexCorruptError(msg)

    @contextlib.contextmanager
    def guard(self, action: str) -> Iterator[None]:
        """Turn SQLite and OS failures into :class:`WorkspaceError` subclasses with advice."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc, action) from exc
        except OSError as exc:
            raise storage_error(exc, self.directory, action) from exc
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            # A value the database returned does not parse: the file was altered.
            msg = (
                f"The index database {self.path} is damaged ({type(exc).__name__}: {exc}). "
                "Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
            )
            raise IndexCorruptError(msg) from exc

    def _translate(self, exc: sqlite3.DatabaseError, action: str) -> Exception:
        text = str(exc)
        lowered = text.lower()
        if "full" in lowered:
            return storage_error(OSError(errno.ENOSPC, text), self.directory, action)
        if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
            return storage_error(OSError(errno.EACCES, text), self.directory, action)
        if "locked" in lowered or "busy" in lowered:
            msg = (
                f"The index in {self.directory} stayed locked by another process for 60 s while "
                f"trying to {action} ({text}). Retry when the other writer has finished."
            )
            return StorageError(msg)
        if isinstance(exc, sqlite3.OperationalError) and "disk i/o" in lowered:
            return storage_error(OSError(errno.EIO, text), self.directory, action)
        msg = (
            f"The index database {self.path} is damaged ({text}). Open the workspace with "
            "rebuild=True (CLI: --rebuild) to rebuild it."
        )
        return IndexCorruptError(msg)

    # -- reads -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """One read transaction: every read inside sees the same committed state (WAL snapshot)."""
        with self._lock:
            if not self.exists():
                yield
                return
            with self.guard("read the index"):
                conn = self.connection()
                nested = conn.in_transaction
                if not nested:
                    conn.execute("BEGIN")
            try:
                yield
            finally:
                if not nested:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("COMMIT")

    def meta(self, key: str) -> str | None:
        """A value of the ``meta`` table."""
        with self._lock, self.guard("read the index"):
            row = self.connection().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            return None if row is None else str(row[0])

    def version(self) -> int:
        """Number of commits so far."""
        return int(self.meta("version") or 0)

    def data_version(self) -> int:
        """Changes whenever another connection commits (cheap: no table is read)."""
        conn = self._conn
        if conn is not None and self._immutable is None:
            with self._lock:  # the common case, without the guard's context manager (~4 us)
                try:
                    return self._reopens << 32 | int(
                        conn.execute("PRAGMA data_version").fetchone()[0]
                    )
                except (sqlite3.DatabaseError, OSError):
                    pass  # the guarded path below raises the right error
        with self._lock, self.guard("read the index"):
            moved = self._immutable is not None and (
                self._wal.exists() or self._stamp() != self._immutable
            )
            if self._conn is not None and moved:
                self._conn.close()  # a writer appeared: reopen to see its commits
                self._conn = None
                self._reopens += 1
            version = int(self.connection().execute("PRAGMA data_version").fetchone()[0])
            return self._reopens << 32 | version

    def settings(self) -> dict[str, Any] | None:
        """Settings the index was built with (``None`` for an empty, new index)."""
        raw = self.meta("settings")
        return None if raw is None else dict(json.loads(raw))

    def source(self, source_id: str) -> SourceRow | None:
        """One source row."""
        with self._lock, self.guard("read the index"):
            row = (
                self.connection()
                .execute(f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE id=?", (source_id,))  # noqa: S608 - constant names, bound values
                .fetchone()
            )
        return None if row is None else self._source(row)

    def sources(self) -> list[SourceRow]:
        """Every source row."""
        with self._lock, self.guard("read the index"):
            rows = self.connection().execute(f"SELECT {_SOURCE_COLUMNS} FROM sources").fetchall()  # noqa: S608 - constant names, bound values
        return [self._source(r) for r in rows]

    def has_children(self, source_id: str) -> bool:
        """A source id starts with ``source_id + "/"``."""
        with self._lock, self.guard("read the index"):
            row = (
                self.connection()
                .execute(
                    "SELECT 1 FROM sources WHERE id>=? AND id<? LIMIT 1",
                    (source_id + "/", source_id + "0"),
                )
                .fetchone()
            )
        return row is not None

    def count_embedded(self) -> int:
        """Chunks whose text has a cached vector."""
        with self._lock, self.guard("read the index"):
            return int(
                self.connection()
                .execute("SELECT COUNT(*) FROM chunks WHERE hash IN (SELECT hash FROM vectors)")
                .fetchone()[0]
            )

    def count(self, table: str) -> int:
        """Rows of ``sources`` or ``chunks``."""
        assert table in {"sources", "chunks"}
        with self._lock, self.guard("read the index"):
            return int(self.connection().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608 - constant names, bound values

    def chunks(self, keys: Sequence[int]) -> dict[int, ChunkRecord]:
        """Chunks by key (missing keys are left out)."""
        out: dict[int, ChunkRecord] = {}
        if not keys:
            return out
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            for start in range(0, len(keys), 500):
                part = [int(k) for k in keys[start : start + 500]]
                marks = ",".join("?" * len(part))
                for row in conn.execute(
                    f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE key IN ({marks})",  # noqa: S608
                    part,
                ):
                    record = self._chunk(row)
                    out[record.key] = record
        return out

    def chunks_of(self, source_id: str) -> list[ChunkRecord]:
        """Chunks of a source, in key (insertion) order."""
        with self._lock, self.guard("read the index"):
            rows = (
                self.connection()
                .execute(
                    f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE source=? ORDER BY key",  # noqa: S608 - constant names, bound values
                    (source_id,),
                )
                .fetchall()
            )
        return [self._chunk(r) for r in rows]

    def vectors(self, hashes: Iterable[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Cached vectors of these content hashes (misses are left out)."""
        wanted = list(dict.fromkeys(hashes))
        out: dict[str, npt.NDArray[np.float32]] = {}
        if not wanted:
            return out
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                for digest, blob, checksum in conn.execute(
                    f"SELECT hash, vector, checksum FROM vectors WHERE hash IN ({marks})",  # noqa: S608
                    part,
                ):
                    if row_checksum(digest, blob) != checksum:
                        msg = (
                            f"The index database {self.path} is damaged (a cached vector fails "
                            "its checksum). Open the workspace with rebuild=True (CLI: --rebuild) "
                            "to rebuild it."
                        )
                        raise IndexCorruptError(msg)
                    out[digest] = np.frombuffer(blob, dtype=np.float32).copy()
        return out

    def changes_since(self, version: int) -> Changes | None:
        """Rows written and deleted after ``version``; ``None`` past the pruning horizon."""
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            with self.reading():
                current = int(
                    conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0]
                )
                horizon = int(
                    conn.execute("SELECT value FROM meta WHERE key='horizon'").fetchone()[0]
                )
                if version < horizon:
                    return None
                rows = conn.execute(
                    f"SELECT {_SOURCE_COLUMNS}, version FROM sources WHERE version>?",  # noqa: S608
                    (version,),
                ).fetchall()
                # No ORDER BY: it would make SQLite scan the table instead of the version index.
                removed = sorted(
                    conn.execute(
                        "SELECT rowid, version, kind, ident FROM removed WHERE version>?",
                        (version,),
                    ).fetchall()
                )
                chunk_rows = sorted(
                    conn.execute(
                        f"SELECT {_CHUNK_COLUMNS}, version FROM chunks WHERE version>?",  # noqa: S608
                        (version,),
                    ).fetchall()
                )
                chunks = [
                    (c.key, c.source, c.hash, c.terms, int(r[-1]))
                    for c, r in ((self._chunk(r[:-1]), r) for r in chunk_rows)
                ]
        return Changes(
            version=current,
            sources=[self._source(r[:-1]) for r in rows],
            source_versions=[int(r[-1]) for r in rows],
            removed=[(int(v), str(k), str(i)) for _rowid, v, k, i in removed],
            chunks=chunks,
        )

    def snapshot_of_rows(self) -> tuple[int, list[tuple[int, str, str, str]]]:
        """The version and ``(key, source, hash, terms)`` of every chunk, read atomically."""
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            with self.reading():
                current = int(
                    conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0]
                )
                rows = conn.execute(
                    f"SELECT {_CHUNK_COLUMNS} FROM chunks ORDER BY key"  # noqa: S608
                ).fetchall()
                checked = [self._chunk(r) for r in rows]
        return current, [(c.key, c.source, c.hash, c.terms) for c in checked]

    def sources_at(self) -> tuple[int, list[SourceRow]]:
        """The version and every source row, read atomically."""
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            with self.reading():
                current = int(
                    conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0]
                )
                rows = conn.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources").fetchall()  # noqa: S608
        return current, [self._source(r) for r in rows]

    def metadata_at(self) -> tuple[int, dict[int, tuple[str, str, dict[str, Any]]]]:
        """The version and ``key -> (chunk id, source, metadata)`` of every chunk (for filters)."""
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            with self.reading():
                current = int(
                    conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0]
                )
                rows = conn.execute("SELECT key, id, source, metadata FROM chunks").fetchall()
        return current, {int(k): (i, s, json.loads(m)) for k, i, s, m in rows}

    def quick_check(self) -> bool:
        """SQLite's structural check passes."""
        try:
            with self._lock:
                row = self.connection().execute("PRAGMA quick_check").fetchone()
            return bool(row) and row[0] == "ok"
        except (sqlite3.DatabaseError, IndexCorruptError):
            return False

    def _source(self, row: Sequence[Any]) -> SourceRow:
        *fields, checksum = row
        if row_checksum(*fields) != checksum:
            msg = (
                f"The index database {self.path} is damaged (source row {fields[0]!r} fails its "
                "checksum). Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
            )
            raise IndexCorruptError(msg)
        sid, kind, digest, chunk_ids, metadata, mtime_ns, size, fmt = fields
        return SourceRow(
            id=sid,
            kind=kind,
            hash=digest,
            chunk_ids=list(json.loads(chunk_ids)),
            metadata=dict(json.loads(metadata)),
            mtime_ns=int(mtime_ns),
            size=int(size),
            format=fmt,
        )

    def _chunk(self, row: Sequence[Any]) -> ChunkRecord:
        *fields, checksum = row
        if row_checksum(*fields[1:]) != checksum:
            msg = (
                f"The index database {self.path} is damaged (chunk row {fields[1]!r} fails its "
                "checksum). Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
            )
            raise IndexCorruptError(msg)
        key, cid, source, start, end, headings, levels, digest, metadata, text, terms = fields
        return ChunkRecord(
            key=int(key),
            id=cid,
            source=source,
            start_line=int(start),
            end_line=int(end),
            headings=list(json.loads(headings)),
            levels=list(json.loads(levels)),
            hash=digest,
            metadata=dict(json.loads(metadata)),
            text=text,
            terms=terms,
        )

    # -- writes ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def write(self, action: str) -> Iterator[Writer]:
        """One write transaction (``BEGIN IMMEDIATE``: writers queue, readers go on)."""
        with self._lock, self.guard(action):
            conn = self.connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = int(
                    conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0]
                )
                writer = Writer(conn, version + 1)
                yield writer
                if writer.changed:
                    conn.execute(
                        "UPDATE meta SET value=? WHERE key='version'", (str(writer.version),)
                    )
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise

    def compact(self) -> None:
        """Give freed pages back to the file system and fold the WAL into the database."""
        with self._lock, self.guard("compact the index"):
            conn = self.connection()
            conn.executescript("PRAGMA incremental_vacuum;")  # steps until the freelist is empty
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def checkpoint(self) -> None:
        """Make every commit durable in the main file (``save()``)."""
        with self._lock, self.guard("save the index"):
            self.connection().execute("PRAGMA wal_checkpoint(FULL)")


_SOURCE_COLUMNS: Final = "id, kind, hash, chunk_ids, metadata, mtime_ns, size, format, checksum"
_CHUNK_COLUMNS: Final = (
    "key, id, source, start_line, end_line, headings, levels, hash, metadata, text, terms, checksum"
)


class Writer:
    """Statements of one write transaction; every row written gets the new version."""

    def __init__(self, conn: sqlite3.Connection, version: int) -> None:
        self._conn = conn
        self.version = version
        self.changed = False

    def meta(self, key: str) -> str | None:
        """Read a meta value inside the transaction."""
        row = self._conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value (does not count as a change of the contents)."""
        self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def source(self, source_id: str) -> tuple[str, str] | None:
        """``(kind, hash)`` of a stored source, read inside the transaction."""
        row = self._conn.execute(
            "SELECT kind, hash FROM sources WHERE id=?", (source_id,)
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def source_ids(self) -> list[str]:
        """Every stored source id, read inside the transaction."""
        return [str(r[0]) for r in self._conn.execute("SELECT id FROM sources")]

    def remove_source(self, source_id: str) -> bool:
        """Delete a source and its chunks (logged for other processes); ``False`` if absent."""
        conn = self._conn
        gone = conn.execute("DELETE FROM sources WHERE id=?", (source_id,)).rowcount
        keys = [r[0] for r in conn.execute("SELECT key FROM chunks WHERE source=?", (source_id,))]
        if keys:
            conn.execute("DELETE FROM chunks WHERE source=?", (source_id,))
            conn.executemany(
                "INSERT INTO removed VALUES (?, 'c', ?)", [(self.version, str(k)) for k in keys]
            )
        if gone:
            conn.execute("INSERT INTO removed VALUES (?, 's', ?)", (self.version, source_id))
        self.changed = self.changed or bool(gone or keys)
        return bool(gone)

    def put_source(self, row: SourceRow, chunks: Sequence[ChunkRecord]) -> list[int]:
        """Replace a source and its chunks; returns the new chunk keys."""
        self.remove_source(row.id)
        self._put_source_row(row)
        keys = []
        conn = self._conn
        for c in chunks:
            fields = (
                c.id,
                c.source,
                c.start_line,
                c.end_line,
                _dumps(c.headings),
                _dumps(c.levels),
                c.hash,
                _dumps(c.metadata),
                c.text,
                c.terms,
            )
            cursor = conn.execute(
                "INSERT INTO chunks(id, source, start_line, end_line, headings, levels, hash, "
                "metadata, text, terms, version, checksum) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (*fields, self.version, row_checksum(*fields)),
            )
            keys.append(int(cursor.lastrowid or 0))
        self.changed = True
        return keys

    def touch_source(self, row: SourceRow) -> None:
        """Rewrite a source row only (its mtime and size moved, its content did not)."""
        self._put_source_row(row)
        self.changed = True

    def _put_source_row(self, row: SourceRow) -> None:
        fields = (
            row.id,
            row.kind,
            row.hash,
            _dumps(row.chunk_ids),
            _dumps(row.metadata),
            row.mtime_ns,
            row.size,
            row.format,
        )
        self._conn.execute(
            "INSERT OR REPLACE INTO sources(id, kind, hash, chunk_ids, metadata, mtime_ns, size, "
            "format, version, checksum) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (*fields, self.version, row_checksum(*fields)),
        )

    def put_vectors(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        """Add vectors to the embedding cache."""
        rows = []
        for digest, vector in vectors.items():
            blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
            rows.append((digest, blob, row_checksum(digest, blob)))
        self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)

    def prune_vectors(self) -> None:
        """Forget cached vectors of texts no longer indexed."""
        self._conn.execute(
            "DELETE FROM vectors WHERE hash NOT IN (SELECT DISTINCT hash FROM chunks)"
        )

    def clear(self, *, keep_vectors: bool) -> None:
        """Delete every source and chunk (and cached vectors unless ``keep_vectors``).

        Every process reloads afterwards: the deletion log restarts here.
        """
        conn = self._conn
        conn.execute("DELETE FROM sources")
        conn.execute("DELETE FROM chunks")
        conn.execute("DELETE FROM removed")
        if not keep_vectors:
            conn.execute("DELETE FROM vectors")
        conn.execute("DELETE FROM meta WHERE key='snapshot'")
        self.set_meta("horizon", str(self.version))
        self.changed = True

    def prune_log(self, horizon: int) -> None:
        """Forget deletions at or before ``horizon`` (every snapshot reflects them)."""
        self._conn.execute("DELETE FROM removed WHERE version<=?", (horizon,))
        self.set_meta("horizon", str(horizon))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def storage_error(exc: OSError, directory: Path, action: str) -> StorageError:
    """A :class:`StorageError` saying what failed, where, and what to do."""
    code = exc.errno
    if code == errno.ENOSPC:
        advice = "The disk is full: free some space and retry; the index holds the last commit"
    elif code in (errno.EACCES, errno.EPERM, errno.EROFS):
        advice = (
            "The index folder is not writable: fix its permissions, or open the workspace with "
            "read_only=True to search without changing it"
        )
    else:
        advice = "Check the disk and retry; the index holds the last completed commit"
    msg = f"Could not {action} in {directory}: {exc.strerror or exc}. {advice}."
    return StorageError(msg)
