"""The server over streamable HTTP, driven by the ``mcp`` SDK's client; concurrency; security."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path

import jsonschema
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from tests.unit.mcp.conftest import http_server


async def _tools_and_search(url: str) -> tuple[list[types.Tool], types.CallToolResult]:
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as s:
        await s.initialize()
        tools = (await s.list_tools()).tools
        result = await s.call_tool("workspace_search", {"query": "install", "mode": "hybrid"})
        return tools, result


async def _client(url: str, client: int, calls: int) -> list[types.CallToolResult]:
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as s:
        await s.initialize()
        queries = ["install", "search", "parse request", "meeting notes", "upgrade"]
        jobs = []
        for i in range(calls):
            query = queries[(client + i) % len(queries)]
            if i % 2:
                jobs.append(s.call_tool("workspace_search", {"query": query, "top_k": 3}))
            else:
                jobs.append(s.call_tool("docs_search", {"query": query}))
        return list(await asyncio.gather(*jobs))


async def test_http_lists_and_calls_tools(project: Path) -> None:
    with http_server(project) as url:
        tools, result = await _tools_and_search(url)
    by_name = {t.name: t for t in tools}
    assert {"workspace_search", "search_documents", "docs_search", "skill"} <= set(by_name)
    assert not result.isError
    assert result.structuredContent["results"]
    jsonschema.validate(result.structuredContent, by_name["workspace_search"].outputSchema)


async def test_twenty_concurrent_calls_from_four_clients_all_answered(project: Path) -> None:
    with http_server(project) as url:
        answers = await asyncio.gather(*(_client(url, c, 5) for c in range(4)))
    flat = [r for client in answers for r in client]
    assert len(flat) == 20
    assert all(not r.isError for r in flat), [r.content for r in flat if r.isError]
    assert all(isinstance(r.structuredContent["results"], list) for r in flat)
    assert sum(bool(r.structuredContent["results"]) for r in flat) >= 10


def test_http_refuses_foreign_host_header(project: Path) -> None:
    with http_server(project) as url:
        body = (
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            b'"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}'
        )
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        good = urllib.request.Request(url, data=body, headers=headers, method="POST")
        with urllib.request.urlopen(good, timeout=30) as response:
            assert response.status == 200
        evil = urllib.request.Request(
            url, data=body, headers={**headers, "Host": "evil.example:80"}, method="POST"
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(evil, timeout=30)
        assert refused.value.code == 421
