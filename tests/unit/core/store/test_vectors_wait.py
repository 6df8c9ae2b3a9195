"""Writes after opening leave FAISS unloaded while its saved file will do; nothing is lost."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from tests.support.fresh import fresh_workspace
from tests.unit.core.store.test_background_merge import merge_often  # noqa: F401
from tests.unit.core.store.test_storage_engine import _rankings, _text
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded import merge as _merge
from workspace_tools.core.backends.embedded.snapshot import read_pointer


def _saved(tmp_path: Path, rng: random.Random, live: dict[str, str]) -> Path:
    """A workspace of 40 documents, saved (its snapshot holds an HNSW graph: past 10 vectors)."""
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder(), hnsw_threshold=10)
    for number in range(40):
        live[f"d{number}.txt"] = _text(rng, number)
    ws.index_many(sorted(live.items()))
    ws.save()
    info = read_pointer(ws._db)
    assert info is not None and info.has_graph and info.dense_version == info.version
    return root


@pytest.mark.usefixtures("merge_often")
def test_writes_after_opening_leave_faiss_unloaded_until_a_vector_search(tmp_path: Path) -> None:
    rng = random.Random(21)
    live: dict[str, str] = {}
    root = _saved(tmp_path, rng, live)
    saved = read_pointer(Workspace(root, embedder=FakeEmbedder(), read_only=True)._db)
    assert saved is not None
    ws = Workspace(root, embedder=FakeEmbedder())
    for number in range(40, 70):  # 30 changes: a merge runs in the background after 25
        live[f"d{number}.txt"] = _text(rng, number)
        ws.index(f"d{number}.txt", live[f"d{number}.txt"])
    ws.remove("d3.txt")
    del live["d3.txt"]
    assert ws._state.vector_count() is None  # no write loaded FAISS
    ws._state.wait_for_background()
    info = read_pointer(ws._db)
    assert info is not None and info.version > saved.version  # the merge saved a snapshot...
    assert info.dense_version == saved.version  # ...linking the FAISS file saved before
    assert ws._state.vector_count() is None
    fresh = fresh_workspace(tmp_path, live)
    # Another process loads that file and catches up from the database...
    assert _rankings(Workspace(root, embedder=FakeEmbedder(), read_only=True)) == _rankings(fresh)
    # ...and so does this one at its first vector search.
    assert _rankings(ws) == _rankings(fresh)
    assert ws._state.vector_count() == len(ws._state) == len(live)


@pytest.mark.usefixtures("merge_often")
def test_writes_never_load_faiss_and_a_lagging_graph_is_left_out_of_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(22)
    live: dict[str, str] = {}
    root = _saved(tmp_path, rng, live)
    monkeypatch.setattr(_merge, "DENSE_LAG", 0.0)  # any row written since makes the graph lag
    ws = Workspace(root, embedder=FakeEmbedder())
    for number in range(100, 130):  # a merge after 25 changes, in the background
        live[f"n{number}.txt"] = _text(rng, number)
        ws.index(f"n{number}.txt", live[f"n{number}.txt"])
    ws._state.wait_for_background()
    assert ws._state.vector_count() is None  # no write and no merge loaded FAISS
    info = read_pointer(ws._db)
    assert info is not None and info.version > 0 and not info.has_graph  # BM25 only
    fresh = fresh_workspace(tmp_path, live)
    reopened = Workspace(root, embedder=FakeEmbedder(), read_only=True)
    assert _rankings(reopened) == _rankings(fresh)  # vectors filled from the database
    assert _rankings(ws) == _rankings(fresh)
    assert ws._state.vector_count() == len(live)


def test_a_new_index_keeps_its_vectors_from_its_first_write(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    ws.index("a.txt", "alpha river stone\n")  # nothing to load: the index starts with it
    assert ws._state.vector_count() == 1
    reopened = Workspace(tmp_path, embedder=FakeEmbedder())
    reopened.index("b.txt", "beta\n")  # an index with vectors already: not loaded by a write
    assert reopened._state.vector_count() is None
    assert reopened.search("river", mode="vector")
    assert reopened._state.vector_count() == 2
