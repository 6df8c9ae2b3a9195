from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.support.pdfs import write_two_column_pdf
from workspace_tools.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_prints_summary_with_skips_and_formats(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--root", str(tree), "--embedder", "none", "-q", "index")
    assert code == 0
    assert "Indexed: 4 added, 0 updated, 0 removed, 0 unchanged files; 4 chunks (0 embedded)" in out
    assert "Formats: code 1, markdown 2, text 1" in out
    assert "Skipped 1 file (binary 1)" in out
    assert "modes bm25" in out
    code, out, _ = run(capsys, "--root", str(tree), "--embedder", "none", "-q", "index")
    assert "0 added, 0 updated, 0 removed, 4 unchanged files" in out


def test_search_indexes_first_and_prints_ranked_hits(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        "--root",
        str(tree),
        "--embedder",
        "none",
        "search",
        "install package",
        "-k",
        "2",
    )
    assert code == 0
    assert "indexing" in err
    assert " 1. docs/guide.md:5-7  score " in out
    assert "§ Installation" in out and "<<install>>" in out
    assert "--- 1 result (bm25 search" in out


def test_search_json(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--root", str(tree), "--embedder", "none", "-q", "index")
    code, out, _ = run(
        capsys, "--root", str(tree), "--embedder", "none", "search", "parseHttpRequest", "--json"
    )
    data = json.loads(out)
    assert data["mode"] == "bm25" and data["results"][0]["source_id"] == "src/http.py"
    assert data["results"][0]["line_range"] == [1, 1]


def test_no_results_and_errors(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--root", str(tree), "--embedder", "none", "-q", "index")
    code, out, _ = run(capsys, "--root", str(tree), "--embedder", "none", "search", "zzzzqq")
    assert code == 1 and "No results for 'zzzzqq' (bm25 search)." in out
    code, _, err = run(
        capsys, "--root", str(tree), "--embedder", "none", "search", "x", "--mode", "vector"
    )
    assert code == 2 and "configured modes: bm25" in err


def test_stats_and_remove(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "--root", str(tree), "--embedder", "none", "-q", "index")
    code, out, _ = run(capsys, "--root", str(tree), "--embedder", "none", "remove", "docs")
    assert code == 0 and "Removed 2 sources." in out
    code, out, _ = run(capsys, "--root", str(tree), "--embedder", "none", "stats")
    assert json.loads(out)["sources"] == 2


def test_a_full_disk_is_one_clear_line_not_a_traceback(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from workspace_tools.core.store import database

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(database.Writer, "put_sources", full)
    code, out, err = run(capsys, "--root", str(tree), "--embedder", "none", "-q", "index")
    assert code == 2 and out == ""
    assert err.startswith("error: Could not save the change in ")
    assert "The disk is full: free some space and retry" in err and "Traceback" not in err
    monkeypatch.undo()
    code, out, _ = run(capsys, "--root", str(tree), "--embedder", "none", "stats")
    assert code == 0 and json.loads(out)["sources"] == 0


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
