"""Tool titles and hints from the tools' own facts, and single-type output schemas (issue 29).

Through the real server (a subprocess driven by the SDK client): every tool advertised
``readOnlyHint: true`` is called and must leave the project (index included) byte-for-byte
unchanged; the one tool that writes is called to show the check sees a write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
from langchain_core.tools import tool
from mcp import ClientSession, types
from mcp.client.stdio import stdio_client

from tests.support.fakes import FakeEmbedder
from tests.unit.mcp.conftest import stdio_params, tree_digest
from workspace_tools.core.skills import SkillRegistry
from workspace_tools.core.workspace import Workspace
from workspace_tools.mcp.adapt import tool_definition
from workspace_tools.mcp.smoke import example_arguments
from workspace_tools.tools import WorkspaceToolkit
from workspace_tools.tools.base import ToolFacts, WorkspaceBaseTool, tool_facts
from workspace_tools.tools.docs import make_docs_tools
from workspace_tools.tools.skills import skill_tools


async def _run(root: Path, body: Any, *flags: str) -> Any:
    async with (
        stdio_client(stdio_params(root, *flags)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await body(session)


async def test_read_only_tools_leave_the_project_unchanged(project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        tools = (await session.list_tools()).tools
        # a file not indexed yet: any tool that indexes or syncs would write
        (project / "new.md").write_text("# New\n\nA new page about search.\n", encoding="utf-8")
        before = tree_digest(project)
        changed: dict[str, Any] = {}
        for t in tools:
            assert t.annotations is not None, t.name
            if not t.annotations.readOnlyHint:
                continue
            args = example_arguments(t.name, page="index", skill="hello")
            if t.name == "workspace_read":
                args = {"path": "notes.txt"}  # a file of the test project
            result = await session.call_tool(t.name, args)
            assert not result.isError, (t.name, result.content)
            after = tree_digest(project)
            if after != before:
                changed[t.name] = sorted(set(after.items()) ^ set(before.items()))
        # the check can see a write: the tool that writes changes the index
        assert "workspace_index" not in [t.name for t in tools if t.annotations.readOnlyHint]
        assert not (await session.call_tool("workspace_index", {"path": "new.md"})).isError
        changed["(workspace_index wrote)"] = tree_digest(project) != before
        return changed

    changed = await _run(project, body)
    assert changed == {"(workspace_index wrote)": True}


async def test_titles_hints_and_single_type_output_schemas(project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, types.Tool]:
        return {t.name: t for t in (await session.list_tools()).tools}

    tools = await _run(project, body)
    assert tools["workspace_search"].title == "Search the workspace"
    assert tools["docs_get_page"].title == "Read a docs page"
    index = tools["workspace_index"].annotations
    assert index is not None
    assert (index.readOnlyHint, index.idempotentHint, index.destructiveHint) == (False, True, False)
    for name, t in tools.items():
        assert t.title, name
        assert t.annotations is not None and t.annotations.idempotentHint is not None, name
        assert t.outputSchema is not None
        _assert_single_type(t.outputSchema, name)
        jsonschema.Draft202012Validator.check_schema(t.outputSchema)


def _assert_single_type(node: Any, where: str) -> None:
    if isinstance(node, dict):
        kind = node.get("type")
        assert not isinstance(kind, list), f"{where}: type list {kind}"
        assert {"type": "null"} not in node.get("anyOf", []), f"{where}: anyOf with null"
        for key, value in node.items():
            _assert_single_type(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _assert_single_type(value, f"{where}[{i}]")


async def test_structured_content_omits_nulls_and_matches(project: Path) -> None:
    async def body(session: ClientSession) -> list[tuple[types.Tool, types.CallToolResult]]:
        out = []
        for t in (await session.list_tools()).tools:
            args = example_arguments(t.name, page="index", skill="hello")
            if t.name == "workspace_read":
                args = {"path": "notes.txt"}  # a file of the test project
            out.append((t, await session.call_tool(t.name, args)))
        return out

    for t, result in await _run(project, body):
        assert not result.isError, t.name
        assert result.structuredContent is not None
        jsonschema.validate(result.structuredContent, t.outputSchema)  # type: ignore[arg-type]


def test_every_shipped_tool_declares_its_facts(project: Path) -> None:
    ws = Workspace(project, embedder=FakeEmbedder())
    tools = [
        *WorkspaceToolkit(workspace=ws, skills_paths=[]).get_tools(),
        *skill_tools(SkillRegistry(["skills"], root=project)),
        *make_docs_tools(project / "docs"),
    ]
    for t in tools:
        facts = tool_facts(t)
        assert facts.title and facts.writes is not None and facts.idempotent is not None, t.name


def test_a_tool_that_says_nothing_is_not_advertised_read_only() -> None:
    @tool
    def mystery(x: str) -> str:
        """Does something."""
        return x

    class Quiet(WorkspaceBaseTool):
        name: str = "quiet"
        description: str = "Says nothing about itself."

        def _run(self) -> tuple[str, dict[str, Any]]:
            return "", {}

    for t in (mystery, Quiet()):
        annotations = tool_definition(t).annotations
        assert annotations is not None
        assert annotations.readOnlyHint is False
        assert annotations.title is None
    assert tool_facts(Quiet()) == ToolFacts()
