"""A server's background thread loads the dense index, so its first hybrid search does not wait."""

from __future__ import annotations

from pathlib import Path

from tests.support.fakes import FakeEmbedder
from tests.unit.core.workspace.test_warm_up import _DOCS, _saved
from workspace_tools import Workspace
from workspace_tools.mcp._background import Background


def test_a_server_loads_the_dense_index_in_its_background_thread(tmp_path: Path) -> None:
    ws = Workspace(_saved(tmp_path, embedder=FakeEmbedder()), embedder=FakeEmbedder(), config=False)
    background = Background(ws, sync=False, watch=False)
    background.start()
    assert background._worker is not None
    assert background._worker.wait(timeout=60) and background.last_error is None
    assert ws._state.vector_count() == len(_DOCS)


def test_a_read_only_server_embeds_nothing_in_the_background(tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    ws = Workspace(_saved(tmp_path, embedder=None), embedder=embedder, config=False, read_only=True)
    background = Background(ws, sync=True, watch=True)  # both ignored: read-only
    background.start()
    assert background._worker is not None
    assert background._worker.wait(timeout=60)
    assert background.last_error is None and embedder.calls == []
    assert ws._state.vector_count() == 0  # loaded; the first vector search embeds what it lacks
