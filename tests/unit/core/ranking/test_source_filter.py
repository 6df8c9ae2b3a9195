"""``source_id`` conditions from the sorted source column select exactly what the predicate does."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.ranking.filters import Filter, compile_filter, missing
from workspace_tools.core.ranking.source_filter import SourceColumn, split_source_conditions
from workspace_tools.core.text.within import and_filters, is_within, within_filter

SOURCES = [
    "a.md",
    "src",
    "src/app.py",
    "src/app/main.py",
    "src/app/x/y.py",
    "src-old/z.py",
    "src0.txt",
    "srcapp.py",
    "docs/guides/one.md",
    "docs/guides.md",
    "Z.md",
    "é/ü.md",
    "notes/2024.md",
]


def _row_by_row(rows: list[str | None], conditions: dict[str, Any]) -> list[bool]:
    holds = compile_filter(conditions)
    absent = missing()
    return [
        source is not None and holds(lambda k, s=source: s if k == "source_id" else absent)
        for source in rows
    ]


def _by_column(rows: list[str | None], conditions: dict[str, Any]) -> list[bool]:
    parts, rest = split_source_conditions(conditions)
    assert rest is None, conditions
    column = SourceColumn(rows)
    return [bool(x) for x in column.rows(column.select(parts))]


def _random_condition(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    value: Any = rng.choice([*SOURCES, "src/", "src/\x01", "src0", "docs", "", "zz", 3, None])
    roll = rng.random()
    if depth < 2 and roll < 0.2:
        return {rng.choice(["$and", "$or"]): [_random_condition(rng, depth + 1) for _ in "ab"]}
    if roll < 0.35:
        return {"source_id": value}
    op = rng.choice(["$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists"])
    if op in {"$in", "$nin"}:
        value = rng.sample([*SOURCES, "src0", 7, "none"], k=rng.randint(0, 4))
    elif op == "$exists":
        value = rng.random() < 0.5
    ops = {op: value}
    if rng.random() < 0.3:
        ops["$lt"] = rng.choice(SOURCES)
    return {"source_id": ops}


def test_every_source_condition_selects_what_the_predicate_does() -> None:
    rng = random.Random(29)
    rows: list[str | None] = [*SOURCES, *SOURCES[:5], None]
    rng.shuffle(rows)
    for _ in range(3000):
        conditions = _random_condition(rng)
        assert _by_column(rows, conditions) == _row_by_row(rows, conditions), conditions


@pytest.mark.parametrize(
    "within", [("src",), ("src/app",), ("docs/guides", "a.md"), ("é",), ("src", "notes", "Z.md")]
)
def test_roots_ranges_select_the_sources_within(within: tuple[str, ...]) -> None:
    rows: list[str | None] = list(SOURCES)
    expected = [is_within(s, within) for s in SOURCES]
    assert _by_column(rows, within_filter(within)) == expected
    assert _by_column(rows, within_filter(within, sources=set(SOURCES))) == expected
    assert _by_column(rows, within_filter(())) == [False] * len(rows)


def test_the_source_part_splits_from_the_rest() -> None:
    roots = within_filter(("src",))
    parts, rest = split_source_conditions(and_filters({"lang": "py"}, roots))
    assert parts == [roots] and rest == {"$and": [{"lang": "py"}]}
    parts, rest = split_source_conditions({"source_id": "a.md", "lang": "py"})
    assert parts == [{"source_id": "a.md"}] and rest == {"lang": "py"}
    mixed = {"$or": [{"source_id": "a.md"}, {"lang": "py"}]}
    assert split_source_conditions(mixed) == ([], mixed)  # an $or over two keys stays whole
    assert split_source_conditions({"lang": "py"}) == ([], {"lang": "py"})


def _workspace(tmp_path: Any, n: int) -> Workspace:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    folders = ["src", "src/app", "docs", "docs/guides", "notes", "src-old"]
    ws.index_many(
        [
            (f"{folders[i % len(folders)]}/f{i}.md", f"sun park word{i % 7}", {"lang": i % 3})
            for i in range(n)
        ],
        show_progress=False,
    )
    return ws


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_a_confined_search_equals_the_row_by_row_filter(tmp_path: Any, mode: str) -> None:
    ws = _workspace(tmp_path, 120)
    ws.remove("src/f0.md")  # a dead row
    for within in (("src",), ("src/app", "notes"), ("docs/guides/f3.md",), ("nothing",)):
        for extra in (None, {"lang": {"$in": [0, 2]}}):
            conditions = within_filter(within)
            if extra is not None:
                conditions = and_filters(extra, conditions)
            found = ws.search("sun park word3", mode=mode, top_k=15, filter=conditions)
            # the same search, the filter written so no part is source-only: row by row
            slow = {"$or": [conditions, {"__never__": {"$exists": True}}]}
            assert split_source_conditions(slow)[0] == []
            reference = ws.search("sun park word3", mode=mode, top_k=15, filter=slow)
            assert [(r.id, r.score) for r in found] == [(r.id, r.score) for r in reference]
            assert all(is_within(r.source_id, within) for r in found)
            if extra is not None:
                assert all(r.metadata["lang"] in (0, 2) for r in found)


def test_a_roots_filter_runs_no_predicate_and_the_rest_only_inside(tmp_path: Any) -> None:
    ws = _workspace(tmp_path, 60)
    ws.search("sun", filter={"lang": 0})  # loads the metadata
    backend = ws._state
    calls: list[str] = []

    def counting(conditions: dict[str, Any]) -> Filter:
        real = compile_filter(conditions)

        def holds(lookup: Any) -> bool:
            calls.append(lookup("source_id"))
            return real(lookup)

        return Filter(conditions, holds)

    mask = backend.filter_mask(counting(within_filter(("src/app",))))
    assert calls == []  # the roots alone: no row evaluated in Python
    keys = backend.sparse.row_keys()
    inside = {int(k) for k in keys[mask]}
    assert inside and all(
        backend._metadata[k][1].startswith("src/app/")
        for k in inside  # type: ignore[index]
    )
    mask = backend.filter_mask(counting(and_filters({"lang": 0}, within_filter(("src/app",)))))
    assert calls and all(source.startswith("src/app/") for source in calls)
    assert len(calls) == len(inside)  # the rest of the filter ran on the rows inside only
    assert np.all(mask <= backend.filter_mask(Filter.of(within_filter(("src/app",)))))
