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
    ws._wait_for_merge()
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
def test_a_write_loads_faiss_once_the_saved_file_lags_too_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(22)
    live: dict[str, str] = {}
    root = _saved(tmp_path, rng, live)
    monkeypatch.setattr(_merge, "DENSE_LAG", 0.0)  # any row written since makes the file lag
    ws = Workspace(root, embedder=FakeEmbedder())
    live["a.txt"] = _text(rng, 100)
    ws.index("a.txt", live["a.txt"])  # the saved file holds everything before this write
    assert ws._state.vector_count() is None
    live["b.txt"] = _text(rng, 101)
    ws.index("b.txt", live["b.txt"])  # now it lags by a row: this write loads and catches up
    assert ws._state.vector_count() == len(live)
    fresh = fresh_workspace(tmp_path, live)
    assert _rankings(ws) == _rankings(fresh)
    assert _rankings(Workspace(root, embedder=FakeEmbedder(), read_only=True)) == _rankings(fresh)


def test_a_new_index_loads_faiss_at_its_first_write(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    ws.index("a.txt", "alpha river stone\n")  # no saved FAISS file to wait for: kept in step
    assert ws._state.vector_count() == 1
