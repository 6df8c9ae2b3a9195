"""bm25s's sums of a query's posting columns, with per-term weights (for :mod:`segments`).

Unweighted postings are summed by bm25s's own code; weighted ones are scaled per column and
added with ``np.add.at``, as bm25s does. ``nonoccurrence`` is added as bm25s adds it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = ["PostingColumns", "posting_sums"]


class PostingColumns(NamedTuple):
    """Postings in CSC form: scores, column pointers and the document row of each score."""

    data: Any
    indptr: Any
    docs: Any


def posting_sums(
    model: Any,
    nonoccurrence: Any,
    postings: PostingColumns,
    used: list[int],
    weight_of: dict[int, float],
    rows: int,
    *,
    columns: bool = False,
) -> npt.NDArray[np.float32]:
    """bm25s's sum of the postings of the ``used`` terms (``columns``: one column each).

    Args:
        model: The bm25s model (its summation, integer and float dtypes).
        nonoccurrence: Per-term score of a document without the term, or ``None``.
        postings: The columns to sum.
        used: Term ids of the query terms held by ``postings``.
        weight_of: Each query term's weight (its count in the query).
        rows: Rows of the result.
        columns: The columns are numbered ``0..len(used)-1``, not by term id.
    """
    if columns:
        query = np.arange(len(used), dtype=model.int_dtype)
    else:
        query = np.asarray(used, dtype=model.int_dtype)
    if weight_of and any(weight_of[i] != 1 for i in used):
        weights = [weight_of[i] for i in used]
        return _weighted(nonoccurrence, postings, query, weights, rows)
    scores = model._compute_relevance_from_scores(  # bm25s's own summation
        data=postings.data,
        indptr=postings.indptr,
        indices=postings.docs,
        num_docs=rows,
        query_tokens_ids=query,
        dtype=np.dtype(model.dtype),
    )
    if nonoccurrence is not None:  # as bm25s's get_scores_from_ids adds it
        scores += nonoccurrence[query].sum()
    return np.asarray(scores, dtype=np.float32)


def _weighted(
    nonoccurrence: Any,
    postings: PostingColumns,
    query: npt.NDArray[np.int64],
    weights: list[float],
    rows: int,
) -> npt.NDArray[np.float32]:
    """Sum of each query term's bm25s posting scores scaled by its weight."""
    data, indptr, docs = postings
    out = np.zeros(rows, dtype=np.float32)
    for column, weight in zip(query.tolist(), weights, strict=True):
        start, stop = int(indptr[column]), int(indptr[column + 1])
        values = np.asarray(data[start:stop], dtype=np.float32) * np.float32(weight)
        # A column holds each row once: np.add.at gives the bits of ``out[rows] += values``
        np.add.at(out, np.asarray(docs[start:stop]), values)
    if nonoccurrence is not None:
        out += np.float32(
            float(np.dot(nonoccurrence[query], np.asarray(weights, dtype=np.float64)))
        )
    return out
