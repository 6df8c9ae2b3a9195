"""SkillsMiddleware in a real ``create_agent``: allowed-tools enforcement, the catalogue budget,
async dynamic paths and disabled skills (issue 29), driven by a fake chat model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from tests.unit.tools.test_tools_skills_agent import RecordingFake
from workspace_tools.core.skills import CatalogueBudget, SkillRegistry
from workspace_tools.tools.middleware import SkillsMiddleware


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def run_agent(
    tmp_path: Path, make_skill, *, enforce: bool, allowed: str = "read_file Bash(git:*)"
) -> list[ToolMessage]:
    make_skill(
        "careful",
        "Careful file work.",
        "# Careful\n\nOnly read.",
        extra=f"allowed-tools: {allowed}\n",
    )
    make_skill("free", "Free file work.", "# Free\n\nAnything goes.")
    registry = SkillRegistry(["skills"], root=tmp_path)
    script = [
        AIMessage(content="", tool_calls=[call("delete_file", {"path": "a"}, "c0")]),
        AIMessage(content="", tool_calls=[call("skill", {"name": "careful"}, "c1")]),
        AIMessage(
            content="",
            tool_calls=[
                call("read_file", {"path": "a"}, "c2"),
                call("delete_file", {"path": "a"}, "c3"),
            ],
        ),
        AIMessage(content="", tool_calls=[call("skill", {"name": "free"}, "c4")]),
        AIMessage(content="", tool_calls=[call("delete_file", {"path": "b"}, "c5")]),
        AIMessage(content="done"),
    ]
    model = RecordingFake(messages=iter(script))
    model.seen = []
    middleware = SkillsMiddleware(registry, enforce_allowed_tools=enforce)
    agent = create_agent(model, tools=[read_file, delete_file], middleware=[middleware])
    result = agent.invoke({"messages": [("user", "clean up")]})
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def test_enforce_allowed_tools_refuses_other_tools_while_the_skill_is_active(
    tmp_path: Path, make_skill
) -> None:
    msgs = {m.tool_call_id: m for m in run_agent(tmp_path, make_skill, enforce=True)}
    assert msgs["c0"].status == "success"  # no skill active yet
    assert msgs["c1"].status == "success"
    assert msgs["c2"].content == "contents of a"  # allowed
    refused = msgs["c3"]
    assert refused.status == "error"
    assert refused.content == (
        "Tool 'delete_file' is not allowed while skill 'careful' is active: its allowed-tools "
        "are read_file, Bash(git:*). Use one of those tools, or load another skill with "
        "`skill` first."
    )
    assert msgs["c5"].content == "deleted b"  # 'free' (no allowed-tools) replaced 'careful'


def test_default_reads_allowed_tools_as_pre_approval_only(tmp_path: Path, make_skill) -> None:
    msgs = {m.tool_call_id: m for m in run_agent(tmp_path, make_skill, enforce=False)}
    assert msgs["c3"].status == "success"
    assert msgs["c3"].content == "deleted a"


def test_budget_lists_the_skills_relevant_to_the_conversation(tmp_path: Path, make_skill) -> None:
    for name, text in [
        ("pdf-forms", "Fill PDF forms."),
        ("sql-tuning", "Speed up slow SQL queries."),
        ("git-release", "Publish a git release."),
    ]:
        make_skill(name, text)
    registry = SkillRegistry(["skills"], root=tmp_path)
    model = RecordingFake(messages=iter([AIMessage(content="ok")]))
    model.seen = []
    middleware = SkillsMiddleware(registry, budget=CatalogueBudget(max_skills=1))
    agent = create_agent(model, middleware=[middleware])
    agent.invoke({"messages": [("user", "my SQL queries are slow")]})
    prompt = model.seen[0][0].content_blocks[-1]["text"]
    assert prompt.count("<skill>") == 1
    assert "<name>sql-tuning</name>" in prompt
    assert "2 more skills are not listed here (3 in all)" in prompt


async def test_async_dynamic_paths_through_ainvoke(tmp_path: Path, make_skill) -> None:
    make_skill("pdf-tools", "Work with PDF forms.", "# PDF body", parent=tmp_path / "dev")
    make_skill("basic", parent=tmp_path / "common")

    async def paths(ctx: Any) -> list[str]:
        return ["common", "dev"] if ctx and ctx.get("role") == "dev" else ["common"]

    registry = SkillRegistry(paths, root=tmp_path)
    script = [
        AIMessage(content="", tool_calls=[call("skill", {"name": "pdf-tools"}, "c1")]),
        AIMessage(content="done"),
    ]
    for role, status in (("dev", "success"), ("user", "error")):
        model = RecordingFake(messages=iter(list(script)))
        model.seen = []
        agent = create_agent(model, middleware=[SkillsMiddleware(registry)], context_schema=dict)
        result = await agent.ainvoke({"messages": [("user", "x")]}, context={"role": role})
        prompt = model.seen[0][0].content_blocks[-1]["text"]
        assert ("<name>pdf-tools</name>" in prompt) is (role == "dev")
        message = next(m for m in result["messages"] if isinstance(m, ToolMessage))
        assert message.status == status


@pytest.mark.parametrize("method", ["invoke", "ainvoke"])
async def test_disabled_skill_is_out_of_the_prompt_and_the_tools(
    tmp_path: Path, make_skill, method: str
) -> None:
    make_skill("pdf-tools", "Work with PDF forms.")
    make_skill("other")
    (tmp_path / "workspace-tools.yaml").write_text(
        "skills: [skills]\ndisabled_skills: [pdf-tools]\n", encoding="utf-8"
    )
    registry = SkillRegistry.from_project(tmp_path)
    script = [
        AIMessage(content="", tool_calls=[call("skill", {"name": "pdf-tools"}, "c1")]),
        AIMessage(content="done"),
    ]
    model = RecordingFake(messages=iter(script))
    model.seen = []
    agent = create_agent(model, middleware=[SkillsMiddleware(registry)])
    payload = {"messages": [("user", "x")]}
    result = agent.invoke(payload) if method == "invoke" else await agent.ainvoke(payload)
    prompt = model.seen[0][0].content_blocks[-1]["text"]
    assert "<name>other</name>" in prompt and "pdf-tools" not in prompt
    message = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert message.status == "error"
    assert message.content.startswith("Skill 'pdf-tools' is disabled")
