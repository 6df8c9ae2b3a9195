"""``workspace_search`` over MCP on source code: structured hits carry the symbol, and filter on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.stdio import stdio_client

from tests.support.code_repo import make_code_repo
from tests.support.fakes import FakeEmbedder
from tests.unit.mcp.conftest import stdio_params
from workspace_tools.core.text.code_chunks import code_available
from workspace_tools.core.workspace import Workspace

pytestmark = pytest.mark.skipif(not code_available(), reason="needs the code extra")


async def test_workspace_search_results_carry_and_filter_the_symbol(tmp_path: Path) -> None:
    root = make_code_repo(tmp_path / "repo")
    (root / "workspace-tools.yaml").write_text(
        "workspace:\n  chunking: {min_section_chars: 0}\n", encoding="utf-8"
    )
    (root / "docs").mkdir()
    (root / "docs" / "index.md").write_text("# Docs\n\nThe server's pages.\n", encoding="utf-8")
    Workspace(root, embedder=FakeEmbedder()).sync()  # indexed before the server starts

    async def body(session: ClientSession) -> list[types.CallToolResult]:
        await session.initialize()
        return [
            await session.call_tool(
                "workspace_search", {"query": "rank documents query words", "mode": "bm25"}
            ),
            await session.call_tool(
                "workspace_search",
                {"query": "address", "filter": {"symbol": "Server.Start"}, "mode": "hybrid"},
            ),
        ]

    params = stdio_params(root)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        ranked, filtered = await body(session)
    assert not ranked.isError and not filtered.isError
    hits: list[dict[str, Any]] = (ranked.structuredContent or {})["results"]
    assert hits[0]["id"] == "src/index.py#chunk-4"
    assert hits[0]["metadata"]["symbol"] == "SparseIndex.search"
    assert hits[0]["metadata"]["symbol_kind"] == "method"
    text = ranked.content[0]
    assert isinstance(text, types.TextContent)
    assert text.text.startswith("1. src/index.py:16-18 (symbol SparseIndex.search) (score ")
    (only,) = (filtered.structuredContent or {})["results"]
    assert only["source_id"] == "server/server.go"
    assert only["metadata"]["symbol"] == "Server.Start"
