"""Pending BM25 changes rescored in the background, so queries after writes stay fast.

After a change, the live statistics (document count, frequencies, average length) differ from
those the base's precomputed scores were made with, so a query scores its terms' postings itself
(``SparseSegments._query_postings``): 3-4x the time of reading precomputed scores at 50,000
chunks. Once writes pause, :class:`BackgroundRescore` computes every base posting's score under
the live statistics in one thread (:func:`rescore_base`: the same bm25s functions and float
operations, so the same bits), and queries read those like precomputed scores, scoring only the
few recent rows themselves. Any change makes the rescored scores stale (a stamp tells), and the
thread starts again after the burst of writes; until it is done, queries score as before.

The thread reads a copy of the state taken under a seqlock (``SparseSegments._stamp`` is odd
while a change is under way), never the live arrays; the base arrays are never changed in place.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.index._sparse_build import _per_value

if TYPE_CHECKING:
    from workspace_tools.core.index._base_segment import BaseArrays

SparseSegments = Any
"""A :class:`~workspace_tools.core.index.segments.SparseSegments`; it imports this module, so
the name is not imported back (the import graph stays acyclic; its private state is read here)."""

__all__ = ["BackgroundRescore", "recent_query_postings", "rescore_base", "rescore_state"]

logger = logging.getLogger(__name__)

RESCORE_DELAY: Final = 0.005
"""Seconds the thread waits after a change for the next one (a burst is rescored once)."""


class BackgroundRescore:
    """One coalescing thread per :class:`SparseSegments`, alive only while there is work."""

    def __init__(self, owner: SparseSegments) -> None:
        self._owner = owner
        self._lock = threading.Lock()
        self._wanted = self._running = False

    def request(self) -> None:
        """Rescore the owner's newest state (after the thread's current pass, if one runs)."""
        with self._lock:
            self._wanted = True
            if self._running:
                return
            self._running = True
        threading.Thread(target=self._loop, name="bm25-rescore", daemon=True).start()

    def wait(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``done()`` or until the thread has nothing left to do; ``done()`` then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done():
                return True
            with self._lock:
                if not self._running and not self._wanted:
                    return done()
            time.sleep(0.001)
        return done()

    def _loop(self) -> None:
        owner = self._owner
        while True:
            with self._lock:
                if not self._wanted:
                    self._running = False
                    return
                self._wanted = False
            time.sleep(RESCORE_DELAY)
            state = rescore_state(owner)
            if state is None:  # a change is under way: its end asks again
                continue
            stamp, base, *stats = state
            try:
                data = rescore_base(owner.model, base, *stats)
            except Exception:  # queries score the pending rows themselves meanwhile
                logger.warning("rescoring the BM25 base in the background failed", exc_info=True)
                continue
            owner._publish_rescore(stamp, base, data)


def rescore_base(
    model: Any,
    base: BaseArrays,
    lengths: npt.NDArray[np.int64],
    alive: npt.NDArray[np.bool_],
    df: npt.NDArray[np.int64],
    live: int,
    total_length: int,
) -> npt.NDArray[np.float32]:
    """bm25s's score of every base posting under the live statistics (0 for a dead row's).

    The same bm25s functions and float operations as the query-time scoring of
    ``SparseSegments._query_postings`` (elementwise, so the values are the same bits), for every
    posting at once, in blocks. Pure: it runs in a background thread on a copy of the state.
    """
    from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

    idf_fn = _select_idf_scorer(model.idf_method)
    tfc_fn = _select_tfc_scorer(model.method)
    base.touch_all("docs")  # a loaded snapshot's blocks, checked once before they are read
    base.touch_all("tf")
    indptr = np.asarray(base.indptr)
    terms_in_base = len(indptr) - 1
    idf = _per_value(df[:terms_in_base], lambda d: idf_fn(d, N=live), dtype=model.dtype)
    average = total_length / live
    total = int(indptr[-1])
    data = np.empty(total, dtype=model.dtype)
    block = 1 << 20
    for start in range(0, total, block):
        stop = min(start + block, total)
        first = int(np.searchsorted(indptr, start, side="right")) - 1
        last = int(np.searchsorted(indptr, stop - 1, side="right")) - 1
        spans = np.minimum(indptr[first + 1 : last + 2], stop) - np.maximum(
            indptr[first : last + 1], start
        )
        terms = np.repeat(np.arange(first, last + 1), spans)
        docs = np.asarray(base.docs[start:stop])
        tfc = tfc_fn(
            tf_array=np.asarray(base.tf[start:stop]).astype(model.dtype),
            l_d=lengths[docs],
            l_avg=average,
            k1=model.k1,
            b=model.b,
            delta=model.delta,
        )
        values = (idf[terms] * tfc).astype(model.dtype)
        values[~alive[docs]] = 0
        data[start:stop] = values
    return data


def rescore_state(seg: SparseSegments) -> tuple[Any, ...] | None:
    """A consistent copy of what a rescore reads, or ``None`` while a change is under way."""
    stamp = seg._stamp
    if stamp % 2 or seg._pristine or not seg._live:
        return None
    base = seg.base
    state = (
        stamp,
        base,
        seg._base_lengths,
        seg._alive[: len(base.keys)].copy(),
        seg._df.copy(),
        seg._live,
        seg._total_length,
    )
    return state if seg._stamp == stamp and seg.base is base else None


def recent_query_postings(seg: SparseSegments, ids: list[int]) -> tuple[Any, Any, Any]:
    """``SparseSegments._query_postings`` of the recent rows only, every term in one numpy pass.

    The same bm25s functions on the same values, elementwise: the same bits.
    """
    from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

    model = seg._model
    recent_indptr, recent_docs, recent_tf = seg._recent()
    known = len(recent_indptr) - 1
    terms = np.asarray(ids, dtype=np.int64)
    inside = terms < known
    starts = np.where(inside, recent_indptr[np.minimum(terms, known)], 0)
    counts = np.where(inside, recent_indptr[np.minimum(terms + 1, known)], 0) - starts
    column = np.repeat(np.arange(len(ids)), counts)
    first = np.cumsum(counts) - counts
    offsets = np.repeat(starts - first, counts) + np.arange(int(counts.sum()))
    docs = recent_docs[offsets] + len(seg.base.keys)
    keep = seg._alive[docs]
    docs, column = docs[keep], column[keep]
    idf_fn = _select_idf_scorer(model.idf_method)
    idf = np.asarray([idf_fn(int(seg._df[t]), N=seg._live) for t in ids], dtype=model.dtype)
    tfc = _select_tfc_scorer(model.method)(
        tf_array=recent_tf[offsets][keep].astype(model.dtype),
        l_d=seg._lengths()[docs],
        l_avg=seg._total_length / seg._live,
        k1=model.k1,
        b=model.b,
        delta=model.delta,
    )
    indptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(column, minlength=len(ids)), out=indptr[1:])
    return (idf[column] * tfc).astype(model.dtype), indptr, docs.astype(model.int_dtype)
