"""A batch of chunks added at once gives the state that adding them one by one gives."""

from __future__ import annotations

import numpy as np
import pytest

from workspace_tools.core.backends.embedded.segments import SparseSegments
from workspace_tools.core.index.sparse import BM25Config


def _docs(seed: int, count: int, vocabulary: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    docs = [
        rng.integers(0, vocabulary, size=int(rng.integers(0, 40))).astype(np.int32)
        for _ in range(count)
    ]
    docs[3] = np.zeros(0, dtype=np.int32)  # an empty chunk
    return docs


def _df_one_by_one(
    base: list[np.ndarray], new: list[np.ndarray], *, removed: int, vocabulary: int
) -> np.ndarray:
    """Document frequencies as the code before batching grew and counted them, per chunk."""
    df = np.zeros(vocabulary, dtype=np.int64)
    for number, ids in enumerate(base):
        if number != removed:
            df[np.unique(ids)] += 1
    for ids in new:
        unique = np.unique(ids)
        if len(unique) and int(unique[-1]) >= len(df):
            grown = np.zeros(max(int(unique[-1]) + 1, 2 * len(df)), dtype=np.int64)
            grown[: len(df)] = df
            df = grown
        df[unique] += 1
    return df


def test_one_document_is_counted_without_the_batch_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # A one-document write counts its distinct terms alone (~30 us, where the batch pass of
    # sorts and reductions cost ~80 us); the states agree (the test below).
    seg = SparseSegments(BM25Config())
    seg.build([0, 1], [np.array([0, 1, 1], np.int32), np.array([2], np.int32)], 3)

    def batch_pass(*_args: object) -> int:
        raise AssertionError("the batch pass ran for one document")

    monkeypatch.setattr(SparseSegments, "_count_many", batch_pass)
    seg.add(5, np.array([1, 40, 1, 3], np.int32))  # a repeated term, and one past the vocabulary
    assert seg._df[[0, 1, 2, 3, 40]].tolist() == [1, 2, 1, 1, 1]
    assert (seg._live, seg._total_length) == (3, 8)
    with pytest.raises(AssertionError, match="the batch pass ran"):
        seg.add_many([6, 7], [np.array([1], np.int32), np.array([2], np.int32)])


def test_add_many_equals_one_add_per_chunk() -> None:
    base_docs = _docs(1, 50, 30)
    rng = np.random.default_rng(2)  # new term ids growing past the base's vocabulary
    new_docs = [rng.integers(0, 31 + 160 * i, size=30).astype(np.int32) for i in range(40)]
    new_docs[5] = np.zeros(0, dtype=np.int32)
    one, batch = SparseSegments(BM25Config()), SparseSegments(BM25Config())
    for seg in (one, batch):
        seg.build(list(range(50)), base_docs, 30)
        seg.remove(7)
    allocated = len(batch._df)  # a built base keeps room for new terms (issue 25, write)
    for key, terms in zip(range(100, 140), new_docs, strict=True):
        one.add(key, terms)
    batch.add_many(list(range(100, 140)), new_docs)
    assert np.array_equal(one._df, batch._df) and len(one._df) == len(batch._df)
    expected = _df_one_by_one(base_docs, new_docs, removed=7, vocabulary=allocated)
    assert np.array_equal(batch._df, expected) and len(batch._df) == len(expected)
    assert (one._live, one._total_length) == (batch._live, batch._total_length)
    assert np.array_equal(one.row_keys(), batch.row_keys())
    assert np.array_equal(one.alive_rows(), batch.alive_rows())
    for query in ([1, 2, 3], [40, 4999, 7], list(range(0, 6000, 17))):
        assert np.array_equal(one.scores(query), batch.scores(query))


def test_add_many_replaces_a_key_already_there_and_a_key_given_twice() -> None:
    one, batch = SparseSegments(BM25Config()), SparseSegments(BM25Config())
    docs = _docs(3, 6, 20)
    for seg in (one, batch):
        seg.build([1, 2, 3], docs[:3], 20)
    for key, terms in [(2, docs[4]), (9, docs[5]), (9, docs[0])]:
        one.add(key, terms)
    batch.add_many([2, 9, 9], [docs[4], docs[5], docs[0]])
    assert len(batch) == len(one) == 4
    assert np.array_equal(one._df, batch._df)
    assert np.array_equal(one.live_keys(), batch.live_keys())
