"""How the embedding cache keeps a vector: float16 at rest, float32 in memory.

A cached vector is written as one tag byte (:data:`FLOAT16_TAG`) and the vector in IEEE float16
(little-endian): half the bytes of float32 (769 instead of 1,536 for 384 dimensions). float16
keeps 11 significant bits: on the MiniLM vectors of the benchmark collections (16,787 documents
against 300 queries) a cosine moved by 7e-6 (median) and 6e-5 at most. The vector index
(``core/index/dense.py``) holds the same float16 values, so a vector read back from the cache
and one fresh from the embedder give the same scores. Measured on the benchmark collections in
docs/benchmarks.md ("Vectors at rest").

A cache written before (a plain float32 blob, ``4 * dimension`` bytes, always even) is still read:
a float16 blob has an odd length (``1 + 2 * dimension``), so the two never mix up. Old rows stay
float32 (a cached vector is reused, never embedded again) until ``rebuild=True``; nothing
converts them in bulk.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["FLOAT16_TAG", "decode_vector", "encode_vector"]

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
