"""workspace_read, several formulations in workspace_search, grep output modes, stored ids and
PDF pages over MCP (a real server subprocess driven by the SDK's client)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import ClientSession, types
from mcp.client.stdio import stdio_client

from tests.support.pdfs import write_two_column_pdf
from tests.unit.mcp.conftest import stdio_params


async def _session_run(root: Path, body: Any) -> Any:
    async with (
        stdio_client(stdio_params(root)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await body(session)


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_workspace_read_multi_query_grep_modes_and_ids(project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        out: dict[str, Any] = {"tools": tools}
        out["read"] = await session.call_tool(
            "workspace_read", {"path": "docs/guides/install.md", "start_line": 1, "end_line": 3}
        )
        out["outside"] = await session.call_tool("workspace_read", {"path": "../secret.txt"})
        out["multi"] = await session.call_tool(
            "workspace_search",
            {"query": ["pip install", "parse_request"], "top_k": 4, "mode": "bm25"},
        )
        out["count"] = await session.call_tool(
            "search_documents", {"query": "install", "mode": "grep", "output_mode": "count"}
        )
        out["index"] = await session.call_tool(
            "workspace_index", {"path": "/notes/launch.md", "content": "Rocket launch on Monday."}
        )
        out["filtered"] = await session.call_tool(
            "workspace_search",
            {"query": "rocket launch", "filter": {"source_id": "/notes/launch.md"}},
        )
        return out

    out = await _session_run(project, body)
    tools = out["tools"]
    assert tools["workspace_read"].annotations.readOnlyHint is True
    read = out["read"]
    assert not read.isError
    assert _text(read).startswith(
        "docs/guides/install.md (markdown) lines 1-3 of 7\n1  # Installing"
    )
    jsonschema.validate(read.structuredContent, tools["workspace_read"].outputSchema)
    assert read.structuredContent["more_lines"] == 4
    assert out["outside"].isError and "outside the workspace root" in _text(out["outside"])
    multi = out["multi"]
    assert not multi.isError, _text(multi)
    jsonschema.validate(multi.structuredContent, tools["workspace_search"].outputSchema)
    found = {h["source_id"]: h["found_by"] for h in multi.structuredContent["results"]}
    assert found["src/app.py"] == ["parse_request"]
    assert "pip install" in found["docs/guides/install.md"]
    assert "found by q2" in _text(multi)
    count = out["count"]
    rows = {r["document_path"]: r["count"] for r in count.structuredContent["results"]}
    assert rows["docs/guides/install.md"] == 2 and rows["notes.txt"] == 1
    jsonschema.validate(count.structuredContent, tools["search_documents"].outputSchema)
    assert _text(out["index"]).startswith("Indexed notes/launch.md")
    hits = out["filtered"].structuredContent["results"]
    assert [h["source_id"] for h in hits] == ["notes/launch.md"]


@pytest.mark.skipif(importlib.util.find_spec("pdfminer") is None, reason="documents extra")
async def test_a_pdf_read_and_found_over_mcp_names_its_page(project: Path) -> None:
    write_two_column_pdf(project / "two.pdf")

    async def body(session: ClientSession) -> tuple[types.CallToolResult, ...]:
        await session.call_tool("workspace_index", {"path": "two.pdf"})
        search = await session.call_tool(
            "workspace_search",
            {"query": "higher retrieval precision translates", "top_k": 1, "mode": "bm25"},
        )
        read = await session.call_tool(
            "workspace_read", {"path": "two.pdf", "start_line": 65, "end_line": 66}
        )
        grep = await session.call_tool(
            "search_documents",
            {"query": "translates to a higher", "mode": "grep", "paths": ["two.pdf"]},
        )
        return search, read, grep

    search, read, grep = await _session_run(project, body)
    assert _text(search).startswith("1. two.pdf:65-66 (page 2)")
    assert search.structuredContent["results"][0]["metadata"]["page"] == 2
    assert (
        read.structuredContent["page"] == 2 and "higher retrieval" in read.structuredContent["text"]
    )
    assert grep.structuredContent["results"][0]["page"] == 2
