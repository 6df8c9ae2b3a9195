"""Pending BM25 changes rescored in the background, so queries after writes stay fast.

After a change, the live statistics (document count, frequencies, average length) differ from
those the base's precomputed scores were made with, so a query scores its terms' postings itself
(:func:`base_query_postings`): 3-4x the time of reading precomputed scores at 50,000
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
import math
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.index._sparse_build import _per_value
from workspace_tools.core.index._tfc_grid import TfcGrid, grid_of, grid_values, looked_up

if TYPE_CHECKING:
    from workspace_tools.core.index._base_segment import BaseArrays

SparseSegments = Any
"""A :class:`~workspace_tools.core.index.segments.SparseSegments`; it imports this module, so
the name is not imported back (the import graph stays acyclic; its private state is read here)."""

__all__ = [
    "UNKNOWN_GRID",
    "BackgroundRescore",
    "base_query_postings",
    "recent_query_postings",
    "rescore_base",
    "rescore_state",
]

logger = logging.getLogger(__name__)

RESCORE_DELAY: Final = 0.02
"""Seconds without a change the thread waits for before it rescores (a burst is rescored once).

Longer than the gap between the writes of a burst on a loaded machine (fsyncs of 5-10 ms), so
the thread does not start passes that the next write makes useless (5 ms did, and took the
writes' CPU: worst write 16-23 ms against 7-10 ms with 20 ms, in one process at 50k chunks)."""
UNKNOWN_GRID: Final[Any] = object()
"""``SparseSegments._grid_of``: no grid made for this base yet."""
RESCORE_BLOCK: Final = 1 << 18
"""Postings scored per numpy pass; between passes the thread checks that its state is current."""


class BackgroundRescore:
    """The rescoring of one :class:`SparseSegments`, run by the process's rescore thread.

    Each change asks for a rescore :data:`RESCORE_DELAY` from now (a burst is rescored once,
    after it). One daemon thread per process runs them (:class:`_Scheduler`): a change never
    starts a thread, which cost the write ~0.1 ms, and several ms on a loaded machine while
    the new thread got scheduled.
    """

    def __init__(self, owner: SparseSegments) -> None:
        self._owner = weakref.ref(owner)
        """Weakly: the owner holds this, so a strong reference back was a cycle that kept a
        replaced base's arrays (tens of MB at 50k chunks) alive until a garbage collection."""
        self.running = False
        """A pass runs now (set by the scheduler under its lock)."""
        self.requested = 0.0
        """When the latest change asked for a rescore (monotonic seconds)."""
        self.passes = 0
        """Rescore passes run to their end or dropped as stale (tests count them)."""

    @staticmethod
    def prepare() -> None:
        """Start the process's rescore thread ahead of the first change (it waits idle).

        Else the first write after opening paid the thread's start, more on a loaded machine.
        """
        _SCHEDULER.start()

    def request(self) -> None:
        """Rescore the owner's newest state once it has not changed for :data:`RESCORE_DELAY`.

        The first change to a base has the thread make its term-frequency grid at once (the
        query-time scoring uses it), and rescore after the delay.
        """
        owner = self._owner()
        if owner is None:
            return
        now = time.monotonic()
        self.requested = now
        grids = owner._grids
        first = grids is None or grids[0] is not owner.base
        _SCHEDULER.schedule(self, now if first else now + RESCORE_DELAY)

    def wait(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``done()`` or until nothing is scheduled or running; ``done()`` then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done():
                return True
            if _SCHEDULER.idle(self):
                return done()
            time.sleep(0.001)
        return done()

    def run(self) -> None:
        """One pass on the owner's current state (on the rescore thread); none once it is gone."""
        owner = self._owner()
        if owner is None:
            return
        try:
            state = rescore_state(owner)
            if state is None:  # a change is under way: its end asks again
                return
            stamp, base, lengths, alive, df, live, total_length = state
            grid = owner._grid_of(base)
            if grid is UNKNOWN_GRID:  # made once per base, here rather than on a query's time
                base.touch_all("tf")  # a loaded snapshot's blocks, checked before they are read
                grid = grid_of(lengths, base.tf)
                owner._grids = (base, grid)
            quiet = self.requested + RESCORE_DELAY
            if time.monotonic() < quiet:  # the grid came first: rescore once writes pause
                _SCHEDULER.schedule(self, quiet)
                return
            data = rescore_base(
                owner.model,
                base,
                lengths,
                alive,
                df,
                live,
                total_length,
                stale=_moved_on(owner, stamp),
                grid=grid,
            )
            self.passes += 1
            if data is not None:
                owner._publish_rescore(stamp, base, data)
        except Exception:  # queries score the pending rows themselves meanwhile
            logger.warning("rescoring the BM25 base in the background failed", exc_info=True)


class _Scheduler:
    """The one thread of a process that runs each rescore once its owner has been quiet."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: dict[BackgroundRescore, float] = {}
        """Rescores asked for, and the monotonic time each may run."""
        self._pid = 0
        """The process whose rescore thread runs (0: none started yet)."""
        self._waking = -math.inf
        """When the waiting thread wakes by itself (-inf: it is not waiting, inf: no time)."""

    def schedule(self, job: BackgroundRescore, due: float) -> None:
        with self._cond:
            self._due[job] = due
            self._start()
            # Wake the thread only for a time before the one it waits for: each write of a
            # burst moves its job later, and a woken thread takes the GIL from the writer (a
            # stall of milliseconds when the machine is loaded).
            if due < self._waking:
                self._cond.notify()

    def start(self) -> None:
        """Start the thread now (a base large enough to be rescored was loaded)."""
        with self._cond:
            self._start()

    def _start(self) -> None:
        if self._pid == os.getpid():  # running (a forked child has no thread: start one)
            return
        thread = threading.Thread(target=self._run, name="bm25-rescore", daemon=True)
        thread.start()
        self._pid = os.getpid()

    def idle(self, job: BackgroundRescore) -> bool:
        with self._cond:
            return job not in self._due and not job.running

    def _run(self) -> None:
        while True:
            with self._cond:
                job = self._next_due()
                job.running = True
            try:
                job.run()
            finally:
                with self._cond:
                    job.running = False

    def _next_due(self) -> BackgroundRescore:
        """Wait (holding the condition) for the first rescore whose time came; take it."""
        while True:
            if not self._due:
                self._waking = math.inf
                self._cond.wait()
                continue
            job, due = min(self._due.items(), key=lambda item: item[1])
            left = due - time.monotonic()
            if left <= 0:
                del self._due[job]
                self._waking = -math.inf  # busy: it looks at the queue again when done
                return job
            self._waking = due
            self._cond.wait(left)

    def forget(self) -> None:
        """In a forked child: no thread runs, and the lock may have been held at the fork."""
        self._cond = threading.Condition()
        self._due = {}
        self._pid = 0
        self._waking = -math.inf


_SCHEDULER: Final = _Scheduler()
if hasattr(os, "register_at_fork"):  # POSIX; Windows does not fork
    os.register_at_fork(after_in_child=_SCHEDULER.forget)


def _moved_on(owner: SparseSegments, stamp: int) -> Callable[[], bool]:
    """Whether ``owner`` changed since ``stamp`` (a rescore of that state is then useless)."""
    return lambda: bool(owner._stamp != stamp)


def rescore_base(
    model: Any,
    base: BaseArrays,
    lengths: npt.NDArray[np.int64],
    alive: npt.NDArray[np.bool_],
    df: npt.NDArray[np.int64],
    live: int,
    total_length: int,
    stale: Callable[[], bool] | None = None,
    grid: TfcGrid | None = None,
) -> npt.NDArray[np.float32] | None:
    """bm25s's score of every base posting under the live statistics (0 for a dead row's).

    The same bm25s functions and float operations as the query-time scoring of
    :func:`base_query_postings` (elementwise, so the values are the same bits), for every
    posting at once, in blocks. Pure: it runs in a background thread on a copy of the state.
    ``stale()`` is asked between blocks: once it says the state moved on, the work is dropped
    (``None``), so a write during a rescore does not wait for a useless pass to end.
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
    every_row_alive = bool(alive.all())
    cells = None if grid is None else grid_values(model, grid, average)
    for start in range(0, total, RESCORE_BLOCK):
        stop = min(start + RESCORE_BLOCK, total)
        first = int(np.searchsorted(indptr, start, side="right")) - 1
        last = int(np.searchsorted(indptr, stop - 1, side="right")) - 1
        spans = np.minimum(indptr[first + 1 : last + 2], stop) - np.maximum(
            indptr[first : last + 1], start
        )
        docs = np.asarray(base.docs[start:stop])
        tf = np.asarray(base.tf[start:stop])
        if cells is not None and grid is not None:
            tfc = looked_up(grid, cells, docs, tf)
        else:
            tfc = tfc_fn(
                tf_array=tf.astype(model.dtype, copy=False),
                l_d=np.take(lengths, docs),
                l_avg=average,
                k1=model.k1,
                b=model.b,
                delta=model.delta,
            )
        # np.repeat(idf[first:last + 1], spans) is idf of each posting's term, without a gather.
        values = (np.repeat(idf[first : last + 1], spans) * tfc).astype(model.dtype)
        if not every_row_alive:
            values[~np.take(alive, docs)] = 0
        data[start:stop] = values
        if stop < total and stale is not None and stale():
            return None
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
    """The recent rows' postings of the query terms, scored under the live statistics.

    Every term in one numpy pass, one column per id; postings of deleted rows are left out.

    The same bm25s functions on the same values, elementwise: the same bits.
    """
    indptr, docs, tf = seg._recent()
    return _scored_columns(seg, ids, indptr, docs, tf, first_row=len(seg.base.keys), alive=True)


def base_query_postings(seg: SparseSegments, ids: list[int]) -> tuple[Any, Any, Any]:
    """The base rows' postings of the query terms, scored under the live statistics.

    Every term in one numpy pass (one column per id, as :func:`recent_query_postings`). Dead
    rows are kept: their own sums are wrong and the caller zeroes them (a row's sum holds only
    its own postings, so the live rows' sums are those of a fresh build, bit for bit).
    """
    base = seg.base
    base.touch_postings(ids, ("docs", "tf"))  # a loaded snapshot's blocks, checked first
    return _scored_columns(
        seg, ids, base.indptr, base.docs, base.tf, first_row=0, alive=False, grid=seg._cells()
    )


def _scored_columns(
    seg: SparseSegments,
    ids: list[int],
    indptr: Any,
    all_docs: Any,
    all_tf: Any,
    *,
    first_row: int,
    alive: bool,
    grid: tuple[TfcGrid, Any] | None = None,
) -> tuple[Any, Any, Any]:
    """Postings of ``ids`` in a CSC segment, scored with bm25s's functions and the live stats.

    Returns ``(scores, indptr, rows)`` with one column per id (rows offset by ``first_row``);
    with ``alive``, postings of dead rows are left out.
    """
    from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

    model = seg._model
    known = len(indptr) - 1
    terms = np.asarray(ids, dtype=np.int64)
    inside = terms < known
    starts = np.where(inside, np.asarray(indptr[np.minimum(terms, known)]), 0)
    counts = np.where(inside, np.asarray(indptr[np.minimum(terms + 1, known)]), 0) - starts
    spans = [slice(a, a + n) for a, n in zip(starts.tolist(), counts.tolist(), strict=True) if n]
    if not spans:
        docs, tf = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=model.dtype)
    elif len(spans) == 1:
        docs, tf = np.asarray(all_docs[spans[0]]), np.asarray(all_tf[spans[0]])
    else:
        docs = np.concatenate([all_docs[span] for span in spans])
        tf = np.concatenate([all_tf[span] for span in spans])
    if first_row:
        docs = docs + first_row
    idf_fn = _select_idf_scorer(model.idf_method)
    idf = np.asarray([idf_fn(int(seg._df[t]), N=seg._live) for t in ids], dtype=model.dtype)
    if alive:
        keep = seg._alive[docs]
        if not keep.all():
            column = np.repeat(np.arange(len(ids)), counts)[keep]
            docs, tf = docs[keep], tf[keep]
            counts = np.bincount(column, minlength=len(ids))
    if grid is not None:
        tfc = looked_up(grid[0], grid[1], docs, tf)
    else:
        tfc = _select_tfc_scorer(model.method)(
            tf_array=tf.astype(model.dtype, copy=False),
            l_d=np.take(seg._lengths(), docs),
            l_avg=seg._total_length / seg._live,
            k1=model.k1,
            b=model.b,
            delta=model.delta,
        )
    out_indptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(counts, out=out_indptr[1:])
    # np.repeat(idf, counts) is idf[column]: the same float32 factors, without the gather.
    data = (np.repeat(idf, counts) * tfc).astype(model.dtype)
    return data, out_indptr, docs.astype(model.int_dtype, copy=False)
