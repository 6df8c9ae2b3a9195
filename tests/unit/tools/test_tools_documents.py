"""search_documents: all2md's contract in keyword and grep modes, caps, paths, errors."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from tests.support.paths import MIXED, missing
from tests.support.pdfs import write_two_column_pdf
from tests.support.tools import acall, call, toolkit_tools
from workspace_tools.core.convert import Converted
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.search_documents import SearchDocumentsTool

RESULT_KEYS = {"snippet", "score", "document_path", "section_heading", "chunk_id", "line"}


def test_keyword_syncs_unindexed_files_first_when_asked(empty_ws: Workspace) -> None:
    # by default keyword search leaves the index alone and says what is not indexed
    plain = call(SearchDocumentsTool(workspace=empty_ws), query="install package")
    assert plain.status == "success"
    assert plain.artifact["results"] == []
    assert "file(s) in scope are not indexed" in plain.artifact["notes"][0]
    assert empty_ws.source_ids() == []
    message = call(SearchDocumentsTool(workspace=empty_ws, auto_sync=True), query="install package")
    assert message.status == "success"
    assert message.content.startswith("1. docs/guide.md:5-7 › Installation (score ")
    artifact = message.artifact
    assert artifact["mode"] == "bm25"
    assert artifact["total"] == len(artifact["results"]) >= 1
    first = artifact["results"][0]
    assert set(first) >= RESULT_KEYS
    assert first["document_path"] == "docs/guide.md"
    assert first["section_heading"] == "Installation"
    assert first["line"] == 5
    assert "<<install>>" in first["snippet"]
    assert "docs/guide.md" in empty_ws.source_ids()


def test_keyword_restricted_to_paths(bm25_ws: Workspace) -> None:
    tool = SearchDocumentsTool(workspace=bm25_ws)
    everywhere = call(tool, query="keyword search query").artifact["results"]
    assert {r["document_path"] for r in everywhere} == {"docs/guide.md", "docs/faq.md"}
    only_faq = call(tool, query="keyword search query", paths=["docs/faq.md"]).artifact["results"]
    assert {r["document_path"] for r in only_faq} == {"docs/faq.md"}
    globbed = call(tool, query="keyword search query", paths=["docs/g*.md", "src"]).artifact
    assert {r["document_path"] for r in globbed["results"]} == {"docs/guide.md"}


def test_keyword_top_k(bm25_ws: Workspace) -> None:
    artifact = call(
        SearchDocumentsTool(workspace=bm25_ws), query="keyword search", top_k=1
    ).artifact
    assert artifact["total"] == 1


def test_keyword_read_only_notes_unindexed_files(tree: Path, empty_ws: Workspace) -> None:
    empty_ws.sync(["docs/faq.md"])
    ro = Workspace(tree, embedder=None, index_dir=empty_ws.index_dir, read_only=True)
    message = call(SearchDocumentsTool(workspace=ro), query="install", paths=["docs"])
    assert message.artifact["results"] == []
    assert "1 file(s) in scope are not indexed" in message.content
    assert "mode='grep'" in message.content


def test_grep_lines_context_and_contract(bm25_ws: Workspace) -> None:
    message = call(
        SearchDocumentsTool(workspace=bm25_ws),
        query="install",
        mode="grep",
        ignore_case=True,
        context_lines=1,
        paths=["docs"],
    )
    lines = message.content.splitlines()
    assert lines[:5] == [
        "docs/guide.md-4- ",
        "docs/guide.md:5:4 › Installation: ## <<Install>>ation",
        "docs/guide.md-6- ",
        "docs/guide.md:7:9 › Installation: Run pip <<install>> to <<install>> the package.",
        "docs/guide.md:8:1 › Installation: <<Install>>ing needs Python.",
    ]
    artifact = message.artifact
    assert artifact["mode"] == "grep"
    assert artifact["total"] == 3
    first = artifact["results"][0]
    assert set(first) >= RESULT_KEYS
    assert first["chunk_id"] == "docs/guide.md#L5"
    assert first["section_heading"] == "Installation"
    assert first["before"] == [[4, ""]]


def test_grep_literal_regex_and_hint(bm25_ws: Workspace) -> None:
    tool = SearchDocumentsTool(workspace=bm25_ws)
    literal = call(tool, query=r"parse\w+", mode="grep")
    assert literal.artifact["results"] == []
    assert "pass regex=true" in literal.content
    regex = call(tool, query=r"parse\w+", mode="grep", regex=True)
    assert regex.artifact["results"][0]["snippet"] == "def <<parseHttpRequest>>(raw):"
    assert regex.artifact["results"][0]["document_path"] == "src/http.py"


def test_grep_cap_says_narrow_the_search(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.txt").write_text("hit\n" * 20, encoding="utf-8")
    ws = Workspace(root, embedder=None, index_dir=tmp_path / "i")
    message = call(SearchDocumentsTool(workspace=ws), query="hit", mode="grep", top_k=5)
    assert message.artifact["total"] == 5
    assert message.artifact["truncated"] is True
    assert (
        "Showing the first 5 matching lines; there are more. Narrow the search" in message.content
    )


def test_bad_regex_error_shows_the_message(bm25_ws: Workspace) -> None:
    message = call(SearchDocumentsTool(workspace=bm25_ws), query="([a-", mode="grep", regex=True)
    assert message.status == "error"
    assert message.content.startswith(
        "Invalid regular expression '([a-': unterminated character set"
    )


def test_unsupported_mode(bm25_ws: Workspace) -> None:
    message = call(SearchDocumentsTool(workspace=bm25_ws), query="x", mode="vector")
    assert message.status == "error"
    assert (
        "Unsupported search mode 'vector': search_documents supports 'bm25' (alias "
        in message.content
    )


@pytest.mark.parametrize("mode", ["keyword", "grep"])
def test_paths_outside_the_allowed_root(
    bm25_ws: Workspace, tree: Path, tmp_path: Path, mode: str
) -> None:
    tool = SearchDocumentsTool(workspace=bm25_ws)
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "s.md").write_text("secret", encoding="utf-8")
    dotdot = call(tool, query="secret", mode=mode, paths=["../outside"])
    assert dotdot.status == "error"
    assert "is outside the workspace root" in dotdot.content
    absolute = call(tool, query="secret", mode=mode, paths=[str(outside)])
    assert "is outside the workspace root" in absolute.content
    if not (tree / "out").exists():
        os.symlink(outside, tree / "out")
    link = call(tool, query="secret", mode=mode, paths=["out/s.md"])
    assert link.status == "error"
    assert "through a symbolic link" in link.content


def test_missing_path_and_empty_dir(bm25_ws: Workspace, tree: Path) -> None:
    tool = SearchDocumentsTool(workspace=bm25_ws)
    assert call(tool, query="x", paths=["nope"]).content.startswith("No file or folder 'nope'")
    (tree / "empty").mkdir()
    assert call(tool, query="x", paths=["empty"], mode="grep").content.startswith(
        "No readable files in 'empty'"
    )


async def test_async_both_modes(bm25_ws: Workspace) -> None:
    tool = SearchDocumentsTool(workspace=bm25_ws)
    assert (await acall(tool, query="install")).artifact["total"] >= 1
    assert (await acall(tool, query="install", mode="grep")).artifact["total"] == 1


@pytest.mark.skipif(not MIXED.is_dir(), reason=missing(MIXED))
def test_both_modes_find_the_section_in_pdf_and_docx(tmp_path: Path) -> None:
    pytest.importorskip("pdfminer")
    pytest.importorskip("docx")
    root = tmp_path / "docs"
    root.mkdir()
    for name in ("basic.pdf", "basic.docx"):
        shutil.copyfile(MIXED / "all2md" / name, root / name)
    ws = Workspace(root, embedder=None, index_dir=tmp_path / "i")
    ws.sync()  # keyword mode searches the index as it is (it never syncs by itself)
    tool = SearchDocumentsTool(workspace=ws)
    keyword = call(tool, query="hyperlink would be cool").artifact["results"]
    assert {r["document_path"] for r in keyword[:2]} == {"basic.pdf", "basic.docx"}
    assert {r["section_heading"] for r in keyword[:2]} == {"First Section Heading"}
    grep = call(tool, query="hyperlink would be cool", mode="grep").artifact["results"]
    assert [(r["document_path"], r["section_heading"]) for r in grep] == [
        ("basic.docx", "First Section Heading"),
        ("basic.pdf", "First Section Heading"),
    ]


def test_grep_reads_the_conversions_sync_stored(tree: Path, tmp_path: Path) -> None:
    page = tree / "docs" / "page.html"
    page.write_bytes(b"<html><body><p>converted by sync</p></body></html>")
    ws = Workspace(tree, embedder=None, index_dir=tmp_path / "index-html")
    ws.sync()
    tool = SearchDocumentsTool(workspace=ws)
    found = call(tool, query="converted by sync", mode="grep").artifact["results"]
    assert [r["document_path"] for r in found] == ["docs/page.html"]
    # Grep takes the stored conversion instead of converting again: replace the stored text.
    digest = text_hash(page.read_bytes())
    assert ws.conversion_cache.get(digest) is not None
    ws.conversion_cache.put(
        digest, Converted(text="text from the cache\n", format="html", markdown=True)
    )
    fresh = SearchDocumentsTool(workspace=ws)
    hits = call(fresh, query="text from the cache", mode="grep").artifact["results"]
    assert [r["document_path"] for r in hits] == ["docs/page.html"]


def test_grep_on_a_read_only_workspace_writes_no_conversion(tree: Path, tmp_path: Path) -> None:
    (tree / "docs" / "page.html").write_bytes(b"<html><body><p>never cached</p></body></html>")
    ro = Workspace(tree, embedder=None, index_dir=tmp_path / "ro" / "index", read_only=True)
    found = call(SearchDocumentsTool(workspace=ro), query="never cached", mode="grep").artifact
    assert [r["document_path"] for r in found["results"]] == ["docs/page.html"]
    assert not (tmp_path / "ro").exists()


def test_keyword_scope_is_a_source_id_pre_filter(
    bm25_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: paths become an ``$in`` filter on ``source_id`` (no over-fetch, no post-filter)."""
    seen: list[dict[str, object]] = []
    real = bm25_ws.search

    def search(query: str, **options: object) -> object:
        seen.append(options)
        return real(query, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(bm25_ws, "search", search)
    tool = SearchDocumentsTool(workspace=bm25_ws)
    results = call(tool, query="keyword search query", paths=["docs"], top_k=2).artifact["results"]
    assert results
    assert all(r["document_path"].startswith("docs/") for r in results)
    scoped = sorted(s for s in bm25_ws.source_ids() if s.startswith("docs/"))
    assert seen == [{"top_k": 2, "mode": "bm25", "filter": {"source_id": {"$in": scoped}}}]


# -- grep output modes ----------------------------------------------------------------------------


def test_grep_files_with_matches_and_count(bm25_ws: Workspace) -> None:
    tool = toolkit_tools(bm25_ws)["search_documents"]
    files = call(tool, query="install", mode="grep", output_mode="files_with_matches")  # type: ignore[arg-type]
    assert str(files.content).split("\n")[0] == "docs/guide.md"
    assert [r["document_path"] for r in files.artifact["results"]] == ["docs/guide.md"]
    assert files.artifact["output_mode"] == "files_with_matches"
    counts = call(tool, query="search", mode="grep", output_mode="count", ignore_case=True)  # type: ignore[arg-type]
    rows = {r["document_path"]: r["count"] for r in counts.artifact["results"]}
    assert rows == {"docs/guide.md": 2}
    assert "docs/guide.md:2\n---\n1 file(s) with matches, 2 matching line(s)" in str(counts.content)
    tool.structured_output(counts.artifact)  # type: ignore[attr-defined]


def test_grep_output_modes_keep_the_paths_rules(bm25_ws: Workspace) -> None:
    tool = toolkit_tools(bm25_ws)["search_documents"]
    scoped = call(tool, query="e", mode="grep", output_mode="count", paths=["src/*.py"])  # type: ignore[arg-type]
    assert [r["document_path"] for r in scoped.artifact["results"]] == ["src/http.py"]
    outside = call(tool, query="e", mode="grep", output_mode="count", paths=["../x"])  # type: ignore[arg-type]
    assert outside.status == "error" and "outside the workspace root" in str(outside.content)
    capped = call(tool, query="e", mode="grep", output_mode="files_with_matches", top_k=1)  # type: ignore[arg-type]
    assert capped.artifact["total"] == 1 and capped.artifact["truncated"] is True
    keyword = call(tool, query="install", output_mode="count")  # type: ignore[arg-type]
    assert keyword.status == "error" and "pass mode='grep'" in str(keyword.content)


@pytest.mark.skipif(importlib.util.find_spec("pdfminer") is None, reason="documents extra")
def test_pdf_hits_name_the_page_of_the_hit_in_search_and_grep(tmp_path: Path) -> None:
    write_two_column_pdf(tmp_path / "two.pdf")
    ws = Workspace(tmp_path, embedder=None, config=False)
    ws.sync()
    hit = ws.search("higher retrieval precision translates end-to-end QA", top_k=1)[0]
    assert hit.line_range is not None and hit.line_range.start >= 39  # after "<!-- page 2 -->"
    assert hit.metadata["page"] == 2 and hit.metadata["chunk_page"] == 1
    tools = toolkit_tools(ws)
    text = str(call(tools["workspace_search"], query="higher retrieval precision", top_k=1).content)  # type: ignore[arg-type]
    assert text.startswith("1. two.pdf:65-66 (page 2)")
    grep = call(tools["search_documents"], query="translates to a higher", mode="grep")  # type: ignore[arg-type]
    assert grep.artifact["results"][0]["page"] == 2
    assert str(grep.content).startswith("two.pdf:66:18 (page 2)")
    keyword = call(tools["search_documents"], query="higher retrieval precision", top_k=1)  # type: ignore[arg-type]
    assert str(keyword.content).startswith("1. two.pdf:65-66 (page 2)")
