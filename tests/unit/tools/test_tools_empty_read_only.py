"""An empty index tells the model what can be done, with or without workspace_index."""

from __future__ import annotations

from pathlib import Path

from tests.support.tools import call
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools import WorkspaceToolkit


def _search(ws: Workspace) -> tuple[list[str], str]:
    tools = {t.name: t for t in WorkspaceToolkit(workspace=ws, skills_paths=[]).get_tools()}
    message = call(tools["workspace_search"], query="anything")
    assert message.status == "error"
    return sorted(tools), str(message.content)


def test_a_read_only_empty_index_says_to_index_it_from_the_shell(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    Workspace(tmp_path, embedder=None)  # creates the (empty) index a read-only open needs
    names, text = _search(Workspace(tmp_path, embedder=None, read_only=True))
    assert "workspace_index" not in names
    assert "This workspace is read-only: ask the user to index it first" in text
    assert f"`workspace-tools --root {tmp_path.resolve()} index`" in text
    assert "workspace_index" not in text


def test_a_writable_empty_index_points_at_workspace_index(tmp_path: Path) -> None:
    names, text = _search(Workspace(tmp_path, embedder=None))
    assert "workspace_index" in names
    assert "Index files with workspace_index (or Workspace.sync())" in text
