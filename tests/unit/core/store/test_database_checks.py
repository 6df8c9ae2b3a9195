"""The database's format, tables and meta are checked before anything is written (issue 28).

Item 6: a newer format is refused, naming the writer's version, and the file stays byte for byte.
Item 7: damage the row checksums do not cover (a meta value, a dropped table) is refused with
``IndexCorruptError`` naming ``rebuild=True``, writable or read-only. Item 8: the root is recorded,
and another root given the same index folder is refused instead of emptying it.
"""

from __future__ import annotations

import gc
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from workspace_tools import Workspace
from workspace_tools.core.errors import IndexCorruptError, IndexMismatchError, WorkspaceError
from workspace_tools.core.store.database import FORMAT_VERSION


def _index(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for number in range(5):
        (root / f"doc{number}.md").write_text(
            f"# Doc {number}\n\nAlpha beta marker{number}.\n", encoding="utf-8"
        )
    ws = Workspace(root, embedder=None)
    ws.sync()
    ws.save()
    del ws
    gc.collect()
    return root / ".workspace_tools" / "index"


def _tamper(index: Path, *statements: str) -> None:
    conn = sqlite3.connect(index / "index.sqlite3")
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return _index(tmp_path / "ws")


@pytest.mark.slow  # builds and opens an index
def test_a_newer_format_is_refused_and_left_byte_identical(index: Path) -> None:
    _tamper(
        index,
        f"UPDATE meta SET value='{FORMAT_VERSION + 1}' WHERE key='format_version'",
        "UPDATE meta SET value='9.4.0' WHERE key='written_by'",
        "CREATE TABLE future_things(x)",
    )
    before = _bytes(index)
    for read_only in (False, True):
        with pytest.raises(IndexMismatchError) as caught:
            Workspace(index.parent.parent, embedder=None, read_only=read_only)
        assert "was written by a newer workspace-tools 9.4.0" in str(caught.value)
        assert "upgrade workspace-tools" in str(caught.value)
        assert "rebuild=True" in str(caught.value)  # replacing it is the other way out
        gc.collect()
        assert _bytes(index) == before


def _folder(index: Path) -> dict[str, tuple[bytes, int]]:
    """Names, bytes and mtimes of every file in the index folder."""
    return {
        p.relative_to(index).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(index.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("newer", ["format", "tokenizer rules"])
def test_a_refused_index_leaves_its_folder_as_it_was(index: Path, newer: str) -> None:
    # Issue 39: the writable open switched the file to WAL before the settings check refused
    # it, leaving index.sqlite3-wal and -shm behind while the failed workspace was alive.
    if newer == "format":
        _tamper(index, f"UPDATE meta SET value='{FORMAT_VERSION + 1}' WHERE key='format_version'")
        expected = "upgrade workspace-tools to open it"
    else:
        conn = sqlite3.connect(index / "index.sqlite3")
        (raw,) = conn.execute("SELECT value FROM meta WHERE key='settings'").fetchone()
        settings = json.loads(raw)
        settings["tokenizer"]["rules"] = settings["tokenizer"].get("rules", 1) + 1
        with conn:
            conn.execute("UPDATE meta SET value=? WHERE key='settings'", (json.dumps(settings),))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        expected = "tokenizer rules differ"
    (index / "unindexed.json").unlink()  # an index a sync never wrote the list for
    before = _folder(index)
    for read_only in (False, True):
        with pytest.raises(WorkspaceError) as caught:
            Workspace(index.parent.parent, embedder=None, read_only=read_only)
        assert expected in str(caught.value)
        if newer != "format":
            assert "rebuild=True" in str(caught.value)
        assert _folder(index) == before  # while the refused workspace is still referenced
    del caught
    gc.collect()
    assert _folder(index) == before


def test_commits_record_the_writer_version(index: Path) -> None:
    conn = sqlite3.connect(index / "index.sqlite3")
    (written_by,) = conn.execute("SELECT value FROM meta WHERE key='written_by'").fetchone()
    conn.close()
    assert written_by and written_by[0].isdigit()


@pytest.mark.slow  # 22 damaged indexes, each built and opened (~0.7 s each)
@pytest.mark.parametrize(
    ("statement", "problem"),
    [
        ("UPDATE meta SET value='-5' WHERE key='version'", "meta 'version' is '-5', not a count"),
        ("UPDATE meta SET value='x' WHERE key='horizon'", "meta 'horizon' is 'x', not a count"),
        ("UPDATE meta SET value='{' WHERE key='settings'", "meta 'settings' is not a JSON object"),
        ("UPDATE meta SET value='[1]' WHERE key='settings'", "meta 'settings' is not a JSON"),
        ("UPDATE meta SET value='two' WHERE key='format_version'", "its format version is 'two'"),
        ("DELETE FROM meta WHERE key='database_id'", "meta 'database_id' is missing"),
        ("UPDATE meta SET value='k' WHERE key='last_key'", "meta 'last_key' is 'k', not a count"),
        ("DELETE FROM meta WHERE key='last_key'", "meta 'last_key' is None, not a count"),
        ("DROP TABLE chunks", "table chunks is missing"),
        ("DROP TABLE vectors", "table vectors is missing"),
        ("DROP TABLE meta", "the meta table is missing"),
    ],
)
@pytest.mark.parametrize("read_only", [False, True])
def test_damage_the_checksums_miss_is_refused(
    tmp_path: Path, index: Path, statement: str, problem: str, read_only: bool
) -> None:
    _tamper(index, statement)
    before = _bytes(index)
    with pytest.raises(IndexCorruptError) as caught:
        Workspace(index.parent.parent, embedder=None, read_only=read_only).search("alpha")
    message = str(caught.value)
    assert problem in message and "rebuild=True" in message, message
    gc.collect()
    assert _bytes(index) == before  # no table recreated, nothing written
    rebuilt = Workspace(index.parent.parent, embedder=None, rebuild=True)
    rebuilt.sync()
    assert len(rebuilt.search("alpha")) == 5


def test_another_root_with_the_same_index_dir_is_refused(tmp_path: Path) -> None:
    first, second, shared = tmp_path / "first", tmp_path / "second", tmp_path / "shared-index"
    for root, word in ((first, "alpha"), (second, "beta")):
        root.mkdir()
        (root / f"{word}.md").write_text(f"# {word}\n\n{word} text.\n", encoding="utf-8")
    ws = Workspace(first, embedder=None, index_dir=shared)
    ws.sync()
    ws.save()
    for read_only in (False, True):
        with pytest.raises(IndexMismatchError) as caught:
            Workspace(second, embedder=None, index_dir=shared, read_only=read_only)
        message = str(caught.value)
        assert f"belongs to the workspace root {first.resolve()}, not {second.resolve()}" in (
            message
        )
    again = Workspace(first, embedder=None, index_dir=shared)
    assert again.source_ids() == ["alpha.md"]
    replaced = Workspace(second, embedder=None, index_dir=shared, rebuild=True)
    replaced.sync()
    assert replaced.source_ids() == ["beta.md"]


def test_a_project_moved_with_its_index_still_opens(tmp_path: Path, index: Path) -> None:
    moved = tmp_path / "moved"
    shutil.move(index.parent.parent, moved)
    ws = Workspace(moved, embedder=None)
    assert len(ws.search("alpha")) == 5
    copy = tmp_path / "copy"
    shutil.copytree(moved, copy)
    assert len(Workspace(copy, embedder=None).search("alpha")) == 5
