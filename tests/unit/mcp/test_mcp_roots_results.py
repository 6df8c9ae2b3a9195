"""MCP roots confine every result, not only path arguments (issue 29).

The real server runs as a subprocess driven by the official client, once with roots (some
inside the served folder, given as a symlink with a trailing slash and percent-encoded, some
outside it), once without, and once with roots that change mid-session.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.stdio import stdio_client
from pydantic import AnyUrl, FileUrl

from tests.unit.mcp.conftest import stdio_params

Body = Callable[[ClientSession], Awaitable[Any]]


def _add_outside_roots(project: Path) -> dict[str, Path]:
    """A folder with a space, a link into ``src``, a folder outside and a link leading out."""
    (project / "my notes").mkdir()
    (project / "my notes" / "plan.md").write_text("# Plan\n\nInstall the cluster.\n", "utf-8")
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.md").write_text("install the secret\n", encoding="utf-8")
    link = project.parent / "link-to-src"
    os.symlink(project / "src", link)
    os.symlink(elsewhere, project / "escape")
    return {"elsewhere": elsewhere, "link": link, "escape": project / "escape"}


async def _session(
    project: Path,
    body: Body,
    roots: list[str] | None,
    *,
    logs: list[str] | None = None,
    errlog: Any = None,
) -> Any:
    async def list_roots(_: Any) -> types.ListRootsResult:
        assert roots is not None
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(u)) for u in roots])

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        if logs is not None:
            logs.append(str(params.data))

    extra = {"errlog": errlog} if errlog is not None else {}
    async with (
        stdio_client(stdio_params(project), **extra) as (read, write),
        ClientSession(
            read,
            write,
            list_roots_callback=list_roots if roots is not None else None,
            logging_callback=log,
        ) as session,
    ):
        await session.initialize()
        return await body(session)


def _paths(result: types.CallToolResult, key: str = "source_id") -> set[str]:
    assert not result.isError, result.content[0].text  # type: ignore[union-attr]
    data = result.structuredContent or {}
    return {str(item[key]) for item in data.get("results", [])}


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def _every_result(session: ClientSession) -> dict[str, Any]:
    call = session.call_tool
    out: dict[str, Any] = {}
    for mode in ("bm25", "vector", "hybrid"):
        out[f"search {mode}"] = _paths(
            await call("workspace_search", {"query": "install search", "top_k": 20, "mode": mode})
        )
    out["search multi"] = _paths(
        await call("workspace_search", {"query": ["install", "parse request"], "top_k": 20})
    )
    keyword = {"query": "install", "top_k": 20}
    out["keyword"] = _paths(await call("search_documents", keyword), "document_path")
    for output_mode in ("content", "files_with_matches", "count"):
        args = {"query": "install", "mode": "grep", "ignore_case": True, "top_k": 50}
        args["output_mode"] = output_mode
        out[f"grep {output_mode}"] = _paths(await call("search_documents", args), "document_path")
        args["paths"] = ["**/*.md"]
        out[f"grep glob {output_mode}"] = _paths(
            await call("search_documents", args), "document_path"
        )
    out["read notes"] = await call("workspace_read", {"path": "notes.txt"})
    out["read chunk"] = await call("workspace_read", {"chunk_id": "notes.txt"})
    out["read app"] = await call("workspace_read", {"path": "src/app.py"})
    out["docs search"] = _paths(await call("docs_search", {"query": "search", "top_k": 10}), "path")
    out["docs list"] = _paths(await call("docs_list", {}), "path")
    out["docs api page"] = await call("docs_get_page", {"path": "api/search.md"})
    out["status"] = await call("workspace_status", {})
    out["skill"] = await call("skill", {"name": "hello"})
    out["skill search"] = _paths(await call("skill_search", {"query": "greet"}), "skill_name")
    out["resources"] = {str(r.uri) for r in (await session.list_resources()).resources}
    prompt = (await session.get_prompt("skills_catalogue")).messages[0].content
    out["prompt"] = prompt.text if isinstance(prompt, types.TextContent) else ""
    status = (await session.read_resource(AnyUrl("workspace://status"))).contents[0]
    out["status resource"] = json.loads(status.text if hasattr(status, "text") else "{}")
    return out


# what the fixture's project holds, by folder
GUIDES = "docs/guides/install.md"


async def test_results_outside_the_roots_are_absent(project: Path, tmp_path: Path) -> None:
    extra = _add_outside_roots(project)
    notes = (project / "my notes").as_uri()  # percent-encoded: file:///.../my%20notes
    assert "%20" in notes
    roots = [
        extra["link"].as_uri() + "/",  # a symlink to src, with a trailing slash
        notes,
        (project / "docs" / "guides").as_uri(),
        extra["elsewhere"].as_uri(),  # outside every allowed folder: ignored
        extra["escape"].as_uri(),  # a link in the project that leads out: ignored
    ]
    logs: list[str] = []
    with (tmp_path / "stderr.txt").open("w+", encoding="utf-8") as errlog:
        out = await _session(project, _every_result, roots, logs=logs, errlog=errlog)
        errlog.seek(0)
        stderr = errlog.read()
    served = ("src/", "my notes/", "docs/guides/")
    for key in [k for k in out if k.startswith(("search", "keyword", "grep"))]:
        assert out[key], f"{key}: nothing found inside the roots"
        assert all(p.startswith(served) for p in out[key]), f"{key}: {out[key]}"
    assert GUIDES in out["keyword"]
    assert "notes.txt" not in out["grep content"]
    assert out["grep glob count"] == {GUIDES, "my notes/plan.md"}
    assert out["read notes"].isError
    assert "outside the directories this session serves" in _text(out["read notes"])
    assert out["read chunk"].isError
    assert "'notes.txt' is outside the folders this session serves" in _text(out["read chunk"])
    assert not out["read app"].isError
    assert out["docs search"] <= {"guides/install.md"}
    assert out["docs list"] == {"guides/install.md"}
    assert out["docs api page"].isError
    status = out["status"].structuredContent["directories"]
    real = {str(p.resolve()) for p in (project / "src", project / "my notes")}
    assert real | {str((project / "docs" / "guides").resolve())} == set(status["served"])
    ignored = {item["uri"]: item["reason"] for item in status["ignored"]}
    assert set(ignored) == {extra["elsewhere"].as_uri(), extra["escape"].as_uri()}
    assert all(r.startswith("outside the folders the server allows") for r in ignored.values())
    assert str(project.resolve()) in status["allowed"]
    assert "Ignored root" in _text(out["status"])
    assert any(f"Ignored the client's root {extra['elsewhere'].as_uri()}" in m for m in logs)
    assert f"Ignored the client's root {extra['escape'].as_uri()}" in stderr
    # the skills folder is in no root: its skill is in no listing and does not load
    assert out["skill"].isError
    assert _text(out["skill"]).startswith("No skill named or located at 'hello'")
    assert out["skill search"] == set()
    assert "skills://hello" not in out["resources"]
    assert "hello" not in out["prompt"]
    assert out["status resource"]["directories"] == status


async def test_without_roots_every_result_is_served(project: Path) -> None:
    _add_outside_roots(project)
    out = await _session(project, _every_result, None)
    assert "notes.txt" in out["keyword"]
    assert "notes.txt" in out["grep content"]
    assert "notes.txt" in out["grep files_with_matches"]
    assert "notes.txt" in out["grep count"]
    assert any(not p.startswith(("src/", "docs/guides/", "my notes/")) for p in out["search bm25"])
    assert not out["read notes"].isError
    assert not out["read chunk"].isError
    assert "api/search.md" in out["docs list"]
    assert not out["docs api page"].isError
    status = out["status"].structuredContent["directories"]
    assert "client_roots" not in status
    assert status["served"] == status["allowed"]
    assert "none in effect" in _text(out["status"])
    assert not out["skill"].isError
    assert out["skill search"] == {"hello"}
    assert {"skills://hello", "workspace://status"} <= out["resources"]
    assert "hello" in out["prompt"]
    assert out["status resource"]["directories"] == status


async def test_roots_changed_mid_session_take_effect(project: Path) -> None:
    roots = [(project / "src").as_uri()]

    async def body(session: ClientSession) -> dict[str, Any]:
        args = {"query": "install", "mode": "grep", "output_mode": "files_with_matches"}
        before = await session.call_tool("search_documents", args)
        roots[:] = [project.as_uri()]
        await session.send_roots_list_changed()
        await session.send_ping()
        after = await session.call_tool("search_documents", args)
        status = await session.call_tool("workspace_status", {})
        return {"before": before, "after": after, "status": status}

    out = await _session(project, body, roots)
    assert _paths(out["before"], "document_path") == set()  # src has no "install"
    assert "No file matches" in _text(out["before"])
    assert {"notes.txt", GUIDES} <= _paths(out["after"], "document_path")
    directories = out["status"].structuredContent["directories"]
    assert directories["client_roots"] == [str(project.resolve())]


@pytest.mark.slow  # an HTTP server and two sessions
async def test_over_http_each_session_has_its_own_roots(project: Path) -> None:
    from mcp.client.streamable_http import streamable_http_client

    from tests.unit.mcp.conftest import http_server

    async def grep_files(url: str, roots: list[str] | None) -> set[str]:
        async def list_roots(_: Any) -> types.ListRootsResult:
            assert roots is not None
            return types.ListRootsResult(roots=[types.Root(uri=FileUrl(u)) for u in roots])

        callback = list_roots if roots is not None else None
        async with (
            streamable_http_client(url) as (read, write, _),
            ClientSession(read, write, list_roots_callback=callback) as session,
        ):
            await session.initialize()
            args = {"query": "install", "mode": "grep", "output_mode": "files_with_matches"}
            return _paths(await session.call_tool("search_documents", args), "document_path")

    with http_server(project) as url:
        guides = (project / "docs" / "guides").as_uri()
        narrowed, whole = await asyncio.gather(grep_files(url, [guides]), grep_files(url, None))
    assert narrowed == {GUIDES}
    assert {GUIDES, "notes.txt"} <= whole


async def test_the_cli_server_advertises_the_status_resource(project: Path) -> None:
    import sys

    from mcp import StdioServerParameters

    from tests.unit.mcp.conftest import server_env

    (project / "workspace-tools.yaml").write_text("", encoding="utf-8")  # no skills: no prompts
    cli = ["-m", "workspace_tools.cli", "--root", str(project), "--embedder", "none", "-q"]
    params = StdioServerParameters(
        command=sys.executable, args=[*cli, "mcp", "--no-sync", "--no-watch"], env=server_env()
    )
    roots = [(project / "src").as_uri()]

    async def list_roots(_: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(u)) for u in roots])

    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, list_roots_callback=list_roots) as session,
    ):
        init = await session.initialize()
        assert init.capabilities.resources is not None  # advertised before the tools are built
        assert init.capabilities.prompts is None  # no skills, no prompts
        listed = {str(r.uri) for r in (await session.list_resources()).resources}
        status = (await session.read_resource(AnyUrl("workspace://status"))).contents[0]
    assert listed == {"workspace://status"}
    data = json.loads(status.text if isinstance(status, types.TextResourceContents) else "{}")
    assert data["directories"]["served"] == [str((project / "src").resolve())]
