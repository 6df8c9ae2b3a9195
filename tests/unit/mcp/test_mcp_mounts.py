"""``workspace-tools --mount PREFIX=PATH mcp``: a real server serving the mounts (issue 40)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.unit.mcp.conftest import server_env
from workspace_tools.cli import main

pytestmark = pytest.mark.slow


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    root, handbook = tmp_path / "root", tmp_path / "handbook"
    root.mkdir()
    handbook.mkdir()
    (root / "todo.md").write_text("feed the zebra\n", encoding="utf-8")
    (handbook / "guide.md").write_text("# Guide\n\nThe zebra guide.\n", encoding="utf-8")
    (handbook / "leak.md").symlink_to(tmp_path / "secret.txt")
    (tmp_path / "secret.txt").write_text("zebra password\n", encoding="utf-8")
    return root, handbook


async def _session(root: Path, handbook: Path, body: Any) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "workspace_tools.cli", "-q", "--root", str(root), "--embedder", "none"),
            *("mcp", "--mount", f"/docs={handbook}", "--no-sync", "--no-watch"),
        ],
        env=server_env(),
        cwd=str(root),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await body(session)


def _text(result: Any) -> str:
    return str(result.content[0].text)


async def test_search_read_and_grep_go_through_the_mount(places: tuple[Path, Path]) -> None:
    root, handbook = places
    assert (
        main(["--root", str(root), "--embedder", "none", "--mount", f"docs={handbook}", "index"])
        == 0
    )

    async def body(session: ClientSession) -> dict[str, Any]:
        return {
            "search": await session.call_tool("workspace_search", {"query": "zebra guide"}),
            "read": await session.call_tool("workspace_read", {"path": "docs/guide.md"}),
            "grep": await session.call_tool(
                "search_documents", {"query": "zebra", "mode": "grep", "paths": ["docs"]}
            ),
            "leak": await session.call_tool("workspace_read", {"path": "docs/leak.md"}),
        }

    results = await _session(root, handbook, body)
    hits = results["search"].structuredContent["results"]
    assert hits[0]["source_id"] == "docs/guide.md"
    assert {h["source_id"] for h in hits} == {"docs/guide.md", "todo.md"}
    assert "The zebra guide." in _text(results["read"])
    found = [r["document_path"] for r in results["grep"].structuredContent["results"]]
    assert found == ["docs/guide.md"]  # the link out of the mount is not read
    assert results["leak"].isError
    assert _text(results["leak"]).startswith(
        f"Path 'docs/leak.md' leads outside its mount ({handbook.resolve()}) through a symbolic "
        "link."
    )
