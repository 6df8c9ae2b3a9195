"""DenseIndex keeps float16 vectors, builds its HNSW graph once (in the background) and still
reads float32 files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workspace_tools.core.backends.embedded.dense import DenseIndex

faiss = pytest.importorskip("faiss")


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(rows, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _inner_kind(index: DenseIndex) -> str:
    return type(faiss.downcast_index(index._index.index)).__name__


def test_a_growing_index_builds_its_hnsw_graph_once() -> None:
    vectors = _unit(50, 8, 0)
    index = DenseIndex(8, hnsw_threshold=25)
    for start in range(0, 50, 10):  # five batches; the third crosses the threshold
        index.add(np.arange(start, start + 10, dtype=np.int64), vectors[start : start + 10])
    index.wait_for_graph()
    assert index.kind == "hnsw" and _inner_kind(index) == "IndexHNSWSQ"
    assert index.hnsw_builds == 1
    assert len(index) == index._index.ntotal == 50
    assert sorted(index._all_ids().tolist()) == list(range(50))
    assert all(index.search(vectors[i], k=1)[0][0] == i for i in range(50))


def test_a_batch_that_crosses_the_threshold_is_added_once() -> None:
    vectors = _unit(30, 8, 1)
    index = DenseIndex(8, hnsw_threshold=20)
    index.add(np.arange(10, dtype=np.int64), vectors[:10])
    assert index.kind == "flat" and index.hnsw_builds == 0
    index.add(np.arange(10, 30, dtype=np.int64), vectors[10:])
    index.wait_for_graph()
    assert index.kind == "hnsw" and index.hnsw_builds == 1 and index._index.ntotal == 30
    # the vectors of both batches are the ones stored, in their ids' places
    assert np.array_equal(
        index._vectors(np.arange(30, dtype=np.int64)),
        vectors.astype(np.float16).astype(np.float32),
    )


def test_removals_past_a_fifth_rebuild_the_graph_once_more() -> None:
    vectors = _unit(40, 8, 2)
    index = DenseIndex(8, hnsw_threshold=10)
    index.add(np.arange(40, dtype=np.int64), vectors)
    index.wait_for_graph()
    index.remove(np.arange(5, dtype=np.int64))  # an eighth: tombstones only
    assert index.hnsw_builds == 1
    index.remove(np.arange(5, 12, dtype=np.int64))  # past a fifth: flat again, a graph next
    assert index.kind == "flat" and index._index.ntotal == len(index) == 28
    assert [i for i, _ in index.search(vectors[20], k=1)] == [20]
    index.wait_for_graph()
    assert index.hnsw_builds == 2 and index._index.ntotal == len(index) == 28


def test_vectors_are_kept_in_float16_rounded_as_numpy_rounds() -> None:
    # 1 + 2**-11 lies halfway between two float16 values: numpy rounds to even (1.0), FAISS's
    # own encoder rounds up. The index rounds with numpy, as the embedding cache does, so a
    # vector read back from the cache and a fresh one get the same codes.
    vector = np.full((1, 8), 0.25, dtype=np.float32)
    vector[0, 0] = 1 + 2**-11
    for threshold in (1000, 0):
        index = DenseIndex(8, hnsw_threshold=threshold)
        index.add(np.asarray([7], dtype=np.int64), vector)
        index.wait_for_graph()
        stored = index._vectors(np.asarray([7], dtype=np.int64))
        assert stored[0, 0] == 1.0
        assert np.array_equal(stored, vector.astype(np.float16).astype(np.float32))
        expected = {"flat": "IndexScalarQuantizer", "hnsw": "IndexHNSWSQ"}[index.kind]
        assert _inner_kind(index) == expected


def test_a_flat_index_saves_itself_to_be_mapped_and_a_graph_saves_no_vectors(
    tmp_path: Path,
) -> None:
    vectors = _unit(500, 64, 3)
    ids = np.arange(500, dtype=np.int64)
    flat = DenseIndex(64)
    flat.add(ids, vectors)
    (tmp_path / "flat").mkdir()
    assert flat.save(tmp_path / "flat") == ["dense.flat.faiss"]
    mapped = DenseIndex.mapped(tmp_path / "flat" / "dense.flat.faiss", dimension=64)
    assert mapped._mapped and len(mapped) == 500
    assert mapped.search(vectors[9], k=3) == flat.search(vectors[9], k=3)
    mapped.remove(ids[:1])  # a change copies the codes in first
    assert not mapped._mapped and len(mapped) == 499
    assert mapped.search(vectors[9], k=3) == flat.search(vectors[9], k=3)
    graph = DenseIndex(64, hnsw_threshold=100)
    graph.add(ids, vectors)
    (tmp_path / "graph").mkdir()
    assert graph.save(tmp_path / "graph") == ["dense.graph", "dense.ids.npy", "dense.dead.npy"]
    whole = tmp_path / "whole.faiss"
    faiss.write_index(graph._index, str(whole))
    saved = sum(p.stat().st_size for p in (tmp_path / "graph").iterdir())
    assert whole.stat().st_size - saved > 500 * 64 * 2 - 512  # less the vectors (.npy headers)
    codes = vectors.astype("<f2").tobytes()
    assert codes[:128] not in (tmp_path / "graph" / "dense.graph").read_bytes()
    assert codes[:128] in whole.read_bytes()
