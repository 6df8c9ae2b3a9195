"""A long sync inside a tool streams its progress to the LangGraph run (custom stream + events)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from tests.support.fakes import FakeEmbedder
from tests.support.tools import call
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools import WorkspaceToolkit
from workspace_tools.tools.base import PROGRESS_EVENT


class ToolCallingFake(GenericFakeChatModel):
    disable_streaming: bool = True

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:
        return self


def _script() -> list[AIMessage]:
    index = {"name": "workspace_index", "args": {"path": "docs"}, "id": "c1", "type": "tool_call"}
    return [AIMessage(content="", tool_calls=[index]), AIMessage(content="indexed")]


def _agent(root: Path) -> Any:
    for i in range(40):
        (root / "docs" / f"page{i:02d}.md").write_text(f"# Page {i}\n\nText {i}.\n")
    ws = Workspace(root, embedder=FakeEmbedder())
    toolkit = WorkspaceToolkit(workspace=ws, skills_paths=[])
    return create_agent(ToolCallingFake(messages=iter(_script())), tools=toolkit.get_tools())


def _check(events: list[dict[str, Any]]) -> None:
    assert events, "no progress reached the stream"
    assert all(e["event"] == PROGRESS_EVENT for e in events)
    stages = {e["stage"] for e in events}
    assert {"Reading", "Embedding"} <= stages
    for stage in stages:
        last = [e for e in events if e["stage"] == stage][-1]
        assert last["done"] == last["total"] > 0  # each stage reports its end


def test_sync_in_a_tool_streams_progress_to_the_graph(tree: Path) -> None:
    agent = _agent(tree)
    custom = list(agent.stream({"messages": [("user", "index the docs")]}, stream_mode="custom"))
    _check(custom)


async def test_sync_progress_is_also_a_custom_event(tree: Path) -> None:
    agent = _agent(tree)
    events = [
        event["data"]
        async for event in agent.astream_events(
            {"messages": [("user", "index the docs")]}, version="v2"
        )
        if event["event"] == "on_custom_event" and event["name"] == PROGRESS_EVENT
    ]
    _check(events)


def test_outside_a_graph_the_tool_just_syncs(tree: Path) -> None:
    ws = Workspace(tree, embedder=FakeEmbedder())
    tools = {t.name: t for t in WorkspaceToolkit(workspace=ws, skills_paths=[]).get_tools()}
    message = call(tools["workspace_index"], path="docs")
    assert message.status == "success"
    assert message.artifact["added"]
