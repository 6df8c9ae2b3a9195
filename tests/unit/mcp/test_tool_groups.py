"""One builder of tool groups for the toolkit and the MCP server, and hints read from the facts.

A tool that may write (it declares ``writes``, or it ``syncs`` and can) must never be advertised
with ``readOnlyHint: true``; every shipped tool is checked through the adapter the server uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.skills import SkillRegistry
from workspace_tools.core.workspace import Workspace
from workspace_tools.mcp import server
from workspace_tools.mcp.adapt import tool_definition
from workspace_tools.mcp.config import ServerOptions
from workspace_tools.tools import WorkspaceToolkit, toolkit
from workspace_tools.tools import groups as groups_module
from workspace_tools.tools.base import ToolFacts, WorkspaceBaseTool, tool_writes
from workspace_tools.tools.groups import DocsGroup, build_tool_groups
from workspace_tools.tools.search_documents import SearchDocumentsTool

WORKSPACE = ["workspace_search", "workspace_index", "search_documents", "workspace_read"]
SKILLS = ["skill", "skill_read", "skill_search"]
DOCS = ["docs_search", "docs_list", "docs_get_page", "docs_refresh_index"]


def _read_only_hint(tool: Any) -> bool | None:
    annotations = tool_definition(tool).annotations
    assert annotations is not None, tool.name
    return annotations.readOnlyHint


def _all_groups(project: Path, *, read_only: bool = False) -> list[Any]:
    ws = Workspace(project, embedder=FakeEmbedder(), config=False, read_only=read_only)
    return build_tool_groups(
        workspace=ws,
        skills=SkillRegistry(["skills"], root=project),
        docs=[DocsGroup(root=project / "docs")],
        read_only=read_only,
    )


def test_no_tool_that_may_write_is_advertised_read_only(project: Path) -> None:
    tools = _all_groups(project)
    assert [t.name for t in tools] == [*WORKSPACE, *SKILLS, *DOCS]
    hints = {t.name: _read_only_hint(t) for t in tools}
    for t in tools:
        if tool_writes(t) is not False:
            assert hints[t.name] is False, f"{t.name} may write but is advertised read-only"
    # workspace_index writes; search_documents syncs only when built with auto_sync
    assert [name for name, hint in hints.items() if not hint] == ["workspace_index"]
    syncing = SearchDocumentsTool(workspace=tools[0].workspace, auto_sync=True)
    assert _read_only_hint(syncing) is False


def test_a_read_only_build_leaves_out_the_writers_and_says_read_only(project: Path) -> None:
    Workspace(project, embedder=FakeEmbedder(), config=False).sync()
    tools = _all_groups(project, read_only=True)
    assert [t.name for t in tools] == [
        n for n in [*WORKSPACE, *SKILLS, *DOCS] if n != "workspace_index"
    ]
    assert all(_read_only_hint(t) is True for t in tools)


class _Writer(WorkspaceBaseTool):
    name: str = "planted_writer"
    description: str = "Writes."
    facts: ClassVar[ToolFacts] = ToolFacts(title="Write", writes=True, idempotent=False)

    def _run(self) -> tuple[str, dict[str, Any]]:
        return "", {}


class _Syncer(_Writer):
    name: str = "planted_syncer"
    facts: ClassVar[ToolFacts] = ToolFacts(title="Sync", writes=False, syncs=True)
    auto_sync: bool = True


def test_a_planted_writing_or_syncing_tool_is_not_advertised_read_only() -> None:
    assert _read_only_hint(_Writer()) is False
    assert _read_only_hint(_Syncer()) is False
    assert _read_only_hint(_Syncer(auto_sync=False)) is True


def test_the_toolkit_and_the_server_use_the_one_builder(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def spy(**kw: Any) -> list[Any]:
        calls.append(kw)
        return build_tool_groups(**kw)

    monkeypatch.setattr(server, "build_tool_groups", spy)
    monkeypatch.setattr(toolkit, "build_tool_groups", spy)
    ws = Workspace(project, embedder=FakeEmbedder(), config=False)
    kit = WorkspaceToolkit(workspace=ws, skills_paths=["skills"], docs_root="docs")
    assert [t.name for t in kit.get_tools()] == [*WORKSPACE, *SKILLS, *DOCS]
    options = ServerOptions(
        root=project,
        workspace=project,
        docs=project / "docs",
        docs_scopes=("guides", "api"),
        skills=("skills",),
        sync=False,
        watch=False,
    )
    served = server.build_tools(options, embedder=FakeEmbedder())
    scoped = [f"{n}_{scope}" for scope in ("guides", "api") for n in DOCS]
    assert [t.name for t in served.tools] == [*WORKSPACE, *SKILLS, *scoped]
    assert len(calls) == 2  # one build each, no second assembly beside it
    assert [group.scope for group in calls[1]["docs"]] == ["guides", "api"]
    assert groups_module.build_tool_groups is build_tool_groups
