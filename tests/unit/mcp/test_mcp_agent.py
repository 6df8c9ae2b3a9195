"""``langchain-mcp-adapters`` loads the served tools into ``create_agent``; a fake model calls each."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_mcp_adapters.client import MultiServerMCPClient

from tests.unit.mcp.conftest import SERVER, server_env
from workspace_tools.mcp.smoke import example_arguments


class ToolCallingFake(GenericFakeChatModel):
    """A scripted chat model that accepts tools (create_agent binds them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:
        return self


async def test_agent_calls_every_served_tool(project: Path) -> None:
    client = MultiServerMCPClient(
        {
            "workspace": {
                "transport": "stdio",
                "command": sys.executable,
                "args": [str(SERVER), "--root", str(project)],
                "env": server_env(),
            }
        }
    )
    tools = await client.get_tools()
    names = [t.name for t in tools]
    assert "workspace_search" in names
    assert "docs_get_page" in names
    calls = [
        {
            "name": name,
            "args": example_arguments(name, page="guides/install.md", skill="hello")
            if name != "workspace_read"
            else {"path": "notes.txt"},
            "id": f"call-{i}",
            "type": "tool_call",
        }
        for i, name in enumerate(names)
    ]
    model = ToolCallingFake(
        messages=iter([AIMessage(content="", tool_calls=calls), AIMessage(content="Done.")])
    )
    agent = create_agent(model=model, tools=tools, system_prompt="Use the tools.")
    state = await agent.ainvoke({"messages": [{"role": "user", "content": "Try every tool."}]})
    replies = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert sorted(m.name for m in replies) == sorted(names)
    assert all(m.status == "success" for m in replies), [m.content for m in replies]
    by_name = {m.name: m for m in replies}
    assert "Installing" in str(by_name["docs_get_page"].content)
    assert state["messages"][-1].content == "Done."
