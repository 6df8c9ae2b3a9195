"""Counting the distinct ``(term, document)`` pairs of tokenized documents, with numpy.

One sort of pair keys (term shifted past the document bits) gives every count in CSC order.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

__all__ = ["count_pairs", "count_postings"]

_BLOCK: Final = 1 << 20
"""Tokens whose keys are made per numpy pass (a small temporary, reused)."""

_RANGES: Final = 4
"""Term ranges at most counted with 32-bit keys (more: 64-bit keys; see docs/benchmarks.md)."""


def count_pairs(
    flat: Any, lengths: Any, *, dtype: str, in_place: bool = False
) -> tuple[Any, Any, Any]:
    """Distinct ``(term, document)`` pairs of documents given as concatenated term ids.

    Args:
        flat: Term ids of every document, one after the other (none negative).
        lengths: Number of terms of each document.
        dtype: Dtype of the term frequencies (float, or an unsigned int that fits every count).
        in_place: ``flat`` is an int64 array the caller no longer needs (it may be reused).

    Returns:
        ``(terms, docs, tf)`` sorted by term then document (``int32`` or ``int64`` ids).
    """
    n_docs = len(lengths)
    total = len(flat)
    doc_bits = max(n_docs - 1, 0).bit_length()
    top = int(np.max(flat)) if total else 0
    span_bits = min(32 - doc_bits, 31)
    if span_bits <= 0 or top.bit_length() > 31 or (top >> span_bits) >= _RANGES:
        return _count_wide(flat, lengths, dtype=dtype, in_place=in_place)
    keys = np.repeat(np.arange(n_docs, dtype=np.uint32), lengths)
    return _count_narrow(np.asarray(flat), keys, doc_bits, span_bits, 0, top, dtype)


def _count_narrow(
    ids: Any, keys: Any, doc_bits: int, span_bits: int, low: int, top: int, dtype: str
) -> tuple[Any, Any, Any]:
    """:func:`count_pairs` of the tokens whose ids are ``low`` or more (``keys``: documents)."""
    limit = low + (1 << span_bits)
    high, high_ids, high_docs = _pair_keys(ids, keys, doc_bits, low, limit, top)
    spare = 0 if high is None else len(high)
    # room for the higher ranges' pairs after these (no concatenation)
    pairs, tf, count = _distinct_keys(keys[: len(keys) - spare], dtype, spare=spare)
    del keys
    terms = np.empty_like(pairs)
    np.right_shift(pairs[:count], np.uint32(doc_bits), out=terms[:count])
    pairs[:count] &= np.uint32((1 << doc_bits) - 1)
    if low:
        terms[:count] += np.uint32(low)
    if high is not None:
        more = _count_narrow(high_ids, high_docs, doc_bits, span_bits, limit, top, dtype)
        end = count + len(more[0])
        terms[count:end], pairs[count:end], tf[count:end] = more
        count = end
    return terms[:count].view(np.int32), pairs[:count].view(np.int32), tf[:count]


def _pair_keys(
    ids: Any, keys: Any, doc_bits: int, low: int, limit: int, top: int
) -> tuple[Any, Any, Any]:
    """Turn ``keys`` (each token's document) into sorted pair keys of the ids ``low:limit``.

    Returns:
        Positions, ids and documents of the higher-id tokens (``None`` if none); they sort last.
    """
    high = high_ids = high_docs = None
    if top >= limit:
        high = np.flatnonzero(ids >= limit)
        high_ids, high_docs = ids[high], keys[high]
    shift = np.uint32(doc_bits)
    for start in range(0, len(ids), _BLOCK):
        part = ids[start : start + _BLOCK].astype(np.uint32)
        if low:
            part -= np.uint32(low)
        part <<= shift
        keys[start : start + _BLOCK] |= part
    if high is not None:
        keys[high] = np.iinfo(np.uint32).max  # sorts last; the caller drops them (by count)
    keys.sort()
    return high, high_ids, high_docs


def _distinct_keys(keys: Any, dtype: str, *, spare: int = 0) -> tuple[Any, Any, int]:
    """The distinct keys of a sorted array, their counts, and how many (room for ``spare``)."""
    total = len(keys)
    new_pair = np.empty(total, dtype=bool)
    new_pair[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new_pair[1:])
    count = int(np.count_nonzero(new_pair))
    pairs = np.empty(count + spare, dtype=keys.dtype)
    np.compress(new_pair, keys, out=pairs[:count])
    tf = np.ones(count + spare, dtype=dtype)
    np.logical_not(new_pair, out=new_pair)
    repeats = np.flatnonzero(new_pair)
    del new_pair
    if len(repeats):  # a repeat at position j, the k-th one, belongs to pair j - k - 1
        repeats -= np.arange(1, len(repeats) + 1, dtype=repeats.dtype)
        first = np.empty(len(repeats), dtype=bool)  # the pairs ascend: count each one's run
        first[:1] = True
        np.not_equal(repeats[1:], repeats[:-1], out=first[1:])
        runs = np.flatnonzero(first)
        tf[repeats[runs]] += np.diff(runs, append=len(repeats)).astype(tf.dtype)
    return pairs, tf, count


def _count_wide(flat: Any, lengths: Any, *, dtype: str, in_place: bool) -> tuple[Any, Any, Any]:
    """:func:`count_pairs` with 64-bit keys."""
    n_docs = len(lengths)
    doc_bits = max(n_docs - 1, 0).bit_length()
    keys = flat if in_place else np.array(flat, dtype=np.int64)
    keys <<= doc_bits
    keys |= np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    keys.sort()
    pairs, tf, _ = _distinct_keys(keys, dtype)
    del keys
    terms = pairs >> doc_bits
    pairs &= (1 << doc_bits) - 1
    return terms, pairs, tf


def count_postings(flat: Any, lengths: Any, *, n_terms: int, dtype: str) -> tuple[Any, Any, Any]:
    """The CSC postings of documents given as concatenated term ids.

    Args:
        flat: Term ids of every document, one after the other (none negative).
        lengths: Number of terms of each document.
        n_terms: Terms at least in the postings (more when an id is ``n_terms`` or above).
        dtype: Dtype of the term frequencies (as :func:`count_pairs`).

    Returns:
        ``(indptr, docs, tf)``: term ``t``'s pairs are ``docs[indptr[t]:indptr[t + 1]]``.
    """
    n_docs = len(lengths)
    total = len(flat)
    doc_bits = max(n_docs - 1, 0).bit_length()
    top = int(np.max(flat)) if total else 0
    indptr = np.zeros(max(n_terms, top + 1 if total else 0) + 1, dtype=np.int64)
    span_bits = min(32 - doc_bits, 31)
    if span_bits <= 0 or top.bit_length() > 31 or (top >> span_bits) >= _RANGES:
        keys = np.array(flat, dtype=np.int64)
        keys <<= doc_bits
        keys |= np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        keys.sort()
        pairs, tf, count = _distinct_keys(keys, dtype)
        del keys
        starts = np.arange(len(indptr) - 1, dtype=np.int64) << doc_bits
        indptr[:-1] = np.searchsorted(pairs, starts)
        indptr[-1] = count
        pairs &= (1 << doc_bits) - 1
        return indptr, pairs, tf
    keys = np.repeat(np.arange(n_docs, dtype=np.uint32), lengths)
    docs, tf = _postings_narrow(np.asarray(flat), keys, doc_bits, span_bits, 0, top, indptr, dtype)
    return indptr, docs, tf


def _postings_narrow(
    ids: Any,
    keys: Any,
    doc_bits: int,
    span_bits: int,
    low: int,
    top: int,
    indptr: Any,
    dtype: str,
) -> tuple[Any, Any]:
    """:func:`count_postings` of the tokens whose ids are ``low`` or more (fills ``indptr``)."""
    limit = low + (1 << span_bits)
    high, high_ids, high_docs = _pair_keys(ids, keys, doc_bits, low, limit, top)
    spare = 0 if high is None else len(high)
    pairs, tf, count = _distinct_keys(keys[: len(keys) - spare], dtype, spare=spare)
    del keys
    stop = min(limit, len(indptr) - 1)
    starts = np.arange(stop - low, dtype=np.uint32) << np.uint32(doc_bits)
    indptr[low:stop] = np.searchsorted(pairs[:count], starts)
    pairs[:count] &= np.uint32((1 << doc_bits) - 1)
    if high is None:
        indptr[stop:] = count
        return pairs[:count].view(np.int32), tf[:count]
    more_docs, more_tf = _postings_narrow(
        high_ids, high_docs, doc_bits, span_bits, limit, top, indptr, dtype
    )
    indptr[limit:] += count
    end = count + len(more_docs)
    pairs[count:end], tf[count:end] = more_docs, more_tf
    return pairs[:end].view(np.int32), tf[:end]
