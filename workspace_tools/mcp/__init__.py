"""MCP servers for the workspace, documents, docs and skill tools (see ``docs/mcp.md``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_tools._lazy import lazy_getattr
from workspace_tools.core.extras import require_mcp

require_mcp()  # a missing extra is named here, not as a bare ImportError on first use

if TYPE_CHECKING:
    from workspace_tools.mcp.adapt import call_tool, tool_definition
    from workspace_tools.mcp.config import ServerOptions, server_options
    from workspace_tools.mcp.run import protect_stdout, run_http, run_stdio
    from workspace_tools.mcp.server import ServedTools, build_tools, create_server

__all__ = [
    "ServedTools",
    "ServerOptions",
    "build_tools",
    "call_tool",
    "create_server",
    "protect_stdout",
    "run_http",
    "run_stdio",
    "server_options",
    "tool_definition",
]

_NAMES = {
    "call_tool": "workspace_tools.mcp.adapt",
    "tool_definition": "workspace_tools.mcp.adapt",
    "ServerOptions": "workspace_tools.mcp.config",
    "server_options": "workspace_tools.mcp.config",
    "protect_stdout": "workspace_tools.mcp.run",
    "run_http": "workspace_tools.mcp.run",
    "run_stdio": "workspace_tools.mcp.run",
    "ServedTools": "workspace_tools.mcp.server",
    "build_tools": "workspace_tools.mcp.server",
    "create_server": "workspace_tools.mcp.server",
}
__getattr__ = lazy_getattr(__name__, _NAMES, globals())
