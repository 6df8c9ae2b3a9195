"""The statements of one write transaction of the index database."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from workspace_tools.core.store._rows import (
    ChangedChunk,
    ChangedSource,
    Changes,
    ChunkRecord,
    RemovedChunk,
    RemovedSource,
    SourceRecord,
    dumps,
    row_checksum,
    split_metadata,
)
from workspace_tools.core.store._vectors import encode_vector, float16_in_place

__all__ = ["Writer"]


class Writer:
    """Statements of one write transaction; every row written gets the new version."""

    def __init__(self, conn: sqlite3.Connection, version: int) -> None:
        self._conn = conn
        self.version = version
        self.changed = False
        # What this transaction wrote, keyed so a replaced source or a deleted chunk is
        # dropped in O(1), not by a pass over everything written so far (that pass made a
        # 10,000-source ``index_many`` quadratic: 30 s of a 90 s build at 50k chunks).
        self._sources: dict[str, ChangedSource] = {}
        self._chunks: dict[int, ChangedChunk] = {}
        self._removed_sources: list[RemovedSource] = []
        self._removed_chunks: list[RemovedChunk] = []
        self.cleared = False
        """:meth:`clear` ran: every follower reloads."""

    @property
    def changes(self) -> Changes:
        """What this transaction wrote, in commit order.

        As :meth:`IndexDatabase.changes_since` would read it back: a follower at
        ``version - 1`` applies it from memory instead.
        """
        return Changes(
            version=self.version,
            sources=list(self._sources.values()),
            chunks=list(self._chunks.values()),
            removed_sources=list(self._removed_sources),
            removed_chunks=list(self._removed_chunks),
        )

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
            for k in keys:
                self._chunks.pop(int(k), None)
            self._removed_chunks += [RemovedChunk(self.version, int(k)) for k in keys]
            conn.execute("DELETE FROM chunks WHERE source=?", (source_id,))
            conn.executemany(
                "INSERT INTO removed VALUES (?, 'c', ?)", [(self.version, str(k)) for k in keys]
            )
        if gone:
            self._sources.pop(source_id, None)
            self._removed_sources.append(RemovedSource(self.version, source_id))
            conn.execute("INSERT INTO removed VALUES (?, 's', ?)", (self.version, source_id))
        self.changed = self.changed or bool(gone or keys)
        return bool(gone)

    def put_source(self, row: SourceRecord, chunks: Sequence[ChunkRecord]) -> list[int]:
        """Replace a source and its chunks; returns the new chunk keys."""
        self.remove_source(row.id)
        self._put_source_row(row)
        keys = []
        conn = self._conn
        for c in chunks:
            own, dropped = split_metadata(c.metadata, row.metadata)
            fields = (
                c.id,
                c.source,
                c.start_line,
                c.end_line,
                dumps(c.headings),
                dumps(c.levels),
                c.hash,
                dumps([own, dropped]),
                c.text,
                c.terms,
            )
            cursor = conn.execute(
                "INSERT INTO chunks(id, source, start_line, end_line, headings, levels, hash, "
                "metadata, text, terms, version, checksum) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (*fields, self.version, row_checksum(*fields)),
            )
            key = int(cursor.lastrowid or 0)
            keys.append(key)
            self._chunks[key] = ChangedChunk(self.version, key, c.source, c.hash, c.terms)
        self.changed = True
        return keys

    def touch_source(self, row: SourceRecord) -> None:
        """Rewrite a source row only (its mtime and size moved, its content did not)."""
        self._put_source_row(row)
        self.changed = True

    def _put_source_row(self, row: SourceRecord) -> None:
        fields = (
            row.id,
            row.kind,
            row.content_hash,
            dumps(row.chunk_ids),
            dumps(row.metadata),
            row.mtime_ns,
            row.size,
            row.format,
        )
        self._conn.execute(
            "INSERT OR REPLACE INTO sources(id, kind, hash, chunk_ids, metadata, mtime_ns, size, "
            "format, version, checksum) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (*fields, self.version, row_checksum(*fields)),
        )
        copy = dataclasses.replace(row, chunk_ids=list(row.chunk_ids), metadata=dict(row.metadata))
        self._sources.pop(row.id, None)  # re-inserted last: commit order, as read back
        self._sources[row.id] = ChangedSource(self.version, copy)

    def put_vectors(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        """Add vectors to the embedding cache (float16 at rest: ``_vectors.py``)."""
        rows = []
        for digest, vector in vectors.items():
            blob = encode_vector(vector)
            rows.append((digest, blob, row_checksum(digest, blob)))
        self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)

    def prune_vectors(self) -> None:
        """Forget cached vectors of texts no longer indexed (and store float32 ones in float16)."""
        self._conn.execute(
            "DELETE FROM vectors WHERE hash NOT IN (SELECT DISTINCT hash FROM chunks)"
        )
        float16_in_place(self._conn)

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
        self.changed = self.cleared = True

    def prune_log(self, horizon: int) -> None:
        """Forget deletions at or before ``horizon`` (every snapshot reflects them)."""
        self._conn.execute("DELETE FROM removed WHERE version<=?", (horizon,))
        self.set_meta("horizon", str(horizon))
