"""Opening an index database of format 2 or 3 (chunk rows with a stored ``terms`` column).

A writable open converts it to format 4 once, in one transaction (:func:`upgrade`): the
``chunks`` table is copied without its terms and without ``AUTOINCREMENT``, every row's stored
checksum checked and its format-4 checksum computed on the way, then the old table dropped; a
crash leaves the file as it was or converted. A read-only open cannot change the file, so it
reads the old table through a temporary view with the format-4 columns (:func:`read_legacy`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store._rows import FORMAT_VERSION, LEGACY_CHUNKS, row_checksum

__all__ = ["has_terms", "read_legacy", "upgrade"]

_COPY: Final = """
CREATE TABLE chunks_4(
    key INTEGER PRIMARY KEY, id TEXT NOT NULL, source TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, headings TEXT NOT NULL,
    levels TEXT NOT NULL, hash TEXT NOT NULL, metadata TEXT NOT NULL, text TEXT NOT NULL,
    version INTEGER NOT NULL, checksum TEXT NOT NULL);
INSERT INTO chunks_4 SELECT key, id, source, start_line, end_line, headings, levels, hash,
    metadata, text, version,
    format4_checksum(id, source, start_line, end_line, headings, levels, hash, metadata, text,
        terms, checksum)
FROM chunks ORDER BY key;
INSERT OR REPLACE INTO meta VALUES ('last_key', (SELECT max(
    coalesce((SELECT seq FROM sqlite_sequence WHERE name='chunks'), 0),
    coalesce((SELECT max(key) FROM chunks), 0))));
DROP TABLE chunks;
ALTER TABLE chunks_4 RENAME TO chunks;
CREATE INDEX chunks_version ON chunks(version);
CREATE INDEX chunks_source ON chunks(source);
"""
"""The copy (``sqlite_sequence`` exists wherever a format-3 ``chunks`` table does: its key
used ``AUTOINCREMENT``)."""


class _Checksums:
    """``format4_checksum``: a format-3 row's checksum checked, its format-4 checksum returned.

    ``strict``: a row that fails raises (the conversion stops, nothing changes); else the row
    gets an empty checksum, which the reader's own check then reports by the row's id.
    """

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict
        self.failed: str | None = None

    def __call__(self, *fields: Any) -> str:
        *stored, checksum = fields
        if row_checksum(*stored) != checksum:
            if self.strict:
                self.failed = str(stored[0])
                raise ValueError(self.failed)
            return ""
        return row_checksum(*stored[:-1])


def has_terms(conn: sqlite3.Connection) -> bool:
    """The ``chunks`` table has the ``terms`` column of formats 2 and 3."""
    return any(row[1] == "terms" for row in conn.execute("PRAGMA main.table_info(chunks)"))


def upgrade(conn: sqlite3.Connection, path: Path) -> bool:
    """Convert a format-2/3 database to format 4 in one transaction; ``False`` if it already was.

    Another process may have converted it since it was probed: the format is read again inside
    the transaction.

    Raises:
        IndexCorruptError: a chunk row fails its stored checksum (nothing is changed).
    """
    checksums = _Checksums(strict=True)
    conn.create_function("format4_checksum", 11, checksums, deterministic=True)
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()
        if row is not None and int(row[0]) >= FORMAT_VERSION:
            conn.execute("COMMIT")
            return False
        if has_terms(conn):
            try:
                for statement in _COPY.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            except sqlite3.OperationalError as exc:
                if checksums.failed is None:
                    raise
                msg = (
                    f"The index database {path} is damaged (chunk row {checksums.failed!r} "
                    "fails its checksum). Open the workspace with rebuild=True (CLI: --rebuild) "
                    "to rebuild it."
                )
                raise IndexCorruptError(msg) from exc
        conn.execute("UPDATE meta SET value=? WHERE key='format_version'", (str(FORMAT_VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return True


def read_legacy(conn: sqlite3.Connection) -> None:
    """Read a format-2/3 file's chunks through the format-4 columns (a read-only connection)."""
    conn.create_function("format4_checksum", 11, _Checksums(strict=False), deterministic=True)
    conn.execute(LEGACY_CHUNKS)
