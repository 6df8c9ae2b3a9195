"""Issue 29, gaps 6 and 9: Mastra's batch embedding functions, and concurrent embedding groups."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.embedding.adapters import FunctionEmbedder, as_embedder
from workspace_tools.core.workspace import Workspace
from workspace_tools.core.workspace._ingest import embed_texts


def _vector(text: str) -> list[float]:
    return [float(len(text)), float(text.count("a")) + 1.0, 1.0]


def test_a_function_marked_batch_is_called_with_the_batch(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        assert isinstance(texts, list)
        calls.append(list(texts))
        return [_vector(t) for t in texts]

    embed.batch = True  # type: ignore[attr-defined]
    ws = Workspace(tmp_path, embedder=embed, config=False)
    ws.index_many([("a.md", "alpha apples"), ("b.md", "beta bananas"), ("c.md", "gamma")])
    assert [len(c) for c in calls if len(c) > 1] == [3]  # one call for the three chunks
    assert ws.search("alpha apples", mode="vector", top_k=1)[0].source_id == "a.md"


def test_a_batch_function_returning_a_wrong_shape_names_the_batch_form() -> None:
    def embed(texts: list[str]) -> list[float]:
        return [1.0, 2.0]  # one vector, not one per text

    embed.batch = True  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"shape \(2,\) for 3 texts; expected a function that"):
        as_embedder(embed).embed(["a", "b", "c"])


def test_an_unmarked_batch_function_is_told_about_the_batch_form() -> None:
    def embed(texts: Any) -> list[list[float]]:
        return [[1.0, 2.0] for _ in texts]  # given one string: one row per character

    with pytest.raises(ValueError, match=r"shape \(3, 2\) for one text.*mark it f\.batch = True"):
        FunctionEmbedder(embed).embed(["abc"])


class _Meeting(FakeEmbedder):
    """Each ``embed`` call waits (hang guard: 10 s) until ``parties`` calls are inside at once."""

    def __init__(self, parties: int, *, max_concurrency: int) -> None:
        super().__init__(max_batch_size=2)
        self.max_concurrency = max_concurrency
        self._barrier = threading.Barrier(parties, timeout=10)
        self._inside = 0
        self.peak = 0
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Any:
        with self._lock:
            self._inside += 1
            self.peak = max(self.peak, self._inside)
        try:
            self._barrier.wait()
        finally:
            with self._lock:
                self._inside -= 1
        return super().embed(texts)


def test_embedding_groups_run_concurrently_when_the_embedder_allows_it() -> None:
    embedder = _Meeting(2, max_concurrency=2)
    texts = {f"h{i}": f"text {i}" for i in range(8)}  # four groups of two
    vectors = embed_texts(embedder, texts, show_progress=False)
    assert embedder.peak == 2
    expected = FakeEmbedder().embed([texts[h] for h in texts])
    assert np.allclose(np.stack([vectors[h] for h in texts]), expected)


def test_embedding_functions_and_langchain_embeddings_default_to_a_few_calls_at_once() -> None:
    def embed(text: str) -> list[float]:
        return _vector(text)

    assert FunctionEmbedder(embed).max_concurrency == 4
    embed.max_concurrency = 1  # type: ignore[attr-defined]
    assert FunctionEmbedder(embed).max_concurrency == 1
