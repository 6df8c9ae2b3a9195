"""The live document frequencies of the BM25 segments, grown and counted as documents are added.

Pure functions over the frequency array of the BM25 segments (``segments.SparseSegments``: term
id -> documents holding it): a batch of documents is counted at once, one sort of its
distinct ``(document, term)`` pairs, not with a ``np.unique`` per document.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["count_documents", "grow_frequencies"]


def count_documents(
    df: npt.NDArray[np.int64], terms: Sequence[npt.NDArray[np.int32]]
) -> tuple[npt.NDArray[np.int64], int]:
    """Count each document's distinct terms in ``df`` (grown if need be, else updated in place).

    Returns:
        The frequency array (``df`` itself unless it grew) and the documents' total length.
    """
    lengths = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
    total = int(lengths.sum())
    if total:
        flat = np.concatenate(terms).astype(np.int64)
        starts = np.cumsum(lengths) - lengths
        highest = np.maximum.reduceat(flat, starts[lengths > 0])  # each document's top id
        df = grow_frequencies(df, highest.tolist())
        width = len(df)
        docs = np.repeat(np.arange(len(terms), dtype=np.int64), lengths)
        pairs = docs * width + flat
        pairs.sort()  # each (document, term) once: the first of each run of equal pairs
        first = np.empty(len(pairs), dtype=bool)
        first[0] = True
        np.not_equal(pairs[1:], pairs[:-1], out=first[1:])
        distinct = pairs[first] % width
        if len(distinct) * 8 < width:  # a few documents: their terms, not every term
            np.add.at(df, distinct, 1)
        else:
            df += np.bincount(distinct, minlength=width)
    return df, total


def grow_frequencies(df: npt.NDArray[np.int64], highest: Sequence[int]) -> npt.NDArray[np.int64]:
    """``df`` grown as adding one by one documents whose highest term ids these are.

    Its length is the vocabulary size a merge builds with, so it grows exactly as before (doubling,
    or to the highest id + 1).
    """
    size = len(df)
    for top in highest:
        if top >= size:
            size = max(top + 1, 2 * size)
    if size > len(df):
        grown = np.zeros(size, dtype=np.int64)
        grown[: len(df)] = df
        return grown
    return df
