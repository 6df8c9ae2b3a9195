"""Client configurations in the docs (``<!-- doctest: mcp-config -->``), started as written.

The JSON is parsed as the client would; each stdio server is started with exactly the
configuration's ``command`` and ``args`` (placeholders such as ``/path/to/project`` and
``${workspaceFolder}`` replaced by the sandbox's project) through the official ``mcp`` client,
which initialises a session and lists the tools. An HTTP entry's URL must be well-formed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.doc_blocks import Block

__all__ = ["PLACEHOLDERS", "run_mcp_config"]

PLACEHOLDERS = {
    "/path/to/project/.venv/bin/workspace-tools": "{sandbox}/bin/workspace-tools",
    "${workspaceFolder}/.venv/bin/workspace-tools": "{sandbox}/bin/workspace-tools",
    "/path/to/project": "{sandbox}/path/to/project",
    "${workspaceFolder}": "{sandbox}/path/to/project",
}


def _fill(value: str, sandbox: Path) -> str:
    for placeholder, real in PLACEHOLDERS.items():
        value = value.replace(placeholder, real.format(sandbox=sandbox))
    return value


PROBES = {"workspace_search": {"query": "atomic save"}, "docs_search": {"query": "guide"}}
"""The call made to a server that offers one of these tools: it must answer without an error
(a read-only server over an index that was never built would not)."""


async def _list_and_call(
    command: str, args: list[str], env: dict[str, str], cwd: Path
) -> tuple[list[str], str]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await asyncio.wait_for(session.initialize(), 120)
        listed = await asyncio.wait_for(session.list_tools(), 60)
        names = [tool.name for tool in listed.tools]
        probe = next((n for n in PROBES if n in names), None)
        if probe is None:
            return names, ""
        result = await asyncio.wait_for(session.call_tool(probe, PROBES[probe]), 60)
        text = " ".join(getattr(c, "text", "") for c in result.content)
        if result.isError:
            msg = f"{probe} answered with an error: {text}"
            raise RuntimeError(msg)
        return names, f"{probe}: {text.splitlines()[0] if text else ''}"


def run_mcp_config(block: Block, sandbox: Path, env: dict[str, str]) -> str:
    """Start every server of the configuration in ``block``; return one line per server."""
    from tests.support.doc_runner import BlockFailed

    try:
        config = json.loads(block.code)
    except json.JSONDecodeError as exc:
        msg = f"{block.where}: the configuration is not valid JSON: {exc}"
        raise BlockFailed(msg) from exc
    servers = config.get("mcpServers") or config.get("servers")
    if not isinstance(servers, dict) or not servers:
        msg = f"{block.where}: no 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code)"
        raise BlockFailed(msg)
    lines = []
    for name, server in servers.items():
        if "url" in server:
            url = urlsplit(server["url"])
            if url.scheme not in {"http", "https"} or not url.netloc:
                msg = f"{block.where}: server {name!r} has a malformed url {server['url']!r}"
                raise BlockFailed(msg)
            lines.append(f"{name}: {server['url']}")
            continue
        command = _fill(server["command"], sandbox)
        args = [_fill(a, sandbox) for a in server.get("args", [])]
        try:
            tools, probed = asyncio.run(_list_and_call(command, args, env, sandbox))
        except Exception as exc:
            msg = f"{block.where}: server {name!r} ({command} {' '.join(args)}) failed: {exc}"
            raise BlockFailed(msg) from exc
        if not tools:
            msg = f"{block.where}: server {name!r} started but offers no tools"
            raise BlockFailed(msg)
        lines.append(f"{name}: {', '.join(sorted(tools))}; {probed}")
    return "\n".join(lines) + "\n"
