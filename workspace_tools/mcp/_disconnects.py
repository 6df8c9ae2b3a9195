"""A client that goes away ends its session: no traceback, no error exit."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final

import anyio

__all__ = [
    "ProtocolWriter",
    "exit_cleanly_on_signal",
    "is_disconnect",
    "quiet_disconnect_logs",
]

_LOG = logging.getLogger("workspace_tools.mcp")

DISCONNECTS: Final = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    BrokenPipeError,
    ConnectionResetError,
    ConnectionAbortedError,
)
"""Exceptions that mean the other side went away."""

_SDK_LOGGERS: Final = (
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.server.lowlevel.server",
    "mcp.shared.session",
    "sse_starlette.sse",
    "uvicorn.error",
)


def is_disconnect(exc: BaseException | None) -> bool:
    """True for a disconnect, or a group made only of disconnects."""
    group = getattr(exc, "exceptions", None)  # an ExceptionGroup (a backport before 3.11)
    if isinstance(group, tuple) and group:
        return all(is_disconnect(e) for e in group)
    return isinstance(exc, DISCONNECTS)


class _DisconnectFilter(logging.Filter):
    """Drops log records whose exception is a client disconnect (one debug line instead)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None or not is_disconnect(exc):
            return True
        _LOG.debug("A client disconnected (%s): %s", type(exc).__name__, record.getMessage())
        return False


_FILTER: Final = _DisconnectFilter()


def quiet_disconnect_logs() -> None:
    """Filter disconnect tracebacks out of the SDK's and uvicorn's loggers (idempotent)."""
    for name in _SDK_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


class ProtocolWriter:
    """Writes protocol text to a stream; the first broken pipe ends the session quietly.

    Args:
        stream: The protocol stream (a private duplicate of the original stdout).
        on_closed: Called once when the client is gone (ends the session, as end of input does).
    """

    def __init__(self, stream: io.TextIOWrapper, *, on_closed: Callable[[], None]) -> None:
        self._stream = stream
        self._on_closed = on_closed
        self._lock = threading.Lock()
        self.closed = False

    def write(self, text: str) -> None:
        """Write and flush ``text``; after a disconnect, drop it."""
        with self._lock:
            if self.closed:
                return
            try:
                self._stream.write(text)
                self._stream.flush()
            except (OSError, ValueError) as exc:
                self.closed = True
                _LOG.info("The client closed its end of the protocol (%s): shutting down.", exc)
                _discard(self._stream)
                self._on_closed()


def _discard(stream: io.TextIOWrapper) -> None:
    """Point the stream's descriptor at /dev/null, so the buffered rest flushes harmlessly."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)


@contextlib.contextmanager
def exit_cleanly_on_signal(server: Any) -> Iterator[None]:
    """Let SIGINT/SIGTERM shut a ``uvicorn.Server`` down gracefully, then exit normally."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: Any) -> None:
        _LOG.info("Received %s: shutting down.", signal.Signals(signum).name)
        if server.should_exit and signum == signal.SIGINT:
            server.force_exit = True
        server.should_exit = True

    original = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, previous in original.items():
            signal.signal(sig, previous)
