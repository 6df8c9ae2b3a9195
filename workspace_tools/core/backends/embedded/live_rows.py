"""The live rows of the BM25 segments as a merge folds them: keys, term ids, lengths.

Rows already in key order (nearly always) are one concatenation of the segments' arrays with
dead rows masked out; others take the row-by-row path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from workspace_tools.core.backends.embedded.segments import SparseSegments

__all__ = ["live_flat"]


def live_flat(
    segments: SparseSegments,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """Keys, concatenated term ids and lengths of every live row, in key order."""
    keys = segments.row_keys()
    alive = segments.alive_rows()
    live = keys[alive]
    if not len(live) or not bool(np.all(live[1:] > live[:-1])):
        return _row_by_row(segments)
    base = segments.base
    rows = len(base.keys)
    parts: list[npt.NDArray[np.int32]] = []
    lengths: list[npt.NDArray[np.int64]] = []
    if rows:
        flat, base_lengths = _base_flat(segments)
        parts.append(flat)
        lengths.append(base_lengths)
    recent = segments._recent_terms
    if recent:
        parts.extend(np.asarray(t, dtype=np.int32) for t in recent)
        lengths.append(np.fromiter(map(len, recent), dtype=np.int64, count=len(recent)))
    all_lengths = np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64)
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    if not bool(alive.all()):
        flat = flat[np.repeat(alive, all_lengths)]
        all_lengths = all_lengths[alive]
    return live, flat, all_lengths


def _base_flat(
    segments: SparseSegments,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """Every base row's terms (dead rows too) and their lengths."""
    base = segments.base
    if base.terms is not None and base.offsets is not None:
        base.touch_all("terms")
        offsets = np.asarray(base.offsets, dtype=np.int64)
        flat = np.asarray(base.terms, dtype=np.int32)[: int(offsets[-1])]
        return flat, np.diff(offsets)
    offsets, ids, counts = base.transpose()  # by row, term ids ascending within a row
    counts = np.asarray(counts).astype(np.int64)
    flat = np.repeat(np.asarray(ids, dtype=np.int32), counts)
    ends = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=ends[1:])
    offsets = np.asarray(offsets, dtype=np.int64)
    return flat, ends[offsets[1:]] - ends[offsets[:-1]]


def _row_by_row(
    segments: SparseSegments,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """:func:`live_flat` one row at a time (rows out of key order)."""
    keys, rows = segments.live_row_numbers()
    terms = [segments.terms_of_row(int(r)) for r in rows]
    flat = np.concatenate(terms).astype(np.int32) if terms else np.zeros(0, dtype=np.int32)
    lengths = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
    return keys, flat, lengths
