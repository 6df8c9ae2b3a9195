"""Shared fixtures (a deterministic fake embedder, the shared benchmark folder, small trees) and
the test tiers: ``pytest`` runs the fast set, ``pytest --full`` everything (tests/support/tiers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.docs_tree import make_docs_tree
from tests.support.fakes import FakeEmbedder
from tests.support.paths import BENCHMARKS, REPO, SHARED
from tests.support.skills import MakeSkill, write_skill
from tests.support.tiers import ProcessFinder, full_only

__all__ = ["BENCHMARKS", "REPO", "SHARED", "FakeEmbedder"]

_LEFT_OUT = pytest.StashKey[int]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        help="run every test (CI): also those the fast default run leaves out, which start a "
        "process, load the real model, run notebooks, build the docs or install the wheel",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--full"):
        return
    finder = ProcessFinder()
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        (left if full_only(item, finder) else kept).append(item)
    config.stash[_LEFT_OUT] = len(left)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    left = config.stash.get(_LEFT_OUT, 0)
    if left:
        terminalreporter.write_line(
            f"fast run: {left} slower tests left out (they start a process, load the real model, "
            "run notebooks, build the docs or install the wheel); `pytest --full` runs them too"
        )


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small workspace: Markdown with sections, code, text, a binary and an ignored file."""
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "docs" / "guide.md").write_text(
        "# Guide\n\nWelcome to the guide.\n\n## Installation\n\nRun pip install to install the package.\n"
        "Installing needs Python.\n\n## Searching\n\nCall search with a query to find chunks.\n",
        encoding="utf-8",
    )
    (root / "docs" / "faq.md").write_text(
        "# FAQ\n\n## Why BM25?\n\nBecause keyword ranking is fast and exact.\n", encoding="utf-8"
    )
    (root / "src" / "http.py").write_text(
        "def parseHttpRequest(raw):\n    return raw.split()\n\n\nclass snake_case_name:\n    pass\n",
        encoding="utf-8",
    )
    (root / "notes.txt").write_text(
        "Café au lait and crème brûlée.\nПривет мир.\n東京タワーは高い。\n", encoding="utf-8"
    )
    (root / "image.bin").write_bytes(b"\x89PNG\x00\x01\x02\x03")
    (root / ".gitignore").write_text("ignored/\n*.log\n", encoding="utf-8")
    (root / "ignored").mkdir()
    (root / "ignored" / "secret.md").write_text("do not index me", encoding="utf-8")
    (root / "debug.log").write_text("log line", encoding="utf-8")
    return root


@pytest.fixture
def docs_root(tmp_path: Path) -> Path:
    """A small documentation tree (``.md``/``.mdx`` with frontmatter) under ``tmp_path/docs``."""
    return make_docs_tree(tmp_path / "docs")


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    """An empty ``skills`` folder inside a project root (``tmp_path``)."""
    path = tmp_path / "skills"
    path.mkdir()
    return path


@pytest.fixture
def make_skill(skills_dir: Path) -> MakeSkill:
    """Write a skill into ``skills_dir`` (keyword ``parent=`` writes elsewhere)."""

    def make(name: str, *args: object, parent: Path | None = None, **kwargs: object) -> Path:
        return write_skill(parent or skills_dir, name, *args, **kwargs)  # type: ignore[arg-type]

    return make
