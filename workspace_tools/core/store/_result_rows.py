"""The fast read of result rows: a row's checksum in one encode, its JSON parsed once.

``IndexDatabase.result_chunks`` (``store/database.py``) reads every search result through these.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from workspace_tools.core.store._rows import chunk_metadata, join_metadata

__all__ = [
    "PARSED_KEPT",
    "RESULT_COLUMNS",
    "fast_checksum",
    "new_tuple",
    "parse_once",
    "result_metadata",
]

RESULT_COLUMNS: Final = (
    "c.key, c.id, c.source, c.start_line, c.end_line, c.headings, c.levels, c.hash, c.metadata, "
    "c.text, c.terms, c.checksum, s.metadata"
)
PARSED_KEPT: Final = 8192
"""Parsed JSON column values :meth:`IndexDatabase.result_chunks` keeps (most rows share a few)."""
PARSED_LONGEST: Final = 2048
new_tuple: Final = tuple.__new__


def fast_checksum(row: Sequence[Any]) -> str:
    """:func:`row_checksum` of a chunk row's stored fields (``row[1:11]``), in one encode.

    The same bytes: every field is a string or an integer, and encoding the joined string
    equals joining the encoded fields.
    """
    joined = "\x1f".join(map(str, row[1:11]))
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
    """A chunk's metadata (:func:`chunk_metadata`), its column parsed once per distinct value.

    A new dict every time (results hand it to the caller): the parsed value is never returned.
    """
    value = parse_once(cache, raw, lambda v: v)
    if isinstance(value, dict):
        return dict(value)  # format 2: the whole metadata on the row
    if len(value) == 2 and isinstance(value[0], dict) and isinstance(value[1], list):
        return join_metadata(base, value[0], value[1])
    return chunk_metadata(raw, base)  # raises its error
