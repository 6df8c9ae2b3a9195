"""Metadata filters meet a depth and a size limit, and long ``$in``/``$nin`` lists cost a lookup.

Before: ``$and`` nested 300 deep raised a raw ``RecursionError`` (API and tool), and ``$in`` with
300,000 values over 2,000 chunks scanned the list once per chunk (7-11 s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.tools import call
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.ranking import filters
from workspace_tools.core.ranking.filters import (
    MAX_FILTER_DEPTH,
    MAX_FILTER_VALUES,
    compile_filter,
    missing,
)
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.toolkit import WorkspaceToolkit

pytestmark = pytest.mark.timeout(120)


def _nested(depth: int, leaf: dict[str, Any]) -> dict[str, Any]:
    node = leaf
    for n in range(depth - 1):
        node = {"$and" if n % 2 else "$or": [node]}
    return node


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path, embedder=None, config=False)
    workspace.index_many(
        [(f"doc{i}", f"common words {i}", {"tag": f"t{i}", "n": i}) for i in range(200)],
        show_progress=False,
    )
    return workspace


def test_deep_nesting_is_a_clear_error_in_the_api_and_the_tool(ws: Workspace) -> None:
    deep = _nested(300, {"tag": "t1"})
    with pytest.raises(InvalidInputError, match=f"more than {MAX_FILTER_DEPTH} levels deep"):
        ws.search("common", filter=deep)
    [search] = [
        t for t in WorkspaceToolkit(workspace=ws).get_tools() if t.name == "workspace_search"
    ]
    message = call(search, query="common", filter=deep)
    assert message.status == "error"
    assert f"more than {MAX_FILTER_DEPTH} levels deep" in str(message.content)
    assert "RecursionError" not in str(message.content)


def test_nesting_at_the_limit_works(ws: Workspace) -> None:
    hits = ws.search("common", filter=_nested(MAX_FILTER_DEPTH, {"tag": "t7"}))
    assert [h.source_id for h in hits] == ["doc7"]


def test_a_filter_over_the_size_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidInputError, match=f"more than {MAX_FILTER_VALUES} conditions"):
        compile_filter({"n": {"$in": list(range(MAX_FILTER_VALUES + 1))}})
    monkeypatch.setattr(filters, "MAX_FILTER_VALUES", 1_000)
    compile_filter({"$or": [{"n": i} for i in range(998)]})
    with pytest.raises(InvalidInputError, match="more than 1000 conditions and values"):
        compile_filter({"$or": [{"n": i} for i in range(1_000)]})


class _CountedTag(str):
    """A filter value that counts the equality checks made against it."""

    calls = 0

    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        type(self).calls += 1
        return str.__eq__(self, other)


@pytest.mark.parametrize("op", ["$in", "$nin"])
def test_long_in_lists_cost_one_lookup_per_chunk(ws: Workspace, op: str) -> None:
    _CountedTag.calls = 0
    values = [_CountedTag(f"v{i}") for i in range(30_000)] + [_CountedTag("t5")]
    hits = ws.search("common", top_k=300, filter={"tag": {op: values}})
    expected = ["doc5"] if op == "$in" else sorted(f"doc{i}" for i in range(200) if i != 5)
    assert sorted(h.source_id for h in hits) == expected
    # a list scan compares every chunk's value with every listed one (6,000,000 checks here)
    assert _CountedTag.calls < 10 * 200


def test_set_membership_keeps_list_semantics() -> None:
    holds = compile_filter({"v": {"$in": [1, "a", [1, 2], {"k": 1}]}})

    def check(value: Any) -> bool:
        return holds(lambda key: value if key == "v" else missing())

    assert check(1) and check(1.0) and check(True) and check("a")
    assert check([1, 2]) is True  # a list value shares a member (1)
    assert check({"k": 1}) is True and check([[1, 2]]) is True
    assert check("b") is False and check(missing()) is False and check([]) is False
    excluded = compile_filter({"v": {"$nin": [{"k": 1}, None]}})
    assert excluded(lambda key: {"k": 1}) is False
    assert excluded(lambda key: missing()) is True
