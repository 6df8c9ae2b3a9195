"""bm25s's term-frequency component of the base postings, looked up instead of recomputed.

bm25s's function is evaluated once per (tf, length) cell; a posting looks up its cell.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = ["TfcGrid", "grid_of", "grid_values", "looked_up"]

GRID_CELLS: Final = 1 << 16
"""Largest grid (term frequencies x distinct lengths) looked up; a larger one is not made."""


class TfcGrid(NamedTuple):
    """The (term frequency, row length) cells of one base segment's postings."""

    codes: npt.NDArray[np.int32]
    """Per base row: the index of its length in :attr:`lengths`."""
    lengths: npt.NDArray[np.int64]
    """The distinct row lengths, ascending."""
    max_tf: int
    """The largest term frequency of a posting."""


def grid_of(base_lengths: npt.NDArray[np.int64], tf: Any) -> TfcGrid | None:
    """The grid of a base (``None``: too many cells, or a term frequency that is no count)."""
    tf = np.asarray(tf)
    if not len(tf) or not len(base_lengths):
        return None
    highest = float(tf.max())
    if not highest.is_integer() or highest < 0:
        return None
    lengths, codes = np.unique(base_lengths, return_inverse=True)
    if (int(highest) + 1) * len(lengths) > GRID_CELLS:
        return None
    if tf.dtype.kind == "f" and not np.array_equal(tf, tf.astype(np.int32)):  # whole counts
        return None
    return TfcGrid(codes.reshape(-1).astype(np.int32), lengths.astype(np.int64), int(highest))


def grid_values(model: Any, grid: TfcGrid, average: float) -> npt.NDArray[Any]:
    """bm25s's term-frequency function at every cell of ``grid`` (``tf * lengths + code``)."""
    from bm25s.scoring import _select_tfc_scorer

    width = len(grid.lengths)
    tf = np.repeat(np.arange(grid.max_tf + 1).astype(model.dtype), width)
    l_d = np.tile(grid.lengths, grid.max_tf + 1)
    return np.asarray(
        _select_tfc_scorer(model.method)(
            tf_array=tf, l_d=l_d, l_avg=average, k1=model.k1, b=model.b, delta=model.delta
        )
    )


def looked_up(
    grid: TfcGrid, values: npt.NDArray[Any], docs: npt.NDArray[Any], tf: npt.NDArray[Any]
) -> npt.NDArray[Any]:
    """The term-frequency component of base postings (rows ``docs``, frequencies ``tf``)."""
    cells = tf.astype(np.int32) * np.int32(len(grid.lengths))
    cells += np.take(grid.codes, docs)
    return np.take(values, cells)
