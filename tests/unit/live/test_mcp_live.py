"""The MCP server answers at once, indexes behind, reports progress and follows the files.

Every test runs the server as a subprocess through the official client (stdio).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from tests.support.fakes import FakeEmbedder
from tests.unit.mcp.conftest import server_env
from workspace_tools.core.workspace import Workspace

SERVER = Path(__file__).resolve().parent / "_live_server.py"
GUARD = 60.0  # hang guard, not a timing claim
FILES = 300

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def client(
    root: Path, *flags: str, logs: list[str] | None = None
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(SERVER), "--root", str(root), *flags],
        env=server_env(),
    )

    async def on_log(message: types.LoggingMessageNotificationParams) -> None:
        if logs is not None:
            logs.append(str(message.data))

    with anyio.fail_after(GUARD):
        try:
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write, logging_callback=on_log) as session,
            ):
                yield session
        except Exception as error:  # an ExceptionGroup from the SDK's task group
            if not _closing_race(error):
                raise


def _closing_race(error: BaseException) -> bool:
    """The SDK client's own shutdown race, nothing of the server's.

    A notification the server sends (a watcher's MCP log line) while the session closes reaches
    ``stdio_client``'s reader after the session stopped reading: its ``send`` raises
    ``anyio.BrokenResourceError`` (the SDK catches only ``ClosedResourceError`` there).
    """
    inner = getattr(error, "exceptions", None)
    if inner is None:
        return isinstance(error, anyio.BrokenResourceError)
    return all(_closing_race(e) for e in inner)


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def status(session: ClientSession) -> dict[str, Any]:
    result = await session.call_tool("workspace_status", {})
    assert not result.isError, text(result)
    assert result.structuredContent is not None
    return result.structuredContent


async def wait_for(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + GUARD
    while not await check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await anyio.sleep(0.1)


async def hits(session: ClientSession, query: str) -> set[str]:
    result = await session.call_tool("workspace_search", {"query": query, "mode": "bm25"})
    assert not result.isError, text(result)
    assert result.structuredContent is not None
    return {hit["source_id"] for hit in result.structuredContent["results"]}


def big_tree(root: Path) -> Path:
    root.mkdir()
    for number in range(FILES):
        (root / f"n{number:03}.md").write_text(
            f"# Note {number}\n\nmarker text number{number}\n", encoding="utf-8"
        )
    return root


async def test_answers_at_once_and_indexes_behind(tmp_path: Path) -> None:
    root = big_tree(tmp_path / "tree")
    logs: list[str] = []
    async with client(root, "--delay", "0.02", logs=logs) as session:
        init = await session.initialize()
        assert init.serverInfo.name == "workspace-tools"
        tools = {t.name for t in (await session.list_tools()).tools}
        assert {"workspace_search", "workspace_index", "workspace_status"} <= tools
        first = await status(session)
        # Answered before the first sync ended: nothing or only part of it is committed.
        assert "finished" not in first["indexing"]
        assert first["index"]["sources"] < FILES

        async def running() -> bool:
            return bool((await status(session))["indexing"]["running"])

        await wait_for(running, "the background sync to start")
        result = await session.call_tool("workspace_search", {"query": "marker text"})
        assert not result.isError, text(result)
        assert text(result).startswith("[indexing: ")
        assert result.structuredContent is not None
        assert result.structuredContent["indexing"].startswith("indexing: ")
        assert " of 300 files" in result.structuredContent["indexing"]

        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total, message))

        done = await session.call_tool(
            "workspace_index", {"path": "."}, progress_callback=on_progress
        )
        assert not done.isError, text(done)
        assert progress, "no progress notification"
        values = [value for value, _, _ in progress]
        assert values == sorted(values) and len(set(values)) == len(values)
        assert progress[-1][0] >= FILES  # the background index the call waited for, at least
        assert any(m and m.startswith("indexing: ") for _, _, m in progress)
        final = await status(session)
        assert final["index"]["sources"] == FILES
        assert final["indexing"]["running"] is False
        plain = await session.call_tool("workspace_search", {"query": "marker text"})
        assert not text(plain).startswith("[indexing")
        assert "indexing" not in (plain.structuredContent or {})
    assert any("300 added" in line for line in logs), logs  # MCP logging, not only stderr


async def test_the_server_follows_edits(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.md").write_text("alpha text\n", encoding="utf-8")
    async with client(root) as session:
        await session.initialize()

        async def ready() -> bool:
            s = await status(session)
            return bool(s["watch"]["mode"] == "events" and s["watch"]["syncs"] >= 1)

        await wait_for(ready, "the first sync")
        (root / "b.md").write_text("bravo created\n", encoding="utf-8")

        async def created() -> bool:
            return await hits(session, "bravo") == {"b.md"}

        await wait_for(created, "a created file")
        (root / "b.md").write_text("charlie edited\n", encoding="utf-8")

        async def edited() -> bool:
            return await hits(session, "charlie") == {"b.md"}

        await wait_for(edited, "an edit")
        (root / "b.md").rename(root / "c.md")

        async def renamed() -> bool:
            return await hits(session, "charlie") == {"c.md"}

        await wait_for(renamed, "a rename")
        (root / "c.md").unlink()

        async def deleted() -> bool:
            return not await hits(session, "charlie")

        await wait_for(deleted, "a deletion")
        s = await status(session)
        assert s["index"]["sources"] == 1
        assert "last_error" not in s  # absent: no error


async def test_no_watch_and_read_only_servers(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.md").write_text("alpha text\n", encoding="utf-8")
    async with client(root, "--no-watch") as session:
        await session.initialize()

        async def synced() -> bool:
            return "finished" in (await status(session))["indexing"]

        await wait_for(synced, "the first sync")
        assert (await status(session))["watch"]["mode"] == "off"
    # A read-only server sees what another process commits, at its next call.
    async with client(root, "--read-only") as session:
        await session.initialize()
        s = await status(session)
        assert s["watch"]["mode"].startswith("read-only")
        assert await hits(session, "alpha") == {"a.md"}
        (root / "d.md").write_text("delta from elsewhere\n", encoding="utf-8")
        Workspace(root, embedder=FakeEmbedder(max_batch_size=16)).sync()
        assert await hits(session, "delta") == {"d.md"}


async def test_initialize_does_not_wait_for_the_tools(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.md").write_text("alpha text\n", encoding="utf-8")
    gate = tmp_path / "gate"
    async with client(root, "--gate", str(gate)) as session:
        init = await session.initialize()  # answered while the build waits for the gate
        assert init.capabilities.tools is not None
        assert init.capabilities.logging is not None
        assert not gate.exists()
        gate.write_text("go", encoding="utf-8")
        names = {t.name for t in (await session.list_tools()).tools}
        assert "workspace_status" in names
        await wait_for(lambda: _has(session, "alpha"), "the first sync")


async def _has(session: ClientSession, word: str) -> bool:
    return bool(await hits(session, word))


async def test_the_cli_server_over_http_answers_and_reports_status(tmp_path: Path) -> None:
    import socket
    import subprocess

    from mcp.client.streamable_http import streamable_http_client

    from tests.support.paths import REPO

    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.md").write_text("alpha text\n", encoding="utf-8")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [sys.executable, "-m", "workspace_tools.cli", "--root", str(root), "--embedder"]
    argv += ["none", "-q", "mcp", "--http", f"127.0.0.1:{port}"]
    process = subprocess.Popen(argv, cwd=REPO, env=server_env(), stderr=subprocess.DEVNULL)
    try:
        with anyio.fail_after(GUARD):
            while True:
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                await anyio.sleep(0.05)
            async with (
                streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                assert "workspace_status" in {t.name for t in (await session.list_tools()).tools}
                await wait_for(lambda: _has(session, "alpha"), "the first sync")
                s = await status(session)
                assert s["watch"]["mode"] == "events"
    finally:
        process.terminate()
        process.wait(timeout=30)
