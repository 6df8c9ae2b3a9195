"""Declared output models and the generated MCP definitions, in process."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.skills import SkillRegistry
from workspace_tools.core.workspace import Workspace
from workspace_tools.mcp.adapt import tool_definition
from workspace_tools.tools import WorkspaceToolkit
from workspace_tools.tools.docs import DocsSearchTool, make_docs_tools
from workspace_tools.tools.output_schema import single_type_schema
from workspace_tools.tools.search_documents import SearchDocumentsTool
from workspace_tools.tools.skills import skill_tools


def _tools(project: Path, *, read_only: bool = False) -> list:
    ws = Workspace(project, embedder=FakeEmbedder(), read_only=read_only)
    return [
        *WorkspaceToolkit(workspace=ws, skills_paths=[]).get_tools(),
        *skill_tools(SkillRegistry(["skills"], root=project)),
        *make_docs_tools(project / "docs"),
    ]


def test_every_tool_declares_an_object_output_model(project: Path) -> None:
    tools = _tools(project)
    assert len(tools) == 11
    for tool in tools:
        schema = tool.output_model.model_json_schema()
        assert schema["type"] == "object", tool.name
        definition = tool_definition(tool)
        assert definition.outputSchema == single_type_schema(schema)
        assert definition.name == tool.name


def test_list_artifacts_are_given_as_results_and_checked() -> None:
    hit = {"path": "a.md", "title": "A", "heading": "", "snippet": "x", "score": 1.0, "line": 1}
    assert DocsSearchTool.structured_output([hit]) == {"results": [hit]}
    with pytest.raises(ValidationError, match="results.0.score"):
        DocsSearchTool.structured_output([{**hit, "score": "high"}])


def test_read_only_hints(project: Path) -> None:
    hints = {t.name: tool_definition(t).annotations.readOnlyHint for t in _tools(project)}
    assert hints["workspace_search"] is True
    assert hints["workspace_index"] is False
    assert hints["search_documents"] is True  # auto_sync is off by default
    assert hints["docs_refresh_index"] is True  # rebuilds memory only
    ws = Workspace(project, embedder=FakeEmbedder())
    syncing = SearchDocumentsTool(workspace=ws, auto_sync=True)
    assert tool_definition(syncing).annotations.readOnlyHint is False  # it indexes new files first
    read_only = {t.name: tool_definition(t) for t in _tools(project, read_only=True)}
    assert "workspace_index" not in read_only
    assert read_only["search_documents"].annotations.readOnlyHint is True
