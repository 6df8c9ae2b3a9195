"""Core grep: literal/regex, case, context, caps, headings, time budget, paths, documents."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.paths import MIXED, missing
from workspace_tools.core.convert import CachedConverter
from workspace_tools.core.errors import InvalidInputError, PathOutsideWorkspaceError
from workspace_tools.core.grep import grep, looks_like_regex


def test_literal_is_default_and_reports_path_line_column(tree: Path) -> None:
    report = grep(tree, "pip install")
    assert [(m.path, m.line, m.column) for m in report.matches] == [("docs/guide.md", 7, 5)]
    match = report.matches[0]
    assert match.text == "Run <<pip install>> to install the package."
    assert match.section_heading == "Installation"
    assert match.headings == ("Guide", "Installation")
    assert report.files_matched == 1
    assert report.files_searched >= 4
    assert not report.truncated


def test_literal_does_not_interpret_regex_characters(tree: Path) -> None:
    (tree / "x.txt").write_text("a.b\naxb\n", encoding="utf-8")
    assert [m.line for m in grep(tree, "a.b", ["x.txt"]).matches] == [1]
    assert [m.line for m in grep(tree, "a.b", ["x.txt"], regex_mode=True).matches] == [1, 2]


def test_regex_and_all_hits_marked(tree: Path) -> None:
    report = grep(tree, r"install\w*", ["docs"], regex_mode=True, ignore_case=True)
    texts = [m.text for m in report.matches]
    assert "Run pip <<install>> to <<install>> the package." in texts
    assert "<<Installing>> needs Python." in texts
    assert report.matches[0].hits == 1  # "## Installation" heading line
    assert report.matches[0].text == "## <<Installation>>"


def test_ignore_case(tree: Path) -> None:
    assert grep(tree, "welcome", ["docs"]).matches == []
    assert [m.line for m in grep(tree, "welcome", ["docs"], ignore_case=True).matches] == [3]


def test_unicode_case_folding(tree: Path) -> None:
    assert [m.path for m in grep(tree, "CAFÉ", ignore_case=True).matches] == ["notes.txt"]
    assert grep(tree, "東京", ["notes.txt"]).matches[0].text == "<<東京>>タワーは高い。"


def test_context_lines(tree: Path) -> None:
    match = grep(tree, "Installing", ["docs/guide.md"], context_lines=2).matches[0]
    assert match.before == ((6, ""), (7, "Run pip install to install the package."))
    assert match.after == ((9, ""), (10, "## Searching"))


def test_global_cap_sets_truncated(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hit\n" * 30, encoding="utf-8")
    (tmp_path / "b.txt").write_text("hit\n" * 30, encoding="utf-8")
    report = grep(tmp_path, "hit", max_matches=40)
    assert len(report.matches) == 40
    assert report.truncated
    exact = grep(tmp_path, "hit", max_matches=60)
    assert len(exact.matches) == 60
    assert not exact.truncated


def test_per_file_cap(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hit\n" * 30, encoding="utf-8")
    (tmp_path / "b.txt").write_text("hit\n", encoding="utf-8")
    report = grep(tmp_path, "hit", max_per_file=5)
    assert [m.path for m in report.matches] == ["a.txt"] * 5 + ["b.txt"]
    assert report.capped_files == ["a.txt"]
    assert not report.truncated


def test_long_line_cut_and_counted(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text(
        "x" * 500 + "needle" + "y" * 20_000 + "late", encoding="utf-8"
    )
    report = grep(tmp_path, "needle", width=80)
    match = report.matches[0]
    assert match.column == 501
    assert match.text.startswith("…") and match.text.endswith("…")
    assert "<<needle>>" in match.text
    assert len(match.text) < 120
    assert report.long_lines == 1
    assert grep(tmp_path, "late").matches == []  # beyond MAX_LINE_CHARS: not searched


def test_catastrophic_regex_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "evil.txt").write_text("a" * 30 + "x" * 30 + "!\nfine line\n", encoding="utf-8")
    (tmp_path / "z.txt").write_text("fine too\n", encoding="utf-8")
    report = grep(tmp_path, r"(a|aa)+$|fine", regex_mode=True, file_timeout=0.2)
    assert report.timed_out == ["evil.txt"]
    assert [m.path for m in report.matches] == ["z.txt"]  # the next file is still searched


def test_bad_regex_shows_the_error(tree: Path) -> None:
    with pytest.raises(
        InvalidInputError, match=r"Invalid regular expression '\(unclosed': missing \)"
    ):
        grep(tree, "(unclosed", regex_mode=True)


def test_bad_arguments(tree: Path) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        grep(tree, "")
    with pytest.raises(InvalidInputError, match="line break"):
        grep(tree, "a\nb")
    with pytest.raises(InvalidInputError, match="context_lines"):
        grep(tree, "a", context_lines=11)
    with pytest.raises(InvalidInputError, match="No file or folder 'nope'"):
        grep(tree, "a", ["nope"])


def test_paths_outside_root_are_refused(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("password", encoding="utf-8")
    with pytest.raises(PathOutsideWorkspaceError, match="outside the workspace root"):
        grep(tree, "password", ["../outside"])
    with pytest.raises(PathOutsideWorkspaceError, match="outside the workspace root"):
        grep(tree, "password", [str(outside)])
    with pytest.raises(PathOutsideWorkspaceError, match="contains '..'"):
        grep(tree, "password", ["../**/*.txt"])
    os.symlink(outside, tree / "link")
    with pytest.raises(PathOutsideWorkspaceError, match="symbolic link"):
        grep(tree, "password", ["link/secret.txt"])
    os.symlink(outside / "secret.txt", tree / "leak.txt")
    assert grep(tree, "password").matches == []  # walking the root never follows it out


def test_globs_dirs_and_recursive(tree: Path) -> None:
    assert {m.path for m in grep(tree, "def", ["src/*.py"]).matches} == {"src/http.py"}
    assert {m.path for m in grep(tree, "install", ["**/*.md"]).matches} == {"docs/guide.md"}
    assert grep(tree, "Guide", ["."], recursive=False).matches == []
    assert grep(tree, "Café", ["."], recursive=False).matches[0].path == "notes.txt"
    with pytest.raises(InvalidInputError, match="No readable files"):
        grep(tree, "x", ["*.nothing"])


def test_gitignored_and_binary_files_are_left_out(tree: Path) -> None:
    assert grep(tree, "index me").matches == []
    report = grep(tree, "PNG")
    assert report.matches == []
    assert any(s.path == "image.bin" and s.reason.startswith("binary") for s in report.skipped)


def test_headings_ignore_fenced_code(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# Real\n\n```\n# not a heading\n```\ntarget\n", encoding="utf-8"
    )
    assert grep(tmp_path, "target").matches[0].headings == ("Real",)


def test_looks_like_regex() -> None:
    assert looks_like_regex(r"foo\d+")
    assert looks_like_regex("a.*b")
    assert not looks_like_regex("plain words")


def test_cached_converter_reuses_and_refreshes(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("# A\n\none\n", encoding="utf-8")
    convert = CachedConverter()
    first = convert(path, path.read_bytes())
    assert convert(path, path.read_bytes()) is first
    path.write_text("# A\n\ntwo two\n", encoding="utf-8")
    assert "two" in convert(path, path.read_bytes()).text


@pytest.mark.skipif(not MIXED.is_dir(), reason=missing(MIXED))
@pytest.mark.parametrize(
    ("name", "needle", "heading"),
    [
        ("all2md/basic.pdf", "hyperlink would be cool", "First Section Heading"),
        ("all2md/basic.docx", "hyperlink would be cool", "First Section Heading"),
    ],
)
def test_grep_reads_converted_documents(
    tmp_path: Path, name: str, needle: str, heading: str
) -> None:
    pytest.importorskip("pdfminer")
    pytest.importorskip("docx")
    target = tmp_path / name
    target.parent.mkdir(parents=True)
    shutil.copyfile(MIXED / name, target)
    report = grep(tmp_path, needle, ignore_case=True)
    assert [m.path for m in report.matches] == [name]
    assert report.matches[0].section_heading == heading
    assert f"<<{needle}>>" in report.matches[0].text
