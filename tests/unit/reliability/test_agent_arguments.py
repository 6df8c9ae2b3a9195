"""Arguments an agent can send: each gets a clear ``WorkspaceError`` and changes nothing.

Brace globs that multiply into thousands of walks, lone surrogates (valid in JSON, not encodable
as UTF-8), metadata that is not JSON or too large, regular expressions whose flags or nesting the
``regex`` module rejects with something else than ``regex.error``, unreadable files.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from workspace_tools.core.docs.index import DocsIndex
from workspace_tools.core.errors import InvalidInputError, WorkspaceError
from workspace_tools.core.grep import grep
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.docs import make_docs_tools
from workspace_tools.tools.toolkit import WorkspaceToolkit

pytestmark = pytest.mark.timeout(60)

BRACES = "docs/" + "{a,b}" * 16 + "*.md"
"""89 characters that expand to 65,536 patterns (each one walked the folder)."""
SURROGATE = "half an emoji \ud83d here"


def _call(tool: Any, args: dict[str, Any]) -> ToolMessage:
    message = tool.invoke({"args": args, "id": "c1", "name": tool.name, "type": "tool_call"})
    assert isinstance(message, ToolMessage)
    return message


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    for n in range(20):
        (root / "docs" / f"page{n}.md").write_text(f"# Page {n}\n\nalpha beta {n}\n")
    workspace = Workspace(root, embedder=None)
    workspace.sync()
    return workspace


def _tools(ws: Workspace) -> dict[str, Any]:
    return {t.name: t for t in WorkspaceToolkit(workspace=ws).get_tools()}


def _on_disk(ws: Workspace) -> list[str]:
    return sorted(Workspace(ws.root, embedder=None, read_only=True).source_ids())


# -- brace globs ----------------------------------------------------------------------------


def test_brace_glob_explosion_is_refused_by_sync_and_grep(ws: Workspace) -> None:
    with pytest.raises(InvalidInputError) as error:
        ws.sync([BRACES])
    message = str(error.value)
    assert "65536 patterns" in message
    assert "the limit is 256" in message
    with pytest.raises(InvalidInputError, match="the limit is 256"):
        grep(ws.root, "alpha", [BRACES])
    # nested braces multiply too: {{a,b},{c,d}} x 9 is 4**9 patterns
    with pytest.raises(InvalidInputError, match="the limit is 256"):
        ws.sync(["{{a,b},{c,d}}" * 9 + ".md"])


def test_brace_glob_explosion_is_a_tool_error(ws: Workspace) -> None:
    tools = _tools(ws)
    for name, args in [
        ("workspace_index", {"path": BRACES}),
        ("search_documents", {"query": "alpha", "paths": [BRACES]}),
        ("search_documents", {"query": "alpha", "mode": "grep", "paths": [BRACES]}),
    ]:
        message = _call(tools[name], args)
        assert message.status == "error", (name, message.content)
        assert "the limit is 256" in str(message.content), (name, message.content)


def test_small_brace_globs_still_work(ws: Workspace) -> None:
    report = ws.sync(["docs/page{1,2}.md", "docs/page{3,4{0,}}.md"])
    assert report.unchanged == 4
    found = grep(ws.root, "alpha", ["docs/page{1,2}.md"])
    assert [m.path for m in found.matches] == ["docs/page1.md", "docs/page2.md"]


# -- lone surrogates and metadata ----------------------------------------------------------


def test_lone_surrogate_content_is_refused_and_later_writes_work(ws: Workspace) -> None:
    before = ws.source_ids()
    with pytest.raises(InvalidInputError) as error:
        ws.index("notes/half.md", SURROGATE)
    message = str(error.value)
    assert "lone surrogate" in message
    assert "position 14" in message
    assert ws.source_ids() == before
    with pytest.raises(InvalidInputError, match="lone surrogate"):
        ws.index("notes/\udc80.md", "text")
    with pytest.raises(InvalidInputError, match="lone surrogate"):
        ws.index("notes/meta.md", "text", metadata={"note": SURROGATE})
    assert ws.source_ids() == before
    ws.index("notes/ok.md", "# Fine\n\nplain text")
    assert "notes/ok.md" in _on_disk(ws)
    assert ws.source_ids() == _on_disk(ws)


def test_lone_surrogate_through_workspace_index_tool(ws: Workspace) -> None:
    tool = _tools(ws)["workspace_index"]
    message = _call(tool, {"path": "notes/half.md", "content": SURROGATE})
    assert message.status == "error"
    assert "lone surrogate" in str(message.content)
    again = _call(tool, {"path": "notes/whole.md", "content": "whole text"})
    assert again.status != "error", again.content
    assert "notes/whole.md" in _on_disk(ws)
    assert ws.source_ids() == _on_disk(ws)


def test_non_json_metadata_is_refused_before_anything_changes(ws: Workspace) -> None:
    before = ws.source_ids()
    with pytest.raises(InvalidInputError) as error:
        ws.index("notes/dated.md", "text", metadata={"when": dt.date(2024, 1, 2)})
    message = str(error.value)
    assert "'when'" in message
    assert "date" in message
    assert "JSON" in message
    assert ws.source_ids() == before
    ws.index("notes/next.md", "next text", metadata={"when": "2024-01-02"})
    assert ws.source_ids() == _on_disk(ws)
    assert ws.source("notes/next.md").metadata == {"when": "2024-01-02"}  # type: ignore[union-attr]


def test_metadata_size_is_capped(ws: Workspace) -> None:
    big = {"blob": "m" * 20_000}
    with pytest.raises(InvalidInputError) as error:
        ws.index("notes/big.md", "text " * 10, metadata=big)
    message = str(error.value)
    assert "the limit is 16384" in message
    assert "notes/big.md" not in ws.source_ids()
    ws.index("notes/small.md", "text", metadata={"blob": "m" * 1000})
    assert json.dumps(ws.source("notes/small.md").metadata)  # type: ignore[union-attr]


def test_docs_folder_arguments_with_lone_surrogates(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "a.md").write_text("# A\n\nalpha\n")
    index = DocsIndex(root)
    for call in (
        lambda: index.search("alpha", folder="guides\ud83d"),
        lambda: index.list_pages("\ud83d"),
        lambda: index.get_page("guides/\udcff.md"),
    ):
        with pytest.raises(InvalidInputError, match="lone surrogate"):
            call()
    tools = {t.name: t for t in make_docs_tools(root)}
    for name, args in [
        ("docs_search", {"query": "alpha", "folder": "\ud83d"}),
        ("docs_list", {"folder": "x\ud83d"}),
    ]:
        message = _call(tools[name], args)
        assert message.status == "error"
        assert "lone surrogate" in str(message.content)


def test_lone_surrogate_paths_in_sync_grep_and_read(ws: Workspace) -> None:
    for call in (
        lambda: ws.sync(["docs/\ud83d.md"]),
        lambda: grep(ws.root, "alpha", ["docs/\ud83d.md"]),
        lambda: ws.read_text("docs/\ud83d.md"),
        lambda: grep(ws.root, "x\ud83d"),
    ):
        with pytest.raises(InvalidInputError, match="lone surrogate"):
            call()


# -- regular expressions -----------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        "(?V1)a",
        "(?a)(?u)a",
        "(?L)(?u)a",
        "(" * 200 + "a" + ")" * 200,
        "(?:" * 150 + "a" + ")" * 150,
    ],
    ids=["V1", "ascii-unicode", "locale-unicode", "200-nested", "150-nested-non-capturing"],
)
def test_regex_flags_and_nesting_give_a_clear_error(ws: Workspace, pattern: str) -> None:
    with pytest.raises(InvalidInputError) as error:
        grep(ws.root, pattern, regex_mode=True)
    assert "regular expression" in str(error.value)
    message = _call(
        _tools(ws)["search_documents"], {"query": pattern, "mode": "grep", "regex": True}
    )
    assert message.status == "error"
    assert "regular expression" in str(message.content)


@pytest.mark.parametrize(
    "pattern", [r"(?:(?R)|a)+x", r"(a(?1)?b)+", r"(?<n>a(?&n)?)x", r"(?P<n>(?P>n)|a)+x"]
)
def test_recursive_regexes_are_refused_not_a_memory_error(ws: Workspace, pattern: str) -> None:
    # (?:(?R)|a)+x on "aaaa bbb x" grew the regex module's stack to ~700 MB, then MemoryError
    (ws.root / "docs" / "bomb.md").write_text("aaaa bbb x\n" * 3)
    with pytest.raises(InvalidInputError, match="calls a group .* recursively"):
        grep(ws.root, pattern, regex_mode=True)
    message = _call(
        _tools(ws)["search_documents"], {"query": pattern, "mode": "grep", "regex": True}
    )
    assert message.status == "error"
    assert "recursively" in str(message.content)
    assert grep(ws.root, pattern, regex_mode=False).matches == []
    assert len(grep(ws.root, r"\(a\)|a{4} b+ x", regex_mode=True).matches) == 3


# -- unreadable files and the CLI -------------------------------------------------------


def test_unreadable_file_through_workspace_index_is_a_clear_error(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = ws.root / "docs" / "page3.md"
    real_open = os.open

    def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path).endswith("page3.md"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    with pytest.raises(WorkspaceError) as error:
        ws.read_text("docs/page3.md")
    assert "Permission denied" in str(error.value)
    assert "docs/page3.md" in str(error.value)
    tool = _tools(ws)["workspace_index"]
    message = _call(tool, {"path": "docs/page3.md", "metadata": {"k": "v"}})
    assert message.status == "error"
    assert "Permission denied" in str(message.content)
    assert target.exists()


def test_cli_from_a_deleted_working_directory(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    code = (
        "import os, sys\n"
        f"os.chdir({str(gone)!r}); os.rmdir({str(gone)!r})\n"
        "from workspace_tools.cli import main\n"
        "sys.exit(main(['search', 'alpha']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2
    assert "working directory" in result.stderr
    assert "no longer exists" in result.stderr
