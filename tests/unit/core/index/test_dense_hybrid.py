from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded.dense import DenseIndex
from workspace_tools.core.errors import IndexMismatchError
from workspace_tools.core.ranking.fusion import reciprocal_rank_fusion, weighted_fusion


def test_modes_and_default(tree: Path, fake_embedder: FakeEmbedder) -> None:
    ws = Workspace(tree, embedder=fake_embedder)
    assert ws.modes == ("bm25", "vector", "hybrid")
    assert ws.default_mode == "hybrid"
    vec_only = Workspace(tree / "docs", embedder=fake_embedder, bm25=False)
    assert vec_only.modes == ("vector",) and vec_only.default_mode == "vector"


def test_batching_respects_max_batch_size(tmp_path: Path) -> None:
    fake = FakeEmbedder(max_batch_size=4)
    ws = Workspace(tmp_path, embedder=fake)
    ws.index_many([(f"d{i}", f"document number {i} about topic {i % 3}") for i in range(10)])
    assert fake.calls == [4, 4, 2]


def test_resync_of_unchanged_tree_embeds_nothing(tree: Path, fake_embedder: FakeEmbedder) -> None:
    ws = Workspace(tree, embedder=fake_embedder)
    first = ws.sync()
    assert first.chunks_embedded == 4
    calls = len(fake_embedder.calls)
    again = ws.sync()
    assert again.chunks_embedded == 0 and len(fake_embedder.calls) == calls
    reopened = Workspace(tree, embedder=fake_embedder)
    assert reopened.sync().chunks_embedded == 0 and len(fake_embedder.calls) == calls


def test_changed_file_reembeds_only_its_new_chunks(
    tmp_path: Path, fake_embedder: FakeEmbedder
) -> None:
    lines = [f"paragraph {i} talks about subject {i}" for i in range(400)]
    (tmp_path / "long.txt").write_text("\n".join(lines), encoding="utf-8")
    (tmp_path / "other.txt").write_text("unrelated", encoding="utf-8")
    ws = Workspace(tmp_path, embedder=fake_embedder)
    ws.sync()
    chunks_before = len(ws.chunks_of("long.txt"))
    assert chunks_before > 2
    lines[-1] = "the last paragraph changed"
    (tmp_path / "long.txt").write_text("\n".join(lines), encoding="utf-8")
    fake_embedder.calls.clear()
    report = ws.sync()
    assert report.updated == ["long.txt"]
    assert report.chunks_embedded == 1  # only the last chunk's text is new
    assert fake_embedder.texts_embedded == 1


def test_same_text_is_embedded_once(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    ws = Workspace(tmp_path, embedder=fake_embedder)
    report = ws.index_many([("a", "identical text"), ("b", "identical text")])
    assert report.chunks_embedded == 1


def test_removed_ids_leave_faiss(tree: Path, fake_embedder: FakeEmbedder) -> None:
    ws = Workspace(tree, embedder=fake_embedder)
    ws.sync()
    assert ws.stats()["vectors"] == 4
    ws.remove("docs")
    assert ws.stats()["vectors"] == 2
    assert all(
        not h.id.startswith("docs")
        for h in ws.search("guide installation faq", mode="vector", top_k=10)
    )
    reopened = Workspace(tree, embedder=fake_embedder)
    assert reopened.stats()["vectors"] == 2


def test_vector_filter_is_a_prefilter(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    ws = Workspace(tmp_path, embedder=fake_embedder)
    docs = [(f"en{i}", f"apple banana cherry {i}", {"lang": "en"}) for i in range(30)]
    docs += [(f"fr{i}", f"pomme poire {i}", {"lang": "fr"}) for i in range(5)]
    ws.index_many(docs)
    hits = ws.search("apple banana cherry", mode="vector", top_k=5, filter={"lang": "fr"})
    assert len(hits) == 5 and all(h.metadata["lang"] == "fr" for h in hits)
    hybrid = ws.search("apple", mode="hybrid", top_k=5, filter={"lang": "fr"})
    assert len(hybrid) == 5 and all(h.metadata["lang"] == "fr" for h in hybrid)


def test_vector_and_hybrid_results_carry_score_details(
    tree: Path, fake_embedder: FakeEmbedder
) -> None:
    ws = Workspace(tree, embedder=fake_embedder)
    ws.sync()
    vec = ws.search("installation guide", mode="vector")[0]
    assert set(vec.score_details) == {"vector"} and -1.0 <= vec.score <= 1.0
    hyb = ws.search("installation guide", mode="hybrid")[0]
    assert hyb.id == "docs/guide.md"
    assert {"bm25", "vector"} <= set(hyb.score_details)
    assert hyb.snippet and hyb.line_range is not None


def test_mastra_weighted_fusion_arithmetic() -> None:
    bm25 = [(1, 10.0), (2, 5.0)]  # normalised: 1 -> 1.0, 2 -> 0.0
    vector = [(1, 0.8), (2, 0.9)]
    fused = {h.key: h.score for h in weighted_fusion(bm25, vector)}
    assert fused[1] == pytest.approx(0.5 * 0.8 + 0.5 * 1.0)  # 0.9
    fused = {h.key: h.score for h in weighted_fusion(bm25, vector, vector_weight=0.7)}
    assert fused[1] == pytest.approx(0.7 * 0.8 + 0.3 * 1.0)  # 0.86
    single = weighted_fusion([(7, 3.0)], [])
    assert single[0].score == pytest.approx(0.5)  # a lone BM25 hit normalises to 1
    with pytest.raises(ValueError, match="vector_weight must be between 0 and 1"):
        weighted_fusion(bm25, vector, vector_weight=1.2)


def test_rrf_rank_arithmetic() -> None:
    fused = reciprocal_rank_fusion([(1, 9.0), (2, 3.0)], [(2, 0.9), (3, 0.5)])
    scores = {h.key: h.score for h in fused}
    assert scores[2] == pytest.approx(1 / 62 + 1 / 61)
    assert scores[1] == pytest.approx(1 / 61)
    assert scores[3] == pytest.approx(1 / 62)
    assert [h.key for h in fused] == [2, 1, 3]


def test_weighted_fusion_option_in_workspace(tree: Path, fake_embedder: FakeEmbedder) -> None:
    ws = Workspace(tree, embedder=fake_embedder, fusion="weighted", vector_weight=0.7)
    ws.sync()
    hits = ws.search("installation guide", top_k=3)
    assert all(0.0 <= h.score <= 1.0 for h in hits)


def test_model_mismatch_on_reopen_says_what_differs(tree: Path) -> None:
    Workspace(tree, embedder=FakeEmbedder(model_id="model-a")).sync()
    with pytest.raises(
        IndexMismatchError, match="embedding model differs \\(index: 'model-a', now: 'model-b'\\)"
    ):
        Workspace(tree, embedder=FakeEmbedder(model_id="model-b"))
    with pytest.raises(
        IndexMismatchError, match="embedding dimension differs \\(index: 64, now: 32\\)"
    ):
        Workspace(tree, embedder=FakeEmbedder(dimension=32, model_id="model-a"))


def test_enabling_vectors_later_backfills(tree: Path, fake_embedder: FakeEmbedder) -> None:
    Workspace(tree, embedder=None).sync()
    ws = Workspace(tree, embedder=fake_embedder)
    assert ws.search("installation", mode="vector")
    assert ws.stats()["vectors"] == 4
    assert fake_embedder.texts_embedded == 4 + 1  # the chunks, then the query


def test_hybrid_save_reopen_round_trip(tree: Path, fake_embedder: FakeEmbedder) -> None:
    ws = Workspace(tree, embedder=fake_embedder)
    ws.sync()
    before = [(h.id, round(h.score, 6)) for h in ws.search("search chunks query")]
    again = Workspace(tree, embedder=fake_embedder)
    assert [(h.id, round(h.score, 6)) for h in again.search("search chunks query")] == before


def test_langchain_style_embeddings_are_accepted(tmp_path: Path) -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding

    ws = Workspace(tmp_path, embedder=DeterministicFakeEmbedding(size=16))
    ws.index("a", "hello world")
    assert ws.search("hello world", mode="vector")[0].id == "a"
    assert ws.stats()["embedder"] == "DeterministicFakeEmbedding"


def test_dense_index_flat_and_hnsw_remove_and_filter() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(40, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(100, 140, dtype=np.int64)
    for threshold in (1000, 10):
        index = DenseIndex(8, hnsw_threshold=threshold)
        index.add(ids, vectors)
        index.wait_for_graph()
        assert index.kind == ("flat" if threshold == 1000 else "hnsw")
        assert index.search(vectors[3], k=1)[0][0] == 103
        index.remove(np.asarray([103], dtype=np.int64))
        assert 103 not in [i for i, _ in index.search(vectors[3], k=5)]
        allowed = np.asarray([110, 111], dtype=np.int64)
        assert {i for i, _ in index.search(vectors[3], k=5, allowed=allowed)} == {110, 111}
        assert len(index) == 39


def test_hnsw_removals_are_tombstones_that_survive_save(tmp_path: Path) -> None:
    from workspace_tools.core.backends.embedded.dense import read_graph
    from workspace_tools.core.backends.embedded.dense_fill import with_graph

    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(60, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = DenseIndex(8, hnsw_threshold=10)
    index.add(np.arange(60, dtype=np.int64), vectors)
    index.wait_for_graph()
    assert index.kind == "hnsw"
    index.remove(np.asarray([5, 6, 999], dtype=np.int64))  # 999 is unknown: ignored
    assert len(index) == 58
    assert index.kind == "hnsw" and index._index.ntotal == 60  # tombstoned, not rebuilt
    assert 5 not in [i for i, _ in index.search(vectors[5], k=10)]
    before = [index.search(v, k=10) for v in vectors]
    index.save(tmp_path)
    # the database's rows: every live chunk, not the tombstoned ones (their codes are saved)
    keys = np.asarray([k for k in range(60) if k not in (5, 6)], dtype=np.int64)
    codes = vectors[keys].astype("<f2").view(np.uint8)
    loaded = with_graph(
        read_graph(tmp_path, dimension=8), keys=keys, codes=codes, hnsw_threshold=10
    )
    assert len(loaded) == 58 and loaded.kind == "hnsw" and loaded.hnsw_builds == 0
    assert [loaded.search(v, k=10) for v in vectors] == before  # the same graph, the same codes
    assert 6 not in [i for i, _ in loaded.search(vectors[6], k=60)]
    loaded.remove(np.arange(0, 20, dtype=np.int64))  # past a fifth: flat, exact
    assert loaded._index.ntotal == len(loaded) == 40 and not loaded._dead
    assert {i for i, _ in loaded.search(vectors[30], k=40)} == set(range(20, 60))
