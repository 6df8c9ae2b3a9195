"""``workspace-tools grep``: search_documents' grep options, grep's output, the exit-status rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workspace_tools.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_lines_print_like_grep(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--root", str(tree), "grep", "install")
    assert code == 0 and err == ""
    assert out.splitlines() == ["docs/guide.md:7: Run pip install to install the package."]
    assert not (tree / ".workspace_tools").exists()  # no index needed, none written


def test_case_regex_context_and_globs(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--root", str(tree), "grep", "-i", "INSTALL")
    assert code == 0
    assert out.splitlines() == [
        "docs/guide.md:5: ## Installation",
        "docs/guide.md:7: Run pip install to install the package.",
        "docs/guide.md:8: Installing needs Python.",
    ]
    code, out, _ = run(capsys, "--root", str(tree), "grep", "-E", r"parse\w+", "-C", "1")
    assert code == 0
    assert out.splitlines() == [
        "src/http.py:1: def parseHttpRequest(raw):",
        "src/http.py-2-     return raw.split()",
    ]
    code, out, _ = run(capsys, "--root", str(tree), "grep", "-C", "1", "-i", "^## ", "-E")
    assert "\n--\n" in out  # groups apart are separated as grep does
    code, out, _ = run(capsys, "--root", str(tree), "grep", "-i", "the", "--glob", "docs/*.md")
    assert {line.split(":")[0] for line in out.splitlines()} == {"docs/guide.md"}
    docs, src = str(tree / "docs"), str(tree / "src")
    code, out, _ = run(capsys, "--root", str(tree), "grep", "-i", "a", docs, "--glob", "**/faq*")
    assert {line.split(":")[0] for line in out.splitlines()} == {"docs/faq.md"}  # both apply
    code, _, err = run(capsys, "--root", str(tree), "grep", "a", src, "--glob", "docs/*")
    assert code == 2 and f"error: No file under {src!r} matches --glob 'docs/*'" in err
    code, out, _ = run(capsys, "--root", str(tree), "grep", "-i", "install", "-k", "1")
    assert out.count("\n") == 1


def test_paths_are_relative_to_the_current_folder(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree / "docs")
    code, out, _ = run(capsys, "--root", str(tree), "grep", "BM25", "faq.md")
    assert code == 0 and out.startswith("docs/faq.md:3: ## Why BM25?")


def test_nothing_found_exits_1(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--root", str(tree), "grep", "zebra")
    assert (code, out, err) == (1, "", "No line matches 'zebra' (4 files searched).\n")
    for flag in ("-l", "-c", "-q"):  # said on stderr: stdout keeps only what matched
        code, out, err = run(capsys, "--root", str(tree), "grep", "zebra", flag)
        assert (code, out, err) == (1, "", "No line matches 'zebra' (4 files searched).\n")
    code, out, err = run(capsys, "--root", str(tree), "grep", r"\d+x")
    assert code == 1 and "(PATTERN was matched literally; add -E to use it as a regex)" in err
    code, out, _ = run(capsys, "--root", str(tree), "grep", "zebra", "--json")
    assert code == 1 and json.loads(out)["matches"] == []


def test_bad_input_exits_2_with_cli_words(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--root", str(tree), "grep", "-E", "(")
    assert code == 2 and out == ""
    assert err.startswith("error: Invalid regular expression '(': ")
    assert "drop -E to search for the text literally" in err and "regex=false" not in err
    code, _, err = run(capsys, "--root", str(tree), "grep", "x", "-C", "11")
    assert code == 2 and "-C must be between 0 and 10, got 11." in err
    code, _, err = run(capsys, "--root", str(tree), "grep", "x", str(tree / "nope"))
    assert code == 2 and err.startswith("error: Path ") and "does not exist" in err
    code, _, err = run(capsys, "--root", str(tree / "nope"), "grep", "x")
    assert code == 2 and "is not a folder" in err


def test_json_report(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--root", str(tree), "grep", "Python", "--json")
    data = json.loads(out)
    assert code == 0 and data["pattern"] == "Python"
    assert [(m["path"], m["line"]) for m in data["matches"]] == [("docs/guide.md", 8)]
    assert data["files_matched"] == 1


def test_the_project_file_is_not_searched(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "workspace-tools.yaml").write_text("skills: [install]\n", encoding="utf-8")
    code, out, _ = run(capsys, "--root", str(tree), "grep", "install")
    assert code == 0 and "workspace-tools.yaml" not in out


def _two_page_pdf() -> bytes:
    from tests.support.hostile_files import pdf

    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    kids = []
    for page in range(2):
        number = 4 + 2 * page
        kids.append(b"%d 0 R" % number)
        text = b"BT /F1 12 Tf 72 720 Td (Report page %d says %s) Tj ET" % (
            page + 1,
            b"revenue" if page else b"costs",
        )
        objects[number] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (number + 1)
        )
        objects[number + 1] = b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream"
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count 2 >>" % b" ".join(kids)
    return pdf(objects)


def test_a_pdf_hit_names_its_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pdfminer")
    (tmp_path / "report.pdf").write_bytes(_two_page_pdf())
    code, out, _ = run(capsys, "--root", str(tmp_path), "grep", "says")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("report.pdf:") and "[page 1] Report page 1 says costs" in lines[0]
    assert "[page 2] Report page 2 says revenue" in lines[1]


def test_files_with_matches_and_counts(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--root", str(tree), "grep", "-i", "-l", "install")
    assert code == 0 and err == ""
    assert out.splitlines() == ["docs/guide.md"]
    code, out, _ = run(capsys, "--root", str(tree), "grep", "-i", "-c", "install")
    assert code == 0 and out.splitlines() == ["docs/guide.md:3"]
    code, out, _ = run(capsys, "--root", str(tree), "grep", "-c", "--json", "install")
    assert json.loads(out)["counts"] == [{"path": "docs/guide.md", "count": 1}]
    code, out, _ = run(capsys, "--root", str(tree), "grep", "-l", "no-such-word-here")
    assert code == 1 and out == ""
    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tree), "grep", "-l", "-c", "install"])
    assert exited.value.code == 2
    assert "not allowed with argument -l/--files-with-matches" in capsys.readouterr().err
