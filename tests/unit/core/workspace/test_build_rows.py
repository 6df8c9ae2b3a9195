"""A bulk build does each piece of work once (issue 25): hashes, row encodings, the final save."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from workspace_tools.core.text import hashing
from workspace_tools.core.workspace import Workspace, _writes


def _stored_hashes(ws: Workspace) -> dict[str, str]:
    with sqlite3.connect(ws._db.path) as conn:
        rows = conn.execute("SELECT id, hash, text FROM chunks").fetchall()
    conn.close()
    for _, digest, text in rows:
        assert digest == hashing.text_hash(text)
    return {cid: digest for cid, digest, _ in rows}


def test_a_one_chunk_text_is_hashed_once_for_its_source_and_its_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed: list[str] = []
    real = hashing.text_hash

    def counted(text: Any) -> str:
        hashed.append(text)
        return real(text)

    monkeypatch.setattr(_writes, "text_hash", counted)
    ws = Workspace(tmp_path, config=False)
    long = "\n".join(f"line {n} of a long text about storage engines" for n in range(200))
    ws.index_many(
        [
            ("one", "a text that is one chunk"),
            ("newline", "a text that ends with a line break\n"),  # its chunk drops the break
            ("long", long),  # several chunks: each hashed
        ]
    )
    chunks = _stored_hashes(ws)
    assert len(chunks) > 3
    assert "a text that is one chunk" not in hashed
    assert "a text that ends with a line break" in hashed  # not the text that was hashed
    assert len([t for t in hashed if t in long]) == len(chunks) - 2
