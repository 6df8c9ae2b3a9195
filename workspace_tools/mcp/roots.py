"""MCP roots: serve the client's roots, within the folders the command line allows.

The served directories are the parts of the client's roots inside an allowed folder (never
wider); tools see them as ``within`` and path arguments outside them are refused.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlparse

import anyio
from mcp import types
from pydantic import BaseModel

from workspace_tools.core.text.scan import is_glob
from workspace_tools.core.text.within import is_within, normalise_within

__all__ = ["SENT_TO_CLIENT", "RootsScope", "allowed_directories", "serve_within", "uri_path"]

_LOG = logging.getLogger(__name__)
SENT_TO_CLIENT: Final = "mcp_sent"
"""Attribute of a log record already sent to the client as ``notifications/message``."""


def allowed_directories(
    *, workspace: Path | None = None, docs: Path | None = None, skills: Iterable[Path] = ()
) -> list[Path]:
    """The folders the command line lets a server touch, resolved, without duplicates."""
    found = [p.resolve() for p in (workspace, docs, *skills) if p is not None]
    return list(dict.fromkeys(found))


def uri_path(uri: str) -> Path | None:
    """The local folder of a ``file://`` root URI, links resolved (``None`` for other URIs)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    text = unquote(parsed.path)
    if not text.startswith("/") or "\x00" in text:
        return None
    return Path(os.path.realpath(text))


def serve_within(client_roots: Sequence[Path], allowed: Sequence[Path]) -> list[Path]:
    """The parts of ``client_roots`` inside ``allowed`` (an allowed folder inside a root whole)."""
    out: list[Path] = []
    for root in client_roots:
        for folder in allowed:
            if root == folder or root.is_relative_to(folder):
                out.append(root)
            elif folder.is_relative_to(root):
                out.append(folder)
    return list(dict.fromkeys(out))


class _AnyRoots(BaseModel):
    """A ``roots/list`` answer with each root left unchecked."""

    roots: list[Any]


class RootsScope:
    """The directories one server session serves, refreshed when the client's roots change."""

    def __init__(
        self, allowed: Sequence[Path], *, base: Path | None, project: Path | None = None
    ) -> None:
        self.allowed = list(allowed)
        """What the command line allows."""
        self.base = base
        """Folder relative path arguments are resolved against (the workspace root)."""
        self.project = project.resolve() if project is not None else None
        """The project (``--root``); folders served outside it are not narrowed by the roots."""
        self.served: list[Path] = list(allowed)
        """What is served now: :attr:`allowed`, narrowed by the client's roots."""
        self.client_roots: list[Path] | None = None
        """The client's roots in effect (``None``: the client offers none)."""
        self.ignored: list[tuple[str, str]] = []
        """Client roots left out, as ``(uri, reason)``."""
        self._stale = True
        self._asking = anyio.Lock()

    def invalidate(self) -> None:
        """The client said its roots changed: ask again before the next call."""
        self._stale = True

    async def refresh(self, session: Any) -> None:
        """Ask the client for its roots when they may have changed; concurrent calls wait."""
        async with self._asking:
            await self._refresh(session)

    async def _refresh(self, session: Any) -> None:
        if not self._stale:
            return
        self._stale = False  # a change announced while asking sets it again
        capability = types.ClientCapabilities(roots=types.RootsCapability())
        if session is None or not session.check_client_capability(capability):
            self.client_roots, self.served, self.ignored = None, list(self.allowed), []
            return
        try:  # each root checked below: one bad URI fails the SDK's model of the whole list
            request = types.ServerRequest(types.ListRootsRequest())
            result = await session.send_request(request, _AnyRoots)
        except Exception as exc:  # the client broke its promise: narrow to nothing, never widen
            self.client_roots, self.served, self.ignored, self._stale = [], [], [], True
            await _warn(session, f"Could not read the client's roots ({exc}); serving nothing.")
            return
        roots: list[Path] = []
        ignored: list[tuple[str, str]] = []
        allowed = ", ".join(str(p) for p in self.allowed) or "none"
        for root in result.roots:
            uri = root.get("uri") if isinstance(root, dict) else None
            path = uri_path(uri) if isinstance(uri, str) else None
            uri = uri if isinstance(uri, str) else repr(root)
            if path is None:
                ignored.append((uri, "not a local file:// URI"))
            elif not serve_within([path], self.allowed):
                ignored.append((uri, f"outside the folders the server allows ({allowed})"))
            else:
                roots.append(path)
        self.ignored = ignored
        for uri, reason in ignored:
            await _warn(session, f"Ignored the client's root {uri}: {reason}.")
        if not roots:
            # No root left: the command line decides.
            self.client_roots, self.served = None, list(self.allowed)
            if ignored:
                await _warn(
                    session,
                    "No root of the client lies in the allowed folders: "
                    "serving what the command line allows.",
                )
            return
        self.client_roots = list(dict.fromkeys(roots))
        self.served = serve_within(self.client_roots, self.allowed)

    def _confines(self, path: Path) -> bool:
        """Whether the client's roots decide about ``path`` (a file of the project)."""
        if self.client_roots is None:
            return False
        return self.project is None or path == self.project or path.is_relative_to(self.project)

    def serves(self, path: Path | None) -> bool:
        """Whether a file or folder (a skill's folder) is served to this session."""
        if path is None:
            return True  # a skill defined in code has no folder
        path = path.resolve()
        if not self._confines(path):
            return True
        return any(path == d or path.is_relative_to(d) for d in self.served)

    def within(self, root: Path) -> tuple[str, ...] | None:
        """The parts of ``root`` a call may see, by real path (``None``: all of it)."""
        root = root.resolve()
        if not self._confines(root):
            return None
        if any(root == d or root.is_relative_to(d) for d in self.served):
            inside: tuple[str, ...] | None = None
        else:
            found = [d.relative_to(root).as_posix() for d in self.served if d.is_relative_to(root)]
            inside = normalise_within(found) or ()
        return _by_real_path(root, inside, self._serves_real)

    def _serves_real(self, path: Path) -> bool:
        """Whether the real path ``path`` lies in a served directory."""
        return any(path == d or path.is_relative_to(d) for d in self.served)

    def skills(self, registry: Any) -> Any:
        """``registry`` as this session sees it (itself when the client offers no roots)."""
        if self.client_roots is None:
            return registry
        from workspace_tools.mcp._roots_skills import SkillsView

        return SkillsView(registry, lambda skill: self.serves(skill.path))

    def report(self) -> dict[str, Any]:
        """The allowed directories, the client's roots and what is served (for the status)."""
        return {
            "allowed": [str(p) for p in self.allowed],
            "client_roots": None
            if self.client_roots is None
            else [str(p) for p in self.client_roots],
            "served": [str(p) for p in self.served_now()],
            "ignored": [{"uri": uri, "reason": reason} for uri, reason in self.ignored],
        }

    def served_now(self) -> list[Path]:
        """The served directories, with the allowed folders outside the project."""
        outside = [
            a for a in self.allowed if self.client_roots is not None and not self._confines(a)
        ]
        return list(dict.fromkeys([*self.served, *outside]))

    def report_lines(self) -> list[str]:
        """:meth:`report` as text lines."""
        lines = ["Allowed directories: " + (", ".join(str(p) for p in self.allowed) or "none")]
        if self.client_roots is None:
            lines.append("Client roots: none in effect (serving the allowed directories).")
        else:
            shown = ", ".join(str(p) for p in self.client_roots) or "none"
            served = ", ".join(str(p) for p in self.served_now()) or "none"
            lines.append(f"Client roots: {shown}; served: {served}.")
        lines.extend(f"Ignored root {uri}: {reason}." for uri, reason in self.ignored)
        return lines

    def confine(self, tool: Any, arguments: dict[str, Any]) -> tuple[Any, str | None]:
        """``tool`` confined to the served directories for one call (a copy), or a refusal."""
        from workspace_tools.tools.base import tool_writes

        if self.client_roots is None:
            return tool, None
        registry = getattr(tool, "registry", None)
        if registry is not None:  # a skill tool: only the skills inside the roots
            return tool.model_copy(update={"registry": self.skills(registry)}), None
        workspace = getattr(tool, "workspace", None)
        index = getattr(tool, "index", None)
        writes = tool_writes(tool) is not False
        narrows = "within" in type(tool).model_fields and not writes
        if workspace is not None:
            refused = self.refusal(arguments, narrows=narrows)
            if refused is not None:
                return tool, refused
        root = workspace.root if workspace is not None else getattr(index, "root", None)
        if not narrows or root is None:
            return tool, None
        within = self.within(Path(root))
        if within is None:
            return tool, None
        if not within:
            served = ", ".join(str(d) for d in self.served) or "none"
            return tool, (
                f"This session serves no part of {root} (the client's roots within what the "
                f"server allows: {served}), so {tool.name} has nothing to answer from. Ask the "
                "user to add a root inside it."
            )
        return tool.model_copy(update={"within": within}), None

    def refusal(self, arguments: dict[str, Any], *, narrows: bool = False) -> str | None:
        """Why a call's path arguments leave the served directories (``None``: they do not)."""
        if self.client_roots is None or self.base is None or not self._confines(self.base):
            return None  # the tools confine paths to their own roots already
        values: list[str] = []
        for key in ("path", "paths"):
            value = arguments.get(key)
            if isinstance(value, str):
                values.append(value)
            elif isinstance(value, list):
                values.extend(v for v in value if isinstance(v, str))
        for value in values:
            # the real path decides: a link in the roots leading out is outside them
            target = Path(os.path.realpath(self.base / value.split("*", 1)[0]))
            if any(target == d or target.is_relative_to(d) for d in self.served):
                continue
            around = any(d.is_relative_to(target) for d in self.served)
            if narrows and (around and (target.is_dir() or is_glob(value))):
                continue
            shown = ", ".join(str(d) for d in self.served) or "none"
            return (
                f"Path {value!r} is outside the directories this session serves (the "
                f"client's roots within what the server allows): {shown}. Use a path "
                "inside one of them."
            )
        return None


def _links(root: Path) -> list[str]:
    """Every symbolic link under ``root`` (relative POSIX paths), not following any."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                found.append(Path(path).relative_to(root).as_posix())
    return found


def _by_real_path(
    root: Path, inside: tuple[str, ...] | None, serves: Callable[[Path], bool]
) -> tuple[str, ...] | None:
    """``inside`` (parts of ``root``, ``None``: all of it) corrected by the real path of links."""
    out_links: set[str] = set()
    in_links: list[str] = []
    for link in _links(root):
        served = serves(Path(os.path.realpath(root / link)))
        if is_within(link, inside) and not served:
            out_links.add(link)
        elif not is_within(link, inside) and served:
            in_links.append(link)
    if not out_links and not in_links:
        return inside
    kept: list[str] = []
    for prefix in ("",) if inside is None else inside:
        kept.extend(_without(root, prefix, out_links))
    return normalise_within([*kept, *in_links]) or ()


def _without(root: Path, prefix: str, cut: set[str]) -> list[str]:
    """``prefix`` (``""``: the root) as the parts that hold none of ``cut``."""
    if prefix in cut:
        return []
    if prefix and not any(c.startswith(prefix + "/") for c in cut):
        return [prefix]
    folder = root / prefix if prefix else root
    try:
        names = sorted(os.listdir(folder))
    except OSError:  # gone meanwhile, or not a folder: nothing of it to serve
        return []
    out: list[str] = []
    for name in names:
        out.extend(_without(root, f"{prefix}/{name}" if prefix else name, cut))
    return out


async def _warn(session: Any, text: str) -> None:
    """Log ``text`` to stderr and send it to the client as ``notifications/message``."""
    _LOG.warning(text, extra={SENT_TO_CLIENT: True})
    with contextlib.suppress(Exception):  # a client gone away changes nothing here
        await session.send_log_message(level="warning", data=text, logger=_LOG.name)
