"""A merge builds its base from the rows' concatenated term ids (issue 25: no split and re-join).

``build_base_flat`` must give the arrays ``build_base`` gives from one array per row, and
``count_pairs`` the term frequencies ``np.unique`` counts, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from workspace_tools.core.backends.embedded.segments import build_base, build_base_flat
from workspace_tools.core.index.bm25_build import count_pairs
from workspace_tools.core.index.sparse import BM25Config


@pytest.mark.parametrize("count", [0, 1, 7, 300])
@pytest.mark.parametrize("method", ["lucene", "bm25+", "atire"])
def test_the_flat_build_equals_the_build_from_row_arrays(count: int, method: str) -> None:
    from workspace_tools.core.backends.embedded.segments import SparseSegments

    rng = np.random.default_rng(count)
    rows = [rng.integers(0, 60, int(rng.integers(0, 25))).astype(np.int32) for _ in range(count)]
    model = SparseSegments(BM25Config(method=method))._model
    keys = list(range(10, 10 + 3 * count, 3))
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=count)
    flat = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int32)
    expected, expected_extra = build_base(model, keys, rows, 60)
    base, extra = build_base_flat(model, np.asarray(keys, dtype=np.int64), flat, lengths, 60)
    for name in ("keys", "indptr", "docs", "tf", "scores", "lengths", "terms", "offsets"):
        want, got = getattr(expected, name), getattr(base, name)
        assert want.dtype == got.dtype and np.array_equal(want, got), name
    assert (expected_extra is None) == (extra is None)
    if extra is not None:
        assert np.array_equal(expected_extra, extra)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pair_counts_are_the_distinct_pairs_counted(dtype: str) -> None:
    rng = np.random.default_rng(3)
    for count in (0, 1, 2, 500):
        lengths = rng.integers(0, 40, count)
        flat = rng.integers(0, 90, int(lengths.sum())).astype(np.int32)
        terms, docs, tf = count_pairs(flat, lengths, dtype=dtype)
        pairs = flat.astype(np.int64) * max(count, 1) + np.repeat(np.arange(count), lengths)
        distinct, counts = np.unique(pairs, return_counts=True)
        assert tf.dtype == np.dtype(dtype)
        assert np.array_equal(tf, counts.astype(dtype))
        assert np.array_equal(terms * max(count, 1) + docs, distinct)
