"""Rows of keys without a dict of every base key (issue 25: the first write after opening).

A base row is found in the sorted base keys; only recent rows are kept in a dict. Building a
``key -> row`` dict of the whole base cost the first write after opening 8 ms at 50,000 chunks.
"""

from __future__ import annotations

import numpy as np
import pytest

from workspace_tools.core.backends.embedded.segments import SparseSegments
from workspace_tools.core.index.sparse import BM25Config


def _docs(count: int, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.integers(0, 40, size=int(rng.integers(1, 30))).astype(np.int32) for _ in range(count)
    ]


def _scores(seg: SparseSegments) -> dict[int, float]:
    return {key: float(score) for key, score in seg.top(list(range(40)), k=500, mask=None)}


def _state(keys: list[int]) -> SparseSegments:
    seg = SparseSegments(BM25Config())
    seg.build(keys, _docs(len(keys)), 40)
    return seg


def test_a_write_after_opening_makes_no_map_of_the_base_keys() -> None:
    seg = _state(list(range(0, 400, 2)))
    seg.add_many([1001, 1002], _docs(2, seed=5))
    assert seg._base_rows is None and seg._recent_rows == {1001: 200, 1002: 201}
    assert seg.row_of(10) == 5 and seg.row_of(11) is None and seg.row_of(1002) == 201
    seg.remove(10)  # a base row: found by its sorted key, still no map
    assert seg._base_rows is None and seg.row_of(10) is None and 10 not in seg
    seg.remove(1001)
    assert seg.row_of(1001) is None and seg._recent_rows == {1002: 201}


@pytest.mark.parametrize("order", ["sorted", "unsorted"])
def test_replacing_and_removing_keys_scores_as_a_fresh_build(order: str) -> None:
    keys = list(range(0, 300, 3))
    if order == "unsorted":  # not a base this module builds: the map of its keys is made
        keys = keys[::-1]
    docs = _docs(len(keys))
    seg = SparseSegments(BM25Config())
    seg.build(keys, docs, 40)
    new = _docs(4, seed=9)
    seg.add_many([keys[5], 999, keys[7]], new[:3])  # two base keys replaced, one new key
    seg.add_many([999], new[3:])  # a recent key replaced
    assert seg.remove(keys[9]) and not seg.remove(keys[9]) and not seg.remove(12345)
    live = dict(zip(keys, docs, strict=True))
    live.update({keys[5]: new[0], keys[7]: new[2], 999: new[3]})
    del live[keys[9]]
    fresh = SparseSegments(BM25Config())
    fresh.build(sorted(live), [live[key] for key in sorted(live)], 40)
    assert len(seg) == len(fresh) == len(live)
    got, want = _scores(seg), _scores(fresh)
    assert got.keys() == want.keys()
    assert got == want  # the same bits: live statistics score as a build with them
    assert (seg._base_rows is None) == (order == "sorted")
    for key in live:
        row = seg.row_of(key)
        assert row is not None and int(seg.row_keys()[row]) == key


@pytest.mark.parametrize("replaced", [1, 3, 12])  # bisected (a write's few keys) or searched
def test_a_batch_replacing_base_keys_scores_as_a_fresh_build(replaced: int) -> None:
    keys = list(range(0, 300, 3))
    docs = _docs(len(keys))
    seg = SparseSegments(BM25Config())
    seg.build(keys, docs, 40)
    chosen = keys[10 : 10 + 2 * replaced : 2]
    new = _docs(len(chosen) + 1, seed=11)
    seg.add_many([*chosen, 5000], new)
    live = dict(zip(keys, docs, strict=True))
    live.update(zip([*chosen, 5000], new, strict=True))
    fresh = SparseSegments(BM25Config())
    fresh.build(sorted(live), [live[key] for key in sorted(live)], 40)
    assert len(seg) == len(live) and _scores(seg) == _scores(fresh)
    assert all(seg.row_of(key) == len(keys) + number for number, key in enumerate(chosen))
