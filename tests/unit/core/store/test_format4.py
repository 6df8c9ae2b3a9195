"""Format 4: the text is the one source of a chunk's terms; other formats are refused.

The database stores no terms: a follower (another process's write) and a rebuild from the
database tokenize the stored text, so they must score exactly as the writer does. An index of
an older or newer format is refused untouched, with advice to rebuild it.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from workspace_tools import Workspace
from workspace_tools.core.errors import IndexCorruptError, IndexMismatchError
from workspace_tools.core.store._rows import row_checksum
from workspace_tools.core.text.indexed import bm25_text
from workspace_tools.core.text.tokenizer import Tokenizer, TokenizerConfig

REPO = Path(__file__).resolve().parents[4]

_FORMAT3_CHUNKS = """
CREATE TABLE chunks(
    key INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, source TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, headings TEXT NOT NULL,
    levels TEXT NOT NULL, hash TEXT NOT NULL, metadata TEXT NOT NULL, text TEXT NOT NULL,
    terms TEXT NOT NULL, version INTEGER NOT NULL, checksum TEXT NOT NULL);
CREATE INDEX chunks_version ON chunks(version);
CREATE INDEX chunks_source ON chunks(source);
"""
"""The ``chunks`` table as format 3 (the release before this one) created it."""

_DOCS = {
    "guide.md": "# Guide\n\nSee [the rivers page](docs/rivers.md) about rivers and hills.\n",
    "notes.txt": "Rivers carry stones; hills keep them. parseHttpRequest handles rivers.\n",
    "more.md": "# More\n\nHills, valleys and [links](https://example.org/hills) again.\n",
    "last.txt": "The last document about valleys.\n",
}
_QUERIES = ("rivers", "hills", "docs", "example", "valleys stones", "http request")


def _database(root: Path) -> Path:
    return root / ".workspace_tools" / "index" / "index.sqlite3"


def _ranked(ws: Workspace) -> dict[str, list[tuple[str, float]]]:
    return {q: [(r.id, r.score) for r in ws.search(q, mode="bm25", top_k=10)] for q in _QUERIES}


def _built(root: Path) -> dict[str, list[tuple[str, float]]]:
    """An index of :data:`_DOCS` whose highest key was deleted; its rankings."""
    root.mkdir(parents=True, exist_ok=True)
    ws = Workspace(root, embedder=None)
    ws.index_many(list(_DOCS.items()))
    ws.index("gone.txt", "A document about rivers that is removed again.\n")
    ws.remove("gone.txt")  # the highest key given is no longer in the table
    ranked = _ranked(ws)
    del ws
    gc.collect()
    return ranked


def _to_format3(root: Path, *, tokenizer: Tokenizer | None = None) -> int:
    """Rewrite a format-4 database as format 3 wrote it; returns the highest key ever given.

    Every row gets the terms the format-3 writer stored (``terms_text`` of its indexed text) and
    its format-3 checksum (over the terms too); ``sqlite_sequence`` holds the last key given.
    """
    tokenizer = tokenizer or Tokenizer()
    conn = sqlite3.connect(_database(root))
    try:
        bases = {
            str(sid): json.loads(raw)
            for sid, raw in conn.execute("SELECT id, metadata FROM sources")
        }
        rows = conn.execute("SELECT * FROM chunks ORDER BY key").fetchall()
        (last_key,) = conn.execute("SELECT value FROM meta WHERE key='last_key'").fetchone()
        with conn:
            conn.execute("DROP TABLE chunks")
            for statement in _FORMAT3_CHUNKS.split(";"):
                if statement.strip():
                    conn.execute(statement)
            for key, *fields, version, _checksum in rows:
                own, dropped = json.loads(fields[7])
                metadata = {
                    **{k: v for k, v in bases[fields[1]].items() if k not in dropped},
                    **own,
                }
                terms = tokenizer.terms_text(bm25_text(fields[8], metadata))
                stored = [*fields, terms]
                conn.execute(
                    "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (key, *stored, version, row_checksum(*stored)),
                )
            conn.execute("UPDATE sqlite_sequence SET seq=? WHERE name='chunks'", (int(last_key),))
            conn.execute("DELETE FROM meta WHERE key='last_key'")
            conn.execute("UPDATE meta SET value='3' WHERE key='format_version'")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return int(last_key)


def _columns(root: Path) -> list[str]:
    conn = sqlite3.connect(_database(root))
    try:
        return [str(row[1]) for row in conn.execute("PRAGMA table_info(chunks)")]
    finally:
        conn.close()


def _meta(root: Path, key: str) -> str | None:
    conn = sqlite3.connect(_database(root))
    try:
        row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])
    finally:
        conn.close()


def _bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_new_index_stores_no_terms_and_no_key_sequence(tmp_path: Path) -> None:
    _built(tmp_path)
    assert "terms" not in _columns(tmp_path)
    conn = sqlite3.connect(_database(tmp_path))
    try:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name='chunks'").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()
    assert "AUTOINCREMENT" not in sql and "sqlite_sequence" not in tables
    assert _meta(tmp_path, "format_version") == "4"


def _key(ws: Workspace, source_id: str) -> int:
    return ws._db.chunks_of(source_id)[0].key


def test_chunk_keys_are_never_given_again(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    ws.index_many([("a.txt", "alpha"), ("b.txt", "beta")])
    top = _key(ws, "b.txt")
    ws.remove("b.txt")  # the highest key leaves the table
    ws.index("c.txt", "gamma")
    assert _key(ws, "c.txt") == top + 1
    ws.index("c.txt", "gamma again")  # replaced: its old key, the highest, is not given again
    assert _key(ws, "c.txt") == top + 2
    del ws
    gc.collect()
    ws = Workspace(tmp_path, embedder=None, rebuild=True)  # cleared by its first commit
    ws.index("d.txt", "delta")
    assert _key(ws, "d.txt") == top + 3


@pytest.mark.slow  # builds and rebuilds an index
def test_an_older_format_is_refused_untouched_and_rebuild_replaces_it(tmp_path: Path) -> None:
    _built(tmp_path)
    _to_format3(tmp_path)
    index = _database(tmp_path).parent
    before = _bytes(index)
    for read_only in (True, False):
        with pytest.raises(IndexMismatchError) as caught:
            Workspace(tmp_path, embedder=None, read_only=read_only).search("rivers")
        message = str(caught.value)
        assert "was written by an older release (format 3; this version reads format 4)" in message
        assert "left unchanged" in message and "rebuild=True" in message, message
        gc.collect()
        assert _bytes(index) == before  # folder included: no -wal or -shm files
    ws = Workspace(tmp_path, embedder=None, rebuild=True)
    ws.index_many(list(_DOCS.items()))
    assert _meta(tmp_path, "format_version") == "4" and "terms" not in _columns(tmp_path)
    assert ws.search("rivers", mode="bm25")


def test_a_format_1_index_is_refused_and_rebuild_removes_it(tmp_path: Path) -> None:
    index = tmp_path / ".workspace_tools" / "index"
    (index / "gen-000001").mkdir(parents=True)
    (index / "gen-000001" / "manifest.json").write_text("{}")
    (index / "CURRENT").write_text("gen-000001")
    with pytest.raises(IndexMismatchError) as caught:
        Workspace(tmp_path, embedder=None)
    assert "is in format 1, which this version does not read" in str(caught.value)
    assert "rebuild=True" in str(caught.value)
    assert sorted(p.name for p in index.iterdir()) == ["CURRENT", "gen-000001"]
    ws = Workspace(tmp_path, embedder=None, rebuild=True)
    ws.index("a.txt", "alpha")
    assert not (index / "CURRENT").exists() and not list(index.glob("gen-*"))
    assert [h.source_id for h in ws.search("alpha")] == ["a.txt"]


_WRITER = """
import json, sys
from workspace_tools import Workspace
ws = Workspace(sys.argv[1], embedder=None)
ws.index("other.md", sys.argv[2])
print(json.dumps({q: [[r.id, r.score] for r in ws.search(q, mode="bm25", top_k=10)]
                  for q in json.loads(sys.argv[3])}))
"""


def test_a_follower_scores_another_processs_chunk_exactly_as_its_writer(tmp_path: Path) -> None:
    _built(tmp_path)
    follower = Workspace(tmp_path, embedder=None)
    assert follower.search("rivers", mode="bm25")  # loaded before the other process writes
    text = "# Other\n\nRivers, [hills](https://example.org/valleys) and parseHttpRequest.\n"
    out = subprocess.run(
        [sys.executable, "-c", _WRITER, str(tmp_path), text, json.dumps(_QUERIES)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
        timeout=120,
    )
    written: dict[str, Any] = json.loads(out.stdout)
    seen = _ranked(follower)  # the other process's chunk, tokenized here from its stored text
    assert {q: [[cid, score] for cid, score in hits] for q, hits in seen.items()} == written
    assert any(cid.startswith("other.md") for cid, _ in seen["rivers"])
    assert not any(cid.startswith("other.md") for cid, _ in seen["example"])  # a link target


def test_a_follower_refuses_an_index_rebuilt_with_another_tokenizer(tmp_path: Path) -> None:
    _built(tmp_path)
    follower = Workspace(tmp_path, embedder=None)
    assert follower.search("rivers", mode="bm25")
    other = Workspace(
        tmp_path, embedder=None, rebuild=True, tokenizer=TokenizerConfig(stemmer=None)
    )
    other.index("a.txt", "running rivers")
    with pytest.raises(IndexMismatchError) as caught:
        follower.search("rivers", mode="bm25")
    message = str(caught.value)
    assert "is now tokenized with other settings" in message, message
    assert "'stemmer': None" in message and "'stemmer': 'english'" in message
    assert "rebuild=True" in message


def test_a_damaged_last_key_found_by_a_write_is_a_clear_error(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    ws.index_many([("a.txt", "alpha"), ("b.txt", "beta")])
    conn = sqlite3.connect(_database(tmp_path))
    with conn:  # damaged after this process checked the file on opening it
        conn.execute("UPDATE meta SET value='-1' WHERE key='last_key'")
    conn.close()
    with pytest.raises(IndexCorruptError) as caught:
        ws.index("c.txt", "gamma")
    message = str(caught.value)
    assert "meta 'last_key' is '-1', not a count" in message, message
    assert "rebuild=True" in message
    assert [h.id for h in ws.search("alpha", mode="bm25")] == [c.id for c in ws.chunks_of("a.txt")]


def test_a_workspace_without_bm25_does_not_tokenize_the_stored_texts(tmp_path: Path) -> None:
    from tests.support.fakes import FakeEmbedder

    writer = Workspace(tmp_path, embedder=FakeEmbedder(), bm25=False)
    writer.index_many(list(_DOCS.items()))
    reader = Workspace(tmp_path, embedder=FakeEmbedder(), bm25=False)  # rebuilt from the rows
    found = reader.search("rivers and hills", mode="vector", top_k=10)
    assert {r.id for r in found} == {r.id for r in writer.search("rivers and hills", top_k=10)}
    assert reader.tokenizer.vocab == {}  # no terms made: this workspace has no BM25 side
