"""The base segment of the BM25 segments: its arrays and their build (pure, so lock-free)."""

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
    """The base segment, as saved in a snapshot (arrays may be memory-mapped)."""

    keys: npt.NDArray[Any]
    """Chunk key of each base row (``int32`` in a snapshot when every key fits)."""
    indptr: npt.NDArray[np.int64]
    """Postings of term ``t`` are ``docs/tf/scores[indptr[t]:indptr[t + 1]]``."""
    docs: npt.NDArray[np.int32]
    tf: npt.NDArray[Any]
    """Term frequency of each posting, in the narrowest exact dtype (readers cast it)."""
    scores: npt.NDArray[np.float32]
    """bm25s's score of each posting, with the statistics of the base."""
    lengths: npt.NDArray[Any]
    """Tokens of each row (its BM25 document length)."""
    terms: npt.NDArray[np.int32] | None = None
    """Term ids of every row, concatenated (a base built in memory, or an older snapshot)."""
    offsets: npt.NDArray[Any] | None = None
    """Row ``i``'s terms are ``terms[offsets[i]:offsets[i + 1]]``."""
    verify: Callable[[str, int, int], None] | None = None
    """Checks elements ``start:stop`` of an array before first read (``None``: trusted)."""
    by_row: tuple[Any, Any, Any] | None = field(default=None, repr=False, compare=False)
    """``(row offsets, term ids, counts)``: the postings by row (:meth:`transpose`), once made."""
    scans: int = field(default=0, repr=False, compare=False)

    def terms_of_row(self, row: int) -> npt.NDArray[np.int32]:
        """Term ids of a row, each as often as it occurs (from :attr:`terms`, else the postings)."""
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
    """A base segment of these rows and its non-occurrence scores (``None`` for most variants)."""
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
    """:func:`build_base` of rows given as their concatenated term ids and their lengths."""
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

    ``ready(name, array)`` gets each array but the scores once final (a snapshot writes them).

    Returns:
        The base, its non-occurrence scores, and the used ids (compacted id ``i`` is ``used[i]``).
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
    # Term frequencies counted in the narrowest dtype the longest row allows
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
    """Term frequencies in the narrowest dtype that holds them exactly (counts are whole)."""
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
