"""``Workspace.warm_up``: the dense index loaded before the first vector search needs it."""

from __future__ import annotations

from pathlib import Path

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace

_DOCS = [
    (f"d{n}.txt", f"notes {n} about cells and the samples counted on day {n}") for n in range(30)
]


def _saved(tmp_path: Path, *, embedder: FakeEmbedder | None) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=embedder, config=False)
    ws.index_many(_DOCS)
    ws.save()
    ws.close()
    return root


def test_warm_up_loads_the_dense_index_a_vector_search_then_uses(tmp_path: Path) -> None:
    root = _saved(tmp_path, embedder=FakeEmbedder())
    ws = Workspace(root, embedder=FakeEmbedder(), config=False)
    assert ws._state.vector_count() is None  # opening reads the BM25 index only
    ws.warm_up()
    assert ws._state.vector_count() == len(_DOCS)
    reference = Workspace(root, embedder=FakeEmbedder(), config=False, read_only=True)
    for mode in ("vector", "hybrid"):
        got = [h.source_id for h in ws.search("cells counted on day 7", mode=mode, top_k=5)]
        want = [h.source_id for h in reference.search("cells counted on day 7", mode=mode, top_k=5)]
        assert got == want and got[0] == "d7.txt"


def test_warm_up_embeds_what_was_indexed_without_vectors(tmp_path: Path) -> None:
    root = _saved(tmp_path, embedder=None)
    embedder = FakeEmbedder()
    ws = Workspace(root, embedder=embedder, config=False)
    ws.warm_up()
    assert sum(embedder.calls) == len(_DOCS) and ws._state.vector_count() == len(_DOCS)
    ws.warm_up()  # loaded: nothing more to do
    assert sum(embedder.calls) == len(_DOCS)


def test_without_an_embedder_warm_up_does_nothing(tmp_path: Path) -> None:
    ws = Workspace(_saved(tmp_path, embedder=None), embedder=None, config=False)
    ws.warm_up()
    assert ws._state.vector_count() is None
    assert ws.search("cells", mode="bm25", top_k=1)[0].source_id.startswith("d")


def test_warm_up_without_embedding_loads_only_the_stored_vectors(tmp_path: Path) -> None:
    root = _saved(tmp_path, embedder=None)  # no vector stored
    embedder = FakeEmbedder()
    ws = Workspace(root, embedder=embedder, config=False, read_only=True)
    ws.warm_up(embed=False)
    assert embedder.calls == [] and ws._state.vector_count() == 0
    hits = ws.search("cells counted on day 7", mode="vector", top_k=3)  # embeds them now
    assert "d7.txt" in {h.source_id for h in hits} and ws._state.vector_count() == len(_DOCS)
