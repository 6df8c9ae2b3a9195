"""The documentation builds with ``mkdocs build --strict``: a broken link or nav entry fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

pytest.importorskip("mkdocs", reason="mkdocs is in the dev extra")


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "concepts" / "index.html").is_file()


def test_every_page_is_in_the_nav() -> None:
    """A page left out of the nav builds but nobody finds it: list each one."""
    import yaml

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, list):
            return [p for item in node for p in pages(item)]
        if isinstance(node, dict):
            return [p for value in node.values() for p in pages(value)]
        return []

    listed = set(pages(config["nav"]))
    on_disk = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").glob("*.md")}
    # benchmarks-*.md are drafts merged into benchmarks.md by the maintainers
    missing = sorted(p for p in on_disk - listed if not p.startswith("benchmarks-"))
    assert not missing, f"pages missing from the nav of mkdocs.yml (add them there): {missing}"
