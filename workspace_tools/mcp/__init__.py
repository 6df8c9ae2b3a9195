"""MCP servers for the workspace, documents, docs and skill tools.

``build_tools(options)`` builds the chosen tool groups once; ``create_server(served)`` puts them
behind an MCP server; ``run_stdio`` and ``run_http`` serve it. The command is
``workspace-tools mcp`` (see ``docs/mcp.md``).
"""

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
