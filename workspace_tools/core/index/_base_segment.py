"""The base segment of :mod:`workspace_tools.core.index.segments`: its arrays and their build.

Pure functions over numpy arrays (no shared state), so a merge builds a base outside every lock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from workspace_tools.core.index._sparse_build import build_scores_from_pairs, count_pairs

__all__ = ["BaseArrays", "build_base", "empty_base", "narrow_counts"]


@dataclass(slots=True)
class BaseArrays:
    """The base segment, as saved in a snapshot (arrays may be memory-mapped)."""

    keys: npt.NDArray[np.int64]
    """Chunk key of each base row."""
    terms: npt.NDArray[np.int32]
    """Term ids of every row, concatenated."""
    offsets: npt.NDArray[np.int64]
    """Row ``i``'s terms are ``terms[offsets[i]:offsets[i + 1]]``."""
    indptr: npt.NDArray[np.int64]
    """Postings of term ``t`` are ``docs/tf/scores[indptr[t]:indptr[t + 1]]``."""
    docs: npt.NDArray[np.int32]
    tf: npt.NDArray[Any]
    """Term frequency of each posting, in the narrowest exact dtype (``uint8`` when every count
    is below 256, ``uint16``, else ``float32``); readers cast to the model's dtype."""
    scores: npt.NDArray[np.float32]
    """bm25s's score of each posting, with the statistics of the base."""
    verify: Callable[[str, int, int], None] | None = None
    """Checks elements ``start:stop`` of an array (by name) before they are first read: a
    loaded snapshot's per-block checksums (``store/_snapshot_checks.py``); ``None``: trusted."""

    def touch(self, name: str, start: int, stop: int) -> None:
        """Let :attr:`verify` check elements ``start:stop`` of array ``name`` before a read."""
        verify = self.verify
        if verify is not None:
            verify(name, start, stop)

    def touch_postings(self, terms: Sequence[int], names: Sequence[str]) -> None:
        """:meth:`touch` the postings of these term ids in the arrays ``names``."""
        verify = self.verify
        if verify is None or getattr(verify, "left", 1) == 0:
            return
        indptr = self.indptr
        limit = len(indptr) - 1
        for term in terms:
            if 0 <= term < limit:
                start, stop = int(indptr[term]), int(indptr[term + 1])
                for name in names:
                    verify(name, start, stop)

    def touch_all(self, name: str) -> None:
        """:meth:`touch` every element of array ``name``."""
        self.touch(name, 0, len(getattr(self, name)))


def build_base(
    model: Any, keys: Sequence[int], terms: Sequence[npt.NDArray[np.int32]], n_vocab: int
) -> tuple[BaseArrays, Any]:
    """A base segment of these rows and its non-occurrence scores (``None`` for most variants).

    Pure (no shared state): a merge runs it outside every lock.
    """
    lengths = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
    flat = (
        np.concatenate([np.asarray(t, dtype=np.int32) for t in terms])
        if terms
        else np.zeros(0, dtype=np.int32)
    )
    offsets = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    pair_terms, pair_docs, tf = count_pairs(flat, lengths, dtype=model.dtype)
    df = np.bincount(pair_terms, minlength=n_vocab).astype(np.int64)
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    docs = pair_docs.astype(np.int32)
    scores, nonoccurrence = (
        build_scores_from_pairs(
            model, pair_terms=pair_terms, pair_docs=docs, tf=tf, lengths=lengths, df=df
        )
        if len(terms)
        else (np.zeros(0, dtype=np.float32), None)
    )
    base = BaseArrays(
        keys=np.asarray(keys, dtype=np.int64),
        terms=flat,
        offsets=offsets,
        indptr=indptr,
        docs=docs,
        tf=narrow_counts(tf),
        scores=scores,
    )
    return base, nonoccurrence


def narrow_counts(tf: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Term frequencies in the narrowest dtype that holds them exactly (4x less than float32).

    Counts are whole numbers, so ``uint8`` / ``uint16`` cast back to float32 give the same bits.
    """
    if not len(tf):
        return np.zeros(0, dtype=np.uint8)
    top = float(tf.max())
    if (tf.dtype.kind == "f" and not bool(np.all(tf == np.floor(tf)))) or float(tf.min()) < 0:
        return tf
    for dtype in (np.uint8, np.uint16):
        if top <= np.iinfo(dtype).max:
            return tf.astype(dtype)
    return tf


def empty_base() -> BaseArrays:
    return BaseArrays(
        keys=np.zeros(0, dtype=np.int64),
        terms=np.zeros(0, dtype=np.int32),
        offsets=np.zeros(1, dtype=np.int64),
        indptr=np.zeros(1, dtype=np.int64),
        docs=np.zeros(0, dtype=np.int32),
        tf=np.zeros(0, dtype=np.uint8),
        scores=np.zeros(0, dtype=np.float32),
    )
