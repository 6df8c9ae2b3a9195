"""``workspace-tools mcp smoke``: start a server, list its tools through a real client, call each.

A call passes when it is no error, its ``structuredContent`` matches its ``outputSchema`` and a
search found something.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

__all__ = ["EXPECT_HITS", "SmokeError", "Verdict", "example_arguments", "smoke"]


class SmokeError(Exception):
    """The server did not start or stopped answering; the message says why, in one line."""


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside ``exc`` (the SDK's task groups wrap them in groups)."""
    inner = getattr(exc, "exceptions", None)
    while inner:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


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


def example_arguments(
    name: str,
    *,
    page: str | None,
    skill: str | None,
    word: str | None = None,
    docs_word: str | None = None,
) -> dict[str, Any]:
    """Arguments that exercise a tool named ``name``; ``word`` and ``docs_word`` are queries."""
    query = word or "search"
    examples: list[tuple[str, dict[str, Any]]] = [
        ("workspace_search", {"query": query, "top_k": 3}),
        ("workspace_index", {"path": "."}),
        ("search_documents", {"query": query, "top_k": 3}),
        ("workspace_read", {"path": "README.md", "end_line": 20}),
        ("docs_search", {"query": docs_word or "install", "top_k": 3}),
        ("docs_list", {}),
        ("docs_get_page", {"path": page or "index"}),
        ("docs_refresh_index", {}),
        ("skill_search", {"query": skill or "skill", "top_k": 3}),
        ("skill_read", {"skill_name": skill or "", "path": "SKILL.md", "end_line": 5}),
        ("skill", {"name": skill or ""}),
    ]
    for base, arguments in examples:
        if base in name:
            return arguments
    return {}


EXPECT_HITS: Final = ("workspace_search", "search_documents", "docs_search", "skill_search")
"""Tools whose example query is taken from the data: an empty answer is a failure."""


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
    if any(base in tool.name for base in EXPECT_HITS):
        rows = (result.structuredContent or {}).get("results")
        if rows == [] or (rows is None and _first_line(result).startswith("No ")):
            return False, "no results, although the query comes from the data: " + _first_line(
                result
            )
    return True, _first_line(result)


async def _first(
    session: ClientSession,
    tools: list[types.Tool],
    base: str,
    key: str,
    arguments: dict[str, Any] | None = None,
) -> Any:
    tool = next((t for t in tools if base in t.name), None)
    if tool is None:
        return None
    result = await session.call_tool(tool.name, arguments or {})
    rows = (result.structuredContent or {}).get("results") or []
    return rows[0].get(key) if rows else None


_WORD: Final = re.compile(r"[A-Za-z]{4,}")
_MARKED: Final = re.compile(r"<<(.+?)>>")


async def _data_words(session: ClientSession, tools: list[types.Tool]) -> tuple[Any, Any, Any]:
    """A docs page, a word of its title, and a word found in the workspace's files."""
    page = await _first(session, tools, "docs_list", "path")
    title = await _first(session, tools, "docs_list", "title")
    words = _WORD.findall(str(title or ""))
    docs_word = max(words, key=len) if words else None
    snippet = await _first(
        session,
        tools,
        "search_documents",
        "snippet",
        {"query": r"\b[A-Za-z]{5,}\b", "mode": "grep", "regex": True, "top_k": 1},
    )
    marked = _MARKED.search(str(snippet or ""))
    return page, docs_word, marked.group(1) if marked else None


async def smoke(
    command: str,
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
) -> list[Verdict]:
    """Start ``command args`` as an MCP stdio server (in ``cwd``), call each of its tools once.

    Args:
        command: The server's executable.
        args: Its arguments.
        env: Its environment (default: this process's).
        cwd: The folder the server starts in.

    Returns:
        One verdict per tool, in the server's order.

    Raises:
        SmokeError: the server could not be started, or failed or exited while being called.
    """
    params = StdioServerParameters(
        command=command, args=list(args), env=dict(os.environ) if env is None else env, cwd=cwd
    )
    try:
        return await _smoke(params)
    except Exception as exc:  # an ExceptionGroup of the SDK's task groups, McpError, OSError
        cause = _leaf(exc)
        if not isinstance(cause, McpError | OSError | anyio.ClosedResourceError):
            raise  # a bug here, not the server's answer: keep the traceback
        text = " ".join(str(cause).split()) or type(cause).__name__
        msg = f"The MCP server failed: {text}"
        raise SmokeError(msg) from exc


async def _smoke(params: StdioServerParameters) -> list[Verdict]:
    verdicts: list[Verdict] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        page, docs_word, word = await _data_words(session, tools)
        skill = None
        if any(t.name == "skill" for t in tools):
            resources = (await session.list_resources()).resources
            skills = [r for r in resources if str(r.uri).startswith("skills://")]
            names = [r.name for r in skills if str(r.uri) != "skills://catalogue"]
            skill = names[0] if names else None
        hit: str | None = None
        for tool in tools:
            arguments = example_arguments(
                tool.name, page=page, skill=skill, word=word, docs_word=docs_word
            )
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
