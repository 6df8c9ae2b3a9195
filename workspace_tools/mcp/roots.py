"""MCP roots: serve the client's roots, within the folders the command line allows.

The command line (and ``workspace-tools.yaml``) names the folders a server may touch: the
workspace root, the docs root, the skills folders. A client that offers roots
(``capabilities.roots``) narrows them: the served directories are the parts of its roots that lie
inside an allowed folder (a client root around an allowed folder serves that folder). A tool
argument naming a path (``path``, ``paths``) outside the served directories is refused with a
message that lists them. :func:`allowed_directories` is what a status tool or resource reports.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from mcp import types

__all__ = ["RootsScope", "allowed_directories", "serve_within", "uri_path"]


def allowed_directories(
    *, workspace: Path | None = None, docs: Path | None = None, skills: Iterable[Path] = ()
) -> list[Path]:
    """The folders the command line lets a server touch, resolved, without duplicates."""
    found = [p.resolve() for p in (workspace, docs, *skills) if p is not None]
    return list(dict.fromkeys(found))


def uri_path(uri: str) -> Path | None:
    """The local folder of a ``file://`` root URI (``None`` for other schemes)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path)).resolve()


def serve_within(client_roots: Sequence[Path], allowed: Sequence[Path]) -> list[Path]:
    """The parts of ``client_roots`` inside ``allowed``; empty when they do not meet.

    An allowed folder that a client root contains counts whole.
    """
    out: list[Path] = []
    for root in client_roots:
        for folder in allowed:
            if root == folder or root.is_relative_to(folder):
                out.append(root)
            elif folder.is_relative_to(root):
                out.append(folder)
    return list(dict.fromkeys(out))


class RootsScope:
    """The directories one server session serves, refreshed when the client's roots change."""

    def __init__(self, allowed: Sequence[Path], *, base: Path | None) -> None:
        self.allowed = list(allowed)
        """What the command line allows."""
        self.base = base
        """Folder relative path arguments are resolved against (the workspace root)."""
        self.served: list[Path] = list(allowed)
        """What is served now: :attr:`allowed`, narrowed by the client's roots."""
        self.client_roots: list[Path] | None = None
        """The client's roots (``None``: the client offers none)."""
        self._stale = True

    def invalidate(self) -> None:
        """The client said its roots changed: ask again before the next call."""
        self._stale = True

    async def refresh(self, session: Any) -> None:
        """Ask the client for its roots when it offers them and they may have changed."""
        if not self._stale:
            return
        self._stale = False
        capability = types.ClientCapabilities(roots=types.RootsCapability())
        if session is None or not session.check_client_capability(capability):
            self.client_roots, self.served = None, list(self.allowed)
            return
        result = await session.list_roots()
        roots = [p for p in (uri_path(str(r.uri)) for r in result.roots) if p is not None]
        self.client_roots = roots
        self.served = serve_within(roots, self.allowed)

    def refusal(self, arguments: dict[str, Any]) -> str | None:
        """Why a call's path arguments leave the served directories (``None``: they do not)."""
        if self.client_roots is None or self.base is None:
            return None  # the tools confine paths to their own roots already
        values: list[str] = []
        for key in ("path", "paths"):
            value = arguments.get(key)
            if isinstance(value, str):
                values.append(value)
            elif isinstance(value, list):
                values.extend(v for v in value if isinstance(v, str))
        for value in values:
            target = Path(os.path.normpath(self.base / value.split("*", 1)[0]))
            if not any(target == d or target.is_relative_to(d) for d in self.served):
                shown = ", ".join(str(d) for d in self.served) or "none"
                return (
                    f"Path {value!r} is outside the directories this session serves (the "
                    f"client's roots within what the server allows): {shown}. Use a path "
                    "inside one of them."
                )
        return None
