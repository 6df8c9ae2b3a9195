"""How the embedding cache keeps a vector: float16 at rest, float32 in memory.

A cached vector is one tag byte (:data:`FLOAT16_TAG`) and the little-endian float16 vector. A
float32 blob (even length) is still read, and rewritten by :func:`float16_in_place`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store._rows import row_checksum

__all__ = [
    "FLOAT16_TAG",
    "Placement",
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

    A row that fails its checksum is left as it is (converting it would hide the damage).

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


Placement = Callable[[npt.NDArray[np.int64]], tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]]
"""``keys -> (target, slots)``: key ``i``'s code goes to ``target[slots[i]]`` (``-1``: extra)."""


@dataclass(frozen=True, slots=True)
class VectorTable:
    """What :func:`read_table` read besides the codes it wrote into the target."""

    version: int
    keys: npt.NDArray[np.int64]
    """Every chunk key, ascending."""
    found: npt.NDArray[np.bool_]
    """Which of :attr:`keys` have a cached vector (written to their slot or to :attr:`extra`)."""
    extra: npt.NDArray[np.uint8]
    """The codes of the keys whose slot is ``-1``, in key order (found or not: zeros if not)."""
    missing: dict[int, str]
    """``key -> content hash`` of the chunks without a cached vector."""


def read_table(
    conn: sqlite3.Connection, path: Path, *, dimension: int, place: Placement
) -> VectorTable:
    """Every chunk's vector, checked, written as FAISS codes where ``place`` says.

    One scan of the cache, a batch of blobs at a time scattered into the target by numpy.

    Raises:
        IndexCorruptError: a row fails its checksum, or holds a vector of another dimension.
    """
    version = int(conn.execute("SELECT value FROM meta WHERE key='version'").fetchone()[0])
    pairs = conn.execute("SELECT key, hash FROM chunks ORDER BY key").fetchall()
    key_column, hash_column = zip(*pairs, strict=True) if pairs else ((), ())
    keys = np.fromiter(key_column, dtype=np.int64, count=len(pairs))
    first = dict(zip(hash_column, range(len(pairs)), strict=True))  # a text: its last chunk
    repeats: list[tuple[int, int]] = []  # (chunk, the chunk its text's vector is written to)
    if len(first) < len(pairs):  # chunks sharing a text
        repeats = [(n, first[d]) for n, d in enumerate(hash_column) if first[d] != n]
    target, slots = place(keys)
    width = 2 * dimension
    outside = np.flatnonzero(slots < 0)
    extra = np.zeros((len(outside), width), dtype=np.uint8)
    extra_row = np.full(len(keys), -1, dtype=np.int64)
    extra_row[outside] = np.arange(len(outside))
    found = np.zeros(len(keys), dtype=bool)
    blake2b = hashlib.blake2b
    cursor = conn.execute("SELECT hash, vector, checksum FROM vectors")
    while batch := cursor.fetchmany(_BATCH):
        digests, blobs, stored = zip(*batch, strict=True)
        sums = [
            blake2b(digest.encode() + b"\x1f" + blob, digest_size=8).hexdigest()
            for digest, blob in zip(digests, blobs, strict=True)
        ]
        if sums != list(stored):
            for row in batch:  # the first damaged row raises
                cached_vector(path, *row)
        chunk = np.fromiter(map(first.get, digests, repeat(-1)), np.int64, len(batch))
        used = chunk >= 0
        if not used.any():
            continue
        codes = _codes_of(batch, blobs, path, dimension)[used]
        chunk = chunk[used]
        found[chunk] = True
        slot = slots[chunk]
        inside = slot >= 0
        target[slot[inside]] = codes[inside]
        extra[extra_row[chunk[~inside]]] = codes[~inside]
    for number, earlier in repeats:  # chunks sharing a text share its vector
        if found[earlier]:
            source = target[slots[earlier]] if slots[earlier] >= 0 else extra[extra_row[earlier]]
            if slots[number] >= 0:
                target[slots[number]] = source
            else:
                extra[extra_row[number]] = source
            found[number] = True
    missing = {int(keys[n]): str(pairs[n][1]) for n in np.flatnonzero(~found).tolist()}
    return VectorTable(version, keys, found, extra, missing)


def _codes_of(
    batch: list[Any], blobs: tuple[bytes, ...], path: Path, dimension: int
) -> npt.NDArray[np.uint8]:
    """The float16 codes of a batch of checked cache rows (``blobs``: their vectors)."""
    width = 2 * dimension
    if all(len(blob) == width + 1 for blob in blobs):
        joined = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(-1, width + 1)
        if not bool(np.any(joined[:, 0] != FLOAT16_TAG[0])):
            return joined[:, 1:]
    codes = np.empty((len(batch), width), dtype=np.uint8)
    for number, row in enumerate(batch):
        vector = cached_vector(path, *row)
        if vector.shape != (dimension,):
            msg = (
                f"The index database {path} holds a cached vector of {vector.shape[0]} "
                f"dimensions, expected {dimension}. Open the workspace with rebuild=True "
                "(CLI: --rebuild) to rebuild it."
            )
            raise IndexCorruptError(msg)
        codes[number] = np.frombuffer(encode_vector(vector)[1:], dtype=np.uint8)
    return codes
