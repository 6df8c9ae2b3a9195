"""Fixtures of the docs tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_tree import make_docs_tree


@pytest.fixture
def docs_root(tmp_path: Path) -> Path:
    return make_docs_tree(tmp_path / "docs")
