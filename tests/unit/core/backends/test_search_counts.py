"""One search catches up with the database once and compiles its filter once (issue 26)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.calls import record_first_arguments
from tests.unit.core.backends.conftest import OpenWorkspace
from workspace_tools.core.backends import base
from workspace_tools.core.ranking import filters


def _count_compilations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The filters compiled from now on, in order."""
    return record_first_arguments(monkeypatch, filters, "compile_filter")


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_one_search_refreshes_once_and_compiles_its_filter_once(
    open_ws: OpenWorkspace, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = open_ws()
    ws.index_many([(f"d{i}", f"sun and park number {i}", {"year": 2000 + i}) for i in range(30)])
    ws.index("package-lock.json", '{"sun": "park"}')  # a kind the prior weighs: a second pool
    ws.search("warm up", mode=mode)  # loads what a first search loads (vectors, metadata)
    compiled = _count_compilations(monkeypatch)
    before = ws._follower.refreshes
    results = ws.search("sun park", mode=mode, top_k=5, filter={"year": {"$gte": 2010}})
    assert results
    assert all(r.metadata["year"] >= 2010 for r in results)
    assert ws._follower.refreshes - before == 1
    assert compiled == [{"year": {"$gte": 2010}}]


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_several_formulations_refresh_once_and_compile_the_filter_once(
    open_ws: OpenWorkspace, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = open_ws()
    ws.index_many([(f"d{i}", f"sun and park number {i}", {"year": 2000 + i}) for i in range(30)])
    ws.search("warm up", mode=mode)
    compiled = _count_compilations(monkeypatch)
    before = ws._follower.refreshes
    queries = ["sun park", "park number", "sunny parks"]
    results = ws.search(queries, mode=mode, top_k=5, filter={"year": {"$gte": 2010}})
    assert results and all(r.found_by for r in results)
    assert ws._follower.refreshes - before == 1
    assert compiled == [{"year": {"$gte": 2010}}]


def test_writes_and_searches_ask_a_backend_class_for_its_capabilities_once(
    open_ws: OpenWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A protocol's ``isinstance`` costs ~12 us: decided once per backend class (issue 25)."""
    ws = open_ws()
    ws.index("a.md", "sun and park")
    ws.search("sun", mode="bm25")  # every capability the write and search paths ask, asked once
    meta = type(base.VectorBackfill)
    asked: list[type] = []
    real = meta.__instancecheck__

    def counting(cls: type, instance: Any) -> bool:
        if cls in {base.VectorBackfill, base.Compacts, base.ResultCache}:
            asked.append(cls)
        return bool(real(cls, instance))

    monkeypatch.setattr(meta, "__instancecheck__", counting)
    for number in range(3):
        ws.index(f"b{number}.md", f"sun and park {number}")
        assert ws.search("sun park", mode="bm25")
    assert asked == []
    capable = (base.backfills, base.compacts, base.caches_results)
    answers = [check(ws._state) for check in capable]
    protocols = (base.VectorBackfill, base.Compacts, base.ResultCache)
    assert answers == [real(p, ws._state) for p in protocols]
