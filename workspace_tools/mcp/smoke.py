"""``workspace-tools mcp smoke``: start a server, list its tools through a real client, call each.

The server runs as a subprocess over stdio and is driven by the ``mcp`` SDK's ``ClientSession``.
Every tool is called once with example arguments (a page path from ``docs_list``, a skill name
from the catalogue); a call passes when it is not an error and its ``structuredContent`` matches
the tool's ``outputSchema``. One line per tool, then a summary.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

__all__ = ["Verdict", "example_arguments", "smoke"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """How one tool call went."""

    tool: str
    ok: bool
    detail: str
    milliseconds: float

    def line(self) -> str:
        """``ok   name  12.3 ms  first line`` or ``FAIL name  ...``."""
        status = "ok  " if self.ok else "FAIL"
        return f"{status} {self.tool:<28} {self.milliseconds:8.1f} ms  {self.detail}"


def example_arguments(name: str, *, page: str | None, skill: str | None) -> dict[str, Any]:
    """Arguments that exercise a tool named ``name`` (scoped and prefixed names included)."""
    examples: list[tuple[str, dict[str, Any]]] = [
        ("workspace_search", {"query": "search", "top_k": 3}),
        ("workspace_index", {"path": "."}),
        ("search_documents", {"query": "search", "top_k": 3}),
        ("workspace_read", {"path": "README.md", "end_line": 20}),
        ("docs_search", {"query": "install", "top_k": 3}),
        ("docs_list", {}),
        ("docs_get_page", {"path": page or "index"}),
        ("docs_refresh_index", {}),
        ("skill_search", {"query": "skill", "top_k": 3}),
        ("skill_read", {"skill_name": skill or "", "path": "SKILL.md", "end_line": 5}),
        ("skill", {"name": skill or ""}),
    ]
    for base, arguments in examples:
        if base in name:
            return arguments
    return {}


def _first_line(result: types.CallToolResult) -> str:
    for block in result.content:
        if isinstance(block, types.TextContent) and block.text.strip():
            return block.text.strip().splitlines()[0][:100]
    return ""


def _check(tool: types.Tool, result: types.CallToolResult) -> tuple[bool, str]:
    if result.isError:
        return False, "error: " + _first_line(result)
    if tool.outputSchema is not None:
        if result.structuredContent is None:
            return False, "no structuredContent although the tool has an outputSchema"
        try:
            jsonschema.validate(result.structuredContent, tool.outputSchema)
        except jsonschema.ValidationError as exc:
            return False, f"structuredContent does not match outputSchema: {exc.message}"
        if result.structuredContent.get("success") is False:
            return False, "success is false: " + str(result.structuredContent.get("error"))
    return True, _first_line(result)


async def _first(session: ClientSession, tools: list[types.Tool], base: str, key: str) -> Any:
    tool = next((t for t in tools if base in t.name), None)
    if tool is None:
        return None
    result = await session.call_tool(tool.name, {})
    rows = (result.structuredContent or {}).get("results") or []
    return rows[0].get(key) if rows else None


async def smoke(
    command: str, args: Sequence[str], *, env: dict[str, str] | None = None
) -> list[Verdict]:
    """Start ``command args`` as an MCP stdio server, call each of its tools once.

    Returns:
        One verdict per tool, in the server's order.
    """
    params = StdioServerParameters(command=command, args=list(args), env=env)
    verdicts: list[Verdict] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        page = await _first(session, tools, "docs_list", "path")
        skill = None
        if any(t.name == "skill" for t in tools):
            resources = (await session.list_resources()).resources
            names = [r.name for r in resources if str(r.uri) != "skills://catalogue"]
            skill = names[0] if names else None
        hit: str | None = None
        for tool in tools:
            arguments = example_arguments(tool.name, page=page, skill=skill)
            if "workspace_read" in tool.name and hit is not None:
                arguments = {"chunk_id": hit, "max_chars": 2000}  # what search found
            started = time.perf_counter()
            result = await session.call_tool(tool.name, arguments)
            if tool.name == "workspace_search":
                rows = (result.structuredContent or {}).get("results") or [{}]
                hit = rows[0].get("id")
            elapsed = (time.perf_counter() - started) * 1000
            ok, detail = _check(tool, result)
            if not ok:
                detail += f" (arguments {json.dumps(arguments)})"
            verdicts.append(Verdict(tool.name, ok, detail, elapsed))
    return verdicts
