"""A write adds the vectors it just stored to FAISS from memory, not read back (issue 25).

Another process's change still has its vectors read from the embedding cache, checked.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store.database import IndexDatabase
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.workspace import Workspace

pytest.importorskip("faiss")


def _vector_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """``(calling function, hashes asked)`` of every ``IndexDatabase.vectors`` call from now on."""
    calls: list[tuple[str, list[str]]] = []
    real = IndexDatabase.vectors

    def vectors(self: IndexDatabase, hashes: Iterable[str]) -> Any:
        wanted = list(hashes)
        calls.append((sys._getframe(1).f_code.co_name, wanted))
        return real(self, wanted)

    monkeypatch.setattr(IndexDatabase, "vectors", vectors)
    return calls


def _scores(ws: Workspace, query: str) -> list[tuple[str, float]]:
    return [(r.source_id, r.score) for r in ws.search(query, mode="vector", top_k=10)]


DOCS = [
    ("a", "apples grow on trees in the orchard"),
    ("b", "bananas grow in bunches on tall plants"),
    ("c", "cherries grow in pairs on small trees"),
    ("d", "dates grow on palms in the desert"),
]


def test_a_build_adds_its_own_vectors_without_reading_them_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.search("warm", mode="vector")  # FAISS loaded: writes keep it in step
    reads = _vector_reads(monkeypatch)
    ws.index_many(DOCS[:2])
    ws.index_many(DOCS[2:])
    ws.index("e", "elderberries grow in clusters")
    assert ws._state.dense is not None and len(ws._state.dense) == 5
    assert [caller for caller, _ in reads if caller == "_add_vectors"] == []
    monkeypatch.undo()
    # The codes FAISS holds are those a process filling it from the database gets: same scores.
    reopened = Workspace(tmp_path, embedder=FakeEmbedder(), config=False, read_only=True)
    for query in ("grow on trees", "bunches of bananas", "desert palms", "clusters"):
        assert _scores(ws, query) == _scores(reopened, query)


def test_a_text_whose_vector_was_cached_before_is_read_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = FakeEmbedder()
    ws = Workspace(tmp_path, embedder=embedder, config=False)
    ws.index_many(DOCS)
    ws.search("warm", mode="vector")  # FAISS loaded: writes keep it in step
    embedded = embedder.texts_embedded
    reads = _vector_reads(monkeypatch)
    ws.index("copy", DOCS[0][1])  # the same text again: its vector is in the cache, not new
    assert embedder.texts_embedded == embedded
    assert ("_add_vectors", [text_hash(DOCS[0][1])]) in reads
    top = _scores(ws, DOCS[0][1])
    assert {source for source, _ in top[:2]} == {"a", "copy"}
    assert top[0][1] == pytest.approx(top[1][1])


def test_another_processs_change_has_its_vectors_read_from_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many(DOCS[:2])
    ws.search("warm", mode="vector")  # FAISS loaded: it catches up with the other's change
    other = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)  # another connection
    other.index_many(DOCS[2:])
    reads = _vector_reads(monkeypatch)
    assert _scores(ws, "desert palms")[0][0] == "d"
    added = [hashes for caller, hashes in reads if caller == "_add_vectors"]
    assert sorted(h for hashes in added for h in hashes) == sorted(
        text_hash(text) for _, text in DOCS[2:]
    )


def test_a_damaged_vector_of_another_process_is_still_refused(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many(DOCS[:2])
    other = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    other.index("d", DOCS[3][1])
    with other._db.write("damage a vector") as writer:
        writer._conn.execute(
            "UPDATE vectors SET checksum='0000000000000000' WHERE hash=?", (text_hash(DOCS[3][1]),)
        )
    with pytest.raises(
        IndexCorruptError, match=r"damaged \(a cached vector: it fails its checksum\)"
    ):
        ws.search("desert palms", mode="vector")
