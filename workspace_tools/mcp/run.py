"""Run a server over stdio or streamable HTTP, with clean stdout and clean shutdown.

Over stdio fd 1 carries only JSON-RPC (other writes go to stderr). SIGINT, SIGTERM or stdin
closing end the server after the pending requests answer or a grace period passes.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import queue
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any, Final

import anyio

from workspace_tools.mcp._disconnects import (
    ProtocolWriter,
    exit_cleanly_on_signal,
    quiet_disconnect_logs,
)
from workspace_tools.mcp.http_guard import HttpGuard, HttpPolicy, http_policy

__all__ = ["parse_address", "protect_stdout", "run_http", "run_stdio"]

_LOG = logging.getLogger("workspace_tools.mcp")
ANSWER_GRACE: Final = 30.0
"""Seconds running requests have to answer once stdin closes before they are cancelled."""


def protect_stdout() -> io.TextIOWrapper:
    """Keep the real stdout for the protocol only; send every other write to stderr.

    Returns:
        A text stream on a private duplicate of the original stdout.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return io.TextIOWrapper(os.fdopen(protocol_fd, "wb"), encoding="utf-8", newline="\n")


class _StdinLines:
    """Lines of stdin, read from fd 0 by a daemon thread, so a signal can end a pending read."""

    def __init__(self, fd: int, out: _ProtocolOut) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self._fd = fd
        self._out = out
        threading.Thread(target=self._pump, name="mcp-stdin", daemon=True).start()

    def _pump(self) -> None:
        pending = bytearray()
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            pending += chunk
            while (end := pending.find(b"\n")) >= 0:
                self._lines.put(pending[: end + 1].decode("utf-8", errors="replace"))
                del pending[: end + 1]
        if pending:
            self._lines.put(pending.decode("utf-8", errors="replace"))
        self._lines.put("")  # end of input

    def close(self) -> None:
        """Wake a reader still waiting, as end of input does."""
        self._lines.put("")

    def __aiter__(self) -> _StdinLines:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self._lines.get, abandon_on_cancel=True)
        if not line:
            await self._out.settle()  # the SDK cancels what is still running at end of input
            raise StopAsyncIteration
        self._out.received(line)
        return line


class _ProtocolOut:
    """The protocol stream for the SDK's stdio writer; ``flush`` writes in a worker thread."""

    def __init__(self, stream: io.TextIOWrapper, *, on_closed: Any, grace: float) -> None:
        self._stream = stream
        self._writer = ProtocolWriter(stream, on_closed=on_closed)
        self._pending: list[str] = []
        self._grace = grace
        self._open: dict[str | int, None] = {}
        """Ids of the client's requests not answered yet."""
        self._cancelled: set[str | int] = set()
        self._answered: anyio.Event | None = None

    def received(self, line: str) -> None:
        """Note a request (or a cancellation) read from the client."""
        message = _message(line)
        key, params = message.get("id"), message.get("params")
        if message.get("method") == "notifications/cancelled":
            key = params.get("requestId") if isinstance(params, dict) else None
            if isinstance(key, (str, int)):
                self._open.pop(key, None)
        elif isinstance(key, (str, int)) and "method" in message:
            self._open[key] = None

    async def settle(self) -> None:
        """At end of input: wait for the open requests, then answer the rest with an error."""
        with anyio.move_on_after(self._grace):
            while self._open and not self._writer.closed:
                self._answered = anyio.Event()
                await self._answered.wait()
        if self._open and not self._writer.closed:
            _LOG.warning(
                "stdin closed: %d request(s) not answered within %g s cancelled.",
                len(self._open),
                self._grace,
            )
        left = list(self._open)
        error = {"code": 0, "message": "Request cancelled: the client closed stdin."}
        for key in left:
            await self.write(json.dumps({"jsonrpc": "2.0", "id": key, "error": error}) + "\n")
        self._cancelled.update(left)  # a late answer is not sent after the error
        await self.flush()

    async def write(self, text: str) -> None:
        message = _message(text)
        key = message.get("id") if "method" not in message else None
        if isinstance(key, (str, int)):
            if key in self._cancelled:
                return  # answered as cancelled already
            self._open.pop(key, None)
        self._pending.append(text)

    async def flush(self) -> None:
        text = "".join(self._pending)
        self._pending.clear()
        await anyio.to_thread.run_sync(self._write, text)
        if self._answered is not None and (not self._open or self._writer.closed):
            self._answered.set()

    def _write(self, text: str) -> None:
        self._writer.write(text)  # a client gone away ends the session, not the process


def _message(text: str) -> dict[str, Any]:
    """One JSON-RPC message as a mapping (empty when it is not one)."""
    try:
        message = json.loads(text)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


async def _cancel_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            _LOG.info("Received %s: shutting down.", signal.Signals(signum).name)
            scope.cancel()
            return


def run_stdio(
    server: Any, *, stdout: io.TextIOWrapper | None = None, grace: float = ANSWER_GRACE
) -> None:
    """Serve one client over stdin/stdout until stdin closes or SIGINT/SIGTERM arrives.

    Args:
        server: The MCP server.
        stdout: The stream :func:`protect_stdout` returned (default: it is called now).
        grace: Seconds running requests have to answer once stdin closes.
    """
    from mcp.server.stdio import stdio_server

    stream = stdout if stdout is not None else protect_stdout()
    lines: _StdinLines  # the output, when the client closes it, ends the input
    out = _ProtocolOut(stream, on_closed=lambda: lines.close(), grace=grace)
    lines = _StdinLines(sys.stdin.fileno(), out)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(_cancel_on_signal, group.cancel_scope)
            async with stdio_server(stdin=lines, stdout=out) as (read, write):  # type: ignore[arg-type]
                await server.run(read, write, server.create_initialization_options())
            _LOG.info("stdin closed: shutting down.")
            group.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        lines.close()
        with contextlib.suppress(OSError, ValueError):
            stream.close()


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``:PORT`` for 127.0.0.1) as a pair.

    Raises:
        ValueError: not ``HOST:PORT`` with a port number from 0 to 65535.
    """
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        msg = f"--http takes HOST:PORT (e.g. 127.0.0.1:8765), got {value!r}."
        raise ValueError(msg)
    return host.strip("[]") or "127.0.0.1", int(port)


def http_app(server: Any, *, host: str, policy: HttpPolicy | None = None) -> Any:
    """A Starlette app serving ``server`` at ``/mcp`` behind :class:`HttpGuard`.

    Raises:
        InvalidInputError: No ``policy`` and a bind that is not loopback without a token.
    """
    from contextlib import asynccontextmanager

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    guard = policy if policy is not None else http_policy(host)
    manager = StreamableHTTPSessionManager(app=server)

    class _Endpoint:
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> Any:
        async with manager.run():
            yield

    app = Starlette(routes=[Route("/mcp", endpoint=_Endpoint())], lifespan=lifespan)
    return HttpGuard(app, guard)


def run_http(
    server: Any,
    *,
    host: str,
    port: int,
    token: str | None = None,
    allowed_origins: Sequence[str] = (),
) -> None:
    """Serve over streamable HTTP at ``http://HOST:PORT/mcp`` until SIGINT/SIGTERM.

    Args:
        server: The MCP server.
        host: Bind address; one that is not loopback needs a token.
        port: TCP port (0: any free port).
        token: Bearer token every request must carry; default ``$WORKSPACE_TOOLS_MCP_TOKEN``.
        allowed_origins: Browser origins allowed besides loopback ones.

    Raises:
        InvalidInputError: a bind that is not loopback without a token (nothing is started).
    """
    import uvicorn

    policy = http_policy(host, token=token, allowed_origins=allowed_origins)
    quiet_disconnect_logs()
    config = uvicorn.Config(
        http_app(server, host=host, policy=policy),
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    _LOG.info("Serving MCP over streamable HTTP at http://%s:%d/mcp", host, port)
    http = uvicorn.Server(config)
    http.capture_signals = lambda: exit_cleanly_on_signal(http)  # type: ignore[method-assign]
    http.run()
