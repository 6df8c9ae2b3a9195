"""Hostile input: every case gets a bounded, clear outcome.

Each case is a function that returns a short description of what happened; the test asserts the
outcome (a clear error message, a skip with its reason, or a bounded result). Wall time is not
asserted (it depends on the machine's load); a case that hangs fails on the module's timeout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from workspace_tools.core.docs.index import DocsIndex
from workspace_tools.core.errors import InvalidInputError, WorkspaceError
from workspace_tools.core.grep import grep
from workspace_tools.core.skills import SkillRegistry
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.docs import make_docs_tools
from workspace_tools.tools.toolkit import WorkspaceToolkit

pytestmark = pytest.mark.timeout(300)
"""A hang guard, not a speed test: a bounded case finishes in seconds even on a loaded machine."""

ALIAS_BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
)
INVALID_UTF8 = b"# Title\n\nvalid start \xff\xfe\xc3\x28 broken \xed\xa0\x80 surrogate\n"
BINARY = bytes(range(256)) * 64


def _sparse_file(path: Path, size: int) -> None:
    with open(path, "wb") as handle:
        handle.truncate(size)  # a hole: no data is written


def _call(tool: Any, args: dict[str, Any]) -> ToolMessage:
    message = tool.invoke({"args": args, "id": "c1", "name": tool.name, "type": "tool_call"})
    assert isinstance(message, ToolMessage)
    return message


# -- skills ---------------------------------------------------------------------------------------


def _skill_case(tmp_path: Path, name: str, data: bytes) -> str:
    skills = tmp_path / f"skills-{name}"
    good = skills / "good"
    good.mkdir(parents=True)
    (good / "SKILL.md").write_text("---\nname: good\ndescription: A good skill.\n---\nBody\n")
    bad = skills / name
    bad.mkdir()
    if name == "huge-sparse":
        _sparse_file(bad / "SKILL.md", 100 * 1024 * 1024)
    else:
        (bad / "SKILL.md").write_bytes(data)
    registry = SkillRegistry([str(skills)], root=tmp_path, entry_points=False)
    names = (
        registry.names() if hasattr(registry, "names") else [s.name for s in registry.list_skills()]
    )
    assert "good" in [s.name for s in registry.list_skills()], names
    messages = [d.message for d in registry.diagnostics() if name in str(d.path)]
    assert messages, f"no diagnostic for {name}"
    return messages[0]


SKILL_CASES: dict[str, tuple[bytes, str]] = {
    "alias-bomb": (
        f"---\nname: alias-bomb\ndescription: x\n{ALIAS_BOMB}---\nBody\n".encode(),
        "alias",
    ),
    "alias-bomb-in-description": (
        f"---\n{ALIAS_BOMB}name: alias-bomb-in-description\ndescription: *i\n---\nBody\n".encode(),
        "alias",
    ),
    "huge-frontmatter": (
        (
            "---\nname: huge-frontmatter\ndescription: x\nmetadata:\n"
            + "".join(f"  k{i}: {'v' * 50}\n" for i in range(4000))
            + "---\nBody\n"
        ).encode(),
        "frontmatter",
    ),
    "several-mb": (
        ("---\nname: several-mb\ndescription: x\n---\n" + "word " * 800_000).encode(),
        "limit",
    ),
    "huge-sparse": (b"", "limit"),
    "binary": (BINARY, "UTF-8"),
    "invalid-utf8": (b"---\nname: invalid-utf8\ndescription: x\n---\n" + INVALID_UTF8, "UTF-8"),
    "no-frontmatter-binary-nul": (b"\x00" * 10_000, ""),
}


@pytest.mark.parametrize("name", list(SKILL_CASES))
def test_hostile_skill_files_are_reported_not_fatal(tmp_path: Path, name: str) -> None:
    data, expected = SKILL_CASES[name]
    message = _skill_case(tmp_path, name, data)
    assert expected in message, message
    assert len(message) < 2000


def test_reading_a_huge_or_binary_skill_resource_is_bounded(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: Demo.\n---\nBody\n")
    _sparse_file(skill / "big.txt", 100 * 1024 * 1024)
    (skill / "blob.md").write_bytes(BINARY)
    (skill / "long.md").write_text("x" * 1_000_000 + "\n" + "line\n" * 5000)
    registry = SkillRegistry([str(tmp_path / "skills")], root=tmp_path, entry_points=False)
    with pytest.raises(InvalidInputError, match="larger than"):
        registry.read_file("demo", "big.txt")
    assert registry.read_file("demo", "blob.md").binary
    page = registry.read_file("demo", "long.md")
    assert page.truncated and page.end_line - page.start_line < 2000


# -- docs -----------------------------------------------------------------------------------------

DOCS_CASES: dict[str, bytes] = {
    "alias-bomb.md": f"---\n{ALIAS_BOMB}title: *i\ndescription: *h\n---\n# Bomb\n\nalpha\n".encode(),
    "huge-frontmatter.md": (
        "---\ntitle: Big\n"
        + "".join(f"k{i}: {'v' * 60}\n" for i in range(20_000))
        + "---\n# Big\n\nalpha\n"
    ).encode(),
    "binary.md": BINARY,
    "invalid-utf8.md": INVALID_UTF8,
    "long-line.md": ("# Long\n\n" + "alpha " * 200_000 + "\n").encode(),
    "several-mb.md": ("# Many\n\n" + "alpha beta gamma delta\n" * 250_000).encode(),
}


@pytest.mark.slow  # indexes several MB of hostile pages
def test_hostile_docs_pages_give_a_bounded_index(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "ok.md").write_text("# OK\n\nalpha page\n")
    for name, data in DOCS_CASES.items():
        (root / name).write_bytes(data)
    _sparse_file(root / "sparse-100mb.md", 100 * 1024 * 1024)
    index = DocsIndex(root)
    pages = {p.path: p for p in index.list_pages()}  # type: ignore[attr-defined]
    assert "ok.md" in pages
    assert "sparse-100mb.md" not in pages  # too large: skipped, not read
    for page in pages.values():
        assert len(page.title) <= 1000 and len(page.description) <= 2000, page.path
    hits = index.search("alpha", top_k=10**9)
    assert hits
    assert all(len(h.snippet) < 2000 for h in hits)
    tools = {t.name: t for t in make_docs_tools(root, index=index)}  # type: ignore[arg-type]
    page = _call(tools["docs_get_page"], {"path": "long-line.md"})
    assert len(str(page.content)) < 10_000
    huge = _call(tools["docs_search"], {"query": "alpha " * 20_000})
    assert huge.status == "error" and "query" in str(huge.content)
    too_many = _call(tools["docs_search"], {"query": "alpha", "top_k": 10**9})
    assert too_many.status == "error" and "top_k" in str(too_many.content)


# -- workspace, grep and their tools -------------------------------------------------------------


@pytest.fixture
def hostile_ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ok.md").write_text("# OK\n\nalpha beta\n")
    _sparse_file(root / "sparse-100mb.txt", 100 * 1024 * 1024)
    (root / "binary.md").write_bytes(BINARY)
    (root / "invalid-utf8.md").write_bytes(INVALID_UTF8)
    (root / "long-line.txt").write_text("alpha " * 200_000 + "\n")
    (root / "redos.txt").write_text(("a" * 30 + "!\n") * 2000)
    return Workspace(root, embedder=None)


@pytest.mark.slow  # indexes every hostile file
def test_hostile_workspace_inputs(hostile_ws: Workspace) -> None:
    ws = hostile_ws
    tried = 0
    report = ws.sync()
    tried += 4
    skipped = {s.path: s.reason for s in report.skipped}  # type: ignore[attr-defined]
    assert "too large" in skipped["sparse-100mb.txt"]
    assert "binary.md" in skipped or "binary.md" not in ws.source_ids()
    assert "ok.md" in ws.source_ids() and "long-line.txt" in ws.source_ids()
    # A 1 MB line is cut into chunks; results and snippets stay short.
    results = ws.search("alpha", top_k=10**9)
    tried += 2
    assert results and all(len(r.snippet) <= 1000 for r in results)
    assert len(results) == len(
        [c for s in ws.source_ids() for c in ws.chunks_of(s) if "alpha" in c.text]
    )
    # A 100 KB query is refused with the limit in the message.
    with pytest.raises(InvalidInputError, match="limit"):
        ws.search("alpha " * 20_000)
    tried += 1
    assert len(ws.search("alpha", top_k=10**100)) == len(results)  # bounded by the corpus
    tried += 1
    for bad in (0, -1, True, 1.5, "5"):
        with pytest.raises(InvalidInputError, match="top_k"):
            ws.search("alpha", top_k=bad)  # type: ignore[arg-type]
        tried += 1
    # Catastrophic regexes are bounded by grep's time budget.
    for pattern in ("(a+)+$", "(a|aa)+$", "(a*)*b", "^(([a-z])+.)+[A-Z]([a-z])+$"):
        outcome = grep(ws.root, pattern, regex_mode=True, file_timeout=0.5, total_timeout=3)
        tried += 1
        assert outcome.timed_out or outcome.truncated or outcome.matches is not None
    with pytest.raises(WorkspaceError):
        grep(ws.root, "(" * 2000, regex_mode=True)
    tried += 1
    long_line = grep(ws.root, "alpha", ["long-line.txt"])
    tried += 1
    assert all(len(m.text) <= 1000 for m in long_line.matches)
    print(f"\nhostile workspace inputs: {tried}")


def test_hostile_tool_arguments(hostile_ws: Workspace) -> None:
    hostile_ws.sync()
    tools = {
        t.name: t
        for t in WorkspaceToolkit(workspace=hostile_ws, skills_entry_points=False).get_tools()
    }
    cases = [
        ("workspace_search", {"query": "alpha " * 20_000}),
        ("workspace_search", {"query": "alpha", "top_k": 10**9}),
        ("search_documents", {"query": "alpha " * 20_000}),
        ("search_documents", {"query": "alpha", "top_k": 10**9}),
        ("search_documents", {"query": "(a+)+$", "mode": "grep", "regex": True}),
        ("search_documents", {"query": "alpha", "mode": "grep", "paths": ["long-line.txt"]}),
        ("workspace_index", {"path": "big.md", "content": "x" * 2_000_000}),
    ]
    for name, args in cases:
        message = _call(tools[name], args)
        text = str(message.content)
        assert text.strip() and len(text) < 20_000, (name, len(text))
        if message.status == "error":
            assert "Traceback" not in text
    print(f"\nhostile tool arguments: {len(cases)}")
