"""The base segment of :mod:`workspace_tools.core.index.segments`: its arrays and their build.

Pure functions over numpy arrays (no shared state), so a merge builds a base outside every lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from workspace_tools.core.index._sparse_build import build_scores_from_pairs, count_pairs

__all__ = ["BaseArrays", "build_base", "empty_base"]


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
    tf: npt.NDArray[np.float32]
    scores: npt.NDArray[np.float32]
    """bm25s's score of each posting, with the statistics of the base."""


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
        tf=tf,
        scores=scores,
    )
    return base, nonoccurrence


def empty_base() -> BaseArrays:
    return BaseArrays(
        keys=np.zeros(0, dtype=np.int64),
        terms=np.zeros(0, dtype=np.int32),
        offsets=np.zeros(1, dtype=np.int64),
        indptr=np.zeros(1, dtype=np.int64),
        docs=np.zeros(0, dtype=np.int32),
        tf=np.zeros(0, dtype=np.float32),
        scores=np.zeros(0, dtype=np.float32),
    )
