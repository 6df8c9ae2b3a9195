"""The live side of a server over MCP: status tool, progress, MCP logging, the indexing note."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio
from mcp import types

__all__ = [
    "NOTED_TOOLS",
    "STATUS_TOOL",
    "Live",
    "SessionLog",
    "status_definition",
    "status_tool",
    "with_note",
    "with_progress",
]

STATUS_TOOL: Final = "workspace_status"
"""Name of the status tool."""
NOTED_TOOLS: Final = frozenset(
    {"workspace_search", "search_documents", "workspace_grep", "workspace_list"}
)
"""Tools whose answers carry the indexing note while the first index is built."""
_POLL: Final = 0.2
"""Seconds between two looks at the sync progress during a call with a progress token."""
_MCP_LEVELS: Final[dict[int, types.LoggingLevel]] = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warning",
    logging.ERROR: "error",
    logging.CRITICAL: "critical",
}


_DIRECTORIES: Final[dict[str, Any]] = {
    "type": "object",
    "description": "What this session serves (list_allowed_directories): allowed (the "
    "command line's folders), client_roots (the client's roots in effect; absent: it "
    "offers none), served, ignored (roots left out, each with uri and reason).",
}
_STATUS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "description": "What the server's workspace index holds and is doing.",
    "properties": {
        "root": {"type": "string", "description": "The workspace folder."},
        "index": {"type": "object", "description": "Committed: sources, chunks, vectors, modes."},
        "indexing": {
            "type": "object",
            "description": "The running or last sync: running, files_total, files_committed, "
            "pending, commits, started, finished, error.",
        },
        "model": {"type": "string", "description": "The embedding model's state."},
        "watch": {
            "type": "object",
            "description": "The watcher: mode (events, polling, waiting, off, read-only), syncs, "
            "commits, last change.",
        },
        "last_error": {"type": "string", "description": "The last error (absent: none)."},
        "directories": _DIRECTORIES,
        "within": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The folders of the workspace the client's roots serve; index and "
            "indexing count only these (absent: the whole workspace).",
        },
        "workspace": {
            "type": "object",
            "description": "With roots in effect: the whole index's sources, chunks, vectors.",
        },
    },
    "required": ["root", "index", "indexing", "watch"],
}


def status_tool() -> types.Tool:
    """The MCP definition of ``workspace_status``."""
    return status_definition(
        title="Workspace status",
        description=(
            "What the workspace index holds now, whether indexing is running (files committed "
            "and pending), whether the server is watching the files, the last error, and the "
            "directories this session serves (the client's roots within the allowed folders). "
            "Call it when a search says indexing is in progress."
        ),
        output_schema=_STATUS_SCHEMA,
    )


def status_definition(*, title: str, description: str, output_schema: dict[str, Any]) -> types.Tool:
    """A ``workspace_status`` tool: no arguments, read-only, idempotent, this server only."""
    return types.Tool(
        name=STATUS_TOOL,
        title=title,
        description=description,
        inputSchema={"type": "object", "properties": {}},
        outputSchema=output_schema,
        annotations=types.ToolAnnotations(
            readOnlyHint=True, openWorldHint=False, destructiveHint=False, idempotentHint=True
        ),
    )


def with_note(result: types.CallToolResult, note: str | None) -> types.CallToolResult:
    """``result`` with ``note`` first in its text and under ``indexing`` in its structure."""
    if note is None or result.isError:
        return result
    content: list[Any] = [types.TextContent(type="text", text=f"[{note}]"), *result.content]
    structured = result.structuredContent
    if structured is not None:
        structured = {**structured, "indexing": note}
    return types.CallToolResult(content=content, structuredContent=structured, isError=False)


async def with_progress(
    call: Callable[[], Awaitable[types.CallToolResult]],
    *,
    workspace: Any,
    send: Callable[[float, float | None, str], Awaitable[None]],
) -> types.CallToolResult:
    """Run ``call``, sending ``send(progress, total, message)`` as its syncs read files."""
    since = time.time()
    tracker = _Progress(since)
    result: types.CallToolResult | None = None

    async def poll() -> None:
        while True:
            await tracker.send(workspace.sync_progress, send)
            await anyio.sleep(_POLL)

    async with anyio.create_task_group() as group:
        group.start_soon(poll)
        try:
            result = await call()
        finally:
            group.cancel_scope.cancel()
    await tracker.send(workspace.sync_progress, send)  # the last word: where the sync ended
    assert result is not None
    return result


class _Progress:
    """Monotonic progress over the syncs seen during one call."""

    def __init__(self, since: float) -> None:
        self.since = since
        self.offset = 0
        self.started: float | None = None
        self.total = 0
        self.sent = -1

    async def send(
        self, progress: Any, send: Callable[[float, float | None, str], Awaitable[None]]
    ) -> None:
        followed = progress.started == self.started  # the sync seen running: its end counts
        fresh = progress.running or progress.started >= self.since or followed
        if not progress.started or not fresh:
            return
        if self.started is not None and progress.started != self.started:
            self.offset += self.total  # a new sync: count on from the last one
        self.started, self.total = progress.started, progress.files_total
        value = self.offset + progress.files_done
        if value <= self.sent:
            return
        self.sent = value
        with contextlib.suppress(Exception):  # a client gone away stops nothing
            await send(float(value), float(self.offset + progress.files_total), progress.line())


def _without_nulls(value: Any) -> Any:
    """``value`` with ``None`` entries of its mappings left out (absent means "none")."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


class SessionLog(logging.Handler):
    """Send log records to the connected MCP clients too (``notifications/message``)."""

    def __init__(self) -> None:
        super().__init__()
        self._sessions: dict[int, tuple[Any, asyncio.AbstractEventLoop]] = {}

    def remember(self, session: Any) -> None:
        """Send to ``session`` from now on (call from a request handler, after initialize)."""
        key = id(session)
        if key not in self._sessions:
            self._sessions[key] = (session, asyncio.get_running_loop())

    def emit(self, record: logging.LogRecord) -> None:
        """Send ``record`` to every remembered session on its own event loop."""
        if not self._sessions or getattr(record, "mcp_sent", False):
            return  # (mcp_sent: the sender told its client itself, see mcp/roots.py)
        level = _MCP_LEVELS.get(record.levelno, "info")
        text = self.format(record)
        for key, (session, loop) in list(self._sessions.items()):
            try:
                asyncio.run_coroutine_threadsafe(
                    self._send(key, session, level, text, record.name), loop
                )
            except RuntimeError:  # the loop is closed: that client is gone
                self._sessions.pop(key, None)

    async def _send(
        self, key: int, session: Any, level: types.LoggingLevel, text: str, name: str
    ) -> None:
        try:
            await session.send_log_message(level=level, data=text, logger=name)
        except Exception:
            self._sessions.pop(key, None)


class Live:
    """The live parts of one server: status tool, notes, progress and MCP logging.

    Args:
        server: The MCP server (its request context gives the session and progress token).
        served: What it serves (``served.workspace`` and ``served.background``).
    """

    def __init__(self, server: Any, served: Any) -> None:
        self.server = server
        self.workspace = served.workspace
        self.background = served.background
        self.log = SessionLog()
        self.log.setFormatter(logging.Formatter("%(message)s"))
        logging.getLogger("workspace_tools").addHandler(self.log)

    def remember(self) -> None:
        """Send log records to the session of the request being handled."""
        with contextlib.suppress(LookupError):
            self.log.remember(self.server.request_context.session)

    def status(self, roots: Any = None) -> types.CallToolResult:
        """The ``workspace_status`` result; with ``roots`` (a ``RootsScope``), the directories."""
        from workspace_tools.mcp._background import status

        within = roots.within(self.workspace.root) if roots is not None else None
        text, data = status(self.workspace, self.background, within=within)
        if roots is not None:
            text = "\n".join([text, *roots.report_lines()])
            data = {**data, "directories": roots.report()}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structuredContent=_without_nulls(data),
            isError=False,
        )

    async def call(
        self, tool: Any, arguments: dict[str, Any], *, within: Any = None
    ) -> types.CallToolResult:
        """Run ``tool`` with progress notifications if asked and the indexing note of ``within``."""
        from workspace_tools.mcp.adapt import call_tool

        background = self.background
        note = background.note(within=within) if background is not None else None
        token = None
        session = None
        with contextlib.suppress(LookupError):
            context = self.server.request_context
            session = context.session
            token = context.meta.progressToken if context.meta is not None else None
        if token is None or session is None:
            result = await call_tool(tool, arguments)
        else:
            request_id = str(self.server.request_context.request_id)

            async def send(progress: float, total: float | None, message: str) -> None:
                await session.send_progress_notification(
                    token, progress, total=total, message=message, related_request_id=request_id
                )

            result = await with_progress(
                lambda: call_tool(tool, arguments), workspace=self.workspace, send=send
            )
        if tool.name not in NOTED_TOOLS:
            return result
        if note is None and background is not None:
            note = background.note(within=within)  # indexing may have started during the call
        if note is not None and result.isError and not self.workspace.source_ids():
            # "The index is empty" is no error while the first index is being built.
            empty = "No results yet: nothing is committed so far. Try again shortly."
            result = types.CallToolResult(
                content=[types.TextContent(type="text", text=empty)],
                structuredContent={"results": []},
                isError=False,
            )
        return with_note(result, note)
