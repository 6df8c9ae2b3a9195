"""One definition of each tool: MCP tools generated from (and running) the LangChain tools."""

from __future__ import annotations

import itertools
import logging
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from mcp import types
from pydantic import BaseModel

from workspace_tools.tools.base import tool_facts, tool_title, tool_writes
from workspace_tools.tools.output_schema import omit_nulls, single_type_schema

__all__ = ["call_tool", "tool_definition"]

_LOG = logging.getLogger(__name__)
_CALLS = itertools.count(1)


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


def _annotations(tool: BaseTool) -> types.ToolAnnotations:
    facts = tool_facts(tool)
    writes = tool_writes(tool)
    return types.ToolAnnotations(
        title=tool_title(tool),
        readOnlyHint=writes is False,
        idempotentHint=facts.idempotent,
        destructiveHint=facts.destructive if writes is not False else None,
        openWorldHint=False if facts.writes is not None else None,
    )


def tool_definition(tool: BaseTool) -> types.Tool:
    """The MCP description of a LangChain tool (``outputSchema`` from its ``output_model``)."""
    output_model: type[BaseModel] | None = getattr(tool, "output_model", None)
    output = output_model.model_json_schema() if output_model is not None else None
    return types.Tool(
        name=tool.name,
        title=tool_title(tool),
        description=tool.description,
        inputSchema=_input_schema(tool),
        outputSchema=single_type_schema(output) if output is not None else None,
        annotations=_annotations(tool),
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
        Exception: A bug in the tool (not a ``ToolException``), logged and re-raised.
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
    structured = omit_nulls(structured_output(message.artifact)) if structured_output else None
    return types.CallToolResult(content=[text], structuredContent=structured, isError=False)
