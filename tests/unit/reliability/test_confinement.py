"""Confinement: every path argument of every tool stays inside its roots.

A table of hostile paths is thrown at every core call and LangChain tool that takes a path. Each
call must either be refused with a clear message (a ``WorkspaceError``, a ``ToolException`` or a
tool's error artifact) or resolve harmlessly inside its root; any other exception fails the test.
Throughout, an audit hook records every file opened and folder listed, and the test proves that
nothing under the ``outside`` folder (which holds the canary) nor ``/etc/passwd`` was touched, and
that the canary text appears in no output, no artifact and no file the tools wrote.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException

from tests.support.reliability import CANARY, Arena, FileAudit
from workspace_tools.core.docs.index import DocsIndex
from workspace_tools.core.errors import WorkspaceError
from workspace_tools.core.skills import SkillRegistry
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.docs import make_docs_tools
from workspace_tools.tools.skills import skill_tools

MIN_PATHS = 40


def hostile_paths(arena: Arena) -> list[str]:
    """Paths a model might produce to escape a root (deduplicated, order kept)."""
    canary, outside = str(arena.canary), str(arena.outside)
    paths = [
        # dot-dot climbing
        "..",
        "../",
        "../..",
        "../../..",
        "../outside/canary.txt",
        "../../outside/canary.txt",
        "../../etc/passwd",
        "../" * 40 + "etc/passwd",
        "./../outside/canary.txt",
        "docs/../../outside/canary.txt",
        "a/b/c/../../../../outside/canary.txt",
        "docs/./../.././outside/page.md",
        "....//....//outside/canary.txt",
        "..;/outside/canary.txt",
        ".../outside",
        # absolute paths
        "/etc/passwd",
        "//etc/passwd",
        "/./etc/passwd",
        canary,
        outside,
        outside + "/page.md",
        str(arena.ws) + "/../outside/canary.txt",
        str(arena.docs) + "/../outside/page.md",
        str(arena.skills) + "/demo/../../outside/canary.txt",
        # symlinks planted inside the roots
        "link_file.md",
        "link_dir/canary.txt",
        "link_dir",
        "link_dir/",
        "link_dir/.",
        "link_dir/*",
        "link_dir/**/*.txt",
        "docs/../link_dir/canary.txt",
        "./link_dir/../link_dir/canary.txt",
        "docs/deep_link.md",
        "leak.md",
        "leak_dir/page.md",
        "out/canary.txt",
        "references/up/demo/SKILL.md",
        # NUL bytes
        "\x00",
        "guide.md\x00../../etc/passwd",
        "..\x00/outside/canary.txt",
        "docs/guide.md\x00",
        # Windows-style
        "..\\..\\outside\\canary.txt",
        "..\\canary.txt",
        "docs\\..\\..\\outside\\page.md",
        "C:\\Windows\\win.ini",
        "C:/Windows/win.ini",
        "c:..\\x",
        "\\\\server\\share\\canary.txt",
        "\\etc\\passwd",
        # URL-encoded and URLs
        "%2e%2e%2f%2e%2e%2foutside%2fcanary.txt",
        "%2e%2e/outside/canary.txt",
        "..%2f..%2fetc%2fpasswd",
        "%252e%252e%252fetc%252fpasswd",
        "..%c0%af..%c0%afetc/passwd",
        "file:///etc/passwd",
        "file://" + canary,
        "http://example.com/../../etc/passwd",
        # home directory (HOME points at the outside folder during the test)
        "~",
        "~/canary.txt",
        "~root/.bashrc",
        "$HOME/canary.txt",
        # very long
        "a/" * 3000 + "x",
        "x" * 5000,
        "d" * 256 + "/x.md",
        "q/" * 2100,
        # unicode tricks
        "\uff0e\uff0e/outside/canary.txt",  # fullwidth full stops
        "\u2025/outside/canary.txt",  # two-dot leader
        "..\u2215outside\u2215canary.txt",  # division slash
        "\u202e..\u202c/outside/canary.txt",  # bidi override
        ".\u200b./outside/canary.txt",  # zero-width space
        "..\uff0foutside\uff0fcanary.txt",  # fullwidth solidus
        # whitespace and odd separators
        " ../outside/canary.txt",
        "../outside/canary.txt ",
        "\t../outside/canary.txt",
        ".. /outside/canary.txt",
        "..\n/outside/canary.txt",
    ]
    return list(dict.fromkeys(paths))


# -- the callables under test ---------------------------------------------------------------------

Call = Callable[[str], Any]


def _tool_call(tool: BaseTool, args: dict[str, Any]) -> Any:
    message = tool.invoke({"args": args, "id": "call-1", "name": tool.name, "type": "tool_call"})
    assert isinstance(message, ToolMessage)
    if message.status == "error":
        raise ToolException(str(message.content))
    artifact = message.artifact
    if isinstance(artifact, dict) and artifact.get("success") is False:
        raise ToolException(str(artifact.get("error") or message.content))
    return (message.content, message.artifact)


def build_calls(arena: Arena) -> dict[str, Call]:
    ws = Workspace(arena.ws, embedder=None)
    ws.sync()
    docs = DocsIndex(arena.docs)
    registry = SkillRegistry([str(arena.skills)], root=arena.base, entry_points=False)
    docs_tools = {t.name: t for t in make_docs_tools(arena.docs, index=docs)}
    skill_tool, skill_read, _search = skill_tools(registry)
    calls: dict[str, Call] = {
        "Workspace.read_text": ws.read_text,
        "Workspace.read": ws.read,
        "Workspace.sync": ws.sync,
        "Workspace.remove": ws.remove,
        "Workspace.chunks_of": ws.chunks_of,
        "DocsIndex.get_page": docs.get_page,
        "DocsIndex.list_pages(folder)": docs.list_pages,
        "DocsIndex.search(folder)": lambda p: docs.search("deploy", folder=p),
        "SkillRegistry.read_file": lambda p: registry.read_file("demo", p),
        "SkillRegistry.get(path)": registry.get,
        "tool docs_get_page": lambda p: _tool_call(docs_tools["docs_get_page"], {"path": p}),
        "tool docs_list": lambda p: _tool_call(docs_tools["docs_list"], {"folder": p}),
        "tool docs_search": lambda p: _tool_call(
            docs_tools["docs_search"], {"query": "deploy", "folder": p}
        ),
        "tool skill_read": lambda p: _tool_call(skill_read, {"skill_name": "demo", "path": p}),
        "tool skill": lambda p: _tool_call(skill_tool, {"name": p}),
    }
    calls.update(_workspace_tool_calls(ws))
    return calls


def _workspace_tool_calls(ws: Workspace) -> dict[str, Call]:
    """The workspace tools: ``workspace_index`` (path) and ``search_documents`` (paths)."""
    from workspace_tools.core.grep import grep
    from workspace_tools.core.grep_counts import grep_counts
    from workspace_tools.tools.toolkit import WorkspaceToolkit

    tools = {
        t.name: t for t in WorkspaceToolkit(workspace=ws, skills_entry_points=False).get_tools()
    }
    return {
        "tool workspace_index": lambda p: _tool_call(tools["workspace_index"], {"path": p}),
        "tool search_documents(keyword)": lambda p: _tool_call(
            tools["search_documents"], {"query": "canary", "paths": [p], "mode": "keyword"}
        ),
        "tool search_documents(grep)": lambda p: _tool_call(
            tools["search_documents"], {"query": "CANARY", "paths": [p], "mode": "grep"}
        ),
        "tool search_documents(grep count)": lambda p: _tool_call(
            tools["search_documents"],
            {"query": "CANARY", "paths": [p], "mode": "grep", "output_mode": "count"},
        ),
        "tool workspace_read": lambda p: _tool_call(tools["workspace_read"], {"path": p}),
        "grep()": lambda p: grep(ws.root, "CANARY", [p]),
        "grep_counts()": lambda p: grep_counts(ws.root, "CANARY", [p]),
    }


# -- the test -------------------------------------------------------------------------------------


def _refused(exc: BaseException) -> bool:
    return isinstance(exc, (WorkspaceError, ToolException))


def test_hostile_paths_are_refused_or_harmless_and_nothing_outside_is_read(
    arena: Arena, file_audit: FileAudit
) -> None:
    paths = hostile_paths(arena)
    assert len(paths) >= MIN_PATHS
    calls = build_calls(arena)
    outcomes: dict[str, dict[str, int]] = {name: {"refused": 0, "harmless": 0} for name in calls}
    outputs: list[str] = []
    unexpected: list[str] = []
    with file_audit.watch():
        for name, call in calls.items():
            for path in paths:
                try:
                    result = call(path)
                except Exception as exc:
                    if not _refused(exc):
                        unexpected.append(
                            f"{name}({path[:60]!r}) raised {type(exc).__name__}: {str(exc)[:150]}"
                        )
                        continue
                    message = str(exc)
                    assert message.strip(), f"{name}({path[:60]!r}) refused without a message"
                    outputs.append(message)
                    outcomes[name]["refused"] += 1
                else:
                    outputs.append(repr(result))
                    outcomes[name]["harmless"] += 1
    assert not unexpected, "\n".join(unexpected)
    assert not file_audit.violations(), file_audit.violations()[:10]
    leaked = [o[:200] for o in outputs if CANARY in o]
    assert not leaked, leaked
    # Nothing the tools wrote (index, conversion cache) holds the canary.
    for root in (arena.ws, arena.docs, arena.skills):
        for folder, _dirs, files in os.walk(root):
            for file in files:
                data = (
                    (Path(folder) / file).read_bytes()
                    if not (Path(folder) / file).is_symlink()
                    else b""
                )
                assert CANARY.encode() not in data, Path(folder) / file
    tried = len(paths) * len(calls)
    print(f"\nconfinement: {len(paths)} hostile paths x {len(calls)} callables = {tried} calls")
    for name, counts in outcomes.items():
        print(f"  {name}: {counts['refused']} refused, {counts['harmless']} harmless")


def test_sync_of_the_whole_root_never_follows_links_outside(
    arena: Arena, file_audit: FileAudit
) -> None:
    ws = Workspace(arena.ws, embedder=None)
    with file_audit.watch():
        report = ws.sync()
        results = ws.search(CANARY.replace("-", " "), top_k=50)
    assert not file_audit.violations()
    assert set(ws.source_ids()) == {"docs/guide.md", "notes.txt"}
    skipped = {s.path: s.reason for s in report.skipped}
    assert "outside workspace" in skipped["link_file.md"]
    assert "outside workspace" in skipped["docs/deep_link.md"]
    assert all(CANARY not in r.content for r in results)


def test_docs_and_skills_discovery_skip_links_outside(arena: Arena, file_audit: FileAudit) -> None:
    with file_audit.watch():
        docs = DocsIndex(arena.docs)
        registry = SkillRegistry([str(arena.skills)], root=arena.base, entry_points=False)
        names = (
            registry.names()
            if hasattr(registry, "names")
            else [s.name for s in registry.list_skills()]
        )
        hits = docs.search("canary page do not leak", top_k=50)
    assert not file_audit.violations()
    assert [p.path for p in docs.list_pages()] == ["guides/deploy.md", "index.md"]
    assert not hits
    assert "evil" not in names


@pytest.mark.parametrize(
    "path", ["docs/guide.md", "./docs/guide.md", "docs//guide.md", "docs/../docs/guide.md"]
)
def test_ordinary_paths_still_work(arena: Arena, path: str) -> None:
    ws = Workspace(arena.ws, embedder=None)
    assert "Install the package" in ws.read_text(path)


@pytest.mark.parametrize(
    "path", ["link_dir/canary.txt", "link_dir/*", "link_dir/**/*.txt", "link_dir/."]
)
def test_sync_through_a_symlinked_parent_folder_is_skipped(
    arena: Arena, file_audit: FileAudit, path: str
) -> None:
    """Regression: scan used to check only the last path component for a symlink."""
    ws = Workspace(arena.ws, embedder=None)
    with file_audit.watch():
        report = ws.sync(path)
    assert not file_audit.violations()
    assert not report.added
    assert any("outside workspace" in s.reason for s in report.skipped), report.skipped


def test_the_workspace_tools_accept_an_ordinary_path(arena: Arena) -> None:
    """The refusals above are about the paths, not the call: the same calls work on a good path."""
    calls = _workspace_tool_calls(Workspace(arena.ws, embedder=None))
    for name, call in calls.items():
        result = call("docs/guide.md") if "grep" not in name else call("docs")
        assert result is not None, name
