"""One definition of each tool: MCP tools generated from the LangChain tools.

The name, description and input schema of an MCP tool are the LangChain tool's; its
``outputSchema`` is the tool's declared ``output_model``. A call runs the LangChain tool itself
(same validation, same core call, same error messages): the text it returns becomes a text block,
its artifact the ``structuredContent``, and an error (a ``ToolException`` or a validation error)
an ``isError`` result carrying the message the LangChain tool gives.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any, Final

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from mcp import types
from pydantic import BaseModel

__all__ = ["call_tool", "tool_definition"]

_LOG = logging.getLogger(__name__)
_CALLS = itertools.count(1)
_WRITING: Final = frozenset({"workspace_index"})
"""Tools that change the index whatever the workspace."""
_SYNCING: Final = frozenset({"search_documents"})
"""Tools that index new files first unless the workspace is read-only."""


def _input_schema(tool: BaseTool) -> dict[str, Any]:
    schema = tool.tool_call_schema
    data = (
        schema.model_json_schema()
        if isinstance(schema, type) and issubclass(schema, BaseModel)
        else dict(schema)  # type: ignore[arg-type]
    )
    data.setdefault("type", "object")
    data.setdefault("properties", {})
    return data


def _read_only(tool: BaseTool) -> bool:
    if tool.name in _WRITING:
        return False
    if tool.name in _SYNCING:
        workspace = getattr(tool, "workspace", None)
        return bool(getattr(workspace, "read_only", False))
    return True


def tool_definition(tool: BaseTool) -> types.Tool:
    """The MCP description of a LangChain tool (``outputSchema`` from its ``output_model``)."""
    output_model: type[BaseModel] | None = getattr(tool, "output_model", None)
    return types.Tool(
        name=tool.name,
        description=tool.description,
        inputSchema=_input_schema(tool),
        outputSchema=output_model.model_json_schema() if output_model is not None else None,
        annotations=types.ToolAnnotations(
            readOnlyHint=_read_only(tool), openWorldHint=False, destructiveHint=False
        ),
    )


def _text(message: ToolMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = [p if isinstance(p, str) else str(p.get("text", "")) for p in content]
    return "\n".join(parts)


async def call_tool(tool: BaseTool, arguments: dict[str, Any]) -> types.CallToolResult:
    """Run ``tool`` with ``arguments`` (blocking work runs in a thread) as an MCP result.

    Raises:
        Exception: a bug in the tool (not a ``ToolException`` or a validation error); it is
            logged with its traceback and re-raised.
    """
    call = {"type": "tool_call", "name": tool.name, "args": arguments, "id": f"mcp-{next(_CALLS)}"}
    try:
        message = await tool.ainvoke(call)
    except Exception:
        _LOG.exception("Tool %s failed", tool.name)
        raise
    if not isinstance(message, ToolMessage):  # pragma: no cover - tool calls give messages
        msg = f"Tool {tool.name} returned {type(message).__name__}, not a ToolMessage."
        raise TypeError(msg)
    text = types.TextContent(type="text", text=_text(message))
    if message.status == "error":
        return types.CallToolResult(content=[text], isError=True)
    structured_output = getattr(tool, "structured_output", None)
    structured = structured_output(message.artifact) if structured_output else None
    return types.CallToolResult(content=[text], structuredContent=structured, isError=False)
