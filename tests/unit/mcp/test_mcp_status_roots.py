"""The status follows the client's roots; docs-only and skills-only servers have one too (#29).

Real servers as subprocesses, driven by the official client: the test server (a workspace, docs
and skills), and the real CLI serving docs only and skills only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from pydantic import AnyUrl, FileUrl

from tests.unit.core.workspace.test_stats_within import _project
from tests.unit.mcp.conftest import server_env, stdio_params
from workspace_tools import Workspace
from workspace_tools.core.text.within import and_filters, within_filter
from workspace_tools.core.workspace._progress import SyncProgress
from workspace_tools.mcp._background import Background, status


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def _run(params: StdioServerParameters, roots: list[str] | None, body: Any) -> Any:
    async def list_roots(_: Any) -> types.ListRootsResult:
        assert roots is not None
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(u)) for u in roots])

    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read, write, list_roots_callback=list_roots if roots is not None else None
        ) as session,
    ):
        await session.initialize()
        return await body(session)


def _cli(project: Path, *flags: str) -> StdioServerParameters:
    cli = ["-m", "workspace_tools.cli", "--root", str(project), "--embedder", "none", "-q"]
    return StdioServerParameters(
        command=sys.executable,
        args=[*cli, "mcp", "--no-sync", "--no-watch", *flags],
        env=server_env(WORKSPACE_TOOLS_CACHE_DIR=str(project.parent / "cache")),
    )


async def _status(session: ClientSession) -> dict[str, Any]:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    result = await session.call_tool("workspace_status", {})
    assert not result.isError, _text(result)
    return {
        "tool": tools["workspace_status"],
        "data": result.structuredContent,
        "text": _text(result),
    }


async def test_the_workspace_status_counts_what_the_roots_serve(project: Path) -> None:
    roots = [(project / "src").as_uri(), (project / "docs" / "guides").as_uri()]

    async def body(session: ClientSession) -> dict[str, Any]:
        out = await _status(session)
        resource = (await session.read_resource(AnyUrl("workspace://status"))).contents[0]
        out["resource"] = json.loads(resource.text if hasattr(resource, "text") else "{}")
        filtered = {"query": "install search", "top_k": 20, "mode": "bm25"}
        out["search"] = await session.call_tool("workspace_search", filtered)
        return out

    confined = await _run(stdio_params(project), roots, body)
    whole = await _run(stdio_params(project), None, _status)
    data, every = confined["data"], whole["data"]
    assert data["within"] == ["docs/guides", "src"]
    assert data["index"]["sources"] == 2  # src/app.py and docs/guides/install.md
    assert data["index"]["sources"] < every["index"]["sources"]
    assert data["workspace"]["sources"] == every["index"]["sources"]
    assert data["workspace"]["chunks"] == every["index"]["chunks"]
    assert 0 < data["index"]["chunks"] < every["index"]["chunks"]
    assert data["indexing"]["files_total"] == 2  # the last sync, counted in the roots
    assert every["indexing"]["files_total"] > 2
    assert "in the client's roots (docs/guides/, src/" in confined["text"]
    assert "within" not in every and "workspace" not in every
    assert confined["resource"]["index"] == data["index"]
    found = confined["search"].structuredContent["results"]
    assert found and all(r["source_id"].startswith(("src/", "docs/guides/")) for r in found)


async def test_a_docs_only_server_has_a_status_within_the_roots(project: Path) -> None:
    roots = [(project / "docs" / "guides").as_uri()]
    confined = await _run(_cli(project, "--docs", "docs"), roots, _status)
    whole = await _run(_cli(project, "--docs", "docs"), None, _status)
    tool = confined["tool"]
    assert tool.title == "Server status" and tool.annotations.readOnlyHint is True
    docs = confined["data"]["docs"]
    assert docs["pages"] == 1 and docs["pages_total"] == 3 and docs["within"] == ["guides"]
    assert whole["data"]["docs"]["pages"] == 3 and "pages_total" not in whole["data"]["docs"]
    assert docs["sections"] == whole["data"]["docs"]["sections"] > 0
    assert docs["ranking"].startswith("keyword ranking")
    assert "skills" not in confined["data"] and "index" not in confined["data"]
    directories = confined["data"]["directories"]
    assert directories["client_roots"] == [str((project / "docs" / "guides").resolve())]
    assert "1 pages in the client's roots (guides/; 3 in the tree)" in confined["text"]
    assert "Client roots:" in confined["text"]


async def test_a_skills_only_server_has_a_status_within_the_roots(project: Path) -> None:
    (project / "skills" / "bye").mkdir()
    (project / "skills" / "bye" / "SKILL.md").write_text(
        "---\nname: bye\ndescription: Say goodbye when asked.\n---\n# Bye\n", encoding="utf-8"
    )
    every = await _run(
        _cli(project, "--skills", "skills"), [(project / "skills").as_uri()], _status
    )
    one = await _run(
        _cli(project, "--skills", "skills"), [(project / "skills" / "bye").as_uri()], _status
    )
    assert every["data"]["skills"] == {
        "count": 2,
        "names": ["bye", "hello"],
        "errors": 0,
        "warnings": 0,
    }
    assert one["data"]["skills"]["names"] == ["bye"]  # hello's folder is in no root
    assert "Skills: 1 (bye)." in one["text"]
    assert "docs" not in one["data"]
    assert one["tool"].title == "Server status"


def test_the_roots_filter_and_a_callers_filter_split(tmp_path: Path) -> None:
    """The API side of the MCP search above: roots and-ed with a filter give the same hits."""
    from tests.support.fakes import FakeEmbedder
    from workspace_tools import Workspace

    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many(
        [
            (f"{d}/f{i}.md", f"install search {i}", {"n": i})
            for d in ("src", "docs")
            for i in range(9)
        ],
        show_progress=False,
    )
    confined = and_filters({"n": {"$gte": 4}}, within_filter(("src",)))
    hits = ws.search("install search", top_k=20, filter=confined)
    assert {h.source_id for h in hits} == {f"src/f{i}.md" for i in range(4, 9)}


class _Indexing:
    """A workspace whose sync is half way (what ``Background.note`` and ``status`` read)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.read_only = False
        self.root = ws.root
        self.embedder = None
        self.sync_progress = SyncProgress(
            running=True,
            files_total=4,
            files_committed=1,
            files=("docs/c.md", "notes.txt", "src/a.py", "src/app/b.py"),
        )

    def stats(self, **kwargs: Any) -> dict[str, Any]:
        return self.ws.stats(**kwargs)

    def source_ids(self) -> list[str]:
        return self.ws.source_ids()


def test_the_indexing_note_and_status_count_the_roots(tmp_path: Path) -> None:
    indexing = _Indexing(_project(tmp_path))
    background = Background(indexing, sync=True, watch=False)
    assert background.note().startswith("indexing: 1 of 4 files")  # type: ignore[union-attr]
    assert background.note(within=("src",)).startswith("indexing: 0 of 2 files")  # type: ignore[union-attr]
    text, data = status(indexing, background, within=("src",))
    assert data["indexing"]["files_total"] == 2 and data["indexing"]["pending"] == 2
    assert data["index"]["sources"] == 2 and data["workspace"]["sources"] == 4
    assert "2 sources, " in text and "in the client's roots (src/" in text
