"""top_positive: the k best positive scores, exact and deterministic even when scores tie a lot."""

from __future__ import annotations

import numpy as np
import pytest

from workspace_tools.core.index.sparse import top_positive


def _reference(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Every positive score sorted (best first, ties by lower index), the first k."""
    rows = np.flatnonzero(scores > 0)
    order = np.lexsort((rows, -scores[rows]))[:k]
    return [(int(rows[i]), float(scores[rows[i]])) for i in order]


@pytest.mark.parametrize("distinct", [3, 30, 10_000])
@pytest.mark.parametrize("k", [1, 2, 10, 100, 999, 5_000, 20_000])
def test_equals_a_full_sort_with_ties_broken_by_lower_index(distinct: int, k: int) -> None:
    rng = np.random.default_rng(distinct * 7 + k)
    for size in (7, 640, 10_000):
        # BM25-like: most rows score 0, the rest take one of a few values (many ties), a few
        # negative values (they never count).
        values = rng.integers(1, distinct + 1, size=size).astype(np.float32) / 7
        values[rng.random(size) < 0.6] = 0
        values[rng.random(size) < 0.01] = -1
        assert top_positive(values, k) == _reference(values, k)


def test_ties_at_the_kth_place_keep_the_lowest_rows() -> None:
    scores = np.zeros(10_000, dtype=np.float32)
    scores[[9_000, 10, 5_000, 20, 7_000]] = 1.0  # five tied rows...
    scores[9_999] = 2.0  # ...behind one best row, in the last block
    assert top_positive(scores, 3) == [(9_999, 2.0), (10, 1.0), (20, 1.0)]
    tied = [(10, 1.0), (20, 1.0), (5_000, 1.0), (7_000, 1.0), (9_000, 1.0)]
    assert top_positive(scores, 6) == [(9_999, 2.0), *tied]


def test_nothing_positive_or_nothing_asked() -> None:
    assert top_positive(np.zeros(1_000, dtype=np.float32), 10) == []
    assert top_positive(np.full(1_000, -1.0, dtype=np.float32), 10) == []
    assert top_positive(np.ones(1_000, dtype=np.float32), 0) == []
    assert top_positive(np.zeros(0, dtype=np.float32), 5) == []
    every = np.arange(1, 2_001, dtype=np.float32)
    assert top_positive(every, 3) == [(1_999, 2_000.0), (1_998, 1_999.0), (1_997, 1_998.0)]
