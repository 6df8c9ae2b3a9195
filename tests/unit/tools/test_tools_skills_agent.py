"""SkillsMiddleware inside a real ``create_agent`` graph, driven by a fake chat model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from pydantic import Field

from workspace_tools.core.skills import SkillRegistry
from workspace_tools.tools.middleware import SkillsMiddleware


class RecordingFake(GenericFakeChatModel):
    """Fake chat model that accepts tools and records the messages it was given."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> RecordingFake:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def script() -> list[AIMessage]:
    call = {"name": "skill", "args": {"name": "pdf-tools"}, "id": "c1", "type": "tool_call"}
    return [AIMessage(content="", tool_calls=[call]), AIMessage(content="done")]


def make_agent(tmp_path: Path, make_skill) -> tuple[Any, RecordingFake]:
    make_skill("pdf-tools", "Work with PDF forms.", "# PDF body\n\nUse pdfplumber.")
    registry = SkillRegistry(["skills"], root=tmp_path, entry_points=False)
    model = RecordingFake(messages=iter(script()))
    model.seen = []
    agent = create_agent(
        model, system_prompt="You are helpful.", middleware=[SkillsMiddleware(registry)]
    )
    return agent, model


def check(result: dict[str, Any], model: RecordingFake) -> None:
    system = model.seen[0][0]
    assert isinstance(system, SystemMessage)
    blocks = system.content_blocks
    assert blocks[0]["text"] == "You are helpful."  # the user's prompt is kept, first
    assert "<name>pdf-tools</name>" in blocks[1]["text"]
    assert "<location>skills/pdf-tools/SKILL.md</location>" in blocks[1]["text"]
    tool_msgs = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert tool_msgs[0].status == "success"
    assert '<skill_content name="pdf-tools">' in tool_msgs[0].content
    assert "# PDF body" in tool_msgs[0].content
    assert tool_msgs[0].artifact["name"] == "pdf-tools"
    assert result["messages"][-1].content == "done"
    # second model call: catalogue appended once, not accumulated
    second = model.seen[1][0]
    assert len(second.content_blocks) == 2


def test_invoke(tmp_path: Path, make_skill) -> None:
    agent, model = make_agent(tmp_path, make_skill)
    check(agent.invoke({"messages": [("user", "fill my PDF form")]}), model)


async def test_ainvoke(tmp_path: Path, make_skill) -> None:
    agent, model = make_agent(tmp_path, make_skill)
    check(await agent.ainvoke({"messages": [("user", "fill my PDF form")]}), model)


def test_no_skills_adds_nothing(tmp_path: Path) -> None:
    registry = SkillRegistry([], root=tmp_path, entry_points=False)
    model = RecordingFake(messages=iter([AIMessage(content="hi")]))
    model.seen = []
    agent = create_agent(model, system_prompt="Base.", middleware=[SkillsMiddleware(registry)])
    agent.invoke({"messages": [("user", "x")]})
    assert model.seen[0][0].content == "Base."


def test_no_system_prompt(tmp_path: Path, make_skill) -> None:
    make_skill("alpha")
    registry = SkillRegistry(["skills"], root=tmp_path, entry_points=False)
    model = RecordingFake(messages=iter([AIMessage(content="hi")]))
    model.seen = []
    agent = create_agent(model, middleware=[SkillsMiddleware(registry, include_tools=False)])
    agent.invoke({"messages": [("user", "x")]})
    system = model.seen[0][0]
    assert isinstance(system, SystemMessage)
    assert "<name>alpha</name>" in system.content_blocks[0]["text"]


@dataclass
class Ctx:
    role: str


def test_dynamic_paths_use_runtime_context(tmp_path: Path, make_skill) -> None:
    make_skill("pdf-tools", "Work with PDF forms.", "# PDF body", parent=tmp_path / "dev")
    make_skill("basic", parent=tmp_path / "common")
    registry = SkillRegistry(
        lambda ctx: ["common", "dev"] if ctx and ctx.role == "dev" else ["common"],
        root=tmp_path,
        entry_points=False,
    )

    def run(role: str) -> tuple[dict[str, Any], RecordingFake]:
        model = RecordingFake(messages=iter(script()))
        model.seen = []
        agent = create_agent(model, middleware=[SkillsMiddleware(registry)], context_schema=Ctx)
        return agent.invoke({"messages": [("user", "x")]}, context=Ctx(role=role)), model

    result, model = run("dev")
    assert "<name>pdf-tools</name>" in model.seen[0][0].content_blocks[0]["text"]
    assert next(m for m in result["messages"] if isinstance(m, ToolMessage)).status == "success"
    result, model = run("user")
    assert "pdf-tools" not in model.seen[0][0].content_blocks[0]["text"]
    tool_msg = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert tool_msg.status == "error"
    assert tool_msg.content.startswith("No skill named or located at 'pdf-tools'.")


def test_catalogue_sees_new_skills_next_turn(tmp_path: Path, make_skill) -> None:
    make_skill("alpha")
    registry = SkillRegistry(["skills"], root=tmp_path, entry_points=False)
    mw = SkillsMiddleware(registry)
    assert "<name>beta</name>" not in mw.skills_prompt()
    make_skill("beta")
    assert "<name>beta</name>" in mw.skills_prompt()
