"""The index database: SQLite (WAL), the source of truth for everything an index holds.

Every commit bumps ``version``: rows carry the version that wrote them and deletions are logged
in ``removed``, so a process catches up with :meth:`~IndexDatabase.changes_since`. Rows carry a
checksum (a damaged one raises :class:`IndexCorruptError`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import IndexCorruptError, IndexMismatchError
from workspace_tools.core.store._database_file import DatabaseFile
from workspace_tools.core.store._result_rows import (
    PARSED_KEPT,
    RESULT_COLUMNS,
    changed_chunks,
    fast_checksum,
    new_tuple,
    parse_once,
    result_metadata,
)
from workspace_tools.core.store._rows import (
    CHUNK_COLUMNS,
    DB_NAME,
    FORMAT_VERSION,
    SOURCE_COLUMNS,
    ChangedSource,
    Changes,
    ChunkFields,
    ChunkRecord,
    RemovedChunk,
    RemovedSource,
    SourceRecord,
    chunk_metadata,
    parse_chunk,
    parse_source,
    row_checksum,
    storage_error,
)
from workspace_tools.core.store._vectors import Placement, VectorTable, cached_vector, read_table
from workspace_tools.core.store._writer import Writer

__all__ = [
    "DB_NAME",
    "FORMAT_VERSION",
    "Changes",
    "ChunkFields",
    "ChunkRecord",
    "IndexDatabase",
    "SourceRecord",
    "Writer",
    "row_checksum",
    "storage_error",
]


logger = logging.getLogger(__name__)

FORMAT1_POINTER = "CURRENT"
"""The file that named a format-1 index's current generation folder."""


class IndexDatabase(DatabaseFile):
    """The SQLite file of one index. Thread-safe (one connection behind a lock)."""

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
            read, value = self.meta_before_open(key)  # a refused index stays untouched
            if read:
                return value
            row = self.connection().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            return None if row is None else str(row[0])

    def version(self) -> int:
        """Number of commits so far."""
        return int(self.meta("version") or 0)

    def data_version(self) -> int:
        """Changes whenever another connection commits (cheap: no table is read)."""
        conn = self._conn
        if conn is not None and self._immutable is None:
            with self._lock:  # the common case, without the guard's context manager
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

    def source(self, source_id: str) -> SourceRecord | None:
        """One source row."""
        with self._lock, self.guard("read the index"):
            row = (
                self.connection()
                .execute(f"SELECT {SOURCE_COLUMNS} FROM sources WHERE id=?", (source_id,))  # noqa: S608 - constant names, bound values
                .fetchone()
            )
        return None if row is None else parse_source(self.path, row)

    def sources(self) -> list[SourceRecord]:
        """Every source row."""
        with self._lock, self.guard("read the index"):
            rows = self.connection().execute(f"SELECT {SOURCE_COLUMNS} FROM sources").fetchall()  # noqa: S608 - constant names, bound values
        return [parse_source(self.path, r) for r in rows]

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

    def count(self, table: str, *, since: int = -1) -> int:
        """Rows of ``sources``, ``chunks`` or ``removed`` (written after version ``since``)."""
        assert table in {"sources", "chunks", "removed"}
        with self._lock, self.guard("read the index"):
            query = f"SELECT COUNT(*) FROM {table} WHERE version>?"  # noqa: S608 - constant
            return int(self.connection().execute(query, (since,)).fetchone()[0])

    def chunks(self, keys: Sequence[int]) -> dict[int, ChunkRecord]:
        """Chunks by key (missing keys are left out)."""
        out: dict[int, ChunkRecord] = {}
        if not keys:
            return out
        with self._lock, self.guard("read the index"), self.reading():
            conn = self.connection()
            for start in range(0, len(keys), 500):
                part = [int(k) for k in keys[start : start + 500]]
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE key IN ({marks})",  # noqa: S608
                    part,
                ).fetchall()
                bases = self._source_metadata(conn, {str(r[2]) for r in rows})
                for row in rows:
                    record = parse_chunk(self.path, row, bases.get(str(row[2]), {}))
                    out[record.key] = record
        return out

    def result_chunks(self, keys: Sequence[int]) -> dict[int, ChunkFields]:
        """What search results show of these chunks, by key (cheaper than :meth:`chunks`)."""
        out: dict[int, ChunkFields] = {}
        if not keys:
            return out
        parsed = self._parsed
        # One statement sees one committed state by itself; more need a read transaction.
        consistent = self.reading() if len(keys) > 500 else contextlib.nullcontext()
        with self._lock, self.guard("read the index"), consistent:
            conn = self.connection()
            for start in range(0, len(keys), 500):
                part = [int(k) for k in keys[start : start + 500]]
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"SELECT {RESULT_COLUMNS} FROM chunks c LEFT JOIN sources s "  # noqa: S608
                    f"ON s.id = c.source WHERE c.key IN ({marks})",
                    part,
                ).fetchall()
                for row in rows:
                    key, cid, source, first, last, headings, levels = row[:7]
                    metadata, text, checksum, base = row[8], row[9], row[10], row[11]
                    if fast_checksum(row) != checksum:
                        parse_chunk(self.path, row[:11])  # raises the checksum's error
                    if len(parsed) > PARSED_KEPT:
                        parsed.clear()
                    fields = (
                        str(cid),
                        str(source),
                        int(first),
                        int(last),
                        parse_once(parsed, headings, tuple),
                        parse_once(parsed, levels, tuple),
                        result_metadata(parsed, metadata, parse_once(parsed, base or "{}", dict)),
                        str(text),
                    )
                    out[int(key)] = new_tuple(ChunkFields, fields)
        return out

    @staticmethod
    def _source_metadata(
        conn: sqlite3.Connection, source_ids: set[str] | None
    ) -> dict[str, dict[str, Any]]:
        """``source id -> metadata`` of these sources (``None``: every source)."""
        if source_ids is None:
            rows = conn.execute("SELECT id, metadata FROM sources").fetchall()
        else:
            ids, rows = sorted(source_ids), []
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                marks = ",".join("?" * len(part))
                rows += conn.execute(
                    f"SELECT id, metadata FROM sources WHERE id IN ({marks})",  # noqa: S608
                    part,
                ).fetchall()
        out: dict[str, dict[str, Any]] = {}
        for sid, raw in rows:
            value = json.loads(raw)
            if not isinstance(value, dict):
                msg = f"source {sid!r} has metadata that is not an object"
                raise TypeError(msg)
            out[str(sid)] = value
        return out

    def chunks_of(self, source_id: str) -> list[ChunkRecord]:
        """Chunks of a source, in key (insertion) order."""
        with self._lock, self.guard("read the index"), self.reading():
            conn = self.connection()
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE source=? ORDER BY key",  # noqa: S608 - constant names, bound values
                (source_id,),
            ).fetchall()
            base = self._source_metadata(conn, {source_id}).get(source_id, {})
            return [parse_chunk(self.path, r, base) for r in rows]

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
                    out[digest] = cached_vector(self.path, digest, blob, checksum)
        return out

    def vector_table(self, *, dimension: int, place: Placement) -> VectorTable:
        """Every chunk's cached vector at one version, as FAISS codes where ``place`` says."""
        with self._lock, self.guard("read the index"), self.reading():
            return read_table(self.connection(), self.path, dimension=dimension, place=place)

    def changes_since(self, version: int) -> Changes | None:
        """Rows written and deleted after ``version``; ``None`` past the pruning horizon."""
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            with self.reading():
                meta = dict(
                    conn.execute(
                        "SELECT key, value FROM meta "
                        "WHERE key IN ('version', 'horizon', 'settings')"
                    ).fetchall()
                )
                current, horizon = int(meta["version"]), int(meta["horizon"])
                if version < horizon:
                    return None
                rows = conn.execute(
                    f"SELECT {SOURCE_COLUMNS}, version FROM sources WHERE version>?",  # noqa: S608
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
                        f"SELECT {CHUNK_COLUMNS}, version FROM chunks WHERE version>?",  # noqa: S608
                        (version,),
                    ).fetchall()
                )
                chunks = changed_chunks(
                    self.path, chunk_rows, lambda ids: self._source_metadata(conn, ids)
                )
        return Changes(
            settings=meta.get("settings"),
            version=current,
            sources=[ChangedSource(int(r[-1]), parse_source(self.path, r[:-1])) for r in rows],
            chunks=chunks,
            removed_sources=[
                RemovedSource(int(v), str(i)) for _rowid, v, k, i in removed if k == "s"
            ],
            removed_chunks=[
                RemovedChunk(int(v), int(i)) for _rowid, v, k, i in removed if k == "c"
            ],
        )

    def snapshot_of_rows(self) -> Changes:
        """Every chunk row in key order, with the version and settings, read atomically."""
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            with self.reading():
                meta = dict(
                    conn.execute(
                        "SELECT key, value FROM meta WHERE key IN ('version', 'settings')"
                    ).fetchall()
                )
                rows = conn.execute(
                    f"SELECT {CHUNK_COLUMNS}, version FROM chunks ORDER BY key"  # noqa: S608
                ).fetchall()
                chunks = changed_chunks(
                    self.path, rows, lambda ids: self._source_metadata(conn, ids)
                )
        return Changes(version=int(meta["version"]), chunks=chunks, settings=meta.get("settings"))

    def sources_at(self) -> tuple[int, list[SourceRecord]]:
        """The version and every source row, read atomically."""
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            with self.reading():
                current = int(
                    conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0]
                )
                rows = conn.execute(f"SELECT {SOURCE_COLUMNS} FROM sources").fetchall()  # noqa: S608
        return current, [parse_source(self.path, r) for r in rows]

    def metadata_at(self) -> tuple[int, dict[int, tuple[str, str, dict[str, Any]]]]:
        """The version and ``key -> (chunk id, source, metadata)`` of every chunk (for filters)."""
        with self._lock, self.guard("read the index"):
            conn = self.connection()
            with self.reading():
                current = int(
                    conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0]
                )
                rows = conn.execute("SELECT key, id, source, metadata FROM chunks").fetchall()
                bases = self._source_metadata(conn, None)
            out = {int(k): (i, s, chunk_metadata(m, bases.get(s, {}))) for k, i, s, m in rows}
        return current, out

    def quick_check(self) -> bool:
        """SQLite's structural check passes."""
        try:
            with self._lock:
                row = self.connection().execute("PRAGMA quick_check").fetchone()
            return bool(row) and row[0] == "ok"
        except (sqlite3.DatabaseError, IndexCorruptError, IndexMismatchError):
            return False

    def prepare_rebuild(self) -> bool:
        """Prepare ``rebuild=True``; returns whether the first commit must clear the database.

        A healthy database is cleared by the first commit; a damaged or foreign one is deleted now.
        """
        if self.path.exists() and self.quick_check():
            return True
        self.close()
        if self.path.exists():
            logger.warning("Deleting the index database %s to rebuild it", self.path)
        for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", FORMAT1_POINTER):
            (self.directory / name).unlink(missing_ok=True)
        for pattern in ("snapshot-*", "gen-*", ".tmp-gen-*"):
            for path in self.directory.glob(pattern):
                shutil.rmtree(path, ignore_errors=True)
        return False

    def check_not_format1(self) -> None:
        """Refuse a format-1 index (generation folders named by ``CURRENT``, no database).

        Raises:
            IndexMismatchError: the folder holds a format-1 index.
        """
        if not self.path.exists() and (self.directory / FORMAT1_POINTER).exists():
            msg = (
                f"The index in {self.directory} is in format 1, which this version does not "
                "read; it was left unchanged. Rebuild it with Workspace(root, rebuild=True) "
                "(CLI: --rebuild)."
            )
            raise IndexMismatchError(msg)

    # -- writes ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def write(self, action: str) -> Iterator[Writer]:
        """One write transaction (``BEGIN IMMEDIATE``: writers queue, readers go on)."""
        with self._lock, self.guard(action):
            conn = self.connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                # The small meta values in one read, and under the key '' the data version
                stored = {
                    str(key): str(value)
                    for key, value in conn.execute(
                        "SELECT key, value FROM meta WHERE key != 'snapshot' "
                        "UNION ALL SELECT '', data_version FROM pragma_data_version()"
                    )
                }
                seen = self._reopens << 32 | int(stored.pop(""))
                writer = Writer(conn, int(stored["version"]) + 1, meta=stored)
                writer.data_version = seen
                yield writer
                if writer.changed:
                    conn.execute(
                        "UPDATE meta SET value=? WHERE key='version'", (str(writer.version),)
                    )
                    writer.set_meta("written_by", _written_by())
                with self.checkpoints.deferred(
                    conn, rows=writer.rows
                ):  # a bulk one: _checkpoint.py
                    conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise

    def compact(self, *, pages: int | None = None) -> None:
        """Give freed pages back to the file system and fold the WAL into the database.

        With ``pages``, give back at most that many, then run a passive checkpoint (bounded work).
        """
        self.checkpoints.wait()  # else this checkpoint would find the lock taken and skip
        with self._lock, self.guard("compact the index"):
            conn = self.connection()
            if pages is not None:
                if int(conn.execute("PRAGMA freelist_count").fetchone()[0]):
                    conn.executescript(f"PRAGMA incremental_vacuum({int(pages)});")
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                return
            conn.executescript("PRAGMA incremental_vacuum;")  # steps until the freelist is empty
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def checkpoint(self) -> None:
        """Make every commit durable in the main file (``save()``)."""
        self.checkpoints.wait()
        with self._lock, self.guard("save the index"):
            self.connection().execute("PRAGMA wal_checkpoint(FULL)")


def _written_by() -> str:
    """This package's version, recorded with each commit (a newer reader's refusal names it)."""
    from workspace_tools._version import __version__

    return __version__
