"""workspace_read: by line range or chunk id, cut at max_chars, indexed strings, PDFs with their
pages, and the errors said."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.support.pdfs import write_two_column_pdf
from tests.support.tools import call, toolkit_tools
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.workspace import Workspace

HAS_PDF = importlib.util.find_spec("pdfminer") is not None


def test_read_by_line_range_pages_with_more_lines(bm25_ws: Workspace) -> None:
    page = bm25_ws.read("docs/guide.md", start_line=5, end_line=7)
    assert (page.start_line, page.end_line, page.total_lines) == (5, 7, 12)
    assert page.text.split("\n")[0] == "## Installation"
    assert page.more_lines == 5 and not page.truncated
    short = bm25_ws.read("docs/guide.md", max_chars=200)
    assert short.end_line == 12  # the whole file fits
    tool = toolkit_tools(bm25_ws)["workspace_read"]
    message = call(tool, path="docs/guide.md", start_line=5, end_line=7)  # type: ignore[arg-type]
    assert str(message.content).startswith("docs/guide.md (markdown) lines 5-7 of 12\n5  ## ")
    assert "[5 more lines. Call workspace_read with path='docs/guide.md', start_line=8" in str(
        message.content
    )
    assert message.artifact["more_lines"] == 5


def test_read_by_chunk_id_returns_the_chunk_lines(bm25_ws: Workspace) -> None:
    hit = bm25_ws.search("install package", top_k=1)[0]
    page = bm25_ws.read(chunk_id=hit.id)
    chunk = next(c for c in bm25_ws.chunks_of(hit.source_id) if c.id == hit.id)
    assert (page.start_line, page.end_line) == (chunk.start_line, chunk.end_line)
    assert page.chunk_id == hit.id and "pip install" in page.text


def test_read_cuts_at_max_chars_and_says_what_follows(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text(
        "".join(f"line {n} " + "x" * 40 + "\n" for n in range(1, 101))
    )
    ws = Workspace(tmp_path, embedder=None, config=False)
    page = ws.read("long.txt", start_line=10, max_chars=500)
    assert page.start_line == 10 and page.end_line == 19 and page.truncated
    assert page.more_lines == 81
    assert page.text.startswith("line 10 ")


def test_read_of_an_indexed_string(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, config=False)
    ws.index("/notes/launch.md", "one\ntwo\nthree\n")
    page = ws.read("/notes/launch.md", start_line=2)
    assert page.source_id == "notes/launch.md" and page.text == "two\nthree"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "../outside.txt"}, "is outside the workspace root"),
        ({"path": "nowhere.md"}, "No file 'nowhere.md' in the workspace"),
        ({"path": "docs/guide.md", "start_line": 99}, "start_line 99 is past the end"),
        ({"path": "docs/guide.md", "start_line": 5, "end_line": 2}, "end_line 2 is before"),
        ({"chunk_id": "nope#chunk-9"}, "No indexed chunk 'nope#chunk-9'"),
        ({"chunk_id": "docs/guide.md", "start_line": 2}, "either chunk_id or start_line"),
        ({}, "Give the path of a file"),
        ({"path": "docs/guide.md", "max_chars": 10}, "max_chars must be between 200"),
    ],
)
def test_read_errors(bm25_ws: Workspace, args: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        bm25_ws.read(**args)  # type: ignore[arg-type]


def test_the_read_tool_refuses_paths_outside(bm25_ws: Workspace) -> None:
    message = call(toolkit_tools(bm25_ws)["workspace_read"], path="../../etc/passwd")  # type: ignore[arg-type]
    assert message.status == "error" and "is outside the workspace root" in str(message.content)


@pytest.mark.skipif(not HAS_PDF, reason="documents extra")
def test_read_a_pdf_as_converted_text_with_its_pages(tmp_path: Path) -> None:
    write_two_column_pdf(tmp_path / "two.pdf")
    ws = Workspace(tmp_path, embedder=None, config=False)
    unsynced = ws.read("two.pdf", start_line=39, end_line=39)  # converted, never stored
    assert unsynced.text == "<!-- page 2 -->"
    assert not list(ws.conversion_cache.directory.rglob("*.json"))
    ws.sync()
    page = ws.read("two.pdf", start_line=36, end_line=43)
    assert page.format == "pdf" and page.units == {"page": 1, "last_page": 2}
    assert "<!-- page 2 -->" in page.text
    message = call(toolkit_tools(ws)["workspace_read"], path="two.pdf", start_line=65, end_line=66)  # type: ignore[arg-type]
    content = str(message.content)
    assert content.startswith("two.pdf (pdf) lines 65-66 of 73; page 2\n")
    assert "a higher retrieval" in content and "precision indeed translates" in content
