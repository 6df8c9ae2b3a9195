"""Code-aware chunks through the API: a Workspace over a repository of five languages."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from tests.support.code_repo import make_code_repo
from workspace_tools.core import extras
from workspace_tools.core.errors import IndexMismatchError, MissingDependencyError
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.code_chunks import code_available
from workspace_tools.core.workspace import Workspace, _compat

pytestmark = pytest.mark.skipif(not code_available(), reason="needs the code extra")

EACH = ChunkingConfig(min_section_chars=0)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_code_repo(tmp_path / "repo")


def _symbols(ws: Workspace, source: str) -> list[object]:
    return [c.metadata.get("symbol") for c in ws.chunks_of(source)]


def test_sync_cuts_every_language_at_its_definitions(repo: Path) -> None:
    ws = Workspace(repo, embedder=None, chunking=EACH)
    ws.sync()
    assert ws.chunking.code is True  # unset, and the extra is installed: on
    assert _symbols(ws, "src/index.py") == [
        None,
        "SparseIndex",
        "SparseIndex.__init__",
        "SparseIndex.add",
        "SparseIndex.search",
        "idf",
    ]
    search = ws.chunks_of("src/index.py")[4]
    assert (search.start_line, search.end_line) == (16, 19)
    assert search.text.startswith("    def search(self, query: str)")
    assert search.metadata["symbol_kind"] == "method"
    assert "Server.Start" in _symbols(ws, "server/server.go")
    assert "Point.fmt" in _symbols(ws, "geo/point.rs")
    assert "Cart.addItem" in _symbols(ws, "shop/Cart.java")
    assert "RetryPolicy.delay" in _symbols(ws, "web/settings.ts")
    assert _symbols(ws, "README.md") == [None]  # Markdown is chunked as before


def test_a_symbol_filter_finds_a_definition_and_results_carry_it(repo: Path) -> None:
    ws = Workspace(repo, embedder=None, chunking=EACH)
    ws.sync()
    hits = ws.search("rank documents", filter={"symbol": "SparseIndex.search"})
    assert [h.id for h in hits] == ["src/index.py#chunk-4"]
    assert hits[0].metadata["symbol"] == "SparseIndex.search"
    assert hits[0].metadata["symbol_kind"] == "method"
    assert hits[0].line_range is not None and hits[0].line_range.start >= 16
    kinds = ws.search("point server cart", filter={"symbol_kind": {"$in": ["struct", "class"]}})
    assert {h.metadata["symbol"] for h in kinds} <= {"Point", "Server", "Cart", "SparseIndex"}
    assert {h.metadata["symbol"] for h in kinds} >= {"Point", "Server", "Cart"}
    assert ws.search("anything", filter={"symbol": "NoSuch.name"}) == []


def test_the_symbol_name_finds_a_method_cut_from_its_class(repo: Path) -> None:
    ws = Workspace(repo, embedder=None, chunking=EACH)
    other = Workspace(repo, embedder=None, chunking=EACH)  # follows the writes: terms from rows
    assert other.search("SparseIndex", mode="bm25") == []
    ws.sync()
    # "SparseIndex" is not in the method's text: the symbol added to its BM25 text matches
    assert ws.search("SparseIndex.search", mode="bm25")[0].id == "src/index.py#chunk-4"
    spaced = [h.id for h in ws.search("SparseIndex search", mode="bm25", top_k=2)]
    assert spaced == ["src/index.py#chunk-1", "src/index.py#chunk-4"]  # the short class first
    assert other.search("SparseIndex.search", mode="bm25")[0].id == "src/index.py#chunk-4"
    assert other.search("Server Start", mode="bm25")[0].metadata["symbol"] == "Server.Start"
    assert "Point.fmt" in [h.metadata["symbol"] for h in other.search("Point fmt", top_k=2)]


def test_the_setting_is_stored_and_a_change_is_refused(repo: Path) -> None:
    Workspace(repo, embedder=None).sync()
    with pytest.raises(IndexMismatchError, match=r"chunking settings differ .*'code': 1"):
        Workspace(repo, embedder=None, chunking=ChunkingConfig(code=False))
    again = Workspace(repo, embedder=None)  # unset: as the index was built
    assert again.chunking.code is True
    off = Workspace(repo, embedder=None, chunking=ChunkingConfig(code=False), rebuild=True)
    off.sync()
    assert _symbols(off, "src/index.py") == [None]
    assert Workspace(repo, embedder=None).chunking.code is False  # unset: the index is line-cut
    with pytest.raises(IndexMismatchError, match="chunking settings differ"):
        Workspace(repo, embedder=None, chunking=ChunkingConfig(code=True))


def test_an_index_from_before_the_setting_keeps_its_line_chunks(repo: Path) -> None:
    ws = Workspace(repo, embedder=None, chunking=ChunkingConfig(code=False))
    ws.sync()
    ws.close()
    database = repo / ".workspace_tools" / "index" / "index.sqlite3"
    with sqlite3.connect(database) as conn:  # as an older release wrote it: no "code" key
        (raw,) = conn.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
        settings = json.loads(raw)
        assert "code" not in settings["chunking"]
    reopened = Workspace(repo, embedder=None)
    assert reopened.chunking.code is False
    assert reopened.sync().changed is False
    assert _symbols(reopened, "src/index.py") == [None]


def test_without_the_extra(
    repo: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    Workspace(repo, embedder=None).sync()  # built with code chunks
    monkeypatch.setattr(extras, "_installed", lambda module: not module.startswith("tree_sitter"))
    with pytest.raises(MissingDependencyError, match=r"Install the code extra"):
        Workspace(repo, embedder=None, chunking=ChunkingConfig(code=True))
    monkeypatch.setattr(_compat, "code_available", lambda: False)
    with caplog.at_level(logging.WARNING):
        reader = Workspace(repo, embedder=None)  # searches as before, and says why
    assert "needs the code extra" in caplog.text
    first = reader.search("SparseIndex search", mode="bm25")[0]
    assert "SparseIndex.search" in first.metadata["symbol"]  # the class, packed in one chunk
    fresh = Workspace(repo, embedder=None, index_dir=repo.parent / "fresh")
    assert fresh.chunking.code is False  # a new index without the extra: cut by lines
    (repo / "workspace-tools.yaml").write_text("workspace:\n  chunking: {code: true}\n")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        filed = Workspace(repo, embedder=None)  # a project file's `code: true` never raises
    assert filed.chunking.code is True
    assert "needs the code extra" in caplog.text
