"""The statements of one write transaction of the index database."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Final

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
from workspace_tools.core.text.indexed import bm25_text

__all__ = ["Writer"]

_INSERT_SOURCE: Final = (
    "INSERT OR REPLACE INTO sources(id, kind, hash, chunk_ids, metadata, mtime_ns, size, "
    "format, version, checksum) VALUES (?,?,?,?,?,?,?,?,?,?)"
)
_INSERT_CHUNK: Final = (
    "INSERT INTO chunks(key, id, source, start_line, end_line, headings, levels, hash, "
    "metadata, text, version, checksum) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)
_IDS_PER_QUERY: Final = 400
"""Source ids per lookup query (each is bound twice: under SQLite's 999 parameters)."""


def _source_fields(row: SourceRecord) -> tuple[Any, ...]:
    return (
        row.id,
        row.kind,
        row.content_hash,
        _strings_json(row.chunk_ids),
        dumps(row.metadata),
        row.mtime_ns,
        row.size,
        row.format,
    )


def _strings_json(items: Sequence[str]) -> str:
    """``dumps(items)`` of a list of strings, without the encoder when nothing needs escaping."""
    if type(items) is list and len(items) == 1:  # the chunk ids of a one-chunk source
        item = items[0]
        if type(item) is str and item.isprintable() and '"' not in item and "\\" not in item:
            return f'["{item}"]'
    return dumps(items)


class _ChunkEncoder:
    """The stored fields of chunk rows; the JSON of values repeated across rows made once."""

    def __init__(self) -> None:
        self._json: dict[Any, str] = {}
        self._metadata: dict[tuple[Any, ...], str] = {}

    def __call__(self, c: ChunkRecord, base: Mapping[str, Any]) -> tuple[Any, ...]:
        own, dropped = split_metadata(c.metadata, base)
        headings, levels = c.headings, c.levels
        return (
            c.id,
            c.source,
            c.start_line,
            c.end_line,
            "[]" if not headings and type(headings) is list else self._dumps(headings),
            "[]" if not levels and type(levels) is list else self._dumps(levels),
            c.hash,
            self._metadata_json(own, dropped),
            c.text,
        )

    def _metadata_json(self, own: dict[str, Any], dropped: list[str]) -> str:
        """``dumps([own, dropped])``, memoised (keyed with types) when ``own`` holds scalars."""
        if dropped or type(dropped) is not list:
            return self._dumps([own, dropped])
        kinds = (*map(type, own), *map(type, own.values()))
        if not _SCALARS.issuperset(kinds):
            return self._dumps([own, dropped])
        memo_key = (*own.items(), *kinds)
        found = self._metadata.get(memo_key)
        if found is None:
            found = self._metadata[memo_key] = dumps([own, dropped])
        return found

    def _dumps(self, value: Any) -> str:
        try:
            memo_key = _frozen(value)
        except TypeError:  # a value that cannot be a key (nested lists or dicts): no memo
            return dumps(value)
        found = self._json.get(memo_key)
        if found is None:
            found = self._json[memo_key] = dumps(value)
        return found


def _frozen(value: Any) -> Any:
    """A hashable key, scalars keyed with their type, for the shapes chunk rows hold.

    Raises:
        TypeError: Another shape, or a float (``0.0 == -0.0``).
    """
    if type(value) is not list:
        raise TypeError(value)
    out: list[Any] = []
    for item in value:
        kind = type(item)
        if kind is dict:
            out.append(
                (dict, *((k, type(v), v) for k, v in item.items() if type(k) is str and _scalar(v)))
            )
            if len(out[-1]) != len(item) + 1:
                raise TypeError(item)
        elif kind is list:
            if not all(type(v) is str for v in item):
                raise TypeError(item)
            out.append((list, *item))
        elif _scalar(item):
            out.append((kind, item))
        else:
            raise TypeError(item)
    return tuple(out)


def _changed(version: int, key: int, c: ChunkRecord) -> ChangedChunk:
    """What a follower of this process applies of a chunk just written (its terms in memory)."""
    return ChangedChunk(version, key, c.source, c.hash, bm25_text(c.text, c.metadata))


def _scalar(value: Any) -> bool:
    return type(value) in _SCALARS


_SCALARS: Final = frozenset({str, int, bool, type(None)})


class Writer:
    """Statements of one write transaction; every row written gets the new version."""

    def __init__(
        self, conn: sqlite3.Connection, version: int, *, meta: dict[str, str] | None = None
    ) -> None:
        self._conn = conn
        self.version = version
        self._meta = dict(meta or {})
        """Meta values as stored when the transaction began: an equal one is not rewritten."""
        self.changed = False
        # What this transaction wrote, keyed so a replaced or deleted row is dropped in O(1).
        self._sources: dict[str, ChangedSource] = {}
        self._chunks: dict[int, ChangedChunk] = {}
        self._removed_sources: list[RemovedSource] = []
        self._removed_chunks: list[RemovedChunk] = []
        self.cleared = False
        """:meth:`clear` ran: every follower reloads."""
        self._last_key: int | None = None
        """The highest chunk key ever given, once :meth:`_last` has read it."""
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        """The vectors :meth:`put_vectors` stored (:attr:`Changes.vectors`)."""
        self.data_version: int | None = None
        """``IndexDatabase.data_version()`` as the transaction began (set by the database)."""

    @property
    def changes(self) -> Changes:
        """What this transaction wrote, as :meth:`IndexDatabase.changes_since` would read it."""
        return Changes(
            version=self.version,
            sources=list(self._sources.values()),
            chunks=list(self._chunks.values()),
            removed_sources=list(self._removed_sources),
            removed_chunks=list(self._removed_chunks),
            vectors=self._vectors,
        )

    @property
    def rows(self) -> int:
        """Rows this transaction wrote or deleted (sources, chunks, vectors)."""
        return (
            len(self._sources)
            + len(self._chunks)
            + len(self._vectors)
            + len(self._removed_sources)
            + len(self._removed_chunks)
        )

    @property
    def removed_chunks(self) -> bool:
        """Whether this transaction deleted chunk rows (or cleared the database)."""
        return self.cleared or bool(self._removed_chunks)

    def meta(self, key: str) -> str | None:
        """Read a meta value inside the transaction."""
        row = self._conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value unless equal (does not count as a change of the contents)."""
        if self._meta.get(key) == value:
            return
        self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        self._meta[key] = value

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
            self._deleting(max(int(k) for k in keys))
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
        first = self._last() + 1
        self._insert_chunks(row, chunks, first - 1)
        self.changed = True
        return list(range(first, first + len(chunks)))

    def put_sources(self, rows: Sequence[tuple[SourceRecord, Sequence[ChunkRecord]]]) -> None:
        """:meth:`put_source` for many sources: the same rows, keys and log, fewer statements."""
        if not rows:
            return
        ids = [row.id for row, _ in rows]
        if len(set(ids)) != len(ids):  # one source twice: in order, the later one wins
            for row, chunks in rows:
                self.put_source(row, chunks)
            return
        for source_id in self._stored(ids):
            self.remove_source(source_id)
        version = self.version
        source_rows = []
        for row, _ in rows:
            fields = _source_fields(row)
            source_rows.append((*fields, version, row_checksum(*fields)))
        self._conn.executemany(_INSERT_SOURCE, source_rows)
        for row, _ in rows:
            self._remember_source(row)
        key = self._last()
        chunk_rows = []
        changed = self._chunks
        encode = _ChunkEncoder()
        for row, chunks in rows:
            for c in chunks:
                key += 1
                fields = encode(c, row.metadata)
                chunk_rows.append((key, *fields, version, row_checksum(*fields)))
                changed[key] = _changed(version, key, c)
        self._conn.executemany(_INSERT_CHUNK, chunk_rows)
        self._last_key = key
        self.changed = True

    def _insert_chunks(self, row: SourceRecord, chunks: Sequence[ChunkRecord], key: int) -> None:
        """Insert ``chunks`` of ``row`` with the keys after ``key``."""
        encode = _ChunkEncoder()
        version = self.version
        chunk_rows = []
        for c in chunks:
            key += 1
            fields = encode(c, row.metadata)
            chunk_rows.append((key, *fields, version, row_checksum(*fields)))
            self._chunks[key] = _changed(version, key, c)
        self._conn.executemany(_INSERT_CHUNK, chunk_rows)
        self._last_key = key

    def _stored(self, ids: Sequence[str]) -> list[str]:
        """Which of ``ids`` have a source row or chunk rows, in the order given."""
        found: set[str] = set()
        for start in range(0, len(ids), _IDS_PER_QUERY):
            part = ids[start : start + _IDS_PER_QUERY]
            marks = ",".join("?" * len(part))
            found.update(
                str(r[0])
                for r in self._conn.execute(
                    f"SELECT id FROM sources WHERE id IN ({marks}) "  # noqa: S608 - marks only
                    f"UNION SELECT source FROM chunks WHERE source IN ({marks})",
                    (*part, *part),
                )
            )
        return [i for i in ids if i in found]

    def _last(self) -> int:
        """The highest chunk key ever given (``meta`` ``last_key`` or the table's highest)."""
        if self._last_key is None:
            row = self._conn.execute("SELECT max(key) FROM chunks").fetchone()
            self._last_key = max(self._recorded(), int(row[0] or 0))
        return self._last_key

    def _recorded(self) -> int:
        """``meta`` ``last_key`` as stored."""
        stored = self._meta.get("last_key")
        if stored is None:  # not read with the transaction's meta values: read it now
            stored = self.meta("last_key")
        if stored is None or not stored.isascii() or not stored.isdigit():
            msg = f"meta 'last_key' is {stored!r}, not a count"
            raise ValueError(msg)
        return int(stored)

    def _deleting(self, top: int) -> None:
        """Chunk keys up to ``top`` are about to be deleted: keep ``top`` from being given again."""
        if top > self._recorded():
            self._conn.execute("UPDATE meta SET value=? WHERE key='last_key'", (str(top),))
            self._meta["last_key"] = str(top)

    def touch_source(self, row: SourceRecord) -> None:
        """Rewrite a source row only (its mtime and size moved, its content did not)."""
        self._put_source_row(row)
        self.changed = True

    def _put_source_row(self, row: SourceRecord) -> None:
        fields = _source_fields(row)
        self._conn.execute(_INSERT_SOURCE, (*fields, self.version, row_checksum(*fields)))
        self._remember_source(row)

    def _remember_source(self, row: SourceRecord) -> None:
        copy = SourceRecord(  # not dataclasses.replace: slower
            row.id,
            row.kind,
            row.content_hash,
            list(row.chunk_ids),
            dict(row.metadata),
            row.mtime_ns,
            row.size,
            row.format,
        )
        self._sources.pop(row.id, None)  # re-inserted last: commit order, as read back
        self._sources[row.id] = ChangedSource(self.version, copy)

    def put_vectors(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        """Add vectors to the embedding cache (float16 at rest: ``_vectors.py``)."""
        self._vectors.update(vectors)  # this process's follower adds them from memory
        rows = []
        for digest in sorted(vectors):  # in key order: the hash index's pages fill in turn
            blob = encode_vector(vectors[digest])
            rows.append((digest, blob, row_checksum(digest, blob)))
        self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)

    def prune_vectors(self) -> None:
        """Forget cached vectors of texts no longer indexed (and store float32 ones in float16)."""
        self._conn.execute(
            "DELETE FROM vectors WHERE hash NOT IN (SELECT DISTINCT hash FROM chunks)"
        )
        float16_in_place(self._conn)

    def clear(self, *, keep_vectors: bool) -> None:
        """Delete every source and chunk (and cached vectors unless ``keep_vectors``)."""
        conn = self._conn
        self._deleting(self._last())
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
