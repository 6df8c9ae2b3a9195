"""Pending BM25 changes rescored in the background: the same scores, bit for bit."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from workspace_tools.core.index import _rescore, segments
from workspace_tools.core.index.segments import SparseSegments
from workspace_tools.core.index.sparse import BM25Config


def _doc(rng: np.random.Generator) -> np.ndarray:
    return (rng.zipf(1.3, size=int(rng.integers(3, 60))) % 300).astype(np.int32)


def _by_key(seg: SparseSegments, ids: list[int], weights: list[float] | None) -> dict[int, float]:
    scores = seg.scores(ids, weights)
    keys = seg.row_keys()
    assert not scores[~seg.alive_rows()].any()  # a deleted row never scores
    return {int(keys[r]): float(scores[r]) for r in np.flatnonzero(seg.alive_rows())}


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire"])
def test_rescored_scores_equal_the_query_time_scoring_and_a_fresh_build(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 0)
    monkeypatch.setattr(_rescore, "RESCORE_DELAY", 0.0)
    rng = np.random.default_rng(26)
    config = BM25Config(method=method)
    docs = {key: _doc(rng) for key in range(400)}
    seg = SparseSegments(config)
    seg.build(list(docs), list(docs.values()), 300)
    next_key = 400
    used = 0
    for _ in range(6):
        for _ in range(int(rng.integers(1, 20))):  # a burst of adds, edits and removes
            if rng.random() < 0.3:
                key = int(rng.choice(list(docs)))
                seg.remove(key)
                del docs[key]
            else:
                key = next_key if rng.random() < 0.7 else int(rng.choice(list(docs)))
                next_key = max(next_key, key + 1)
                docs[key] = _doc(rng)
                seg.add(key, docs[key])
        assert seg.wait_for_rescore()
        fresh = SparseSegments(config)
        fresh.build(sorted(docs), [docs[k] for k in sorted(docs)], 300)
        for _ in range(10):
            ids = list(dict.fromkeys(rng.integers(0, 320, size=5).tolist()))
            weights = [float(w) for w in rng.choice([1.0, 0.5, 2.0], size=len(ids))]
            for w in (None, weights):
                rescored = _by_key(seg, ids, w)
                kept, seg._rescored = seg._rescored, None  # the query-time scoring
                queried = _by_key(seg, ids, w)
                seg._rescored = kept
                assert rescored == queried == _by_key(fresh, ids, w)
                used += 1
    assert used == 120


def test_a_change_after_the_rescore_falls_back_to_query_time_scoring(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 0)
    rng = np.random.default_rng(3)
    seg = SparseSegments(BM25Config())
    seg.build(list(range(50)), [_doc(rng) for _ in range(50)], 300)
    seg.add(50, _doc(rng))
    assert seg.wait_for_rescore()
    stamp = seg._rescored[0]  # type: ignore[index]
    monkeypatch.setattr(seg._rescorer, "request", lambda: None)  # no new rescore
    seg.add(51, np.array([7, 7, 8], dtype=np.int32))
    assert seg._stamp != stamp
    assert not seg.wait_for_rescore(timeout=0.2)
    fresh = SparseSegments(BM25Config())
    live = seg.live_keys().tolist()
    fresh.build(live, [seg.terms_of_row(seg.row_of(k)) for k in live], 300)  # type: ignore[arg-type]
    assert _by_key(seg, [7, 8], None) == _by_key(fresh, [7, 8], None)


def test_small_bases_are_not_rescored() -> None:
    rng = np.random.default_rng(4)
    seg = SparseSegments(BM25Config())
    seg.build(list(range(50)), [_doc(rng) for _ in range(50)], 300)
    seg.add(50, _doc(rng))
    assert not seg.wait_for_rescore(timeout=0.2)
    assert seg._rescored is None


def test_a_burst_of_changes_is_rescored_once_after_it_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 0)
    monkeypatch.setattr(_rescore, "RESCORE_DELAY", 0.5)  # far longer than the burst takes
    rng = np.random.default_rng(5)
    seg = SparseSegments(BM25Config())
    seg.build(list(range(200)), [_doc(rng) for _ in range(200)], 300)
    for key in range(200, 204):
        seg.add(key, _doc(rng))
    assert seg.wait_for_rescore()
    assert seg._rescorer.passes == 1  # not one per change: the state the burst left, once


def test_changes_reuse_the_one_rescore_thread_of_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 0)
    monkeypatch.setattr(_rescore, "RESCORE_DELAY", 0.0)
    rng = np.random.default_rng(8)
    segs = [SparseSegments(BM25Config()) for _ in range(2)]
    for seg in segs:
        seg.build(list(range(100)), [_doc(rng) for _ in range(100)], 300)
    for round_ in range(3):  # each change after the previous rescore ended
        for seg in segs:
            seg.add(100 + round_, _doc(rng))
            assert seg.wait_for_rescore()
    assert [seg._rescorer.passes for seg in segs] == [3, 3]
    assert sum(t.name == "bm25-rescore" for t in threading.enumerate()) == 1


def test_a_rescore_made_stale_by_a_change_is_dropped_between_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_rescore, "RESCORE_BLOCK", 64)
    rng = np.random.default_rng(6)
    seg = SparseSegments(BM25Config())
    seg.build(list(range(100)), [_doc(rng) for _ in range(100)], 300)
    seg.add(100, _doc(rng))
    state = _rescore.rescore_state(seg)
    assert state is not None
    _stamp, base, *stats = state
    asked = []

    def stale() -> bool:
        asked.append(True)
        return len(asked) == 2  # a change lands while the third block waits

    assert _rescore.rescore_base(seg.model, base, *stats, stale=stale) is None
    assert len(asked) == 2
    whole = _rescore.rescore_base(seg.model, base, *stats, stale=lambda: False)
    assert whole is not None
    assert np.array_equal(whole, _rescore.rescore_base(seg.model, base, *stats))


def test_query_time_scoring_zeroes_deleted_base_rows_and_equals_a_fresh_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 10**9)  # query-time scoring only
    rng = np.random.default_rng(7)
    docs = {key: _doc(rng) for key in range(300)}
    seg = SparseSegments(BM25Config())
    seg.build(list(docs), list(docs.values()), 300)
    for key in (3, 50, 51, 299):
        seg.remove(key)
        del docs[key]
    for key in (10, 300):  # an edit (a dead base row) and a new recent row, then its removal
        docs[key] = _doc(rng)
        seg.add(key, docs[key])
    seg.remove(300)
    del docs[300]
    fresh = SparseSegments(BM25Config())
    fresh.build(sorted(docs), [docs[k] for k in sorted(docs)], 300)
    for ids in ([0, 1, 2], [5, 9, 17, 250], [1], [299, 0, 7]):
        assert _by_key(seg, ids, None) == _by_key(fresh, ids, None)


@pytest.mark.parametrize("pending", [False, True])
def test_weighted_query_terms_sum_each_terms_scores_times_its_weight(
    pending: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 10**9)
    rng = np.random.default_rng(9)
    seg = SparseSegments(BM25Config())
    seg.build(list(range(300)), [_doc(rng) for _ in range(300)], 300)
    if pending:  # query-time scoring, deleted and recent rows
        seg.remove(4)
        seg.add(300, _doc(rng))
    ids, weights = [0, 1, 5, 2], [2.0, 0.5, 1.0, 1.3]
    expected = np.zeros(len(seg.row_keys()), dtype=np.float32)
    for term, weight in zip(ids, weights, strict=True):  # one term at a time, in query order
        expected += seg.scores([term]) * np.float32(weight)
    assert np.array_equal(seg.scores(ids, weights), expected)


def test_loading_a_base_worth_rescoring_starts_the_thread_before_the_first_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started = []
    monkeypatch.setattr(
        _rescore.BackgroundRescore, "prepare", staticmethod(lambda: started.append(1))
    )
    rng = np.random.default_rng(10)
    small = SparseSegments(BM25Config())
    small.build(list(range(50)), [_doc(rng) for _ in range(50)], 300)
    assert started == []  # below RESCORE_MINIMUM: nothing will run in the background
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 0)
    large = SparseSegments(BM25Config())
    large.build(list(range(50)), [_doc(rng) for _ in range(50)], 300)
    assert started == [1]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_a_forked_child_rescores_on_a_thread_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segments, "RESCORE_MINIMUM", 0)
    monkeypatch.setattr(_rescore, "RESCORE_DELAY", 0.0)
    rng = np.random.default_rng(11)
    seg = SparseSegments(BM25Config())
    seg.build(list(range(50)), [_doc(rng) for _ in range(50)], 300)
    seg.add(50, _doc(rng))
    assert seg.wait_for_rescore()  # the parent's thread runs
    pid = os.fork()
    if pid == 0:  # the child: the parent's thread is not here; a change starts its own
        seg.add(51, _doc(rng))
        os._exit(0 if seg.wait_for_rescore(timeout=5.0) else 3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
