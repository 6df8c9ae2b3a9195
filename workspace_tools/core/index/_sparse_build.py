"""A bm25s ``BM25`` whose index build counts terms with numpy.

bm25s builds its score matrix with a Python loop per document (a ``Counter`` for term frequencies
and a set intersection for document frequencies). That loop is most of its build time.
``BM25.build_index_from_ids`` is the documented override point, and this module overrides it.
Term and document frequencies come from one sort of ``(term, document)`` pairs. The scores still
come from bm25s's own idf and term-frequency functions, evaluated with the same float operations.
The matrix is therefore identical to the stock one. ``tests/unit/core/test_sparse_build.py``
checks this for every bm25s method. The pair keys are sorted in place and the scores computed in
blocks, so peak memory stays that of the stock build. On 51,830 documents (8.6 million tokens)
this build is 7x faster at the same peak memory (``tests/benchmarks/bm25_build_scale.py``).

If bm25s changes its private scoring helpers, :func:`make_bm25` falls back to the stock class.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from itertools import chain
from typing import Any, Final

import numpy as np

from workspace_tools.core.index._tfc_grid import grid_of, grid_values, looked_up

__all__ = ["build_scores", "build_scores_from_pairs", "count_pairs", "make_bm25"]

logger = logging.getLogger(__name__)

_BLOCK = 1 << 20
"""(term, document) pairs scored per numpy pass."""
_GRID_PAIRS: Final = 1 << 16
"""Pairs from which their term-frequency component is looked up in a grid (``_tfc_grid.py``)."""


def make_bm25(*, k1: float, b: float, method: str) -> Any:
    """A ``bm25s.BM25`` with the vectorised build, or the stock one if bm25s lacks its helpers."""
    import bm25s

    try:
        from bm25s.scoring import (  # noqa: F401  (presence check)
            _build_nonoccurrence_array,
            _select_idf_scorer,
            _select_tfc_scorer,
        )
    except ImportError:  # pragma: no cover - only with an untested bm25s release
        logger.warning("bm25s has no scoring helpers; using its stock (slower) index build")
        return bm25s.BM25(k1=k1, b=b, method=method)
    return _counting_class()(k1=k1, b=b, method=method)


_CLASS: Any = None


def _counting_class() -> Any:
    # Defined on first use so that importing this module does not import bm25s.
    global _CLASS
    if _CLASS is None:
        import bm25s

        class CountingBM25(bm25s.BM25):  # type: ignore[misc]
            """``bm25s.BM25`` with :func:`build_scores` as its index build."""

            def build_index_from_ids(
                self,
                unique_token_ids: Sequence[int],
                corpus_token_ids: Sequence[Sequence[int]],
                show_progress: bool = True,  # noqa: FBT001, FBT002  (bm25s's signature)
                leave_progress: bool = False,  # noqa: FBT001, FBT002
            ) -> dict[str, Any]:
                del show_progress, leave_progress  # one numpy pass: nothing to show
                scores, self.nonoccurrence_array = build_scores(
                    self, n_vocab=len(unique_token_ids), corpus_token_ids=corpus_token_ids
                )
                return scores

        _CLASS = CountingBM25
    return _CLASS


def build_scores(
    model: Any, *, n_vocab: int, corpus_token_ids: Sequence[Sequence[int]]
) -> tuple[dict[str, Any], Any]:
    """The CSC score matrix bm25s would build, and its non-occurrence array (or ``None``).

    Args:
        model: The ``bm25s.BM25`` whose parameters (k1, b, delta, method, dtypes) apply.
        n_vocab: Number of term ids; every id in ``corpus_token_ids`` is below it.
        corpus_token_ids: Term ids of each document, with repeats.
    """
    n_docs = len(corpus_token_ids)
    lengths = np.fromiter(map(len, corpus_token_ids), dtype=np.int64, count=n_docs)
    total = int(lengths.sum())
    flat = np.fromiter(chain.from_iterable(corpus_token_ids), dtype=np.int64, count=total)
    pair_terms, pair_docs, tf = count_pairs(flat, lengths, dtype=model.dtype, in_place=True)
    pair_docs = pair_docs.astype(model.int_dtype)
    doc_freqs = np.bincount(pair_terms, minlength=n_vocab)

    data, nonoccurrence = build_scores_from_pairs(
        model, pair_terms=pair_terms, pair_docs=pair_docs, tf=tf, lengths=lengths, df=doc_freqs
    )
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(doc_freqs, out=indptr[1:])
    scores = {"data": data, "indices": pair_docs, "indptr": indptr, "num_docs": n_docs}
    return scores, nonoccurrence


def build_scores_from_pairs(
    model: Any, *, pair_terms: Any, pair_docs: Any, tf: Any, lengths: Any, df: Any
) -> tuple[Any, Any]:
    """bm25s's score of each ``(term, document)`` pair, and the non-occurrence array (or ``None``).

    Args:
        model: The ``bm25s.BM25`` whose parameters apply.
        pair_terms: Term of each pair (sorted, as :func:`count_pairs` returns them).
        pair_docs: Document of each pair.
        tf: Term frequency of each pair.
        lengths: Length of every document (int64).
        df: Document frequency of every term id.
    """
    from bm25s.scoring import _build_nonoccurrence_array, _select_idf_scorer, _select_tfc_scorer

    n_docs = len(lengths)
    avg_doc_len = np.asarray(lengths, dtype=np.int64).mean()  # float64, as bm25s computes it
    doc_freqs = df
    idf_fn = _select_idf_scorer(model.idf_method)
    idf = _per_value(doc_freqs, lambda df: idf_fn(df, N=n_docs), dtype=model.dtype)
    nonoccurrence = None
    if model.method in model.methods_requiring_nonoccurrence:
        nonoccurrence = _build_nonoccurrence_array(
            doc_frequencies=dict(enumerate(doc_freqs.tolist())),
            n_docs=n_docs,
            compute_idf_fn=idf_fn,
            calculate_tfc_fn=_select_tfc_scorer(model.method),
            l_d=avg_doc_len,
            l_avg=avg_doc_len,
            k1=model.k1,
            b=model.b,
            delta=model.delta,
            dtype=model.dtype,
        )

    # Scores in blocks, so bm25s's float64 temporaries stay small; the operations are elementwise
    # and the float64 -> float32 store rounds as bm25s's does.
    # The term-frequency component takes few distinct (tf, length) values: evaluated once per
    # cell of that grid and looked up (the same function on the same values: the same bits).
    tfc_fn = _select_tfc_scorer(model.method)
    grid = grid_of(np.asarray(lengths, dtype=np.int64), tf) if len(tf) >= _GRID_PAIRS else None
    cells = grid_values(model, grid, avg_doc_len) if grid is not None else None
    data = np.empty(len(tf), dtype=model.dtype)
    for start in range(0, len(tf), _BLOCK):
        block = slice(start, start + _BLOCK)
        terms = pair_terms[block]
        if grid is not None and cells is not None:
            tfc = looked_up(grid, cells, pair_docs[block], tf[block])
        else:
            tfc = tfc_fn(
                tf_array=tf[block].astype(model.dtype, copy=False),
                l_d=lengths[pair_docs[block]],
                l_avg=avg_doc_len,
                k1=model.k1,
                b=model.b,
                delta=model.delta,
            )
        scores_block = idf[terms] * tfc
        if nonoccurrence is not None:
            scores_block -= nonoccurrence[terms]
        data[block] = scores_block
    return data, nonoccurrence


_RANGES: Final = 16
"""Term ranges at most into which :func:`count_pairs` splits the tokens to sort 32-bit keys."""


def count_pairs(
    flat: Any, lengths: Any, *, dtype: str, in_place: bool = False
) -> tuple[Any, Any, Any]:
    """Distinct ``(term, document)`` pairs of documents given as concatenated term ids.

    One sort of the pairs gives every count, already in CSC order: a pair's key is its term
    shifted left past the document bits, plus the document. Keys of 32 bits sort in half the
    time of 64-bit ones and take half the memory (whose first touch costs about as much as the
    sort), so when the documents leave too few bits for every term (a 50,000-row merge needs
    33), the lowest ids (the most frequent terms: ids are given in first-seen order) are counted
    first, with the few tokens of higher ids set aside (as keys that sort last) and counted
    after, range by range; the results follow one another, still in CSC order. Very large
    inputs (over :data:`_RANGES` ranges) sort 64-bit keys.

    Args:
        flat: Term ids of every document, one after the other (none negative).
        lengths: Number of terms of each document.
        dtype: Dtype of the returned term frequencies: a float one, or an unsigned integer
            one that holds the length of the longest document.
        in_place: ``flat`` is an int64 array the caller no longer needs (it may be reused).

    Returns:
        ``(terms, docs, tf)`` sorted by term then document (CSC order); terms and documents as
        ``int32`` from 32-bit keys, else ``int64``.
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
    """:func:`count_pairs` of the tokens whose ids are ``low`` or more.

    ``keys`` holds each token's document (``uint32``); it becomes the pair keys.
    """
    limit = low + (1 << span_bits)
    high = np.flatnonzero(ids >= limit) if top >= limit else None
    if high is not None:
        high_ids, high_docs = ids[high], keys[high]
    shift = np.uint32(doc_bits)
    for start in range(0, len(ids), _BLOCK):  # a small temporary, reused block after block
        part = ids[start : start + _BLOCK].astype(np.uint32)
        if low:
            part -= np.uint32(low)
        part <<= shift
        keys[start : start + _BLOCK] |= part
    spare = 0 if high is None else len(high)
    if high is not None:
        keys[high] = np.iinfo(np.uint32).max  # sorts last; dropped below (by count)
    keys.sort()
    # Room for the higher ranges' pairs after these (no concatenation: fresh memory is slow).
    terms, docs, tf, count = _distinct(keys[: len(keys) - spare], doc_bits, dtype, spare=spare)
    del keys
    if low:
        terms[:count] += np.uint32(low)
    if high is not None:
        more = _count_narrow(high_ids, high_docs, doc_bits, span_bits, limit, top, dtype)
        end = count + len(more[0])
        terms[count:end], docs[count:end], tf[count:end] = more
        count = end
    return terms[:count].view(np.int32), docs[:count].view(np.int32), tf[:count]


def _distinct(
    keys: Any, doc_bits: int, dtype: str, *, spare: int = 0
) -> tuple[Any, Any, Any, int]:
    """The distinct keys of a sorted array, split: ``(terms, docs, tf, count)``.

    The arrays have room for ``spare`` more pairs after the first ``count``. The term
    frequencies start at one and each repeated key adds one to its pair: repeats are few (most
    terms occur once in a document), so no index array of every pair is made.
    """
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
    kind = pairs.dtype.type
    terms = np.empty_like(pairs)
    np.right_shift(pairs[:count], kind(doc_bits), out=terms[:count])
    pairs[:count] &= kind((1 << doc_bits) - 1)
    return terms, pairs, tf, count


def _count_wide(
    flat: Any, lengths: Any, *, dtype: str, in_place: bool
) -> tuple[Any, Any, Any]:
    """:func:`count_pairs` with 64-bit keys."""
    n_docs = len(lengths)
    doc_bits = max(n_docs - 1, 0).bit_length()
    keys = flat if in_place else np.array(flat, dtype=np.int64)
    keys <<= doc_bits
    keys |= np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    keys.sort()
    terms, docs, tf, _ = _distinct(keys, doc_bits, dtype)
    return terms, docs, tf


def _per_value(doc_freqs: Any, fn: Any, *, dtype: str) -> Any:
    """``fn(df)`` for each term (0 where df is 0), called once per distinct df value."""
    values, inverse = np.unique(doc_freqs, return_inverse=True)
    by_value = np.array([fn(int(v)) if v else 0.0 for v in values.tolist()], dtype=dtype)
    return by_value[inverse.reshape(-1)]
