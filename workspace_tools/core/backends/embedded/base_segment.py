"""The base segment of the BM25 segments (``segments.py``): its arrays and their build.

Pure functions over numpy arrays (no shared state), so a merge builds a base outside every lock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.index.bm25_build import build_scores_from_pairs
from workspace_tools.core.index.pair_counts import count_postings

__all__ = ["BaseArrays", "build_base", "build_base_compacted", "empty_base", "narrow_counts"]


_SCANS: Final = 8
"""Rows whose terms are found by a scan of the postings before they are transposed once."""


@dataclass(slots=True)
class BaseArrays:
    """The base segment, as saved in a snapshot (arrays may be memory-mapped).

    A snapshot keeps no per-row term lists (the database holds each chunk's terms, the postings
    hold them by term): a row's terms are read from the postings when a deletion or a merge needs
    them (:meth:`terms_of_row`). A base built in memory keeps its :attr:`terms` as well.
    """

    keys: npt.NDArray[Any]
    """Chunk key of each base row (``int32`` in a snapshot when every key fits)."""
    indptr: npt.NDArray[np.int64]
    """Postings of term ``t`` are ``docs/tf/scores[indptr[t]:indptr[t + 1]]``."""
    docs: npt.NDArray[np.int32]
    tf: npt.NDArray[Any]
    """Term frequency of each posting, in the narrowest exact dtype (``uint8`` when every count
    is below 256, ``uint16``, else ``float32``); readers cast to the model's dtype."""
    scores: npt.NDArray[np.float32]
    """bm25s's score of each posting, with the statistics of the base."""
    lengths: npt.NDArray[Any]
    """Tokens of each row (its BM25 document length)."""
    terms: npt.NDArray[np.int32] | None = None
    """Term ids of every row, concatenated (a base built in memory, or an older snapshot)."""
    offsets: npt.NDArray[Any] | None = None
    """Row ``i``'s terms are ``terms[offsets[i]:offsets[i + 1]]``."""
    verify: Callable[[str, int, int], None] | None = None
    """Checks elements ``start:stop`` of an array (by name) before they are first read: a
    loaded snapshot's per-block checksums (``snapshot_checks.py``); ``None``: trusted."""
    by_row: tuple[Any, Any, Any] | None = field(default=None, repr=False, compare=False)
    """``(row offsets, term ids, counts)``: the postings by row (:meth:`transpose`), once made."""
    scans: int = field(default=0, repr=False, compare=False)

    def terms_of_row(self, row: int) -> npt.NDArray[np.int32]:
        """Term ids of a row, each as often as it occurs in the row.

        From :attr:`terms` when kept (in the order of the text), else from the postings (by
        term id: the same multiset, so the same BM25 statistics and scores): a scan of
        :attr:`docs` for the first few rows asked, then one transposition kept for the rest.
        """
        if self.terms is not None and self.offsets is not None:
            start, stop = int(self.offsets[row]), int(self.offsets[row + 1])
            self.touch("terms", start, stop)
            return np.asarray(self.terms[start:stop])
        if self.by_row is None and self.scans < _SCANS:
            self.scans += 1
            self.touch_all("docs")
            self.touch_all("tf")
            positions = np.flatnonzero(np.asarray(self.docs) == row)
            ids = (np.searchsorted(self.indptr, positions, side="right") - 1).astype(np.int32)
            return np.repeat(ids, np.asarray(self.tf)[positions].astype(np.int64))
        offsets, ids, counts = self.transpose()
        start, stop = int(offsets[row]), int(offsets[row + 1])
        return np.repeat(ids[start:stop], counts[start:stop].astype(np.int64))

    def transpose(self) -> tuple[Any, Any, Any]:
        """The postings by row: ``(row offsets, term ids, counts)`` (one stable sort, kept)."""
        if self.by_row is None:
            self.touch_all("docs")
            self.touch_all("tf")
            docs = np.asarray(self.docs)
            order = np.argsort(docs, kind="stable")  # within a row, term ids stay ascending
            per_term: npt.NDArray[np.int64] = np.diff(self.indptr).astype(np.int64)
            ids = np.repeat(np.arange(len(self.indptr) - 1, dtype=np.int32), per_term)
            offsets = np.zeros(len(self.keys) + 1, dtype=np.int64)
            np.cumsum(np.bincount(docs, minlength=len(self.keys)), out=offsets[1:])
            self.by_row = (offsets, ids[order], np.asarray(self.tf)[order])
        return self.by_row

    def touch(self, name: str, start: int, stop: int) -> None:
        """Let :attr:`verify` check elements ``start:stop`` of array ``name`` before a read."""
        verify = self.verify
        if verify is not None:
            verify(name, start, stop)

    def touch_postings(self, terms: Sequence[int], names: Sequence[str]) -> None:
        """:meth:`touch` the postings of these term ids in the arrays ``names``."""
        verify = self.verify
        if verify is None or getattr(verify, "left", 1) == 0:
            return
        indptr = self.indptr
        limit = len(indptr) - 1
        for term in terms:
            if 0 <= term < limit:
                start, stop = int(indptr[term]), int(indptr[term + 1])
                for name in names:
                    verify(name, start, stop)

    def touch_all(self, name: str) -> None:
        """:meth:`touch` every element of array ``name``."""
        array = getattr(self, name)
        if array is not None:
            self.touch(name, 0, len(array))


def build_base(
    model: Any, keys: Sequence[int], terms: Sequence[npt.NDArray[np.int32]], n_vocab: int
) -> tuple[BaseArrays, Any]:
    """A base segment of these rows and its non-occurrence scores (``None`` for most variants).

    Pure (no shared state): a merge runs it outside every lock.
    """
    lengths = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
    flat = (
        np.concatenate([np.asarray(t, dtype=np.int32) for t in terms])
        if terms
        else np.zeros(0, dtype=np.int32)
    )
    return build_base_flat(model, keys, flat, lengths, n_vocab)


def build_base_flat(
    model: Any,
    keys: Sequence[int] | npt.NDArray[np.int64],
    flat: npt.NDArray[np.int32],
    lengths: npt.NDArray[np.int64],
    n_vocab: int,
) -> tuple[BaseArrays, Any]:
    """:func:`build_base` of rows given as their concatenated term ids and their lengths.

    What a merge has already (splitting them into one array per row only to join them again
    cost ~0.2 s at 50,000 rows).
    """
    base, nonoccurrence, _ = _build(model, keys, flat, lengths, n_vocab, compact=False)
    return base, nonoccurrence


def build_base_compacted(
    model: Any,
    keys: Sequence[int] | npt.NDArray[np.int64],
    flat: npt.NDArray[np.int32],
    lengths: npt.NDArray[np.int64],
    n_vocab: int,
    *,
    ready: Callable[[str, npt.NDArray[Any]], None] | None = None,
) -> tuple[BaseArrays, Any, npt.NDArray[np.int64]]:
    """:func:`build_base_flat` with the vocabulary compacted: ids no row uses are dropped.

    The used ids keep their order, so the compacted ids are their ranks. The pairs are counted
    on the ids as given and renumbered after (a pass over the distinct pairs, and none at all
    when every id is used), which gives the arrays of a build on ids compacted first.

    ``ready`` is called with each array of the base but the scores (its name and the array:
    ``keys``, ``indptr``, ``docs``, ``tf``, ``lengths``) once it is final, before the scores are
    made (a snapshot writes them meanwhile).

    Returns:
        The base, its non-occurrence scores, and the used ids (ascending): compacted id ``i``
        is ``used[i]``.
    """
    return _build(model, keys, flat, lengths, n_vocab, compact=True, ready=ready)


def _build(
    model: Any,
    keys: Sequence[int] | npt.NDArray[np.int64],
    flat: npt.NDArray[np.int32],
    lengths: npt.NDArray[np.int64],
    n_vocab: int,
    *,
    compact: bool,
    ready: Callable[[str, npt.NDArray[Any]], None] | None = None,
) -> tuple[BaseArrays, Any, npt.NDArray[np.int64]]:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    longest = int(lengths.max()) if len(lengths) else 0
    counts = next((t for t in (np.uint8, np.uint16) if longest <= np.iinfo(t).max), None)
    # Term frequencies counted in the narrowest dtype the longest row allows (what the base
    # keeps: no float copy to narrow); scoring reads them as the model's floats.
    tf_dtype = np.dtype(counts or model.dtype).name
    indptr, docs, tf = count_postings(flat, lengths, n_terms=n_vocab, dtype=tf_dtype)
    df = np.diff(indptr)
    used = np.flatnonzero(df) if compact else np.arange(len(df), dtype=np.int64)
    if compact and len(used) < len(df):  # the empty terms leave the postings
        remap = np.full(len(df), -1, dtype=np.int32)
        remap[used] = np.arange(len(used), dtype=np.int32)
        flat = remap[flat]
        df = df[used]
        indptr = np.zeros(len(df) + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
    docs = docs.astype(np.int32, copy=False)
    narrow_tf = narrow_counts(tf)
    row_keys = np.asarray(keys, dtype=np.int64)
    if ready is not None:
        for name, array in (
            ("keys", row_keys),
            ("indptr", indptr),
            ("docs", docs),
            ("tf", narrow_tf),
            ("lengths", lengths),
        ):
            ready(name, array)
    scores, nonoccurrence = (
        build_scores_from_pairs(model, indptr=indptr, pair_docs=docs, tf=tf, lengths=lengths, df=df)
        if len(lengths)
        else (np.zeros(0, dtype=np.float32), None)
    )
    base = BaseArrays(
        keys=row_keys,
        indptr=indptr,
        docs=docs,
        tf=narrow_tf,
        scores=scores,
        lengths=lengths,
        terms=np.asarray(flat, dtype=np.int32),
        offsets=offsets,
    )
    return base, nonoccurrence, used


def narrow_counts(tf: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Term frequencies in the narrowest dtype that holds them exactly (4x less than float32).

    Counts are whole numbers, so ``uint8`` / ``uint16`` cast back to float32 give the same bits.
    """
    if not len(tf):
        return np.zeros(0, dtype=np.uint8)
    if tf.dtype == np.uint8:  # counted narrow already
        return tf
    if tf.dtype == np.uint16:  # counted as wide as the longest row allows: often narrower
        return tf.astype(np.uint8) if int(tf.max()) <= np.iinfo(np.uint8).max else tf
    top = float(tf.max())
    if (tf.dtype.kind == "f" and not bool(np.all(tf == np.floor(tf)))) or float(tf.min()) < 0:
        return tf
    for dtype in (np.uint8, np.uint16):
        if top <= np.iinfo(dtype).max:
            return tf.astype(dtype)
    return tf


def empty_base() -> BaseArrays:
    """A base of no rows."""
    return BaseArrays(
        keys=np.zeros(0, dtype=np.int64),
        indptr=np.zeros(1, dtype=np.int64),
        docs=np.zeros(0, dtype=np.int32),
        tf=np.zeros(0, dtype=np.uint8),
        scores=np.zeros(0, dtype=np.float32),
        lengths=np.zeros(0, dtype=np.int64),
        terms=np.zeros(0, dtype=np.int32),
        offsets=np.zeros(1, dtype=np.int64),
    )
