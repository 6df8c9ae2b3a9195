"""A workspace built in one go: the rankings a workspace changed step by step must match."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace


def fresh_workspace(
    tmp_path: Path, docs: Mapping[str, str] | Iterable[tuple[str, str]]
) -> Workspace:
    """``docs`` (id -> text, or pairs in order) indexed at once into ``tmp_path / "fresh"``.

    A deferred merge of that bulk write is started and finished before it is returned.
    """
    root = tmp_path / "fresh"
    root.mkdir()
    fresh = Workspace(root, embedder=FakeEmbedder())
    fresh.index_many(sorted(docs.items()) if isinstance(docs, Mapping) else list(docs))
    fresh._state.wait_for_background()
    return fresh
