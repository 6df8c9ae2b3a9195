"""A server that answers ``initialize`` at once and builds its tools on a background worker."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import McpError

from workspace_tools.core.background import BackgroundWorker

__all__ = ["LazyServer"]

_LOG = logging.getLogger("workspace_tools.mcp")
_ALWAYS: Final = (types.ListToolsRequest, types.CallToolRequest, types.SetLevelRequest)
_PROMPTS: Final = (types.ListPromptsRequest, types.GetPromptRequest)
_RESOURCES: Final = (types.ListResourcesRequest, types.ReadResourceRequest)


def _package_version() -> str:
    try:
        return version("workspace-tools")
    except PackageNotFoundError:  # pragma: no cover - always installed
        return "0"


class LazyServer:
    """The protocol now, the tools when they are built.

    Args:
        name: Server name reported to clients.
        prompts_and_resources: Advertise prompts and resources (the skills catalogue).
        resources: Advertise resources even without prompts (``None``: as the above).
    """

    def __init__(
        self, *, name: str, prompts_and_resources: bool, resources: bool | None = None
    ) -> None:
        self.server: Server[Any, Any] = Server(name, version=_package_version())
        self.inner: Server[Any, Any] | None = None
        self.error: str | None = None
        self._built = threading.Event()
        with_resources = prompts_and_resources if resources is None else resources
        kinds = _ALWAYS + (_PROMPTS if prompts_and_resources else ())
        kinds += _RESOURCES if with_resources or prompts_and_resources else ()
        for kind in kinds:
            self.server.request_handlers[kind] = self._delegate(kind)

    def start(self, build: Callable[[], Server[Any, Any]]) -> None:
        """Run ``build`` on a background worker; requests wait for its server."""

        def run() -> None:
            try:
                inner = build()
            except Exception as exc:
                self.error = str(exc) or type(exc).__name__
                _LOG.error("error: %s", self.error)
            else:
                for kind in inner.request_handlers:
                    self.server.request_handlers.setdefault(kind, self._delegate(kind))
                self.server.notification_handlers.update(inner.notification_handlers)
                self.inner = inner
            finally:
                self._built.set()

        BackgroundWorker("workspace-tools-build").submit(run)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the build (True when it ended, well or not)."""
        return self._built.wait(timeout)

    def _delegate(self, kind: type) -> Callable[[Any], Any]:
        async def handler(request: Any) -> types.ServerResult:
            while not self._built.is_set():
                await anyio.sleep(0.01)
            inner = self.inner
            if inner is None:
                raise McpError(
                    types.ErrorData(
                        code=types.INTERNAL_ERROR,
                        message=f"The server could not start its tools: {self.error}",
                    )
                )
            target = inner.request_handlers.get(kind)
            if target is None:
                raise McpError(
                    types.ErrorData(
                        code=types.METHOD_NOT_FOUND,
                        message=f"This server does not handle {kind.__name__}.",
                    )
                )
            return await target(request)

        return handler
