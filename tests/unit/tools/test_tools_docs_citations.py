"""Docs tools cite pages as the workspace tools do, and read them back in either form."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tools import call
from workspace_tools.core.workspace import Workspace
from workspace_tools.mcp.config import ServerOptions
from workspace_tools.mcp.server import build_tools
from workspace_tools.tools import WorkspaceToolkit
from workspace_tools.tools.docs import make_docs_tools


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "docs" / "guides").mkdir(parents=True)
    (root / "docs" / "concepts.md").write_text(
        "# Concepts\n\nIntro.\n\n## Incremental sync\n\nOnly changed files are re-indexed.\n",
        encoding="utf-8",
    )
    (root / "docs" / "guides" / "deploy.mdx").write_text(
        "---\ntitle: Deployment Guide\ndescription: Ship it.\n---\n\n# Deploy\n\nPush the image.\n",
        encoding="utf-8",
    )
    return root


def _tools(project: Path) -> dict[str, object]:
    ws = Workspace(project, embedder=None, index_dir=project.parent / "index")
    ws.sync()
    toolkit = WorkspaceToolkit(workspace=ws, docs_root="docs", skills_paths=[])
    return {t.name: t for t in toolkit.get_tools()}


def test_docs_search_cites_the_path_workspace_search_cites(project: Path) -> None:
    tools = _tools(project)
    workspace = str(call(tools["workspace_search"], query="incremental sync").content)  # type: ignore[arg-type]
    docs = str(call(tools["docs_search"], query="incremental sync").content)  # type: ignore[arg-type]
    assert "docs/concepts.md:" in workspace
    assert "(docs/concepts.md:7, score" in docs
    listed = str(call(tools["docs_list"]).content)  # type: ignore[arg-type]
    assert "- docs/concepts.md: Concepts" in listed
    assert "- docs/guides/deploy.mdx: Deployment Guide" in listed


@pytest.mark.parametrize(
    "path", ["docs/concepts.md", "./docs/concepts.md", "concepts.md", "docs/concepts", "concepts"]
)
def test_docs_get_page_accepts_the_path_as_printed_and_as_docs_relative(
    project: Path, path: str
) -> None:
    message = call(_tools(project)["docs_get_page"], path=path)  # type: ignore[arg-type]
    assert message.status == "success", message.content
    assert str(message.content).startswith("path: docs/concepts.md\n")
    assert message.artifact["page"]["path"] == "concepts.md"  # artifacts: docs-root relative


def test_a_missing_page_is_still_an_error_with_its_suggestions(project: Path) -> None:
    message = call(_tools(project)["docs_get_page"], path="docs/concept.md")  # type: ignore[arg-type]
    assert message.status == "error"
    assert "No docs page 'concept.md'. Did you mean: concepts.md" in str(message.content)


def test_docs_get_page_does_not_repeat_the_title(project: Path) -> None:
    (tool,) = [t for t in make_docs_tools(project / "docs") if t.name == "docs_get_page"]
    text = str(call(tool, path="concepts.md").content)
    assert text.count("Concepts") == 1, text
    assert text.startswith("path: concepts.md\n\n# Concepts\n")
    # a frontmatter title that differs from the first heading is still said once
    text = str(call(tool, path="guides/deploy").content)
    assert text.startswith("# Deployment Guide\npath: guides/deploy.mdx\ndescription: Ship it.\n")
    assert text.count("Deployment Guide") == 1
    assert "# Deploy\n" in text


def test_docs_tools_alone_cite_paths_relative_to_the_docs_root(project: Path) -> None:
    tools = {t.name: t for t in make_docs_tools(project / "docs")}
    assert "(concepts.md:7, score" in str(call(tools["docs_search"], query="incremental").content)
    assert call(tools["docs_get_page"], path="docs/concepts.md").status == "error"


def test_cite_from_a_folder_not_holding_the_docs_is_ignored(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tools = {t.name: t for t in make_docs_tools(project / "docs", cite_from=elsewhere)}
    assert "(concepts.md:7, score" in str(call(tools["docs_search"], query="incremental").content)


def test_the_mcp_server_serving_workspace_and_docs_cites_alike(project: Path) -> None:
    options = ServerOptions(
        root=project, workspace=project, docs=project / "docs", sync=True, read_only=False
    )
    served = build_tools(options, embedder="none")
    tools = {t.name: t for t in served.tools}
    assert "(docs/concepts.md:7, score" in str(
        call(tools["docs_search"], query="incremental sync").content
    )
    assert "docs/concepts.md:" in str(call(tools["workspace_search"], query="incremental").content)
    assert call(tools["docs_get_page"], path="docs/concepts.md").status == "success"
