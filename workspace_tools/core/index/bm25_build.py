"""A bm25s ``BM25`` whose index build counts terms with numpy.

It overrides ``BM25.build_index_from_ids``; the matrix is identical to the stock one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from itertools import chain
from typing import Any, Final

import numpy as np

from workspace_tools.core.index.pair_counts import count_pairs
from workspace_tools.core.index.tfc_grid import grid_of, grid_values, looked_up

__all__ = ["block_terms", "build_scores", "build_scores_from_pairs", "count_pairs", "make_bm25"]

logger = logging.getLogger(__name__)

_BLOCK = 1 << 20
"""(term, document) pairs scored per numpy pass."""
_GRID_PAIRS: Final = 1 << 16
"""Pairs from which their term-frequency component is looked up in a grid (:mod:`.tfc_grid`)."""


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
    global _CLASS  # defined on first use: importing this module does not import bm25s
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
    model: Any,
    *,
    pair_terms: Any = None,
    indptr: Any = None,
    pair_docs: Any,
    tf: Any,
    lengths: Any,
    df: Any,
) -> tuple[Any, Any]:
    """bm25s's score of each ``(term, document)`` pair, and the non-occurrence array (or ``None``).

    Args:
        model: The ``bm25s.BM25`` whose parameters apply.
        pair_terms: Term of each pair (sorted, as :func:`count_pairs` returns them)...
        indptr: ...or where each term's pairs start (CSC), when the pairs' terms are not kept.
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

    # scores in blocks (small float64 temporaries); the tf component from a grid when it fits
    tfc_fn = _select_tfc_scorer(model.method)
    grid = grid_of(np.asarray(lengths, dtype=np.int64), tf) if len(tf) >= _GRID_PAIRS else None
    cells = grid_values(model, grid, avg_doc_len) if grid is not None else None
    data = np.empty(len(tf), dtype=model.dtype)
    for start in range(0, len(tf), _BLOCK):
        block = slice(start, start + _BLOCK)
        terms = pair_terms[block] if pair_terms is not None else block_terms(indptr, block)
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


def block_terms(indptr: Any, block: slice) -> Any:
    """The term of each pair ``block.start:block.stop`` of CSC postings with this ``indptr``."""
    stop = min(int(block.stop), int(indptr[-1]))
    start = int(block.start)
    if stop <= start:
        return np.zeros(0, dtype=np.int32)
    first = int(np.searchsorted(indptr, start, side="right")) - 1
    last = int(np.searchsorted(indptr, stop - 1, side="right")) - 1
    bounds = np.clip(indptr[first : last + 2], start, stop)
    return np.repeat(np.arange(first, last + 1, dtype=np.int32), np.diff(bounds))


def _per_value(doc_freqs: Any, fn: Any, *, dtype: str) -> Any:
    """``fn(df)`` for each term (0 where df is 0), called once per distinct df value."""
    values, inverse = np.unique(doc_freqs, return_inverse=True)
    by_value = np.array([fn(int(v)) if v else 0.0 for v in values.tolist()], dtype=dtype)
    return by_value[inverse.reshape(-1)]
