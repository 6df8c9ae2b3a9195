"""A bulk build does each piece of work once (issue 25): hashes, row encodings, the final save."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.support.calls import record_first_arguments
from tests.support.fakes import FakeEmbedder
from workspace_tools.core.text import hashing
from workspace_tools.core.workspace import Workspace
from workspace_tools.core.workspace import _writer as _writes


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
    hashed = record_first_arguments(monkeypatch, _writes, "text_hash")
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


def _prunes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from workspace_tools.core.store._writer import Writer

    calls: list[int] = []
    real = Writer.prune_vectors

    def counted(self: Writer) -> None:
        calls.append(self.version)
        real(self)

    monkeypatch.setattr(Writer, "prune_vectors", counted)
    return calls


def _cached_hashes(ws: Workspace) -> set[str]:
    with sqlite3.connect(ws._db.path) as conn:
        found = {row[0] for row in conn.execute("SELECT hash FROM vectors")}
    conn.close()
    return found


def test_a_build_that_only_added_does_not_look_for_unused_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prunes = _prunes(monkeypatch)
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many([(f"d{i}", f"text number {i}") for i in range(150)])
    ws.index_many([(f"e{i}", f"other text {i}") for i in range(150)])
    ws.save()
    assert prunes == []
    assert len(_cached_hashes(ws)) == 300


@pytest.mark.parametrize("change", ["remove", "replace"])
def test_a_save_after_a_removal_or_a_replacement_forgets_the_unused_vector(
    tmp_path: Path, change: str
) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many([("a", "apples grow on trees"), ("b", "bananas grow in bunches")])
    ws.save()
    if change == "remove":
        ws.remove("a")
    else:
        ws.index("a", "apricots grow in the sun")
    ws.save()
    live = {hashing.text_hash(t) for t in ("bananas grow in bunches",)}
    if change == "replace":
        live.add(hashing.text_hash("apricots grow in the sun"))
    assert _cached_hashes(ws) == live


def test_a_save_forgets_what_another_process_left_unused(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many([("a", "apples grow on trees"), ("b", "bananas grow in bunches")])
    ws.save()
    other = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    other.remove("a")  # and never saves
    ws.index("c", "cherries grow in pairs")
    ws.save()
    assert hashing.text_hash("apples grow on trees") not in _cached_hashes(ws)


def test_a_save_after_opening_forgets_vectors_left_unused_before(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many([("a", "apples grow on trees"), ("b", "bananas grow in bunches")])
    ws.save()
    with ws._db.write("a vector no chunk uses (a process that died before its save)") as writer:
        writer.put_vectors({"0" * 32: np.ones(64, dtype=np.float32)})
    reopened = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    reopened.index("c", "cherries grow in pairs")
    reopened.save()
    assert "0" * 32 not in _cached_hashes(reopened)
    assert len(_cached_hashes(reopened)) == 3


def test_an_ascii_document_makes_no_surrogate_message_and_a_broken_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workspace_tools.core.errors import InvalidInputError
    from workspace_tools.core.workspace import _ingest

    checked: list[str] = []
    real = _ingest.check_unicode

    def counted(value: str, *, what: str) -> None:
        checked.append(what)
        real(value, what=what)

    monkeypatch.setattr(_ingest, "check_unicode", counted)
    ws = Workspace(tmp_path, config=False)
    ws.index_many([(f"doc{i}", f"plain text {i}") for i in range(20)])
    assert checked == []
    ws.index("café", "crème brûlée")  # not ASCII: checked, and whole characters pass
    assert checked == ["The id 'café'", "The content of 'café'"]
    with pytest.raises(InvalidInputError, match=r"The id 'x\\ud83d' contains a lone surrogate"):
        ws.index("x\ud83d", "text")
    with pytest.raises(
        InvalidInputError, match=r"The content of 'y' contains a lone surrogate \\ud83d"
    ):
        ws.index("y", "cut \ud83d emoji")
