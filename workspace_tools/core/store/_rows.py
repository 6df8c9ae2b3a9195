"""Rows of the index database: schema, row types, checksums and parsing, storage errors."""

from __future__ import annotations

import errno
import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NamedTuple

from workspace_tools.core.errors import IndexCorruptError, StorageError
from workspace_tools.core.types import Chunk

__all__ = [
    "CHUNK_COLUMNS",
    "DB_NAME",
    "FORMAT_VERSION",
    "SCHEMA",
    "SOURCE_COLUMNS",
    "ChangedChunk",
    "ChangedSource",
    "Changes",
    "ChunkFields",
    "ChunkRecord",
    "RemovedChunk",
    "RemovedSource",
    "SourceRecord",
    "chunk_metadata",
    "dumps",
    "join_metadata",
    "parse_chunk",
    "parse_source",
    "row_checksum",
    "split_metadata",
    "storage_error",
    "translate_error",
]

FORMAT_VERSION: Final = 4
"""Version of the on-disk format (4: no stored terms, chunk keys from ``meta`` ``last_key``)."""
DB_NAME: Final = "index.sqlite3"

SCHEMA: Final = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, hash TEXT NOT NULL, chunk_ids TEXT NOT NULL,
    metadata TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    format TEXT NOT NULL, version INTEGER NOT NULL, checksum TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sources_version ON sources(version);
CREATE TABLE IF NOT EXISTS chunks(
    key INTEGER PRIMARY KEY, id TEXT NOT NULL, source TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, headings TEXT NOT NULL,
    levels TEXT NOT NULL, hash TEXT NOT NULL, metadata TEXT NOT NULL, text TEXT NOT NULL,
    version INTEGER NOT NULL, checksum TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_version ON chunks(version);
CREATE INDEX IF NOT EXISTS chunks_source ON chunks(source);
CREATE TABLE IF NOT EXISTS removed(
    version INTEGER NOT NULL, kind TEXT NOT NULL, ident TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS removed_version ON removed(version);
CREATE TABLE IF NOT EXISTS vectors(
    hash TEXT PRIMARY KEY, vector BLOB NOT NULL, checksum TEXT NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('format_version', '4');
INSERT OR IGNORE INTO meta VALUES ('version', '0');
INSERT OR IGNORE INTO meta VALUES ('last_key', '0');
INSERT OR IGNORE INTO meta VALUES ('horizon', '0');
INSERT OR IGNORE INTO meta VALUES ('database_id', lower(hex(randomblob(16))));
COMMIT;
"""
"""Schema and first rows in one transaction; ``meta`` ``last_key`` keeps chunk keys unique."""


def row_checksum(*fields: Any) -> str:
    """Checksum of a row's fields (stored with the row, checked when it is read)."""
    if set(map(type, fields)) <= _TEXT_TYPES:
        # The same bytes as the general case below, encoded in one pass.
        data = "\x1f".join(map(str, fields)).encode("utf-8", "surrogatepass")
    else:
        parts = [
            value if isinstance(value, bytes) else str(value).encode("utf-8", "surrogatepass")
            for value in fields
        ]
        data = b"\x1f".join(parts)
    return hashlib.blake2b(data, digest_size=8).hexdigest()


_TEXT_TYPES: Final = frozenset({str, int, float, type(None)})
"""Field types :func:`row_checksum` encodes as one string (no ``bytes`` among them)."""


@dataclass(slots=True)
class SourceRecord:
    """A file or string in the index (a ``sources`` row; ``Workspace.source()`` returns it)."""

    id: str
    kind: str
    """``file`` (kept in sync with the disk) or ``text`` (indexed by the program)."""
    content_hash: str
    chunk_ids: list[str]
    metadata: dict[str, Any] = field(default_factory=dict)
    mtime_ns: int = 0
    size: int = 0
    format: str = "text"


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

    @classmethod
    def of(
        cls,
        chunk: Chunk,
        *,
        hash: str,  # noqa: A002
        key: int = -1,
    ) -> ChunkRecord:
        """The row of ``chunk`` (``key`` -1: the database assigns it)."""
        return cls(
            key=key,
            id=chunk.id,
            source=chunk.source_id,
            start_line=chunk.start_line,
            end_line=chunk.end_line,
            headings=list(chunk.headings),
            levels=list(chunk.heading_levels),
            hash=hash,
            metadata=dict(chunk.metadata),
            text=chunk.text,
        )

    def chunk(self) -> Chunk:
        """The :class:`Chunk` this row stores."""
        return Chunk(
            id=self.id,
            source_id=self.source,
            text=self.text,
            start_line=self.start_line,
            end_line=self.end_line,
            headings=tuple(self.headings),
            heading_levels=tuple(self.levels),
            metadata=self.metadata,
        )


class ChunkFields(NamedTuple):
    """A chunk as a payload row decodes it: :class:`~workspace_tools.core.types.Chunk`'s fields."""

    id: str
    source_id: str
    start_line: int
    end_line: int
    headings: tuple[str, ...]
    heading_levels: tuple[int, ...]
    metadata: dict[str, Any]
    text: str

    def chunk(self) -> Chunk:
        """The :class:`Chunk` of these fields."""
        return Chunk(
            id=self.id,
            source_id=self.source_id,
            text=self.text,
            start_line=self.start_line,
            end_line=self.end_line,
            headings=self.headings,
            heading_levels=self.heading_levels,
            metadata=self.metadata,
        )


class ChangedSource(NamedTuple):
    """A source row written after a version."""

    version: int
    """The version that wrote it."""
    record: SourceRecord


class ChangedChunk(NamedTuple):
    """A chunk row written after a version (what a derived index needs of it)."""

    version: int
    key: int
    source_id: str
    hash: str
    text: str
    """The text its BM25 terms are tokenized from (``bm25_text`` of the stored text)."""


class RemovedSource(NamedTuple):
    """A source deleted after a version."""

    version: int
    source_id: str


class RemovedChunk(NamedTuple):
    """A chunk deleted after a version."""

    version: int
    key: int


@dataclass(slots=True)
class Changes:
    """What changed after a version: written rows and deletions, in commit order."""

    version: int
    """The database version these changes bring a follower to."""
    sources: list[ChangedSource] = field(default_factory=list)
    chunks: list[ChangedChunk] = field(default_factory=list)
    removed_sources: list[RemovedSource] = field(default_factory=list)
    removed_chunks: list[RemovedChunk] = field(default_factory=list)
    settings: str | None = None
    """The ``meta`` settings (JSON) read with these rows (``None``: written by this process)."""
    vectors: Mapping[str, Any] = field(default_factory=dict)
    """``content hash -> vector`` this process cached (empty when read from the database)."""

    def after(self, version: int) -> Changes:
        """Only what was committed after ``version``."""
        return Changes(
            settings=self.settings,
            vectors=self.vectors,
            version=self.version,
            sources=[c for c in self.sources if c.version > version],
            chunks=[c for c in self.chunks if c.version > version],
            removed_sources=[r for r in self.removed_sources if r.version > version],
            removed_chunks=[r for r in self.removed_chunks if r.version > version],
        )


SOURCE_COLUMNS: Final = "id, kind, hash, chunk_ids, metadata, mtime_ns, size, format, checksum"
CHUNK_COLUMNS: Final = (
    "key, id, source, start_line, end_line, headings, levels, hash, metadata, text, checksum"
)


def parse_source(path: Path, row: Sequence[Any]) -> SourceRecord:
    """A ``sources`` row (its columns :data:`SOURCE_COLUMNS`), its checksum checked."""
    *fields, checksum = row
    if row_checksum(*fields) != checksum:
        msg = (
            f"The index database {path} is damaged (source row {fields[0]!r} fails its "
            "checksum). Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
        )
        raise IndexCorruptError(msg)
    sid, kind, digest, chunk_ids, metadata, mtime_ns, size, fmt = fields
    return SourceRecord(
        id=sid,
        kind=kind,
        content_hash=digest,
        chunk_ids=list(json.loads(chunk_ids)),
        metadata=dict(json.loads(metadata)),
        mtime_ns=int(mtime_ns),
        size=int(size),
        format=fmt,
    )


def split_metadata(
    metadata: Mapping[str, Any], base: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """What a chunk's metadata adds to its source's (``base``), and the keys it lacks."""
    if not base:  # nothing to share (strings indexed without metadata, files)
        return dict(metadata), []
    own = {
        key: value
        for key, value in metadata.items()
        if key not in base or not (base[key] is value or dumps(base[key]) == dumps(value))
    }
    return own, [key for key in base if key not in metadata]


def join_metadata(
    base: Mapping[str, Any], own: Mapping[str, Any], dropped: Sequence[str]
) -> dict[str, Any]:
    """A chunk's metadata from its source's and its own part (keys sorted, as stored)."""
    if not base:  # files: no metadata of their own (both parts come sorted from the JSON)
        return dict(own)
    merged = {k: v for k, v in base.items() if k not in dropped} if dropped else dict(base)
    merged.update(own)
    return dict(sorted(merged.items()))


def chunk_metadata(raw: str, base: Mapping[str, Any] | None) -> dict[str, Any]:
    """The metadata a ``chunks`` row's column holds, joined with ``base`` (if not ``None``).

    Raises:
        ValueError: the column does not parse as either form.
    """
    value = json.loads(raw)
    if (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], dict)
        and isinstance(value[1], list)
    ):
        own, dropped = value
        return own if base is None else join_metadata(base, own, dropped)
    msg = f"chunk metadata is not [own, dropped]: {raw[:40]!r}"
    raise ValueError(msg)


def parse_chunk(
    path: Path, row: Sequence[Any], base: Mapping[str, Any] | None = None
) -> ChunkRecord:
    """A ``chunks`` row (its columns :data:`CHUNK_COLUMNS`), checksum checked, ``base`` merged."""
    *fields, checksum = row
    if row_checksum(*fields[1:]) != checksum:
        msg = (
            f"The index database {path} is damaged (chunk row {fields[1]!r} fails its "
            "checksum). Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
        )
        raise IndexCorruptError(msg)
    key, cid, source, start, end, headings, levels, digest, metadata, text = fields
    return ChunkRecord(
        key=int(key),
        id=cid,
        source=source,
        start_line=int(start),
        end_line=int(end),
        headings=list(json.loads(headings)),
        levels=list(json.loads(levels)),
        hash=digest,
        metadata=chunk_metadata(metadata, base),
        text=text,
    )


def dumps(value: Any) -> str:
    """Compact, sorted JSON of a stored value (checksums depend on the exact text)."""
    if not value and type(value) in _EMPTY_JSON:  # the most common values, and the cheapest
        return _EMPTY_JSON[type(value)]
    return _ENCODER.encode(value)


_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)
_EMPTY_JSON: Final[dict[type, str]] = {list: "[]", dict: "{}"}


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


def translate_error(exc: sqlite3.DatabaseError, action: str, *, path: Path) -> Exception:
    """The :class:`WorkspaceError` for an SQLite failure while doing ``action`` on ``path``."""
    directory = path.parent
    text = str(exc)
    lowered = text.lower()
    if "full" in lowered:
        return storage_error(OSError(errno.ENOSPC, text), directory, action)
    if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
        return storage_error(OSError(errno.EACCES, text), directory, action)
    if "locked" in lowered or "busy" in lowered:
        msg = (
            f"The index in {directory} stayed locked by another process for 60 s while "
            f"trying to {action} ({text}). Retry when the other writer has finished."
        )
        return StorageError(msg)
    if isinstance(exc, sqlite3.OperationalError) and "disk i/o" in lowered:
        return storage_error(OSError(errno.EIO, text), directory, action)
    msg = (
        f"The index database {path} is damaged ({text}). Open the workspace with "
        "rebuild=True (CLI: --rebuild) to rebuild it."
    )
    return IndexCorruptError(msg)
