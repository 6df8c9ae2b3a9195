"""The HNSW graph: built beside the writes, saved without its vectors, refused when damaged."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workspace_tools.core.backends.embedded import hnsw_build as _hnsw_build
from workspace_tools.core.backends.embedded.dense import DenseIndex, read_graph
from workspace_tools.core.backends.embedded.dense_fill import with_graph
from workspace_tools.core.background import BackgroundWorker
from workspace_tools.core.errors import IndexCorruptError

faiss = pytest.importorskip("faiss")


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(rows, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _codes(vectors: np.ndarray) -> np.ndarray:
    return vectors.astype("<f2").view(np.uint8)


def _exact(vectors: np.ndarray, ids: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    rounded = vectors.astype(np.float16).astype(np.float32)
    scores = rounded @ query
    return [int(ids[i]) for i in np.argsort(-scores, kind="stable")[:k]]


class _Gate:
    """Holds every background graph round until released; counts the rounds that started."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.release = threading.Event()
        self.started = threading.Semaphore(0)
        self.rounds = 0
        run = _hnsw_build.GraphBuild._run

        def held(build: Any) -> None:
            self.rounds += 1
            self.started.release()
            assert self.release.wait(timeout=60)  # a hang guard, not a timing
            run(build)

        monkeypatch.setattr(_hnsw_build.GraphBuild, "_run", held)
        monkeypatch.setattr(_hnsw_build, "INLINE_GRAPH_MAX", 0)  # every graph in the background


def test_crossing_the_threshold_never_waits_for_the_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    gate = _Gate(monkeypatch)
    vectors = _unit(450, 8, 0)
    ids = np.arange(1000, 1450, dtype=np.int64)
    index = DenseIndex(8, hnsw_threshold=100, background=BackgroundWorker("test-graph"))
    index.add(ids[:150], vectors[:150])  # crosses: the build starts and is held
    assert gate.started.acquire(timeout=60)
    assert index.building and index.kind == "flat"
    # writes and searches go on while the graph is held: flat, exact
    for row in range(150, 450):
        index.add(ids[row : row + 1], vectors[row : row + 1])
    index.remove(ids[:10])
    live = np.arange(10, 450)
    for q in (20, 155, 449):
        found = [i for i, _ in index.search(vectors[q], k=5)]
        assert found == _exact(vectors[live], ids[live], vectors[q], 5)
    assert index.building and index.hnsw_builds == 0 and gate.rounds == 1
    first = index._build
    assert first is not None
    gate.release.set()
    first.wait()
    # the graph of the first 150 is done: the 300 added since are more than a write inserts,
    # so the next call starts a second round on it (and still answers flat)
    assert index.search(vectors[5], k=1) and index.kind == "flat" and index.building
    index.wait_for_graph()
    assert index.kind == "hnsw" and index.hnsw_builds == 1 and gate.rounds == 2
    assert len(index) == 440 and index._index.ntotal == 440  # removed before it was copied
    assert index._dead == set()
    assert all(index.search(vectors[q], k=1)[0][0] == ids[q] for q in range(10, 450, 7))
    assert all(i >= 1010 for i, _ in index.search(vectors[3], k=20))


def test_a_few_rows_added_during_a_build_are_inserted_when_it_is_adopted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = _Gate(monkeypatch)
    vectors = _unit(130, 8, 1)
    ids = np.arange(130, dtype=np.int64)
    index = DenseIndex(8, hnsw_threshold=100, background=BackgroundWorker("test-graph"))
    index.add(ids[:120], vectors[:120])
    assert gate.started.acquire(timeout=60)
    index.add(ids[120:], vectors[120:])
    gate.release.set()
    index.wait_for_graph()
    assert gate.rounds == 1 and index.kind == "hnsw" and index._index.ntotal == 130
    assert np.array_equal(index._vectors(ids), vectors.astype(np.float16).astype(np.float32))


def test_a_failed_build_leaves_the_flat_index_answering(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(codes: np.ndarray) -> np.ndarray:
        raise RuntimeError("no graph today")

    vectors = _unit(50, 8, 2)
    index = DenseIndex(8, hnsw_threshold=10)
    monkeypatch.setattr(_hnsw_build, "codes_to_float32", broken)
    index.add(np.arange(50, dtype=np.int64), vectors)
    index.wait_for_graph()
    assert index.kind == "flat" and len(index) == 50
    assert "Building the HNSW graph failed" in caplog.text
    assert index.search(vectors[7], k=1)[0][0] == 7


def test_a_saved_graph_gets_its_storage_from_the_database_rows(tmp_path: Path) -> None:
    vectors = _unit(200, 8, 3)
    ids = np.arange(200, dtype=np.int64)
    index = DenseIndex(8, hnsw_threshold=50, background=BackgroundWorker("test-graph"))
    index.add(ids, vectors)
    index.wait_for_graph()
    index.remove(ids[:5])  # tombstones: their rows leave the database, their codes are saved
    index.save(tmp_path)
    assert np.load(tmp_path / "dense.deadcodes.npy").shape == (5, 16)
    # since the save: rows 5-9 deleted, 3 rows added (few: inserted at once)
    extra = _unit(3, 8, 4)
    keys = np.concatenate([ids[10:], [500, 501, 502]]).astype(np.int64)
    codes = np.vstack([_codes(vectors[10:]), _codes(extra)])
    loaded = with_graph(read_graph(tmp_path, dimension=8), keys=keys, codes=codes)
    assert loaded.kind == "hnsw" and len(loaded) == 193 and not loaded.building
    assert loaded._dead == set(range(10))
    assert loaded.search(extra[1], k=1)[0][0] == 501
    assert all(i >= 10 for i, _ in loaded.search(vectors[7], k=30))
    live = loaded._all_ids()[~np.isin(loaded._all_ids(), list(loaded._dead))]
    assert sorted(live.tolist()) == sorted(keys.tolist())


def test_a_saved_graph_far_behind_answers_flat_while_it_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors = _unit(700, 8, 5)
    ids = np.arange(700, dtype=np.int64)
    index = DenseIndex(8, hnsw_threshold=50, background=BackgroundWorker("test-graph"))
    index.add(ids[:300], vectors[:300])
    index.wait_for_graph()
    index.save(tmp_path)
    gate = _Gate(monkeypatch)
    loaded = with_graph(
        read_graph(tmp_path, dimension=8),
        keys=ids,
        codes=_codes(vectors),
        hnsw_threshold=50,
        background=BackgroundWorker("test-graph"),
    )
    assert gate.started.acquire(timeout=60)
    assert loaded.kind == "flat" and loaded.building and len(loaded) == 700
    assert [i for i, _ in loaded.search(vectors[650], k=3)] == _exact(vectors, ids, vectors[650], 3)
    gate.release.set()
    loaded.wait_for_graph()
    assert gate.rounds == 1 and loaded.kind == "hnsw" and loaded._index.ntotal == 700
    assert loaded.search(vectors[650], k=1)[0][0] == 650


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("graph", "vector index file"),
        ("ids", "ids for a graph of"),
        ("whole", "with its storage, not a graph alone"),
        ("dead", "tombstones do not match"),
    ],
)
def test_graph_files_that_do_not_fit_are_refused(tmp_path: Path, damage: str, message: str) -> None:
    vectors = _unit(80, 8, 6)
    index = DenseIndex(8, hnsw_threshold=20)
    index.add(np.arange(80, dtype=np.int64), vectors)
    index.wait_for_graph()
    index.remove(np.arange(3, dtype=np.int64))
    index.save(tmp_path)
    if damage == "graph":
        (tmp_path / "dense.graph").write_bytes(b"IHNs" + b"\0" * 40)
    elif damage == "ids":
        np.save(tmp_path / "dense.ids.npy", np.arange(79, dtype=np.int64))
    elif damage == "whole":
        faiss.write_index(faiss.downcast_index(index._index.index), str(tmp_path / "dense.graph"))
    else:
        np.save(tmp_path / "dense.dead.npy", np.asarray([1000], dtype=np.int64))
    with pytest.raises(IndexCorruptError, match=message) as caught:
        read_graph(tmp_path, dimension=8)
    assert "rebuilt from the database" in str(caught.value)
    if damage == "dead":
        with pytest.raises(IndexCorruptError, match="8-dimensional vectors, expected 16"):
            read_graph(tmp_path, dimension=16)
