"""Fixtures for the tool tests: workspaces over the shared ``tree`` fixture, a tool-call helper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from tests.conftest import FakeEmbedder
from workspace_tools.core.workspace import Workspace

BENCHMARKS = Path(__file__).resolve().parents[3].parent / "shared" / "benchmarks"
MIXED = BENCHMARKS / "mixed-docs"


def call(tool: BaseTool, **args: Any) -> ToolMessage:
    """Invoke ``tool`` with a tool call, as an agent does; returns the ToolMessage."""
    message = tool.invoke({"name": tool.name, "args": args, "id": "call-1", "type": "tool_call"})
    assert isinstance(message, ToolMessage)
    return message


async def acall(tool: BaseTool, **args: Any) -> ToolMessage:
    message = await tool.ainvoke(
        {"name": tool.name, "args": args, "id": "call-1", "type": "tool_call"}
    )
    assert isinstance(message, ToolMessage)
    return message


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
