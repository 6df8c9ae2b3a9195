"""The live document frequencies of the BM25 segments, grown and counted as documents are added.

Pure functions over the frequency array of the BM25 segments (``segments.SparseSegments``: term
id -> documents holding it): a batch of documents is counted at once, one sort of its
``(term, document)`` pairs (32-bit keys when they fit: a 10,000-document batch takes ~40% less
time than with 64-bit ones), not with a ``np.unique`` per document.
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
    if not total:
        return df, total
    flat = np.concatenate(terms)
    top = int(flat.max())
    if top >= len(df):
        starts = np.cumsum(lengths) - lengths
        highest = np.maximum.reduceat(flat, starts[lengths > 0])  # each document's top id
        df = grow_frequencies(df, highest.tolist())
    doc_bits = max(len(terms) - 1, 0).bit_length()
    if doc_bits + top.bit_length() > 32 or int(flat.min()) < 0:
        _count_wide(df, flat, lengths)
        return df, total
    # (term, document) keys of 32 bits, sorted: each pair once, then a term's pairs are one run
    # (half the bytes of 64-bit keys, and shifts instead of a modulo).
    keys = flat.astype(np.uint32)
    keys <<= np.uint32(doc_bits)
    keys |= np.repeat(np.arange(len(terms), dtype=np.uint32), lengths)
    keys.sort()
    first = np.empty(len(keys), dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    distinct = keys[first]
    if len(distinct) * 8 < top:  # a few documents: their terms, not every term
        np.add.at(df, distinct >> np.uint32(doc_bits), 1)
    else:
        bounds = np.empty(top + 2, dtype=np.int64)
        firsts = np.arange(top + 1, dtype=np.uint32) << np.uint32(doc_bits)
        bounds[: top + 1] = np.searchsorted(distinct, firsts)
        bounds[top + 1] = len(distinct)
        df[: top + 1] += np.diff(bounds)
    return df, total


def _count_wide(
    df: npt.NDArray[np.int64], flat: npt.NDArray[np.int32], lengths: npt.NDArray[np.int64]
) -> None:
    """:func:`count_documents`'s count with 64-bit keys (in place)."""
    width = len(df)
    docs = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    pairs = docs * width + flat.astype(np.int64)
    pairs.sort()  # each (document, term) once: the first of each run of equal pairs
    first = np.empty(len(pairs), dtype=bool)
    first[0] = True
    np.not_equal(pairs[1:], pairs[:-1], out=first[1:])
    distinct = pairs[first] % width
    if len(distinct) * 8 < width:
        np.add.at(df, distinct, 1)
    else:
        df += np.bincount(distinct, minlength=width)


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
