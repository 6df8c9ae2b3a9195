from __future__ import annotations

import os
from pathlib import Path

import pytest

from workspace_tools.core.errors import PathOutsideWorkspaceError
from workspace_tools.core.text.scan import ScanConfig, normalise_id, resolve_inside, scan


def test_directory_scan_honours_gitignore_and_reports_nothing_silently(tree: Path) -> None:
    result = scan(tree)
    assert set(result.files) == {
        "docs/guide.md",
        "docs/faq.md",
        "src/http.py",
        "notes.txt",
        "image.bin",
    }
    assert "ignored/secret.md" not in result.files and "debug.log" not in result.files


def test_excluded_dirs_and_hidden_files(tree: Path) -> None:
    (tree / "node_modules" / "pkg").mkdir(parents=True)
    (tree / "node_modules" / "pkg" / "index.js").write_text("x")
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("x")
    (tree / ".hidden.md").write_text("x")
    files = scan(tree).files
    assert not any(f.startswith(("node_modules", ".git", ".hidden")) for f in files)
    assert ".hidden.md" in scan(tree, config=ScanConfig(include_hidden=True)).files


def test_glob_and_plain_paths_and_trailing_slash(tree: Path) -> None:
    assert set(scan(tree, ["docs/**/*.md"]).files) == {"docs/guide.md", "docs/faq.md"}
    assert set(scan(tree, ["./docs/*.md"]).files) == {"docs/guide.md", "docs/faq.md"}
    assert set(scan(tree, ["docs/"]).files) == {"docs/guide.md", "docs/faq.md"}
    assert set(scan(tree, ["**/*.{py,txt}"]).files) == {"src/http.py", "notes.txt"}
    assert set(scan(tree, ["src/http.py"]).files) == {"src/http.py"}


def test_directory_glob_matches_files_below(tree: Path) -> None:
    assert set(scan(tree, ["**/docs"]).files) == {"docs/guide.md", "docs/faq.md"}


def test_missing_path_is_reported(tree: Path) -> None:
    result = scan(tree, ["nope/", "ghost.md"])
    assert result.files == {}
    assert [(s.path, s.reason.split(":")[0]) for s in result.skipped] == [
        ("nope", "missing"),
        ("ghost.md", "missing"),
    ]


def test_size_limit_and_depth_limit_are_reported(tree: Path) -> None:
    (tree / "big.txt").write_text("x" * 2000)
    deep = tree
    for i in range(4):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "deep.txt").write_text("deep")
    result = scan(tree, config=ScanConfig(max_file_bytes=1000, max_depth=2))
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons["big.txt"].startswith("too large: 2000 bytes")
    assert reasons["d0/d1/d2"].startswith("depth limit")
    assert "d0/d1/d2/d3/deep.txt" not in result.files


def test_ids_are_normalised(tree: Path) -> None:
    root = tree.resolve()
    assert normalise_id(root, "./docs/a.md") == "docs/a.md"
    assert normalise_id(root, "docs//a.md") == "docs/a.md"
    assert normalise_id(root, str(root / "docs" / "a.md")) == "docs/a.md"
    assert normalise_id(root, "docs/x/../a.md") == "docs/a.md"


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "docs/../../x"])
def test_paths_outside_root_are_refused(tree: Path, bad: str) -> None:
    with pytest.raises(PathOutsideWorkspaceError, match="outside the workspace root"):
        normalise_id(tree.resolve(), bad)


def test_symlink_escape_is_refused(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, tree / "link.txt")
    with pytest.raises(PathOutsideWorkspaceError, match="symbolic link"):
        resolve_inside(tree.resolve(), "link.txt")
    result = scan(tree.resolve())
    assert "link.txt" not in result.files
    assert any(
        s.path == "link.txt" and s.reason.startswith("outside workspace") for s in result.skipped
    )
