"""Fixtures for the tool tests: workspaces over the shared ``tree`` fixture, a tool-call helper."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from tests.support.paths import MIXED
from tests.support.tools import acall, call

__all__ = ["MIXED", "acall", "call"]
from workspace_tools.core.workspace import Workspace


@pytest.fixture
def bm25_ws(tree: Path, tmp_path: Path) -> Workspace:
    """BM25-only workspace over ``tree``, synced."""
    ws = Workspace(tree, embedder=None, index_dir=tmp_path / "index-bm25")
    ws.sync()
    return ws


@pytest.fixture
def hybrid_ws(tree: Path, tmp_path: Path) -> Workspace:
    """BM25 + fake vectors over ``tree``, synced."""
    ws = Workspace(tree, embedder=FakeEmbedder(), index_dir=tmp_path / "index-hybrid")
    ws.sync()
    return ws


@pytest.fixture
def empty_ws(tree: Path, tmp_path: Path) -> Workspace:
    """A workspace over ``tree`` with nothing indexed."""
    return Workspace(tree, embedder=None, index_dir=tmp_path / "index-empty")
