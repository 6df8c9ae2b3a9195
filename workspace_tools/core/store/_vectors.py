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

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store._rows import row_checksum

__all__ = [
    "FLOAT16_TAG",
    "VectorTable",
    "cached_vector",
    "decode_vector",
    "encode_vector",
    "float16_in_place",
    "read_table",
]

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


_BATCH: Final = 4096
"""Rows fetched at a time by :func:`read_table` (their blobs are copied out, then dropped)."""


@dataclass(frozen=True, slots=True)
class VectorTable:
    """Every chunk's cached vector at one version, as float16 codes in key order."""

    version: int
    keys: npt.NDArray[np.int64]
    """Keys of the chunks with a cached vector, ascending."""
    codes: npt.NDArray[np.uint8]
    """``(len(keys), 2 * dimension)``: each vector's float16 bytes, FAISS ``QT_fp16`` codes."""
    missing: dict[int, str]
    """``key -> content hash`` of the chunks without a cached vector."""


def read_table(conn: sqlite3.Connection, path: Path, *, dimension: int) -> VectorTable:
    """Every chunk's vector, checked, as the flat index's codes (inside a read transaction).

    One statement joins the chunks (in key order) to the cache; the float16 blobs of a batch
    are joined into one buffer and their tag bytes dropped by one numpy slice: no vector is
    decoded. Each row's checksum is checked (one BLAKE2b a row, as when one row is read); a
    float32 row of an older cache is rounded to float16 as :func:`decode_vector` reads it.

    Raises:
        IndexCorruptError: a row fails its checksum, or holds a vector of another dimension.
    """
    version = int(conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])
    total = int(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
    width = 2 * dimension
    keys = np.empty(total, dtype=np.int64)
    codes = np.empty((total, width), dtype=np.uint8)
    missing: dict[int, str] = {}
    filled = 0
    blake2b = hashlib.blake2b
    cursor = conn.execute(
        "SELECT c.key, c.hash, v.vector, v.checksum FROM chunks c "
        "LEFT JOIN vectors v ON v.hash = c.hash ORDER BY c.key"
    )
    while batch := cursor.fetchmany(_BATCH):
        present = []
        for row in batch:
            if row[2] is None:
                missing[int(row[0])] = str(row[1])
            else:
                present.append(row)
        if not present:
            continue
        sums = [
            blake2b(digest.encode() + b"\x1f" + blob, digest_size=8).hexdigest()
            for _key, digest, blob, _sum in present
        ]
        if sums != [row[3] for row in present]:
            for row in present:  # the first damaged row raises
                cached_vector(path, row[1], row[2], row[3])
        if total < filled + len(present):  # rows written since the count: not in one state
            msg = "the chunk count changed during one read transaction"
            raise RuntimeError(msg)
        blobs = [row[2] for row in present]
        part = slice(filled, filled + len(present))
        keys[part] = [row[0] for row in present]
        if all(len(blob) == width + 1 for blob in blobs):
            joined = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(-1, width + 1)
            if bool(np.any(joined[:, 0] != FLOAT16_TAG[0])):
                for row in present:
                    cached_vector(path, row[1], row[2], row[3])
            codes[part] = joined[:, 1:]
        else:
            for offset, row in enumerate(present):
                vector = cached_vector(path, row[1], row[2], row[3])
                if vector.shape != (dimension,):
                    msg = (
                        f"The index database {path} holds a cached vector of {vector.shape[0]} "
                        f"dimensions, expected {dimension}. Open the workspace with rebuild=True "
                        "(CLI: --rebuild) to rebuild it."
                    )
                    raise IndexCorruptError(msg)
                codes[filled + offset] = np.frombuffer(encode_vector(vector)[1:], dtype=np.uint8)
        filled += len(present)
    return VectorTable(version, keys[:filled], codes[:filled], missing)
