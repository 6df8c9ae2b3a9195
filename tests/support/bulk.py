"""Bulk changes of a few dozen texts in tests: the tokenizing worker's thresholds lowered."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import pytest

from workspace_tools import Workspace
from workspace_tools.core.backends.embedded import tokenizing as token_split


def small_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change of 20 texts starts the worker (not thousands); 10 use a running one."""
    monkeypatch.setattr(token_split, "BULK_TEXTS", 20)
    monkeypatch.setattr(token_split, "WORKER_MIN_TEXTS", 10)


def opened_workspaces() -> Iterator[list[Workspace]]:
    """A fixture body: the workspaces a test appends are closed after it (their workers stop)."""
    made: list[Workspace] = []
    yield made
    for ws in made:
        ws.close()


def random_docs(
    words: Sequence[str], count: int, *, seed: int, most: int, prefix: str = "d"
) -> list[tuple[str, str]]:
    """``count`` documents ``(prefix<seed>-<n>.txt, text)`` of 3 to ``most`` seeded ``words``."""
    rng = random.Random(seed)
    return [
        (f"{prefix}{seed}-{n}.txt", " ".join(rng.choices(words, k=rng.randint(3, most))))
        for n in range(count)
    ]


def bm25_results(ws: Workspace, queries: Sequence[str]) -> list[list[tuple[str, float]]]:
    """The top 20 ``(id, score)`` of each query, BM25 mode (what two builds must agree on)."""
    return [[(r.id, r.score) for r in ws.search(q, mode="bm25", top_k=20)] for q in queries]
