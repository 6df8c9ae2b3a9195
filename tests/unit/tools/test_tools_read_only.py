"""Read-only means no write, for every tool; keyword search never embeds."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import FakeEmbedder
from tests.support.skills import write_skill
from tests.support.tools import call
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools import WorkspaceToolkit


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with the hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


ARGS: dict[str, list[dict[str, Any]]] = {
    "workspace_search": [
        {"query": "install package"},
        {"query": "install package", "mode": "bm25"},
        {"query": "install package", "mode": "vector"},
    ],
    "search_documents": [
        {"query": "install package"},
        {"query": "install", "mode": "grep"},
        {"query": "fresh", "paths": ["docs"]},
        {"query": "install", "mode": "grep", "output_mode": "count"},
    ],
    "workspace_read": [{"path": "docs/guide.md", "start_line": 2}, {"path": "nowhere.md"}],
    "skill": [{"name": "alpha"}],
    "skill_read": [{"skill_name": "alpha", "path": "SKILL.md"}],
    "skill_search": [{"query": "alpha"}],
    "docs_search": [{"query": "installation"}],
    "docs_list": [{}],
    "docs_get_page": [{"path": "guide.md"}, {"path": "nope.md"}],
    "docs_refresh_index": [{}],
}


@pytest.fixture
def project(tree: Path) -> tuple[Path, FakeEmbedder]:
    write_skill(tree / "skills", "alpha", "Alpha skill.", "# Alpha\n\nDo alpha things.")
    embedder = FakeEmbedder()
    ws = Workspace(tree, embedder=embedder)
    ws.sync()
    # changes on disk a syncing tool would pick up (and embed, and write)
    (tree / "docs" / "fresh.md").write_text("# Fresh\n\nA new page about install.\n")
    (tree / "docs" / "faq.md").write_text("# FAQ\n\nEdited: install questions.\n")
    return tree, embedder


@pytest.mark.parametrize("how", ["toolkit", "workspace"])
def test_no_tool_writes_under_a_read_only_toolkit(
    how: str, project: tuple[Path, FakeEmbedder]
) -> None:
    root, _ = project
    if how == "toolkit":  # a writable workspace behind a read-only toolkit
        ws = Workspace(root, embedder=FakeEmbedder())
        toolkit = WorkspaceToolkit(
            workspace=ws, read_only=True, skills_paths=["skills"], docs_root="docs"
        )
    else:  # a read-only workspace
        ws = Workspace(root, embedder=FakeEmbedder(), read_only=True)
        toolkit = WorkspaceToolkit(workspace=ws, skills_paths=["skills"], docs_root="docs")
    before = snapshot(root)
    tools = {t.name: t for t in toolkit.get_tools()}
    assert "workspace_index" not in tools
    assert set(tools) == set(ARGS)  # every tool of the toolkit is exercised below
    for name, calls in ARGS.items():
        for args in calls:
            call(tools[name], **args)
    # auto_sync asked for explicitly still cannot write through a read-only toolkit
    tools["search_documents"].auto_sync = True  # type: ignore[attr-defined]
    call(tools["search_documents"], query="install package")
    assert snapshot(root) == before


def test_keyword_search_never_calls_the_embedder(project: tuple[Path, FakeEmbedder]) -> None:
    root, _ = project
    embedder = FakeEmbedder()
    ws = Workspace(root, embedder=embedder)
    toolkit = WorkspaceToolkit(workspace=ws)  # writable: nothing stops a sync but the design
    tools = {t.name: t for t in toolkit.get_tools()}
    before = snapshot(root / ".workspace_tools")
    message = call(tools["search_documents"], query="install package")
    assert message.status == "success"
    assert "not indexed" in str(message.content)  # fresh.md is new: noted, not indexed
    call(tools["search_documents"], query="install", mode="grep")
    call(tools["workspace_search"], query="install package", mode="bm25")
    assert embedder.calls == []
    assert snapshot(root / ".workspace_tools") == before  # nor synced
    call(tools["workspace_search"], query="install package", mode="hybrid")
    assert embedder.calls == [1]  # the query itself, only in a vector-using mode
