"""BM25 that changes by the document: a base segment, a recent segment and a deletion mask.

It keeps the postings of a *base* and a *recent* segment, an *alive* mask and live statistics.
After a change, the query terms' postings are scored with the live statistics by bm25s's own
functions, equal bit for bit to a fresh build of the live documents.
"""

from __future__ import annotations

import bisect
import copy as _copy
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.embedded.base_segment import (
    BaseArrays,
    build_base,
    build_base_flat,
    empty_base,
)
from workspace_tools.core.backends.embedded.document_counts import (
    count_documents,
    grow_frequencies,
)
from workspace_tools.core.backends.embedded.posting_sums import PostingColumns, posting_sums
from workspace_tools.core.index.bm25_build import count_pairs, make_bm25
from workspace_tools.core.index.sparse import BM25Config, top_positive

__all__ = ["BaseArrays", "SparseSegments", "build_base", "build_base_flat"]

MERGE_FRACTION: Final = 0.1
"""Recent and deleted documents, as a fraction of the live ones, that trigger a merge."""
MERGE_MINIMUM: Final = 2_000
"""...but never a merge for fewer changes than this (small indexes merge rarely: cheap anyway)."""

_DF_HEADROOM: Final = 4_096
"""Unused term ids the document frequencies have room for after a load."""
_BISECTED: Final = 8
"""Keys up to which a base row is found by bisection (no numpy calls)."""


class SparseSegments:
    """Live BM25 over chunks identified by int keys (see the module docstring)."""

    def __init__(self, config: BM25Config) -> None:
        self.config = config
        self._model = make_bm25(k1=config.k1, b=config.b, method=config.method)
        self.base = empty_base()
        self._base_lengths = np.zeros(0, dtype=np.int64)
        self._recent_keys: list[int] = []
        self._recent_terms: list[npt.NDArray[np.int32]] = []
        self._recent_postings: tuple[Any, Any, Any] | None = None
        self._alive = np.zeros(0, dtype=bool)
        self._recent_rows: dict[int, int] = {}
        """``key -> row`` of the live recent rows (base rows are found in the sorted base keys)."""
        self._base_rows: dict[int, int] | None = None
        """``key -> row`` of the base rows, made only for a base whose keys are not sorted."""
        self._base_sorted: bool | None = None
        """The base keys ascend (every base this module builds); ``None``: not looked yet."""
        self._keys_cache: npt.NDArray[np.int64] | None = None
        self._lengths_cache: npt.NDArray[np.int64] | None = None
        self._dead_cache: npt.NDArray[np.int64] | None = None
        self._df = np.zeros(0, dtype=np.int64)
        self._live = 0
        self._total_length = 0
        self._dead = 0
        self._pristine = True
        self._nonoccurrence: Any = None

    # -- state -----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._live

    def __contains__(self, key: int) -> bool:
        return self.row_of(key) is not None

    @property
    def model(self) -> Any:
        """The bm25s model whose scoring functions (and build) this index uses."""
        return self._model

    @property
    def changes(self) -> int:
        """Documents added or deleted since the base was built."""
        return len(self._recent_keys) + self._dead

    def wants_merge(self) -> bool:
        """The recent segment and deletions are large enough to merge into a new base."""
        return self.changes > max(MERGE_MINIMUM, MERGE_FRACTION * self._live)

    def live_keys(self) -> npt.NDArray[np.int64]:
        """Keys of the live rows, in row order."""
        return self.row_keys()[self.alive_rows()]

    def row_keys(self) -> npt.NDArray[np.int64]:
        """Key of every row (dead rows included)."""
        if self._keys_cache is None:
            recent = np.asarray(self._recent_keys, dtype=np.int64)
            self._keys_cache = np.concatenate([np.asarray(self.base.keys), recent])
        return self._keys_cache

    def alive_rows(self) -> npt.NDArray[np.bool_]:
        """Mask of the live rows."""
        return self._alive

    def row_of(self, key: int) -> int | None:
        """Row of a live key."""
        row = self._recent_rows.get(key)
        if row is not None:
            return row
        held = self._live_base_rows([key])
        return held[0] if held else None

    def _live_base_rows(self, keys: Sequence[int]) -> list[int]:
        """The live base rows of these keys (keys not in the base, or dead, are left out)."""
        base = np.asarray(self.base.keys)
        if not len(base) or not len(keys):
            return []
        if self._base_sorted is None:
            self._base_sorted = bool(np.all(base[1:] > base[:-1]))
        alive = self._alive
        if self._base_sorted and len(keys) <= _BISECTED:  # a write's few keys: no numpy calls
            size, found = len(base), []
            for key in keys:
                row = bisect.bisect_left(base, key)
                if row < size and base[row] == key and alive[row]:
                    found.append(row)
            return found
        if self._base_sorted:
            wanted = np.asarray(keys, dtype=np.int64)
            if base.dtype != wanted.dtype:  # searched in the base's dtype: no copy of the base
                kept = np.iinfo(base.dtype)
                wanted = wanted[(wanted >= kept.min) & (wanted <= kept.max)].astype(base.dtype)
            rows = np.minimum(np.searchsorted(base, wanted), len(base) - 1)
            rows = rows[base[rows] == wanted]
        else:
            if self._base_rows is None:
                listed = base.tolist()
                self._base_rows = dict(zip(listed, range(len(listed)), strict=True))
            found_rows = [self._base_rows.get(int(key)) for key in keys]
            rows = np.asarray([row for row in found_rows if row is not None], dtype=np.int64)
        return list(rows[alive[rows]].tolist())

    def terms_of_row(self, row: int) -> npt.NDArray[np.int32]:
        """Term ids of a row."""
        base = self.base
        if row < len(base.keys):
            return base.terms_of_row(row)
        return self._recent_terms[row - len(base.keys)]

    # -- building ----------------------------------------------------------------------------------

    def load(self, base: BaseArrays) -> None:
        """Start from a saved base (every row alive)."""
        self.base = base
        self._base_lengths = np.asarray(base.lengths).astype(np.int64)
        rows = len(base.keys)
        self._recent_keys, self._recent_terms = [], []
        self._recent_postings = None
        self._alive = np.ones(rows, dtype=bool)
        self._recent_rows, self._base_rows, self._base_sorted = {}, None, None
        indptr = np.asarray(base.indptr)
        # Room for new terms, so the first write does not copy the whole array
        terms = len(indptr) - 1
        self._df = np.zeros(terms + max(_DF_HEADROOM, terms // 8), dtype=np.int64)
        np.subtract(indptr[1:], indptr[:-1], out=self._df[:terms])
        self._live = rows
        self._total_length = int(self._base_lengths.sum())
        self._dead = 0
        # Variants with a non-occurrence term keep it in memory only: a loaded base is rebuilt.
        self._nonoccurrence = None
        self._pristine = self._model.method not in self._model.methods_requiring_nonoccurrence
        self._invalidate()

    def build(
        self, keys: Sequence[int], terms: Sequence[npt.NDArray[np.int32]], n_vocab: int
    ) -> None:
        """A new base of these rows."""
        self.load_built(*build_base(self._model, keys, terms, n_vocab))

    def load_built(self, base: BaseArrays, nonoccurrence: Any) -> None:
        """Start from a base made by :func:`build_base` (every row alive)."""
        self.load(base)
        self._nonoccurrence = nonoccurrence
        self._pristine = True

    def frozen(self) -> SparseSegments:
        """A copy that later changes to this one do not reach (cheap: arrays are shared)."""
        copy = _copy.copy(self)
        copy._recent_keys = list(self._recent_keys)
        copy._recent_terms = list(self._recent_terms)
        copy._alive = self._alive.copy()
        copy._recent_rows = {}  # not needed by live_rows
        copy._df = self._df.copy()
        copy._invalidate()
        return copy

    def live_rows(self) -> tuple[list[int], list[npt.NDArray[np.int32]]]:
        """Keys and terms of every live row, in key order (what a merge indexes)."""
        keys, rows = self.live_row_numbers()
        return keys.tolist(), [self.terms_of_row(int(r)) for r in rows]

    def live_row_numbers(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Keys and row numbers of every live row, in key order."""
        keys = self.row_keys()
        rows = np.flatnonzero(self._alive)
        rows = rows[np.argsort(keys[rows], kind="stable")]
        return keys[rows], rows

    # -- changes ---------------------------------------------------------------------------------

    def add(self, key: int, terms: npt.NDArray[np.int32]) -> None:
        """Add a document (its key must be new)."""
        self.add_many([key], [terms])

    def add_many(
        self,
        keys: Sequence[int],
        terms: Sequence[npt.NDArray[np.int32]],
    ) -> None:
        """Add documents (one growth of the row arrays, one count of frequencies for all)."""
        if not keys:
            return
        if len(set(keys)) != len(keys):  # a key twice: the later one replaces the earlier
            for key, ids in zip(keys, terms, strict=True):
                self.add_many([key], [ids])
            return
        recent = self._recent_rows
        held = [recent[key] for key in keys if key in recent]
        for row in [*held, *self._live_base_rows(keys)]:
            self._remove_row(row)
        row = len(self.base.keys) + len(self._recent_keys)
        self._recent_keys.extend(keys)
        self._recent_terms.extend(terms)
        recent.update(zip(keys, range(row, row + len(keys)), strict=True))
        if len(terms) == 1:  # one document (a one-document write): its distinct terms alone
            total = len(terms[0])
            if total:
                distinct = np.unique(terms[0])
                self._grow_df([int(distinct[-1])])
                self._df[distinct] += 1  # each id once: a fancy += counts it once
        else:
            total = self._count_many(terms)
        self._live += len(keys)
        self._total_length += total
        self._alive = np.concatenate([self._alive, np.ones(len(keys), dtype=bool)])
        self._changed()

    def _count_many(self, terms: Sequence[npt.NDArray[np.int32]]) -> int:
        """Count each document's distinct terms in the frequencies; the documents' total length."""
        self._df, total = count_documents(self._df, terms)
        return total

    def _grow_df(self, highest: Sequence[int]) -> None:
        """Grow the frequency array as adding one by one documents whose highest ids these are."""
        self._df = grow_frequencies(self._df, highest)

    def remove(self, key: int) -> bool:
        """Delete a document; ``False`` when the key is not live."""
        row = self.row_of(key)
        if row is None:
            return False
        self._remove_row(row)
        self._changed()
        return True

    def _remove_row(self, row: int) -> None:
        if row >= len(self.base.keys):
            del self._recent_rows[self._recent_keys[row - len(self.base.keys)]]
        terms = self.terms_of_row(row)
        self._alive[row] = False
        self._df[np.unique(terms)] -= 1
        self._live -= 1
        self._total_length -= len(terms)
        self._dead += 1

    def _changed(self) -> None:
        self._pristine = False
        self._invalidate()

    def _invalidate(self) -> None:
        self._recent_postings = None
        self._keys_cache = None
        self._lengths_cache = None
        self._dead_cache = None

    # -- search ----------------------------------------------------------------------------------

    def top(
        self,
        ids: Sequence[int],
        *,
        k: int,
        mask: npt.NDArray[np.bool_] | None,
        weights: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` best ``(key, score)`` pairs with a positive score.

        Args:
            ids: Distinct query term ids.
            k: How many.
            mask: Rows allowed (a mask over :meth:`row_keys`), or ``None`` for all.
            weights: One per id, scaling each term's score (``None``: every term once).
        """
        scores = self.scores(ids, weights)
        if mask is not None:
            scores = np.where(mask, scores, 0.0).astype(np.float32)
        keys = self.row_keys()
        return [(int(keys[row]), score) for row, score in top_positive(scores, k)]

    def scores(
        self, ids: Sequence[int], weights: Sequence[float] | None = None
    ) -> npt.NDArray[np.float32]:
        """BM25 score of every row (0 for dead rows) for distinct ids (``weights``: one per id)."""
        rows = len(self.base.keys) + len(self._recent_keys)
        df = self._df
        vocabulary = len(df)
        known = [i for i in dict.fromkeys(ids) if 0 <= i < vocabulary and df[i] > 0]
        if not known or self._live == 0:
            return np.zeros(rows, dtype=np.float32)
        model = self._model
        if not self._pristine and model.method in model.methods_requiring_nonoccurrence:
            self.merge_in_place()  # those variants shift every score: rebuild (exact, slower)
        weight_of = dict(zip(ids, weights, strict=True)) if weights is not None else {}
        if self._pristine:  # bm25s's precomputed scores hold
            base = self.base
            used = [i for i in known if i < len(base.indptr) - 1]
            base.touch_postings(used, ("docs", "scores"))
            return self._sum(base.scores, base.indptr, base.docs, used, weight_of, rows)
        # The query terms' postings scored with the live statistics; dead rows zeroed after
        data, indptr, docs = self._scored(known, recent=False)
        scores = self._sum(data, indptr, docs, known, weight_of, rows, columns=True)
        if self._recent_keys:
            data, indptr, docs = self._scored(known, recent=True)
            scores += self._sum(data, indptr, docs, known, weight_of, rows, columns=True)
        dead = self._dead_base_rows()
        if len(dead):
            scores[dead] = 0.0
        return scores

    def _sum(
        self,
        data: Any,
        indptr: Any,
        docs: Any,
        used: list[int],
        weight_of: dict[int, float],
        rows: int,
        *,
        columns: bool = False,
    ) -> npt.NDArray[np.float32]:
        """bm25s's sum of the postings of the ``used`` terms (``columns``: one column each)."""
        postings = PostingColumns(data, indptr, docs)
        return posting_sums(
            self._model, self._nonoccurrence, postings, used, weight_of, rows, columns=columns
        )

    def _recent(self) -> tuple[Any, Any, Any]:
        if self._recent_postings is None:
            terms = self._recent_terms
            if terms:
                lengths = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
                flat = np.concatenate(terms).astype(np.int64)
                pair_terms, docs, tf = count_pairs(
                    flat, lengths, dtype=self._model.dtype, in_place=True
                )
                indptr = np.zeros(len(self._df) + 1, dtype=np.int64)
                np.cumsum(np.bincount(pair_terms, minlength=len(self._df)), out=indptr[1:])
                self._recent_postings = (indptr, docs, tf)
            else:
                empty = np.zeros(0, dtype=np.int64)
                self._recent_postings = (np.zeros(1, dtype=np.int64), empty, empty)
        return self._recent_postings

    def _dead_base_rows(self) -> npt.NDArray[np.int64]:
        """Rows of the base segment that were deleted (or replaced) since it was built."""
        if self._dead_cache is None:
            base_rows = len(self.base.keys)
            self._dead_cache = (
                np.flatnonzero(~self._alive[:base_rows])
                if self._dead
                else np.zeros(0, dtype=np.int64)
            )
        return self._dead_cache

    def _lengths(self) -> npt.NDArray[np.int64]:
        if self._lengths_cache is None:
            recent = np.fromiter(map(len, self._recent_terms), dtype=np.int64)
            self._lengths_cache = np.concatenate([self._base_lengths, recent])
        return self._lengths_cache

    def _scored(self, ids: list[int], *, recent: bool) -> tuple[Any, Any, Any]:
        """``(scores, indptr, rows)`` of ``ids``' postings in the base or recent segment, scored."""
        from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

        model = self._model
        if recent:
            indptr, all_docs, all_tf = self._recent()
            first_row = len(self.base.keys)
        else:
            base = self.base
            base.touch_postings(ids, ("docs", "tf"))  # a loaded snapshot's blocks, checked first
            indptr, all_docs, all_tf, first_row = base.indptr, base.docs, base.tf, 0
        known = len(indptr) - 1
        terms = np.asarray(ids, dtype=np.int64)
        inside = terms < known
        starts = np.where(inside, np.asarray(indptr[np.minimum(terms, known)]), 0)
        counts = np.where(inside, np.asarray(indptr[np.minimum(terms + 1, known)]), 0) - starts
        spans = [
            slice(a, a + n) for a, n in zip(starts.tolist(), counts.tolist(), strict=True) if n
        ]
        if not spans:
            docs, tf = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=model.dtype)
        else:
            docs = np.concatenate([np.asarray(all_docs[span]) for span in spans])
            tf = np.concatenate([np.asarray(all_tf[span]) for span in spans])
        if first_row:
            docs = docs + first_row
        idf_fn = _select_idf_scorer(model.idf_method)
        idf = np.asarray([idf_fn(int(self._df[t]), N=self._live) for t in ids], dtype=model.dtype)
        if recent:
            keep = self._alive[docs]
            if not keep.all():
                column = np.repeat(np.arange(len(ids)), counts)[keep]
                docs, tf = docs[keep], tf[keep]
                counts = np.bincount(column, minlength=len(ids))
        tfc = _select_tfc_scorer(model.method)(
            tf_array=tf.astype(model.dtype, copy=False),
            l_d=np.take(self._lengths(), docs),
            l_avg=self._total_length / self._live,
            k1=model.k1,
            b=model.b,
            delta=model.delta,
        )
        out_indptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(counts, out=out_indptr[1:])
        data = (np.repeat(idf, counts) * tfc).astype(model.dtype)
        return data, out_indptr, docs.astype(model.int_dtype, copy=False)

    def merge_in_place(self) -> None:
        """Rebuild the base from the live rows (same term ids)."""
        keys, terms = self.live_rows()
        self.build(keys, terms, len(self._df))
