"""Workspace behaviour through each search backend: written once, run per backend (conftest).

Index, same-id replacement, remove, sync, every filter operator, every mode, ``min_score``,
persistence and reopen, changes made by another Workspace on the same index, and error paths.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.core.backends.conftest import OpenWorkspace
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.workspace import Workspace

DOCS: list[tuple[str, str, dict[str, Any]]] = [
    ("cats", "Cats purr and nap in the sun.", {"year": 2019, "lang": "en", "tags": ["pets"]}),
    ("dogs", "Dogs fetch balls in the park.", {"year": 2021, "lang": "en", "tags": ["pets", "x"]}),
    ("hunde", "Hunde spielen im Park mit Katzen.", {"year": 2023, "lang": "de"}),
    ("rust", "The borrow checker guards memory.", {"year": "unknown", "draft": True}),
    ("bare", "Plain text about gardens and the sun.", {}),
]


def _fill(ws: Workspace) -> None:
    ws.index_many(DOCS)


def _ids(ws: Workspace, query: str, **options: Any) -> list[str]:
    return [r.source_id for r in ws.search(query, top_k=10, **options)]


def _matching(ws: Workspace, conditions: dict[str, Any]) -> set[str]:
    """Sources matching a filter (a vector search ranks every chunk, so none is left out)."""
    return set(_ids(ws, "sun park memory gardens", mode="vector", filter=conditions))


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_every_mode_finds_the_indexed_text(open_ws: OpenWorkspace, mode: str) -> None:
    ws = open_ws()
    _fill(ws)
    assert len(ws) == len(DOCS)
    assert _ids(ws, "borrow checker memory", mode=mode)[0] == "rust"
    assert _ids(ws, "fetch balls", mode=mode)[0] == "dogs"


def test_bm25_returns_only_chunks_sharing_a_term_with_positive_scores(
    open_ws: OpenWorkspace,
) -> None:
    ws = open_ws()
    _fill(ws)
    results = ws.search("sun", mode="bm25")
    assert {r.source_id for r in results} == {"cats", "bare"}
    assert all(r.score > 0 for r in results)
    vector = ws.search("sun", mode="vector")
    assert all(-1.0 - 1e-5 <= r.score <= 1.0 + 1e-5 for r in vector)


def test_reindexing_an_id_replaces_its_chunks(open_ws: OpenWorkspace) -> None:
    ws = open_ws()
    _fill(ws)
    ws.index("cats", "Cats climb tall trees.", metadata={"year": 2019})
    assert len(ws) == len(DOCS)
    assert "cats" not in _ids(ws, "purr nap", mode="bm25")
    assert _ids(ws, "climb trees", mode="bm25") == ["cats"]
    assert _ids(ws, "climb trees", mode="vector")[0] == "cats"


def test_remove_drops_a_source_and_a_prefix(open_ws: OpenWorkspace) -> None:
    ws = open_ws()
    _fill(ws)
    ws.index_many([("notes/a", "zebra stripes", {}), ("notes/b", "zebra herds", {})])
    assert ws.remove("cats") == ["cats"]
    assert sorted(ws.remove("notes")) == ["notes/a", "notes/b"]
    assert "cats" not in _ids(ws, "cats purr sun", mode="hybrid")
    assert _ids(ws, "zebra", mode="bm25") == []
    assert len(ws) == len(DOCS) - 1
    assert ws.stats()["vectors"] == len(DOCS) - 1


def test_sync_follows_files_added_changed_and_deleted(open_ws: OpenWorkspace) -> None:
    ws = open_ws()
    root = ws.root
    (root / "a.md").write_text("# Alpha\nApples grow on trees.\n", encoding="utf-8")
    (root / "b.md").write_text("# Beta\nBananas grow in bunches.\n", encoding="utf-8")
    ws.sync()
    assert _ids(ws, "apples", mode="bm25") == ["a.md"]
    (root / "a.md").write_text("# Alpha\nApricots now.\n", encoding="utf-8")
    (root / "b.md").unlink()
    report = ws.sync()
    assert report.updated == ["a.md"]
    assert report.removed == ["b.md"]
    assert _ids(ws, "apples bananas", mode="bm25") == []
    assert _ids(ws, "apricots", mode="hybrid")[0] == "a.md"
    assert ws.source_ids() == ["a.md"]


FILTERS: list[tuple[dict[str, Any], set[str]]] = [
    ({"lang": "en"}, {"cats", "dogs"}),
    ({"lang": {"$eq": "de"}}, {"hunde"}),
    ({"lang": {"$ne": "en"}}, {"hunde", "rust", "bare"}),
    ({"lang": {"$in": ["de", "fr"]}}, {"hunde"}),
    ({"tags": {"$in": ["x"]}}, {"dogs"}),
    ({"lang": {"$nin": ["en"]}}, {"hunde", "rust", "bare"}),
    ({"year": {"$gt": 2019}}, {"dogs", "hunde"}),
    ({"year": {"$gte": 2021}}, {"dogs", "hunde"}),
    ({"year": {"$lt": 2021}}, {"cats"}),
    ({"year": {"$lte": 2021}}, {"cats", "dogs"}),
    ({"year": {"$gte": 2019, "$lt": 2023}}, {"cats", "dogs"}),
    ({"draft": {"$exists": True}}, {"rust"}),
    ({"lang": {"$exists": False}}, {"rust", "bare"}),
    ({"draft": True}, {"rust"}),
    ({"$or": [{"lang": "de"}, {"draft": True}]}, {"hunde", "rust"}),
    ({"$and": [{"lang": "en"}, {"year": {"$gt": 2020}}]}, {"dogs"}),
    ({"source_id": "bare"}, {"bare"}),
    ({"source_id": {"$in": ["cats", "rust"]}}, {"cats", "rust"}),
    ({"source_id": {"$nin": ["cats", "rust"]}, "lang": "en"}, {"dogs"}),
    ({"lang": {"$in": []}}, set()),
    ({"year": {"$gt": "a"}}, {"rust"}),
    # A scalar on a list-valued key matches an element (issue 29, gap 8); $ne is its negation.
    ({"tags": "x"}, {"dogs"}),
    ({"tags": {"$eq": "pets"}}, {"cats", "dogs"}),
    ({"tags": {"$ne": "x"}}, {"cats", "hunde", "rust", "bare"}),
    ({"$and": [{"tags": "pets"}, {"year": {"$lt": 2020}}]}, {"cats"}),
]


@pytest.mark.parametrize(("conditions", "expected"), FILTERS, ids=[str(f) for f, _ in FILTERS])
def test_each_filter_operator(
    open_ws: OpenWorkspace, conditions: dict[str, Any], expected: set[str]
) -> None:
    ws = open_ws()
    _fill(ws)
    assert _matching(ws, conditions) == expected


def test_filters_apply_before_ranking_in_every_mode(open_ws: OpenWorkspace) -> None:
    ws = open_ws()
    _fill(ws)
    for mode in ("bm25", "vector", "hybrid"):
        found = _ids(ws, "sun park", mode=mode, filter={"year": {"$gte": 2021}})
        assert set(found) <= {"dogs", "hunde"}
        assert "dogs" in found


def test_min_score_drops_weaker_results(open_ws: OpenWorkspace) -> None:
    ws = open_ws()
    _fill(ws)
    for mode in ("bm25", "vector", "hybrid"):
        scores = [r.score for r in ws.search("sun gardens", mode=mode)]
        cut = (scores[0] + scores[1]) / 2
        kept = ws.search("sun gardens", mode=mode, min_score=cut)
        assert len(kept) == 1
        assert kept[0].score >= cut


def test_reopen_keeps_the_index_and_sees_later_changes(open_ws: OpenWorkspace) -> None:
    ws = open_ws()
    _fill(ws)
    before = {m: _ids(ws, "sun park", mode=m) for m in ("bm25", "vector", "hybrid")}
    ws.save()
    reopened = open_ws()
    assert {m: _ids(reopened, "sun park", mode=m) for m in before} == before
    reopened.index("owls", "Owls hunt at night in the park.")
    assert "owls" in _ids(ws, "owls night", mode="bm25")  # the first one catches up
    ws.remove("dogs")
    assert "dogs" not in _ids(reopened, "fetch balls park", mode="hybrid")


def test_a_closed_workspace_catches_up_with_changes_made_meanwhile(
    open_ws: OpenWorkspace, backend: str, tmp_path: Path
) -> None:
    ws = open_ws()
    _fill(ws)
    ws._state.close()
    other = Workspace(tmp_path / "ws", embedder=ws.embedder, config=False)  # embedded
    other.remove("cats")
    other.index("owls", "Owls hunt at night.")
    again = open_ws()
    assert "cats" not in _ids(again, "cats purr sun", mode="hybrid")
    assert _ids(again, "owls night", mode="bm25") == ["owls"]
    assert again.stats()["backend"] == backend


def test_rebuild_starts_empty_and_replaces_the_index(open_ws: OpenWorkspace) -> None:
    ws = open_ws()
    _fill(ws)
    fresh = open_ws(rebuild=True)
    assert len(fresh) == 0
    assert fresh.search("sun") == []
    fresh.index("owls", "Owls hunt at night.")
    assert _ids(fresh, "owls sun", mode="bm25") == ["owls"]
    assert len(open_ws()) == 1


def test_a_bm25_only_workspace(open_ws: OpenWorkspace) -> None:
    keyword = open_ws(embedder=None)
    _fill(keyword)
    assert keyword.modes == ("bm25",)
    assert _ids(keyword, "borrow checker", mode="bm25") == ["rust"]
    assert _ids(keyword, "borrow checker", filter={"draft": True}) == ["rust"]
    assert keyword.stats()["vectors"] == 0


def test_a_vector_only_workspace(open_ws: OpenWorkspace) -> None:
    dense = open_ws(bm25=False)
    _fill(dense)
    assert dense.modes == ("vector",)
    assert _ids(dense, "borrow checker memory")[0] == "rust"
    assert dense.stats()["vectors"] == len(DOCS)


def test_a_malformed_filter_is_refused(open_ws: OpenWorkspace) -> None:
    ws = open_ws()
    _fill(ws)
    with pytest.raises(InvalidInputError, match=r"Unknown filter operator '\$regex'"):
        ws.search("sun", filter={"lang": {"$regex": "e.*"}})


def test_a_leading_slash_id_round_trips_through_filters(open_ws: OpenWorkspace) -> None:
    """Issue 29, gap 1: ``/docs/api.md`` names the source stored as ``docs/api.md``."""
    ws = open_ws()
    ws.index("/docs/api.md", "The search endpoint returns ranked hits.")
    ws.index("docs/other.md", "Another search page.")
    assert set(ws.source_ids()) == {"docs/api.md", "docs/other.md"}
    for conditions in (
        {"source_id": "/docs/api.md"},
        {"source_id": {"$eq": "/docs/api.md"}},
        {"source_id": {"$in": ["/docs/api.md"]}},
        {"$or": [{"source_id": "./docs/api.md"}]},
    ):
        assert _ids(ws, "search", mode="bm25", filter=conditions) == ["docs/api.md"]
    assert _ids(ws, "search", mode="bm25", filter={"source_id": {"$ne": "/docs/api.md"}}) == [
        "docs/other.md"
    ]
