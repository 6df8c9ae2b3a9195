"""Keyword search through the Workspace finds converted documents (skips until it has landed)."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import BENCHMARKS, missing
from workspace_tools.core.convert import DOCUMENT_EXTENSIONS

MIXED = BENCHMARKS / "mixed-docs"

pytestmark = pytest.mark.skipif(not MIXED.is_dir(), reason=missing(MIXED))
for _module in ("pdfminer", "docx", "pptx", "openpyxl", "bs4", "markdownify"):
    pytest.importorskip(_module, reason="needs the documents extra")
workspace_module = pytest.importorskip("workspace_tools.core.workspace._workspace")


def _rows() -> list[dict[str, str]]:
    if not MIXED.is_dir():
        return []
    with (MIXED / "MANIFEST.tsv").open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream, delimiter="\t"))
    routed = {".md", *DOCUMENT_EXTENSIONS}
    return [row for row in rows if Path(row["file"]).suffix in routed]


ROWS = _rows()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("mixed")
    root = base / "docs"
    for row in ROWS:  # the documents only: MANIFEST.tsv itself quotes every first text
        target = root / row["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(MIXED / row["file"], target)
    space = workspace_module.Workspace(root, embedder=None, index_dir=base / "index")
    report = space.sync()
    assert not report.skipped, report.skipped
    return space


def phrase(text_start: str) -> str:
    text = text_start.split("\ufffd")[0]
    found = re.findall(r"\w+", text)
    if len(text_start) >= 90:  # the manifest cuts first texts mid-word at 90 characters
        found = found[:-1]
    return " ".join(found[:12])


SINGLE = [row for row in ROWS if not row["file"].startswith("all2md/")]


@pytest.mark.parametrize("row", SINGLE, ids=[row["file"] for row in SINGLE])
def test_distinctive_phrase_finds_its_file_first(workspace: Any, row: dict[str, str]) -> None:
    results = workspace.search(phrase(row["text_start"]), top_k=3, mode="bm25")
    assert results, row["file"]
    assert results[0].metadata["source_id"] == row["file"]


def test_all2md_formats_return_the_same_section(workspace: Any) -> None:
    files = [row["file"] for row in ROWS if row["file"].startswith("all2md/")]
    assert len(files) >= 4
    for query, section in [
        ("ordered list multilevel list", "Second Section Heading"),
        ("equivalent of an h2 heading hyperlink", "First Section Heading"),
    ]:
        results = workspace.search(query, top_k=20, mode="bm25")
        best: dict[str, Any] = {}
        for result in results:
            best.setdefault(result.metadata["source_id"], result)
        for name in files:
            assert name in best, f"{name} not found for {query!r}"
            assert best[name].headings[-1] == section, (name, best[name].headings)


def test_sync_reports_broken_documents_and_indexes_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    pdf = next(MIXED.rglob("*.pdf"))
    data = pdf.read_bytes()
    (root / "truncated.pdf").write_bytes(data[: len(data) // 2])
    (root / "renamed.docx").write_bytes(b"this is not a zip archive at all " * 40)
    (root / "good.md").write_text("# Title\n\nA readable page about glaciers.\n", encoding="utf-8")
    (root / "good.pdf").write_bytes(data)
    space = workspace_module.Workspace(root, embedder=None)
    report = space.sync()
    reasons = {item.path: item.reason.split(":")[0] for item in report.skipped}
    assert reasons == {"truncated.pdf": "corrupt", "renamed.docx": "corrupt"}
    assert sorted(report.added) == ["good.md", "good.pdf"]
    assert report.formats == {"markdown": 1, "pdf": 1}
    assert space.search("glaciers")[0].id == "good.md"
    pdf_chunks = space.chunks_of("good.pdf")
    assert pdf_chunks and all("page" in c.metadata for c in pdf_chunks if c.start_line > 1)


def test_conversion_cache_follows_the_index(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    shutil.copyfile(next(MIXED.rglob("*.pdf")), root / "a.pdf")
    space = workspace_module.Workspace(root, embedder=None)
    space.sync()
    cached = list((root / ".workspace_tools" / "converted").rglob("*.json"))
    assert len(cached) == 1
    (root / "a.pdf").unlink()
    space.sync()
    assert not list((root / ".workspace_tools" / "converted").rglob("*.json"))
