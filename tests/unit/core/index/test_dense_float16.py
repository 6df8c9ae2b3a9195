"""DenseIndex keeps float16 vectors, builds its HNSW graph once and still reads float32 files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workspace_tools.core.index.dense import DenseIndex

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
    index.remove(np.arange(5, dtype=np.int64))  # an eighth: tombstones only
    assert index.hnsw_builds == 1
    index.remove(np.arange(5, 12, dtype=np.int64))  # past a fifth: compacted
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
        stored = index._vectors(np.asarray([7], dtype=np.int64))
        assert stored[0, 0] == 1.0
        assert np.array_equal(stored, vector.astype(np.float16).astype(np.float32))
        expected = {"flat": "IndexScalarQuantizer", "hnsw": "IndexHNSWSQ"}[index.kind]
        assert _inner_kind(index) == expected


def test_float16_file_is_about_half_a_float32_one(tmp_path: Path) -> None:
    vectors = _unit(500, 64, 3)
    ids = np.arange(500, dtype=np.int64)
    index = DenseIndex(64)
    index.add(ids, vectors)
    index.save(tmp_path / "new.faiss")
    old = faiss.IndexIDMap2(faiss.IndexFlatIP(64))
    old.add_with_ids(vectors, ids)
    faiss.write_index(old, str(tmp_path / "old.faiss"))
    ratio = (tmp_path / "new.faiss").stat().st_size / (tmp_path / "old.faiss").stat().st_size
    assert 0.5 < ratio < 0.6


@pytest.mark.parametrize("hnsw", [False, True])
def test_an_index_saved_in_float32_still_loads_and_grows(tmp_path: Path, hnsw: bool) -> None:
    vectors = _unit(40, 8, 4)
    vectors[:, 0] = 0.25 + 2**-13  # halfway between two float16 values: numpy rounds to even
    inner = faiss.IndexHNSWFlat(8, 32, faiss.METRIC_INNER_PRODUCT) if hnsw else faiss.IndexFlatIP(8)
    old = faiss.IndexIDMap2(inner)
    old.add_with_ids(vectors[:30], np.arange(30, dtype=np.int64))
    faiss.write_index(old, str(tmp_path / "dense.faiss"))

    loaded = DenseIndex.load(tmp_path / "dense.faiss", dimension=8, hnsw_threshold=35)
    assert loaded.kind == ("hnsw" if hnsw else "flat") and len(loaded) == 30
    hit, score = loaded.search(vectors[4], k=1)[0]
    assert hit == 4 and score == pytest.approx(float(vectors[4] @ vectors[4]), abs=1e-6)  # float32
    loaded.remove(np.asarray([4], dtype=np.int64))
    assert 4 not in [i for i, _ in loaded.search(vectors[4], k=5)]
    loaded.add(np.arange(30, 40, dtype=np.int64), vectors[30:])  # 39 > 35
    assert loaded.kind == "hnsw" and len(loaded) == 39
    assert loaded.search(vectors[35], k=1)[0][0] == 35
    if hnsw:  # an old graph grows as it is, and becomes float16 when it is compacted
        assert _inner_kind(loaded) == "IndexHNSWFlat"
        loaded.remove(np.arange(10, dtype=np.int64))
        assert loaded.kind == "flat"  # 29 live vectors left: below the threshold
    expected = {"flat": "IndexScalarQuantizer", "hnsw": "IndexHNSWSQ"}[loaded.kind]
    assert _inner_kind(loaded) == expected and not loaded._dead
    live = loaded._all_ids()
    # float32 vectors carried over get numpy's float16 rounding, as a build from the cache would
    assert np.array_equal(
        loaded._vectors(live), vectors[live].astype(np.float16).astype(np.float32)
    )
    assert loaded.search(vectors[35], k=1)[0][0] == 35
