"""``Writer.put_sources`` writes exactly the rows ``put_source`` one by one writes."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.calls import record_first_arguments
from workspace_tools import Workspace
from workspace_tools.core.store import database
from workspace_tools.core.store._writer import _frozen

TABLES = ("sources", "chunks", "removed")


def _one_by_one(self: Any, rows: Sequence[tuple[Any, Sequence[Any]]]) -> None:
    for row, chunks in rows:
        self.put_source(row, chunks)


def _history(root: Path) -> dict[str, list[tuple[Any, ...]]]:
    root.mkdir()
    ws = Workspace(root, embedder=None)
    ws.index_many(
        [(f"doc{i}.md", f"# Part {i}\n\nRivers and hills number {i}.") for i in range(30)]
    )
    ws.index_many([("doc3.md", "Replaced text."), ("new.txt", "A new text."), ("doc5.md", "")])
    ws.remove("doc2*")
    ws.index_many([("x.txt", "One more."), ("doc7.md", "# Seven\n\nAgain, with more words.")])
    ws.index_many([("y.txt", "Tagged.", {"team": "a", "n": 1}), ("z.txt", "Flag.", {"n": True})])
    ws.index_many([(f"doc{i}.md", f"Second round {i}.") for i in range(0, 30, 3)])
    ws.save()
    conn = sqlite3.connect(root / ".workspace_tools" / "index" / "index.sqlite3")
    try:
        rows = {t: conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in TABLES}
        rows["last_key"] = conn.execute("SELECT value FROM meta WHERE key='last_key'").fetchall()
        return rows
    finally:
        conn.close()


def test_the_batched_rows_equal_the_rows_written_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batched = _history(tmp_path / "batched")
    monkeypatch.setattr(database.Writer, "put_sources", _one_by_one)
    single = _history(tmp_path / "single")
    assert max(row[0] for row in batched["chunks"]) > 40  # replaced sources got new keys
    assert batched == single


def test_a_source_twice_in_one_batch_keeps_the_later_one(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    ws.index_many([("a.txt", "first rivers"), ("a.txt", "second hills")])
    assert [h.source_id for h in ws.search("hills", mode="bm25")] == ["a.txt"]
    assert ws.search("rivers", mode="bm25") == []


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ([{"n": 1}, []], [{"n": True}, []]),
        ([{"n": 0}, []], [{"n": False}, []]),
        ([1], [True]),
        ([{1: "a"}, []], [{True: "a"}, []]),
    ],
)
def test_values_with_other_json_never_share_a_memo_key(one: Any, other: Any) -> None:
    assert one == other  # equal in Python...
    with contextlib.suppress(TypeError):  # no memo at all, or...
        assert _frozen(one) != _frozen(other)  # ...other keys: they give other JSON


def test_floats_and_nested_values_are_not_memoised() -> None:
    for value in ([0.0], [-0.0], [{"x": 1.5}, []], [[1, 2]], [{"x": [1]}, []], ("a",)):
        with pytest.raises(TypeError):
            _frozen(value)


def _checksum_field_by_field(*fields: Any) -> str:
    import hashlib

    parts = [v if isinstance(v, bytes) else str(v).encode("utf-8", "surrogatepass") for v in fields]
    return hashlib.blake2b(b"\x1f".join(parts), digest_size=8).hexdigest()


@pytest.mark.parametrize(
    "fields",
    [
        ("id", "src", 1, 3, "[]", "[]", "ab12", '[{"k":1},[]]', "text é \ud800", "terms"),
        ("hash", b"\x00\xff\x1f", "a"),
        (None, 2.5, True, ""),
        (),
    ],
)
def test_row_checksums_are_the_field_by_field_ones(fields: tuple[Any, ...]) -> None:
    from workspace_tools.core.store._rows import row_checksum

    assert row_checksum(*fields) == _checksum_field_by_field(*fields)


@pytest.mark.parametrize(
    "items",
    [
        ["a.txt"],
        ["dir/é ü.md"],
        ['quo"te'],
        ["back\\slash"],
        ["line\nbreak"],
        ["tab\there"],
        ["\x7f del"],
        ["\u2028 separator"],
        ["lone \ud800 surrogate"],
        [""],
        [],
        ["a", "b"],
        [1],
        ("a",),
    ],
)
def test_a_list_of_strings_is_the_json_dumps_gives(items: Any) -> None:
    from workspace_tools.core.store._rows import dumps
    from workspace_tools.core.store._writer import _strings_json

    assert _strings_json(items) == dumps(items)


@pytest.mark.parametrize(
    "own",
    [
        {"content_kind": "prose", "format": "text"},
        {"n": 1},
        {"n": True},
        {"n": 0},
        {"n": False},
        {"n": None},
        {1: "a"},
        {True: "a"},
        {"x": 0.0},
        {"x": -0.0},
        {"x": [1, 2]},
        {"x": {"y": 1}},
        {"b": 1, "a": 2},
        {},
    ],
)
def test_chunk_metadata_json_is_the_json_dumps_gives_whatever_came_before(own: Any) -> None:
    from workspace_tools.core.store._rows import dumps
    from workspace_tools.core.store._writer import _ChunkEncoder

    encode = _ChunkEncoder()
    for earlier in ({"n": 1}, {"n": True}, {1: "a"}, {"x": 0.0}, {"b": 1, "a": 2}):
        encode._metadata_json(dict(earlier), [])  # memo entries an equal key could hit
    assert encode._metadata_json(own, []) == dumps([own, []])
    assert encode._metadata_json(own, ["dropped"]) == dumps([own, ["dropped"]])


def test_a_build_of_one_chunk_texts_encodes_its_row_json_a_few_times_not_per_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workspace_tools.core.store import _writer

    encoded = record_first_arguments(monkeypatch, _writer, "dumps")
    ws = Workspace(tmp_path, embedder=None)
    ws.index_many([(f"doc{i}.txt", f"text number {i}") for i in range(50)])
    assert len(ws) == 50
    assert len([v for v in encoded if v]) <= 2  # the shared chunk metadata, once
