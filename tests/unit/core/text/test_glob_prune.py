"""A glob walk enters only the folders a match can lie in; it finds the same files as before."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from workspace_tools.core.grep import collect_files
from workspace_tools.core.text import scan as scan_module
from workspace_tools.core.text.glob_prune import folder_filter
from workspace_tools.core.text.scan import glob_matcher, scan

FOLDERS = ["src/app/tests", "src/app/core", "src/lib/tests", "docs/guides/deep", "docs/api", "x"]
PATTERNS = [
    "src/*/tests/*.py",
    "src/**/tests/**",
    "**/*.md",
    "docs/g*/**/*.md",
    "src/app*",
    "*.md",
    "docs/{api,guides}/*.md",
    "src/[al]*/core/*.py",
    "**/deep/*",
    "s?c/**/*.py",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for folder in FOLDERS:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        for name in ("a.py", "b.md", "c.txt"):
            (tmp_path / folder / name).write_text("x\n", encoding="utf-8")
    (tmp_path / "top.md").write_text("x\n", encoding="utf-8")
    (tmp_path / "src" / "app.md").write_text("x\n", encoding="utf-8")
    return tmp_path


def _every_match(root: Path, pattern: str) -> set[str]:
    """What the glob means, by testing every file of the tree (and its folders, as gitignore)."""
    match = glob_matcher(pattern)
    files = scan(root, ["."]).files
    out = set()
    for rel in files:
        parts = rel.split("/")
        if match(rel) or any(match("/".join(parts[:end])) for end in range(1, len(parts))):
            out.add(rel)
    return out


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = os.scandir

    def scandir(path: Any) -> Any:
        read.append(str(path))
        return real(path)

    monkeypatch.setattr(scan_module.os, "scandir", scandir)
    return read


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_pruned_glob_walk_finds_every_match(tree: Path, pattern: str) -> None:
    assert set(scan(tree, [pattern]).files) == _every_match(tree, pattern)


def test_the_walk_skips_folders_no_match_can_lie_in(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = _recording(monkeypatch)
    found = scan(tree, ["src/*/tests/*.py"])
    assert set(found.files) == {"src/app/tests/a.py", "src/lib/tests/a.py"}
    walked = {Path(p).relative_to(tree).as_posix() for p in read}
    assert walked == {"src", "src/app", "src/lib", "src/app/tests", "src/lib/tests"}
    read.clear()
    scan(tree, ["docs/g*/**/*.md"])
    assert {Path(p).relative_to(tree).as_posix() for p in read} == {
        "docs",
        "docs/guides",
        "docs/guides/deep",
    }


def test_folder_filter_decisions() -> None:
    may = folder_filter(["src/*/tests/**/*.py"])
    assert may is not None
    assert may("src") and may("src/app") and may("src/app/tests/unit/deeper")
    assert not may("docs") and not may("src/app/core")
    assert folder_filter(["a/**/b/**/c/**/d/**/e/**/f"]) is None  # too many '**': no pruning
    under = folder_filter(["src/app"])  # a matched folder brings everything under it
    assert under is not None and under("src/app/x/y") and not under("src/lib")


def test_random_trees_match_the_unpruned_meaning(tmp_path: Path) -> None:
    rng = random.Random(7)
    names = ["a", "b", "ab", "tests", "x.md"]
    for _ in range(60):
        depth = rng.randint(1, 4)
        folder = tmp_path.joinpath(*(rng.choice(names) for _ in range(depth)))
        if folder.is_file():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        (folder / rng.choice(["f.py", "g.md"])).write_text("x\n", encoding="utf-8")
    segments = ["*", "**", "a", "a*", "?b", "tests", "*.md", "[ab]", "x.md"]
    for _ in range(200):
        pattern = "/".join(rng.choice(segments) for _ in range(rng.randint(1, 4)))
        assert set(scan(tmp_path, [pattern]).files) == _every_match(tmp_path, pattern), pattern


def test_a_glob_under_roots_walks_only_the_roots(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = _recording(monkeypatch)
    files, _ = collect_files(tree, ["**/*.md"], within=("docs/api", "src/lib"))
    assert set(files) == {"docs/api/b.md", "src/lib/tests/b.md"}
    walked = {Path(p).relative_to(tree).as_posix() if p != str(tree) else "." for p in read}
    assert walked <= {".", "docs", "docs/api", "src", "src/lib", "src/lib/tests"}
    assert "docs/guides" not in walked and "src/app" not in walked and "x" not in walked
