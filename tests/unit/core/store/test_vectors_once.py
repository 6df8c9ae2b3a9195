"""Each vector is stored once: in the database's embedding cache (snapshots keep the HNSW graph
without its vectors), and the graph is built beside the writes, never inside one."""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from tests.support.fresh import fresh_workspace
from tests.unit.core.store.test_storage_engine import _rankings, _text
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded import hnsw_build as _hnsw_build
from workspace_tools.core.backends.embedded.snapshot import read_pointer

pytest.importorskip("faiss")


def _built(root: Path, count: int, *, threshold: int) -> tuple[Workspace, dict[str, str]]:
    root.mkdir()
    rng = random.Random(count)
    live = {f"d{n}.txt": _text(rng, n) for n in range(count)}
    ws = Workspace(root, embedder=FakeEmbedder(), hnsw_threshold=threshold)
    ws.index_many(sorted(live.items()))
    ws.save()
    return ws, live


def _codes(db: Path) -> list[bytes]:
    """The float16 bytes of every cached vector (the tag byte dropped)."""
    with sqlite3.connect(db) as conn:
        blobs = [row[0] for row in conn.execute("SELECT vector FROM vectors")]
    conn.close()
    return [bytes(blob[1:]) for blob in blobs]


def _held_graph(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Every graph round waits (in its thread) until released; ``started`` is set when one does."""
    started, release = threading.Event(), threading.Event()
    run = _hnsw_build.GraphBuild._run

    def held(build: Any) -> None:
        started.set()
        assert release.wait(timeout=60)  # a hang guard
        run(build)

    monkeypatch.setattr(_hnsw_build.GraphBuild, "_run", held)
    monkeypatch.setattr(_hnsw_build, "INLINE_GRAPH_MAX", 0)
    return started, release


def _held_graph_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Workspace, Path, threading.Event, threading.Event]:
    """A workspace whose graph (above 20 vectors) is held in its round: see :func:`_held_graph`."""
    started, release = _held_graph(monkeypatch)
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder(), hnsw_threshold=20)
    ws.search("warm", mode="vector")  # this process holds FAISS: its writes grow the graph
    return ws, root, started, release


@pytest.mark.parametrize("threshold", [50_000, 10])
def test_a_graph_keeps_no_copy_of_the_vectors_and_a_flat_index_one_to_map(
    tmp_path: Path, threshold: int
) -> None:
    ws, live = _built(tmp_path / "ws", 60, threshold=threshold)
    info = read_pointer(ws._db)
    assert info is not None and info.has_graph == (threshold == 10)
    codes = _codes(ws._db.path)
    assert len(codes) == 60
    database = ws._db.path.read_bytes() + ws._db.path.with_name("index.sqlite3-wal").read_bytes()
    assert all(code in database for code in codes)
    snapshot = b"".join(p.read_bytes() for p in info.folder.iterdir())
    kept = [code[:32] in snapshot for code in codes]
    assert all(kept) if threshold != 10 else not any(kept)  # a flat index's file maps them
    names = {p.name for p in info.folder.iterdir()}
    assert ("dense.graph" in names) == (threshold == 10)
    assert ("dense.flat.faiss" in names) == (threshold != 10)
    reopened = Workspace(tmp_path / "ws", embedder=FakeEmbedder(), read_only=True)
    assert _rankings(reopened) == _rankings(fresh_workspace(tmp_path, live))
    assert reopened._state.dense is not None
    assert reopened._state.dense.kind == ("hnsw" if threshold == 10 else "flat")


def test_a_damaged_graph_file_is_refused_with_a_clear_message_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ws, live = _built(tmp_path / "ws", 60, threshold=10)
    info = read_pointer(ws._db)
    assert info is not None and info.has_graph
    graph = info.folder / "dense.graph"
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte, the same size
    graph.write_bytes(bytes(data))
    reopened = Workspace(tmp_path / "ws", embedder=FakeEmbedder(), hnsw_threshold=10)
    with caplog.at_level(logging.WARNING):
        assert _rankings(reopened) == _rankings(fresh_workspace(tmp_path, live))
    assert f"Snapshot file {graph} is unusable (hash differs); rebuilding it" in caplog.text
    dense = reopened._state.dense
    assert dense is not None and dense.kind == "hnsw" and dense.hnsw_builds == 1  # rebuilt
    reopened.index("new.txt", "alpha river stone")
    reopened.save()
    saved = read_pointer(reopened._db)
    assert saved is not None and saved.has_graph and saved.folder != info.folder


def test_a_write_that_crosses_the_threshold_does_not_wait_for_the_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, root, started, release = _held_graph_workspace(tmp_path, monkeypatch)
    rng = random.Random(1)
    live: dict[str, str] = {}
    for number in range(40):  # the 21st crosses: the graph is held in its thread
        live[f"d{number}.txt"] = _text(rng, number)
        ws.index(f"d{number}.txt", live[f"d{number}.txt"])
    dense = ws._state.dense
    assert started.is_set() and not release.is_set()  # every write returned while it was held
    assert dense is not None and dense.building and dense.kind == "flat"
    fresh = fresh_workspace(tmp_path, live)
    assert _rankings(ws) == _rankings(fresh)  # the flat index answers meanwhile, exactly
    release.set()
    ws.save()  # waits for the graph and saves it
    assert dense.kind == "hnsw" and not dense.building
    info = read_pointer(ws._db)
    assert info is not None and info.has_graph
    assert _rankings(Workspace(root, embedder=FakeEmbedder(), read_only=True)) == _rankings(fresh)


def test_a_process_that_stops_mid_build_leaves_a_usable_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, root, started, release = _held_graph_workspace(tmp_path, monkeypatch)
    rng = random.Random(2)
    live = {f"d{n}.txt": _text(rng, n) for n in range(40)}
    ws.index_many(sorted(live.items()))
    assert started.wait(timeout=60)
    # Another process opens it now (this one never finishes its graph): the vectors are all in
    # the database, and it answers from them.
    other = Workspace(root, embedder=FakeEmbedder(), read_only=True)
    monkeypatch.setattr(_hnsw_build, "INLINE_GRAPH_MAX", 1000)
    fresh = fresh_workspace(tmp_path, live)
    assert _rankings(other) == _rankings(fresh)
    release.set()  # the held thread ends (this test stops what it started)
    dense = ws._state.dense
    assert dense is not None
    dense.wait_for_graph()


def test_another_process_sees_the_vectors_a_writer_added(tmp_path: Path) -> None:
    ws, live = _built(tmp_path / "ws", 30, threshold=10)
    reader = Workspace(tmp_path / "ws", embedder=FakeEmbedder(), read_only=True)
    assert reader.search("alpha", mode="vector")  # the reader's vectors are loaded (a graph)
    rng = random.Random(7)
    for number in range(30, 45):
        live[f"d{number}.txt"] = _text(rng, number)
        ws.index(f"d{number}.txt", live[f"d{number}.txt"])
    ws.remove("d3.txt")
    del live["d3.txt"]
    assert _rankings(reader) == _rankings(fresh_workspace(tmp_path, live))
    dense = reader._state.dense
    assert dense is not None and len(dense) == len(live)
    assert np.isin(np.asarray(sorted(dense._dead), dtype=np.int64), dense._all_ids()).all()


def test_chunks_sharing_a_text_and_chunks_without_a_vector_are_read_right(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.index_many([("a.txt", "alpha river stone"), ("b.txt", "alpha river stone")])
    ws.index_many([("c.txt", "harbor lantern cloud"), ("d.txt", "zeta psi tau")])
    ws.save()
    with sqlite3.connect(ws._db.path) as conn:  # as if d.txt was indexed before vectors
        digest = conn.execute("SELECT hash FROM chunks WHERE source='d.txt'").fetchone()[0]
        conn.execute("DELETE FROM vectors WHERE hash=?", (digest,))
    conn.close()
    for flat in ws.index_dir.glob("snapshot-*/dense.flat.faiss"):
        flat.unlink()  # so the vectors are read from the database, where d.txt has none
    embedder = FakeEmbedder()
    reopened = Workspace(root, embedder=embedder)
    hits = reopened.search("alpha river stone", mode="vector", top_k=4)
    assert embedder.texts_embedded == 2  # the query, and d.txt's chunk (pending, embedded once)
    assert {h.source_id for h in hits[:2]} == {"a.txt", "b.txt"}
    assert hits[0].score == pytest.approx(hits[1].score)
    assert reopened.search("zeta psi tau", mode="vector", top_k=1)[0].source_id == "d.txt"
    dense = reopened._state.dense
    assert dense is not None and len(dense) == 4
