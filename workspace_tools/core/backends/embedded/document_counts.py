"""The live document frequencies of the BM25 segments, grown and counted as documents are added.

Pure functions over the frequency array (term id -> documents holding it); a batch is counted
with one sort of its ``(term, document)`` pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["DocumentCounts", "add_counts", "count_documents", "count_terms", "grow_frequencies"]


@dataclass(frozen=True, slots=True)
class DocumentCounts:
    """What a batch of documents adds to the frequencies (made by :func:`count_terms`)."""

    highest: list[int]
    """Each non-empty document's highest term id, in order (how the frequencies grow)."""
    total: int
    """The documents' total length."""
    per_term: npt.NDArray[np.int64] | None
    """Documents holding each id ``0 .. len - 1`` (many distinct pairs), else ``None``."""
    distinct: npt.NDArray[np.int64] | None
    """Else each (document, term) pair's term id once (a few pairs among many ids)."""


def count_terms(terms: Sequence[npt.NDArray[np.int32]]) -> DocumentCounts:
    """The distinct terms of each document, counted (one sort of the ``(term, document)`` pairs)."""
    lengths = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
    total = int(lengths.sum())
    if not total:
        return DocumentCounts(highest=[], total=0, per_term=None, distinct=None)
    flat = np.concatenate(terms)
    starts = np.cumsum(lengths) - lengths
    highest = np.maximum.reduceat(flat, starts[lengths > 0])  # each document's top id
    top = int(highest.max())
    width = top + 1
    tops = highest.tolist()
    doc_bits = max(len(terms) - 1, 0).bit_length()
    if doc_bits + top.bit_length() > 32 or int(flat.min()) < 0:
        return _count_wide(flat, lengths, tops, total, width)
    keys = flat.astype(np.uint32)
    keys <<= np.uint32(doc_bits)
    keys |= np.repeat(np.arange(len(terms), dtype=np.uint32), lengths)
    keys.sort()  # each (term, document) once: the first of each run of equal keys
    first = np.empty(len(keys), dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    pairs = keys[first]
    if len(pairs) * 8 < width:  # a few documents: their terms, not every term
        distinct = (pairs >> np.uint32(doc_bits)).astype(np.int64)
        return DocumentCounts(highest=tops, total=total, per_term=None, distinct=distinct)
    bounds = np.empty(width + 1, dtype=np.int64)
    bounds[:width] = np.searchsorted(
        pairs, np.arange(width, dtype=np.uint32) << np.uint32(doc_bits)
    )
    bounds[width] = len(pairs)
    return DocumentCounts(highest=tops, total=total, per_term=np.diff(bounds), distinct=None)


def _count_wide(
    flat: npt.NDArray[np.int32],
    lengths: npt.NDArray[np.int64],
    tops: list[int],
    total: int,
    width: int,
) -> DocumentCounts:
    """:func:`count_terms` with 64-bit ``(document, term)`` keys."""
    docs = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    pairs = docs * width + flat.astype(np.int64)
    pairs.sort()  # each (document, term) once: the first of each run of equal pairs
    first = np.empty(len(pairs), dtype=bool)
    first[0] = True
    np.not_equal(pairs[1:], pairs[:-1], out=first[1:])
    distinct = pairs[first] % width
    if len(distinct) * 8 < width:  # a few documents: their terms, not every term
        return DocumentCounts(highest=tops, total=total, per_term=None, distinct=distinct)
    per_term = np.bincount(distinct, minlength=width).astype(np.int64, copy=False)
    return DocumentCounts(highest=tops, total=total, per_term=per_term, distinct=None)


def add_counts(df: npt.NDArray[np.int64], counts: DocumentCounts) -> npt.NDArray[np.int64]:
    """``counts`` added to ``df`` (grown if need be, else updated in place); the array."""
    df = grow_frequencies(df, counts.highest)
    if counts.per_term is not None:
        df[: len(counts.per_term)] += counts.per_term
    elif counts.distinct is not None:
        np.add.at(df, counts.distinct, 1)
    return df


def count_documents(
    df: npt.NDArray[np.int64],
    terms: Sequence[npt.NDArray[np.int32]],
) -> tuple[npt.NDArray[np.int64], int]:
    """Count each document's distinct terms in ``df`` (grown if need be, else updated in place).

    Args:
        df: The frequency array.
        terms: Each document's term ids.

    Returns:
        The frequency array (``df`` itself unless it grew) and the documents' total length.
    """
    counts = count_terms(terms)
    return add_counts(df, counts), counts.total


def grow_frequencies(df: npt.NDArray[np.int64], highest: Sequence[int]) -> npt.NDArray[np.int64]:
    """``df`` grown (doubling, or to the highest id + 1) for documents with these highest ids."""
    size = len(df)
    for top in highest:
        if top >= size:
            size = max(top + 1, 2 * size)
    if size > len(df):
        grown = np.zeros(size, dtype=np.int64)
        grown[: len(df)] = df
        return grown
    return df
