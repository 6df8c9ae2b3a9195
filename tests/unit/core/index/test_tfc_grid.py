"""The term-frequency grid: bm25s's function looked up per (tf, length) cell, the same bits."""

from __future__ import annotations

import numpy as np
import pytest

from workspace_tools.core.index import _rescore, _tfc_grid, segments
from workspace_tools.core.index._tfc_grid import grid_of
from workspace_tools.core.index.segments import SparseSegments
from workspace_tools.core.index.sparse import BM25Config


def _doc(rng: np.random.Generator) -> np.ndarray:
    return (rng.zipf(1.3, size=int(rng.integers(3, 80))) % 200).astype(np.int32)


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire"])
def test_looked_up_scores_equal_computed_ones_and_a_fresh_build(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 10**9)  # no thread: the grid is set here
    rng = np.random.default_rng(31)
    config = BM25Config(method=method)
    docs = {key: _doc(rng) for key in range(300)}
    seg = SparseSegments(config)
    seg.build(list(docs), list(docs.values()), 200)
    for key in (1, 2, 77):
        seg.remove(key)
        del docs[key]
    for key in (5, 300, 301):
        docs[key] = _doc(rng)
        seg.add(key, docs[key])
    grid = grid_of(seg._base_lengths, seg.base.tf)
    assert grid is not None and grid.max_tf > 1
    fresh = SparseSegments(config)
    fresh.build(sorted(docs), [docs[k] for k in sorted(docs)], 200)
    for _ in range(20):
        ids = list(dict.fromkeys(rng.integers(0, 210, size=6).tolist()))
        seg._grids = None
        computed = seg.scores(ids)
        seg._grids = (seg.base, grid)
        looked_up = seg.scores(ids)
        assert seg._cells() is not None
        assert np.array_equal(computed, looked_up)
        keys = seg.row_keys()
        by_key = {int(keys[r]): float(looked_up[r]) for r in np.flatnonzero(seg.alive_rows())}
        expected = fresh.scores(ids)
        fresh_keys = fresh.row_keys()
        assert by_key == {int(fresh_keys[r]): float(expected[r]) for r in range(len(fresh_keys))}
    state = _rescore.rescore_state(seg)
    assert state is not None
    _stamp, base, *stats = state
    with_grid = _rescore.rescore_base(seg.model, base, *stats, grid=grid)
    assert with_grid is not None
    assert np.array_equal(with_grid, _rescore.rescore_base(seg.model, base, *stats))


def test_the_rescore_thread_makes_the_grid_of_a_base_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 0)
    monkeypatch.setattr(_rescore, "RESCORE_DELAY", 0.0)
    made = []
    real = _rescore.grid_of

    def counted(*args: object) -> object:
        made.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_rescore, "grid_of", counted)
    rng = np.random.default_rng(32)
    seg = SparseSegments(BM25Config())
    seg.build(list(range(100)), [_doc(rng) for _ in range(100)], 200)
    for key in range(100, 103):
        seg.add(key, _doc(rng))
        assert seg.wait_for_rescore()
    assert len(made) == 1
    assert seg._grid_of(seg.base) is not _rescore.UNKNOWN_GRID


def test_no_grid_for_fractional_frequencies_or_too_many_cells(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lengths = np.array([3, 5, 5, 9], dtype=np.int64)
    assert grid_of(lengths, np.array([1, 2, 1], dtype=np.float32)) is not None
    assert grid_of(lengths, np.array([1, 2.5, 1], dtype=np.float32)) is None
    assert grid_of(lengths, np.zeros(0, dtype=np.float32)) is None
    monkeypatch.setattr(_tfc_grid, "GRID_CELLS", 5)  # 3 lengths x tf 0..2 = 9 cells
    assert grid_of(lengths, np.array([1, 2, 1], dtype=np.float32)) is None


def test_the_first_change_has_the_grid_made_at_once_and_the_rescore_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 0)
    monkeypatch.setattr(_rescore, "RESCORE_DELAY", 1.0)
    rng = np.random.default_rng(33)
    seg = SparseSegments(BM25Config())
    seg.build(list(range(100)), [_doc(rng) for _ in range(100)], 200)
    seg.add(100, _doc(rng))
    assert seg._rescorer.wait(lambda: seg._grid_of(seg.base) is not _rescore.UNKNOWN_GRID, 5.0)
    assert seg._rescorer.passes == 0  # the rescore itself waits for the writes to pause
    assert seg._cells() is not None  # queries meanwhile look the term frequencies up
    assert seg.wait_for_rescore()
    assert seg._rescorer.passes == 1
