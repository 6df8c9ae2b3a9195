"""How the embedding cache keeps a vector: float16 at rest, float32 in memory.

A cached vector is written as one tag byte (:data:`FLOAT16_TAG`) and the vector in IEEE float16
(little-endian): half the bytes of float32 (769 instead of 1,536 for 384 dimensions). float16
keeps 11 significant bits: on the MiniLM vectors of the benchmark collections (16,787 documents
against 300 queries) a cosine moved by 7e-6 (median) and 6e-5 at most. The vector index
(``core/index/dense.py``) holds the same float16 values, so a vector read back from the cache
and one fresh from the embedder give the same scores. Measured on the benchmark collections in
docs/benchmarks.md ("Vectors at rest").

A cache written before (a plain float32 blob, ``4 * dimension`` bytes, always even) is still read:
a float16 blob has an odd length (``1 + 2 * dimension``), so the two never mix up. Old rows are
rewritten in float16 once, by the ``save()`` that forgets unused cached vectors
(:func:`float16_in_place`, in that transaction).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store._rows import row_checksum

__all__ = ["FLOAT16_TAG", "cached_vector", "decode_vector", "encode_vector", "float16_in_place"]

FLOAT16_TAG: Final = b"\x10"
"""First byte of a float16 blob (its odd length is what tells it from a float32 one)."""

_HALF: Final = np.dtype("<f2")
_SINGLE: Final = np.dtype("<f4")


def encode_vector(vector: npt.ArrayLike) -> bytes:
    """The blob the cache stores for ``vector`` (float16, tagged)."""
    return FLOAT16_TAG + np.ascontiguousarray(vector, dtype=_HALF).tobytes()


def decode_vector(blob: bytes) -> npt.NDArray[np.float32]:
    """A cached vector as float32 (a float16 blob, or a float32 one written before).

    Raises:
        ValueError: the blob is neither (the caller reports a damaged index).
    """
    if len(blob) % 2 == 1:
        if blob[:1] != FLOAT16_TAG:
            msg = f"unknown vector encoding (first byte {blob[:1]!r})"
            raise ValueError(msg)
        return np.frombuffer(blob, dtype=_HALF, offset=1).astype(np.float32)
    if len(blob) % 4:
        msg = f"a float32 vector of {len(blob)} bytes"
        raise ValueError(msg)
    return np.frombuffer(blob, dtype=_SINGLE).astype(np.float32)


def float16_in_place(conn: sqlite3.Connection) -> int:
    """Rewrite the float32 rows of the cache in float16 (inside the caller's transaction).

    Only rows of an even length are read (``length()`` of a blob reads no content), so once a
    cache is converted this costs one pass over the keys. A row that fails its checksum is left
    as it is: reading it reports the damage, converting it would hide it.

    Returns:
        How many rows were rewritten.
    """
    rows = conn.execute(
        "SELECT hash, vector, checksum FROM vectors WHERE length(vector) % 2 = 0"
    ).fetchall()
    updates = []
    for digest, blob, stored in rows:
        if row_checksum(digest, blob) != stored or len(blob) % 4:
            continue
        new = encode_vector(np.frombuffer(blob, dtype=_SINGLE))
        updates.append((new, row_checksum(digest, new), digest))
    conn.executemany("UPDATE vectors SET vector=?, checksum=? WHERE hash=?", updates)
    return len(updates)


def cached_vector(path: Path, digest: str, blob: bytes, checksum: str) -> npt.NDArray[np.float32]:
    """One embedding-cache row as float32, or :class:`IndexCorruptError` if it is damaged."""
    problem = "it fails its checksum"
    if row_checksum(digest, blob) == checksum:
        try:
            return decode_vector(blob)
        except ValueError as exc:
            problem = str(exc)
    msg = (
        f"The index database {path} is damaged (a cached vector: {problem}). Open the workspace "
        "with rebuild=True (CLI: --rebuild) to rebuild it."
    )
    raise IndexCorruptError(msg)
