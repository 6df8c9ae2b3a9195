"""The numpy index build must give bm25s's own score matrix, bit for bit."""

from __future__ import annotations

import random
from pathlib import Path

import bm25s
import numpy as np
import pytest

from workspace_tools.core.index import bm25_build as sparse_build
from workspace_tools.core.index.bm25_build import make_bm25
from workspace_tools.core.index.sparse import BM25Config, SparseIndex

METHODS = ["lucene", "robertson", "atire", "bm25l", "bm25+"]


def _corpus(n_docs: int = 300, n_vocab: int = 400) -> tuple[list[list[int]], dict[str, int]]:
    rng = random.Random(3)
    # Zipf-like term ids, repeats inside documents, one empty document, and ids 390-399 unused.
    docs = [
        [min(int(rng.paretovariate(1.1)) - 1, 389) for _ in range(rng.randint(1, 60))]
        for _ in range(n_docs)
    ]
    docs[17] = []
    return docs, {f"t{i}": i for i in range(n_vocab)}


@pytest.mark.parametrize("block", [1 << 20, 7])
@pytest.mark.parametrize("method", METHODS)
def test_matrix_is_identical_to_stock_bm25s(
    method: str, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sparse_build, "_BLOCK", block)  # 7: many scoring blocks
    docs, vocab = _corpus()
    stock = bm25s.BM25(k1=1.2, b=0.6, method=method)
    stock.index((docs, dict(vocab)), show_progress=False)
    ours = make_bm25(k1=1.2, b=0.6, method=method)
    ours.index((docs, dict(vocab)), show_progress=False)

    assert isinstance(ours, bm25s.BM25) and type(ours) is not bm25s.BM25
    for key in ("data", "indices", "indptr"):
        assert ours.scores[key].dtype == stock.scores[key].dtype, key
        np.testing.assert_array_equal(ours.scores[key], stock.scores[key], err_msg=key)
    assert ours.scores["num_docs"] == stock.scores["num_docs"]
    assert ours.vocab_dict == stock.vocab_dict
    if stock.nonoccurrence_array is None:
        assert ours.nonoccurrence_array is None
    else:
        np.testing.assert_array_equal(ours.nonoccurrence_array, stock.nonoccurrence_array)
    query = [1, 2, 5, 399]
    np.testing.assert_array_equal(ours.get_scores_from_ids(query), stock.get_scores_from_ids(query))


def test_string_tokens_go_through_the_same_build() -> None:
    texts = [["alpha", "beta", "beta"], ["gamma"], ["alpha", "delta", "alpha", "alpha"]]
    stock = bm25s.BM25(k1=1.2, b=0.6)
    stock.index(texts, show_progress=False)
    ours = make_bm25(k1=1.2, b=0.6, method="lucene")
    ours.index(texts, show_progress=False)
    np.testing.assert_array_equal(ours.scores["data"], stock.scores["data"])
    np.testing.assert_array_equal(ours.get_scores(["alpha"]), stock.get_scores(["alpha"]))


def test_sparse_index_saves_and_loads_the_same_scores(tmp_path: Path) -> None:
    docs, vocab = _corpus(n_docs=50)
    index = SparseIndex(BM25Config())
    index.build_ids(docs, vocab)
    before = index.scores_ids([1, 3, 7])
    index.save(tmp_path)
    loaded = SparseIndex.load(tmp_path, config=BM25Config())
    assert loaded is not None
    np.testing.assert_array_equal(loaded.scores_ids([1, 3, 7]), before)
    assert before.max() > 0
