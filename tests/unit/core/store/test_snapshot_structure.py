"""Snapshot files wrong in structure but with their checksums rewritten (issue 28, item 9).

A writer bug, or someone who also rewrites the database's snapshot record, leaves files whose
size and CRC-32 match: row ids out of range, a 2-D array, lengths that do not fit the rows, a
vocabulary of numbers. Each is refused with ``IndexCorruptError`` naming ``rebuild=True`` (it
was a raw ``IndexError``, ``ValueError``, ``JSONDecodeError`` or silently other answers).
"""

from __future__ import annotations

import gc
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded.snapshot import _digest
from workspace_tools.core.backends.embedded.snapshot_checks import BLOCKED, block_crcs
from workspace_tools.core.errors import IndexCorruptError


def _build(root: Path) -> Path:
    root.mkdir()
    for number in range(8):
        (root / f"doc{number}.md").write_text(
            f"# Doc {number}\n\nAlpha beta gamma {number}.\n\n## Part\n\n"
            + f"Searching delta epsilon marker{number}.\n" * 20,
            encoding="utf-8",
        )
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.sync()
    ws.save()
    del ws
    gc.collect()
    return next((root / ".workspace_tools" / "index").glob("snapshot-*"))


def _rewrite(snapshot: Path, name: str, change: Callable[[Path], None]) -> None:
    """Damage one file, then record its new size and CRC-32 as the writer would."""
    path = snapshot / name
    change(path)
    database = snapshot.parent / "index.sqlite3"
    conn = sqlite3.connect(database)
    with conn:
        (raw,) = conn.execute("SELECT value FROM meta WHERE key='snapshot'").fetchone()
        record = json.loads(raw)
        if name.removesuffix(".npy") in BLOCKED:
            record["files"][name][0] = path.stat().st_size
            record["blocks"][name] = block_crcs(np.load(path, allow_pickle=False))
        else:
            record["files"][name] = [path.stat().st_size, _digest(path)]
        conn.execute("UPDATE meta SET value=? WHERE key='snapshot'", (json.dumps(record),))
    conn.close()


def _edit_array(edit: Callable[[Any], Any]) -> Callable[[Path], None]:
    def change(path: Path) -> None:
        array = np.load(path, allow_pickle=False)
        np.save(path, edit(array.copy()), allow_pickle=False)

    return change


def _docs_out_of_range(docs: Any) -> Any:
    docs[0] = 10_000
    return docs


def _repeated(path: Path) -> None:
    terms = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join([terms[0], *terms[:-1]]), encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "change", "problem"),
    [
        ("docs.npy", _edit_array(_docs_out_of_range), "docs.npy does not fit the other arrays"),
        ("scores.npy", _edit_array(lambda a: a.reshape(-1, 1)), "scores.npy is float32 of shape"),
        ("lengths.npy", _edit_array(lambda a: a[:-1]), "lengths.npy does not fit"),
        ("lengths.npy", _edit_array(lambda a: a.astype(np.float64)), "lengths.npy is float64"),
        ("vocab.txt", _repeated, "the vocabulary repeats a term"),
        ("tf.npy", _edit_array(lambda a: a.astype(np.float64)), "tf.npy is float64"),
        ("scores.npy", _edit_array(lambda a: a * np.inf), "scores.npy does not fit"),
        ("keys.npy", _edit_array(lambda a: a * 0), "keys.npy does not fit"),
    ],
)
# the read-only opening of each damage runs in the full set (--full): each opens an index
@pytest.mark.parametrize("read_only", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_structurally_wrong_snapshot_files_are_refused(
    tmp_path: Path, name: str, change: Callable[[Path], None], problem: str, read_only: bool
) -> None:
    snapshot = _build(tmp_path / "ws")
    _rewrite(snapshot, name, change)
    with pytest.raises(IndexCorruptError) as caught:
        Workspace(tmp_path / "ws", embedder=FakeEmbedder(), read_only=read_only).search("alpha")
    message = str(caught.value)
    assert problem in message, message
    assert "rebuild=True" in message and "match their recorded sizes and checksums" in message
    rebuilt = Workspace(tmp_path / "ws", embedder=FakeEmbedder(), rebuild=True)
    rebuilt.sync()
    assert len(rebuilt.search("marker3", top_k=3)) == 3


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


def _search_then_write_then_search(ws: Workspace) -> None:
    """Read docs and scores (a search), then tf (a search scoring a pending change)."""
    query = "marker7 searching delta epsilon alpha beta gamma part doc"
    ws.search(query, mode="bm25")
    ws.index("new.md", "alpha beta")
    ws.search(query, mode="bm25")


@pytest.mark.parametrize("name", ["docs.npy", "tf.npy", "scores.npy"])
def test_a_damaged_block_is_refused_when_first_read(tmp_path: Path, name: str) -> None:
    """Same size, checksums not rewritten: the block's CRC-32 fails when a query reads it."""
    snapshot = _build(tmp_path / "ws")
    _flip_last_byte(snapshot / name)  # 8 small documents: every posting is in block 0
    ws = Workspace(tmp_path / "ws", embedder=FakeEmbedder())
    assert len(ws) == 8  # opened without reading the block
    with pytest.raises(IndexCorruptError) as caught:
        _search_then_write_then_search(ws)
    message = str(caught.value)
    assert f"block 0 of {name} fails its CRC-32" in message and "rebuild=True" in message, message
    rebuilt = Workspace(tmp_path / "ws", embedder=FakeEmbedder(), rebuild=True)
    rebuilt.sync()
    _search_then_write_then_search(rebuilt)


def test_open_reads_no_block_of_the_postings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _build(tmp_path / "ws")
    for name in ("docs.npy", "tf.npy", "scores.npy"):
        _flip_last_byte(snapshot / name)
    ws = Workspace(tmp_path / "ws", embedder=FakeEmbedder(), read_only=True)
    assert len(ws) == 8 * len(ws.chunks_of("doc0.md"))  # opened, nothing read yet
    checks = ws._state.sparse.base.verify
    assert checks is not None and checks.left > 0
