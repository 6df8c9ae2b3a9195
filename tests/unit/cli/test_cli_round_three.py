"""Issue 29 through the CLI: an emptied index stays empty (gap 4); PDF hits name their page."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.support.pdfs import write_two_column_pdf
from workspace_tools.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_after_removing_the_last_source_does_not_reindex_the_folder(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ("--root", str(tree), "--embedder", "none")
    run(capsys, *base, "-q", "index")
    assert run(capsys, *base, "remove", ".")[0] == 0
    code, out, err = run(capsys, *base, "search", "install package")
    assert code == 1  # nothing found (docs/cli.md's exit-status rule)
    assert "indexing" not in err and "Indexed" not in out
    assert "No results for 'install package'" in out
    _, stats, _ = run(capsys, *base, "stats")
    assert '"sources": 0' in stats


@pytest.mark.skipif(importlib.util.find_spec("pdfminer") is None, reason="documents extra")
def test_cli_text_output_names_the_page_of_a_pdf_hit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_two_column_pdf(tmp_path / "two.pdf")
    base = ("--root", str(tmp_path), "--embedder", "none", "-q")
    code, out, _ = run(
        capsys, *base, "search", "higher retrieval precision translates end-to-end QA", "-k", "1"
    )
    assert code == 0
    assert " 1. two.pdf:65-67 (page 2)  score " in out
