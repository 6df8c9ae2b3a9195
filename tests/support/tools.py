"""Calling LangChain tools as an agent does."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

__all__ = ["acall", "call", "toolkit_tools"]


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


def toolkit_tools(workspace: Any) -> dict[str, BaseTool]:
    """The tools of a ``WorkspaceToolkit`` over ``workspace``, by name."""
    from workspace_tools.tools import WorkspaceToolkit

    return {t.name: t for t in WorkspaceToolkit(workspace=workspace).get_tools()}
