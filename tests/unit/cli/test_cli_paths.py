"""Every path given is checked: missing, too long, or a served root left out, each said."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from workspace_tools.cli import main
from workspace_tools.core.errors import InvalidInputError, WorkspaceError
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.toolkit import WorkspaceToolkit

LONG = "a" * 300


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv",
    [
        ["index", LONG],
        ["grep", "x", LONG],
        ["--root", LONG, "search", "x"],
        ["--root", LONG, "stats"],
        ["docs", "list", "--root", LONG],
        ["skills", "add", LONG],
        ["--root", LONG, "skills", "list"],
    ],
    ids=["index", "grep", "search-root", "stats-root", "docs-root", "skills-add", "skills-root"],
)
def test_a_path_too_long_is_a_clean_error(
    argv: list[str],
    tree: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tree)
    code, out, err = run(capsys, "--embedder", "none", *argv)
    assert code == 2, err
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "Traceback" not in err and "OSError" not in err
    assert "File name too long" in err or "is not a folder" in err or "does not exist" in err
    if "File name too long" in err:
        assert "characters). Check the path and try again." in err


def test_mcp_skills_and_workspace_paths_are_checked(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stdout_file = os.fstat(1)
    code, out, err = run(capsys, "--root", str(tree), "mcp", "--skills", "/nope")
    assert os.fstat(1) == stdout_file  # refused before stdout is kept for the protocol
    assert code == 2 and out == ""
    assert err.startswith("error: --skills '/nope' does not exist (looked for /nope).")
    code, _, err = run(capsys, "--root", str(tree), "mcp", "--workspace", "nope")
    assert code == 2 and err.startswith("error: --workspace ") and "is not a folder" in err
    code, _, err = run(capsys, "--root", str(tree), "mcp", "smoke", "--skills", "nope")
    assert code == 2 and "--skills 'nope' does not exist" in err


def test_toolkit_refuses_a_missing_skills_path(tree: Path) -> None:
    ws = Workspace(tree, embedder=None)
    with pytest.raises(InvalidInputError) as info:
        WorkspaceToolkit(workspace=ws, skills_paths=["does-not-exist"])
    assert isinstance(info.value, WorkspaceError)
    assert str(info.value) == (
        f"skills_paths entry 'does-not-exist' does not exist (looked for "
        f"{ws.root / 'does-not-exist'}); give skills folders relative to the workspace root, "
        "or globs."
    )
    WorkspaceToolkit(workspace=ws, skills_paths=["**/skills"])  # a glob may match later


def test_toolkit_warns_of_a_missing_configured_skills_path(
    tree: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tree / "workspace-tools.yaml").write_text("skills: [gone]\n", encoding="utf-8")
    toolkit = WorkspaceToolkit(workspace=Workspace(tree, embedder=None))
    with caplog.at_level(logging.WARNING, logger="workspace_tools.tools.toolkit"):
        toolkit.get_tools()
    assert "Skills path 'gone' of workspace-tools.yaml does not exist" in caplog.text


def test_the_project_file_is_not_indexed(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "workspace-tools.yaml").write_text(
        "# install settings: install install install\nskills: []\n", encoding="utf-8"
    )
    root = ("--root", str(tree), "--embedder", "none", "-q")
    assert run(capsys, *root, "index")[0] == 0
    ws = Workspace(tree, embedder=None, read_only=True)
    assert "workspace-tools.yaml" not in ws.source_ids()
    code, out, _ = run(capsys, *root, "search", "install")
    assert code == 0 and "workspace-tools.yaml" not in out
    assert out.startswith(" 1. docs/guide.md")
    # named explicitly, it is read like any file
    assert run(capsys, *root, "index", str(tree / "workspace-tools.yaml"))[0] == 0
    assert "workspace-tools.yaml" in Workspace(tree, embedder=None).source_ids()


def test_excluded_files_is_a_scan_setting(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "workspace-tools.yaml").write_text(
        "workspace:\n  scan: {excluded_files: [notes.txt]}\n", encoding="utf-8"
    )
    assert run(capsys, "--root", str(tree), "--embedder", "none", "-q", "index")[0] == 0
    ids = Workspace(tree, embedder=None, read_only=True).source_ids()
    assert "notes.txt" not in ids
    assert "workspace-tools.yaml" in ids  # giving the list replaces the default one
