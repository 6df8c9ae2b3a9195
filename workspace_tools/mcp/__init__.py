"""MCP servers for the workspace, documents, docs and skill tools.

``build_tools(options)`` builds the chosen tool groups once; ``create_server(served)`` puts them
behind an MCP server; ``run_stdio`` and ``run_http`` serve it. The command is
``workspace-tools mcp`` (see ``docs/mcp.md``).
"""

from workspace_tools.core.extras import require_mcp

require_mcp()  # before the imports below: a missing extra is named, not a bare ImportError

from workspace_tools.mcp.adapt import call_tool, tool_definition  # noqa: E402
from workspace_tools.mcp.config import ServerOptions, server_options  # noqa: E402
from workspace_tools.mcp.run import protect_stdout, run_http, run_stdio  # noqa: E402
from workspace_tools.mcp.server import ServedTools, build_tools, create_server  # noqa: E402

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
