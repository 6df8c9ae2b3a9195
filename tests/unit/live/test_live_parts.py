"""The MCP-side pieces of the live server, in process: the note and monotonic progress."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from mcp import types

from workspace_tools.core.workspace._progress import SyncProgress
from workspace_tools.mcp.live import _Progress, with_note


def test_the_note_goes_first_in_the_text_and_into_the_structure() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="1. a.md")],
        structuredContent={"results": []},
        isError=False,
    )
    noted = with_note(result, "indexing: 4 of 10 files")
    assert [c.text for c in noted.content if isinstance(c, types.TextContent)] == [
        "[indexing: 4 of 10 files]",
        "1. a.md",
    ]
    assert noted.structuredContent == {"results": [], "indexing": "indexing: 4 of 10 files"}
    assert with_note(result, None) is result
    error = types.CallToolResult(content=[], isError=True)
    assert with_note(error, "indexing: 1 of 2 files") is error


def test_progress_only_grows_across_syncs() -> None:
    sent: list[tuple[float, float | None, str]] = []

    async def send(value: float, total: float | None, message: str) -> None:
        sent.append((value, total, message))

    async def run() -> None:
        tracker = _Progress(since=100.0)
        old = SyncProgress(running=False, files_total=9, files_done=9, started=50.0)
        await tracker.send(old, send)  # a sync that ended before the call: not reported
        first = SyncProgress(running=True, files_total=10, files_done=3, started=90.0)
        await tracker.send(first, send)  # running when the call came: reported
        await tracker.send(first, send)  # no news: nothing sent
        await tracker.send(replace(first, files_done=10, running=False), send)
        second = SyncProgress(running=True, files_total=4, files_done=1, started=101.0)
        await tracker.send(second, send)

    asyncio.run(run())
    assert [(v, t) for v, t, _ in sent] == [(3.0, 10.0), (10.0, 10.0), (11.0, 14.0)]
    assert sent[0][2] == "indexing: 0 of 10 files"
