"""Results read from the database by key (``result_chunks``): the same as full rows, checked.

The snapshot no longer keeps a second copy of every chunk text (``results.npy``); results come
from the database's fast read, cached by key in the backend.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from workspace_tools import Workspace
from workspace_tools.core.backends.embedded.snapshot import read_pointer
from workspace_tools.core.errors import IndexCorruptError

_ODD_TEXT = 'caf\u00e9 \U0001f600 nul\x00 byte\nline two \\ "quoted" end'


def _results(ws: Workspace, query: str) -> list[tuple[object, ...]]:
    return [
        (h.id, h.score, h.content, h.metadata, h.snippet, h.line_range, h.headings)
        for h in ws.search(query, mode="bm25", top_k=20)
    ]


def _fill(root: Path) -> Workspace:
    ws = Workspace(root, embedder=None)
    body = "\n".join(
        f"Paragraph {n} about install steps and caf\u00e9 \U0001f600." for n in range(30)
    )
    for number in range(12):
        ws.index(
            f"notes/n{number}.md",
            f"# Guide {number}\n\n## Install\n\n{body}\n\n## Other\n\nMore install text.\n",
            metadata={"team": f"t{number % 3}", "tags": ["a", "\u00e9"]},
        )
    ws.index("plain.txt", "install " + _ODD_TEXT)
    ws.index("meta.txt", "install here", metadata={"team": "x", "n": 2})
    ws.save()
    return ws


def test_the_fast_read_equals_the_full_rows(tmp_path: Path) -> None:
    ws = _fill(tmp_path)
    keys = [k for (k,) in ws._db.connection().execute("SELECT key FROM chunks").fetchall()]
    full = ws._db.chunks(keys)
    fast = ws._db.result_chunks([*keys, 10**9])  # an unknown key is left out
    assert sorted(fast) == sorted(full) == sorted(keys)
    for key, record in full.items():
        assert fast[key].chunk() == record.chunk()
    assert any(_ODD_TEXT in f.text for f in fast.values())
    assert any(f.headings for f in fast.values())


def test_results_from_the_fast_read_equal_results_from_full_rows(tmp_path: Path) -> None:
    _fill(tmp_path)
    reopened = Workspace(tmp_path, embedder=None)
    fast = _results(reopened, "install caf\u00e9 steps")
    assert len(fast) == 20
    assert any(r[6] for r in fast)  # headings were resolved
    assert reopened._state._results  # the results above came from the backend's read
    plain = Workspace(tmp_path, embedder=None)
    plain._follower.refresh()
    plain._state.cached_chunks = lambda keys: {}  # type: ignore[method-assign]
    assert _results(plain, "install caf\u00e9 steps") == fast


def test_the_snapshot_keeps_no_copy_of_the_texts(tmp_path: Path) -> None:
    ws = _fill(tmp_path)
    info = read_pointer(ws._db)
    assert info is not None
    names = {p.name for p in info.folder.iterdir()}
    assert not names & {"results.npy", "results_offsets.npy", "results_sources.json"}
    for path in info.folder.iterdir():
        assert b"Paragraph 7 about" not in path.read_bytes(), path.name


def test_a_damaged_row_read_for_a_result_is_refused(tmp_path: Path) -> None:
    _fill(tmp_path)
    database = tmp_path / ".workspace_tools" / "index" / "index.sqlite3"
    conn = sqlite3.connect(database)
    with conn:
        conn.execute("UPDATE chunks SET text = replace(text, 'install', 'instal!')")
    conn.close()
    with pytest.raises(IndexCorruptError, match=r"fails its checksum.*rebuild=True"):
        Workspace(tmp_path, embedder=None).search("install", mode="bm25")


def test_a_snapshot_with_the_old_payload_still_opens(tmp_path: Path) -> None:
    ws = _fill(tmp_path)
    expected = _results(ws, "install")
    info = read_pointer(ws._db)
    assert info is not None
    (info.folder / "results.npy").write_bytes(b"old payload, ignored")
    record = json.loads(ws._db.meta("snapshot") or "{}")
    record["files"]["results.npy"] = [20, "00000000"]
    with ws._db.write("test") as writer:
        writer.set_meta("snapshot", json.dumps(record))
    reopened = Workspace(tmp_path, embedder=None)
    assert _results(reopened, "install") == expected
    assert reopened._state.snapshot_version == info.version  # the snapshot was used
