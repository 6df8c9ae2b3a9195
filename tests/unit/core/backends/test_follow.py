"""The change-log follower applies this process's own writes from memory (issue 25/26)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.store.database import IndexDatabase
from workspace_tools.core.workspace import Workspace


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = IndexDatabase.changes_since

    def changes_since(self: IndexDatabase, version: int) -> Any:
        calls.append(version)
        return real(self, version)

    monkeypatch.setattr(IndexDatabase, "changes_since", changes_since)
    return calls


def _ids(ws: Workspace, query: str) -> list[str]:
    return [r.source_id for r in ws.search(query, mode="hybrid", top_k=10)]


def test_a_write_is_applied_from_memory_not_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many([("a", "apples grow on trees", {}), ("b", "bananas grow in bunches", {})])
    ws.source_ids()  # the catalogue follows too
    reads = _count_reads(monkeypatch)
    ws.index("c", "cherries grow in pairs")
    ws.remove("a")
    ws.index("b", "bananas are yellow")  # a replaced source: its old chunk leaves
    assert reads == []
    assert sorted(ws.source_ids()) == ["b", "c"]
    assert _ids(ws, "grow bananas cherries apples") == _ids(
        Workspace(tmp_path, embedder=FakeEmbedder(), config=False), "grow bananas cherries apples"
    )
    assert "a" not in _ids(ws, "apples trees")
    assert len(ws) == 2


def test_a_commit_of_another_process_in_between_is_read_from_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many([("a", "apples grow on trees", {}), ("b", "bananas grow in bunches", {})])
    ws.source_ids()
    other = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)  # another connection
    other.index("d", "dates grow on palms")
    reads = _count_reads(monkeypatch)
    ws.index("c", "cherries grow in pairs")  # its version is not ws's + 1: read the log
    assert reads
    assert sorted(ws.source_ids()) == ["a", "b", "c", "d"]
    assert _ids(ws, "dates palms")[0] == "d"
    other.remove("b")  # after ws's write: the next search sees it through data_version
    assert "b" not in _ids(ws, "bananas bunches")
    assert sorted(ws.source_ids()) == ["a", "c", "d"]
