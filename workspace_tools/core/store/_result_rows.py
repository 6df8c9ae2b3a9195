"""The fast reads of chunk rows (results and followers): a checksum in one encode, JSON once."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.store._rows import (
    ChangedChunk,
    chunk_metadata,
    join_metadata,
    parse_chunk,
)
from workspace_tools.core.text.indexed import bm25_text

__all__ = [
    "PARSED_KEPT",
    "RESULT_COLUMNS",
    "changed_chunks",
    "fast_checksum",
    "new_tuple",
    "parse_once",
    "result_metadata",
]

RESULT_COLUMNS: Final = (
    "c.key, c.id, c.source, c.start_line, c.end_line, c.headings, c.levels, c.hash, c.metadata, "
    "c.text, c.checksum, s.metadata"
)
PARSED_KEPT: Final = 8192
"""Parsed JSON column values :meth:`IndexDatabase.result_chunks` keeps (most rows share a few)."""
PARSED_LONGEST: Final = 2048
new_tuple: Final = tuple.__new__


def fast_checksum(row: Sequence[Any]) -> str:
    """:func:`row_checksum` of a chunk row's stored fields (``row[1:10]``), in one encode."""
    joined = "\x1f".join(map(str, row[1:10]))
    return hashlib.blake2b(joined.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def parse_once(cache: dict[str, Any], raw: str, kind: Callable[[Any], Any]) -> Any:
    """``kind(json.loads(raw))``, parsed once per distinct ``raw`` (values are never mutated)."""
    value = cache.get(raw)
    if value is None:
        loaded = json.loads(raw)
        if not isinstance(loaded, list | dict):
            msg = f"a chunk column holds {type(loaded).__name__}, not an array or object"
            raise TypeError(msg)
        value = kind(loaded)
        if len(raw) <= PARSED_LONGEST:  # a big source metadata (up to 16 KB) is parsed anew
            cache[raw] = value
    return value


def result_metadata(cache: dict[str, Any], raw: str, base: dict[str, Any]) -> dict[str, Any]:
    """A chunk's metadata (:func:`chunk_metadata`), parsed once per value, a new dict each time."""
    value = parse_once(cache, raw, lambda v: v)
    if (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], dict)
        and isinstance(value[1], list)
    ):
        return join_metadata(base, value[0], value[1])
    return chunk_metadata(raw, base)  # raises its error


def changed_chunks(
    path: Path,
    rows: Sequence[Sequence[Any]],
    bases: Callable[[set[str]], Mapping[str, Mapping[str, Any]]],
) -> list[ChangedChunk]:
    """Chunk rows (``CHUNK_COLUMNS, version``) as a follower applies them, checksums checked."""
    for row in rows:
        if fast_checksum(row) != row[10]:
            parse_chunk(path, row[:11])  # raises the checksum's error
    marked = [row for row in rows if "](" in row[9] or '"symbol"' in row[8]]
    base = bases({str(row[2]) for row in marked}) if marked else {}
    metas = {int(row[0]): chunk_metadata(row[8], base.get(str(row[2]), {})) for row in marked}
    return [
        ChangedChunk(
            int(row[11]),
            int(row[0]),
            str(row[2]),
            str(row[7]),
            bm25_text(row[9], metas[int(row[0])]) if int(row[0]) in metas else str(row[9]),
        )
        for row in rows
    ]
