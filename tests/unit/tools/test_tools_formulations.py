"""Several formulations of one query: fused into one ranking, each hit says which found it,
in every mode and through workspace_search; bad lists refused."""

from __future__ import annotations

import pytest

from tests.support.tools import call, toolkit_tools
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.workspace import Workspace


def test_several_formulations_are_fused_and_each_hit_says_who_found_it(bm25_ws: Workspace) -> None:
    results = bm25_ws.search(["install package", "parseHttpRequest"], top_k=5, mode="bm25")
    by_source = {r.source_id: r for r in results}
    assert by_source["docs/guide.md"].found_by == ("install package",)
    assert by_source["src/http.py"].found_by == ("parseHttpRequest",)
    assert by_source["docs/guide.md"].to_dict()["found_by"] == ["install package"]
    alone = bm25_ws.search("install package", top_k=5, mode="bm25")
    assert alone[0].found_by == () and "found_by" not in alone[0].to_dict()
    # A hit both find ranks above hits only one finds.
    both = bm25_ws.search(["install the package", "pip install"], top_k=3, mode="bm25")
    assert both[0].source_id == "docs/guide.md"
    assert both[0].found_by == ("install the package", "pip install")
    assert both[0].score_details["q1_rank"] == 1.0 and "q2_score" in both[0].score_details
    # The snippet marks the words of every formulation.
    mixed = bm25_ws.search(["install package", "Python"], top_k=1, mode="bm25")[0]
    assert "<<install>>" in mixed.snippet and "<<Python>>" in mixed.snippet


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_several_formulations_in_every_mode(hybrid_ws: Workspace, mode: str) -> None:
    results = hybrid_ws.search(["install package", "search query chunks"], top_k=4, mode=mode)
    assert results and all(r.found_by for r in results)
    assert len({r.id for r in results}) == len(results)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (["a", "b", "c", "d", "e", "f"], "query lists 6 formulations; the limit is 5"),
        ([], "query is an empty list"),
        (["ok", 3], r"query\[1\] must be a string, got int"),
        (["ok", "x" * 10_001], r"query\[1\] is 10001 characters long; the limit is 10000"),
        (42, "query must be a string or a list of strings, got int"),
    ],
)
def test_bad_formulation_lists_are_refused(bm25_ws: Workspace, query: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        bm25_ws.search(query, top_k=3)  # type: ignore[arg-type]


def test_the_search_tool_takes_a_list_and_names_the_formulations(bm25_ws: Workspace) -> None:
    tool = toolkit_tools(bm25_ws)["workspace_search"]
    message = call(tool, query=["install package", "parseHttpRequest"], top_k=3)  # type: ignore[arg-type]
    assert message.status == "success"
    text = str(message.content)
    assert "q1 'install package'; q2 'parseHttpRequest'" in text
    assert "found by q1)" in text and "found by q2)" in text
    assert {tuple(hit["found_by"]) for hit in message.artifact} >= {("parseHttpRequest",)}
    too_many = call(tool, query=["a", "b", "c", "d", "e", "f"])  # type: ignore[arg-type]
    assert too_many.status == "error" and "at most 5 items" in str(too_many.content)
