"""MCP roots confine by the real path: links inside the project do not lead out (issue 39).

The real server runs as a subprocess driven by the official client, with the client root
``open/`` holding a folder link and a file link to ``closed/``, and a link outside the root
leading into it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcp import ClientSession, types
from mcp.client.stdio import stdio_client
from pydantic import FileUrl

from tests.unit.mcp.conftest import stdio_params

CANARY = "closedcanary"


def _plant_links(project: Path) -> None:
    """``open/`` (the client's root) with links to ``closed/``, and a link into ``open/``."""
    (project / "open").mkdir()
    (project / "closed").mkdir()
    (project / "open" / "ok.md").write_text("# Open\n\nThe openmarker canary.\n", "utf-8")
    (project / "closed" / "secret.md").write_text(f"# Closed\n\nThe {CANARY} canary.\n", "utf-8")
    os.symlink("../closed", project / "open" / "dirlink")
    os.symlink("../closed/secret.md", project / "open" / "filelink.md")
    os.symlink("open/ok.md", project / "linkin.md")  # outside the root, its real file inside


async def _session(project: Path, roots: list[str] | None, body: Any) -> Any:
    async def list_roots(_: Any) -> types.ListRootsResult:
        assert roots is not None
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(u)) for u in roots])

    async with (
        stdio_client(stdio_params(project)) as (read, write),
        ClientSession(
            read, write, list_roots_callback=list_roots if roots is not None else None
        ) as session,
    ):
        await session.initialize()
        return await body(session)


def _dump(result: types.CallToolResult) -> str:
    """Everything a result shows: its text blocks and its structured content."""
    texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    return "\n".join([*texts, repr(result.structuredContent)])


def _sources(result: types.CallToolResult, key: str) -> set[str]:
    assert not result.isError, _dump(result)
    return {str(item[key]) for item in (result.structuredContent or {}).get("results", [])}


async def _calls(session: ClientSession, chunk_ids: list[str]) -> dict[str, Any]:
    call = session.call_tool
    out: dict[str, Any] = {}
    for mode in ("bm25", "vector", "hybrid"):
        query = {"query": f"{CANARY} openmarker canary", "top_k": 20, "mode": mode}
        out[f"search {mode}"] = await call("workspace_search", query)
    out["keyword"] = await call("search_documents", {"query": "canary", "top_k": 20})
    for output_mode in ("content", "files_with_matches", "count"):
        args = {"query": "canary", "mode": "grep", "output_mode": output_mode, "top_k": 50}
        out[f"grep {output_mode}"] = await call("search_documents", args)
        for where in ("open/dirlink", "open/filelink.md", "open/**/*.md"):
            out[f"grep {where} {output_mode}"] = await call(
                "search_documents", {**args, "paths": [where]}
            )
    for path in ("open/filelink.md", "open/dirlink/secret.md", "open/ok.md", "linkin.md"):
        out[f"read {path}"] = await call("workspace_read", {"path": path})
    for chunk_id in chunk_ids:
        out[f"read chunk {chunk_id}"] = await call("workspace_read", {"chunk_id": chunk_id})
    return out


async def test_links_inside_a_root_do_not_lead_out_of_it(project: Path) -> None:
    _plant_links(project)

    async def chunk_ids(session: ClientSession) -> list[str]:
        query = {"query": CANARY, "top_k": 20, "mode": "bm25"}
        result = await session.call_tool("workspace_search", query)
        return [str(item["id"]) for item in (result.structuredContent or {})["results"]]

    ids = await _session(project, None, chunk_ids)  # without roots: the links are indexed
    linked = [i for i in ids if i.startswith(("open/dirlink/", "open/filelink.md"))]
    assert linked, ids  # the folder link is indexed once, under its real path

    async def body(session: ClientSession) -> dict[str, Any]:
        return await _calls(session, linked)

    out = await _session(project, [(project / "open").as_uri()], body)
    for name, result in out.items():
        assert CANARY not in _dump(result), f"{name} served the closed text: {_dump(result)}"
    for mode in ("bm25", "vector", "hybrid"):
        assert _sources(out[f"search {mode}"], "source_id") == {"open/ok.md", "linkin.md"}
    assert _sources(out["keyword"], "document_path") == {"open/ok.md", "linkin.md"}
    for output_mode in ("content", "files_with_matches", "count"):
        found = _sources(out[f"grep {output_mode}"], "document_path")
        assert found == {"open/ok.md", "linkin.md"}, output_mode
        glob = _sources(out[f"grep open/**/*.md {output_mode}"], "document_path")
        assert glob == {"open/ok.md"}, output_mode
        for where in ("open/dirlink", "open/filelink.md"):
            refused = out[f"grep {where} {output_mode}"]
            assert refused.isError
            assert _dump(refused).startswith(
                f"Path {where!r} is outside the directories this session serves"
            )
    for path in ("open/filelink.md", "open/dirlink/secret.md"):
        assert out[f"read {path}"].isError
        assert "outside the directories this session serves" in _dump(out[f"read {path}"])
    for chunk_id in linked:
        refused = out[f"read chunk {chunk_id}"]
        assert refused.isError
        assert "is outside the folders this session serves" in _dump(refused)
    assert not out["read open/ok.md"].isError
    assert "openmarker" in _dump(out["read open/ok.md"])
    assert not out["read linkin.md"].isError  # the real path decides: its file is in the root
    assert "openmarker" in _dump(out["read linkin.md"])
