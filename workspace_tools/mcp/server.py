"""The server factory: the chosen tool groups, built once (``build_tools``), behind one server."""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

from langchain_core.tools import BaseTool
from mcp import types
from mcp.server.lowlevel import Server
from pydantic import AnyUrl

from workspace_tools.core.skills import (
    MANAGED_DIR,
    Skill,
    SkillCatalog,
    SkillRegistry,
    render_skills_prompt,
    skill_location,
)
from workspace_tools.mcp import live as _live
from workspace_tools.mcp._served_status import served_status, served_status_tool
from workspace_tools.mcp._uris import decode_skill_uri, skill_uri
from workspace_tools.mcp.adapt import call_tool, tool_definition
from workspace_tools.mcp.config import ServerOptions
from workspace_tools.mcp.roots import RootsScope, allowed_directories
from workspace_tools.tools.groups import DocsGroup, build_tool_groups

__all__ = [
    "CATALOGUE_PROMPT",
    "CATALOGUE_URI",
    "STATUS_URI",
    "ServedTools",
    "build_tools",
    "create_server",
]

_LOG = logging.getLogger("workspace_tools.mcp")
CATALOGUE_PROMPT: Final = "skills_catalogue"
"""Name of the prompt that gives the skills catalogue and how to load skills."""
CATALOGUE_URI: Final = "skills://catalogue"
"""URI of the skills catalogue resource; each skill's instructions are at ``skills://NAME``."""
STATUS_URI: Final = "workspace://status"
"""URI of the status resource (what ``workspace_status`` says, as JSON)."""
_LEVELS: Final[dict[str, int]] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


@dataclass(kw_only=True)
class ServedTools:
    """What a server serves: the tools and the shared objects behind them."""

    tools: list[BaseTool]
    """Every tool, in the order clients list them."""
    skills: SkillRegistry | None = None
    """The skills registry (``None``: no skills)."""
    workspace: Any = None
    """The shared :class:`~workspace_tools.core.workspace.Workspace`, if served."""
    name: str = "workspace-tools"
    """Server name."""
    notes: list[str] = field(default_factory=list)
    """What start-up did, one line each (logged to stderr)."""
    background: Any = None
    """Model load, first sync and watching behind the protocol (``build_tools(background=)``)."""
    allowed: list[Path] = field(default_factory=list)
    """Folders the command line allows (workspace, docs, skills); client roots narrow them."""
    project: Path | None = None
    """The project folder (``--root``): client roots confine what lies inside it."""


def build_tools(
    options: ServerOptions,
    *,
    embedder: Any = None,
    show_progress: bool = False,
    background: bool = False,
) -> ServedTools:
    """Build every chosen tool group now (eagerly), sharing one workspace and one registry.

    Args:
        options: Groups, roots and ``read_only``.
        embedder: An embedder object or name overriding the workspace settings.
        show_progress: Progress bars on stderr while indexing at start-up.
        background: Load the model, index and watch behind the protocol instead of now.

    Raises:
        InvalidInputError: a folder does not exist, or two tools would share a name.
    """
    served = ServedTools(tools=[], name=options.name)
    if options.workspace is not None:
        served.workspace = _open_workspace(
            options,
            embedder=embedder,
            show_progress=show_progress and not background,
            notes=served.notes,
            now=not background,
        )
        if background:
            from workspace_tools.mcp._background import Background

            served.background = Background(served.workspace, sync=options.sync, watch=options.watch)
    if options.skills:
        served.skills = SkillRegistry(list(options.skills), root=options.root)
        count = len(served.skills.list_skills())
        served.notes.append(f"skills: {count} from {', '.join(options.skills)}")
    docs: list[DocsGroup] = []
    if options.docs is not None:
        from workspace_tools.tools.docs import docs_disabled

        docs_embedder, why = _docs_embedder(served.workspace, embedder)
        # with the workspace served too, pages are cited as workspace_search cites them
        cite = served.workspace.root if served.workspace is not None else None
        for scope in options.docs_scopes or (None,):
            where = f"{options.docs}/{scope}" if scope else str(options.docs)
            if docs_disabled():
                served.notes.append("docs: skipped (WORKSPACE_TOOLS_DISABLE_DOCS)")
                continue
            docs.append(
                DocsGroup(
                    root=options.docs,
                    scope=scope,
                    embedder=docs_embedder,
                    embed_in_background=True,
                    vector_cache=True,
                    cite_from=cite,
                )
            )
            served.notes.append(f"docs: {where} ({why})")
    # Skills are their own group here (--skills), not the toolkit's project-file default.
    served.tools = build_tool_groups(
        workspace=served.workspace, skills=served.skills, docs=docs, read_only=options.read_only
    )
    served.project = options.root.resolve()
    served.allowed = allowed_directories(
        workspace=options.workspace,
        docs=options.docs,
        skills=[  # with the managed folder: installed and pinned skills are served too
            *(options.root / s for s in options.skills if "*" not in s),
            *([options.root / MANAGED_DIR] if options.skills else []),
        ],
    )
    served.notes.append(
        "allowed directories: " + (", ".join(str(p) for p in served.allowed) or "none")
    )
    return served


def _docs_embedder(workspace: Any, embedder: Any) -> tuple[Any, str]:
    """The embedder docs search shares (the workspace's, else the default model), and why."""
    if embedder == "none":
        return None, "keyword ranking: --embedder none"
    if workspace is not None:
        if workspace.embedder is None:
            return None, "keyword ranking: the workspace has no embedder"
        return workspace.embedder, "hybrid ranking with the workspace's embedder"
    if embedder is not None and not isinstance(embedder, str):
        return embedder, "hybrid ranking"
    from workspace_tools.core.docs.embedding import docs_embedder

    chosen, what = docs_embedder(embedder)  # "default" and None: the packaged model
    return chosen, (f"hybrid ranking with {what}" if chosen else f"keyword ranking: {what}")


def _open_workspace(
    options: ServerOptions, *, embedder: Any, show_progress: bool, notes: list[str], now: bool
) -> Any:
    from workspace_tools.core.workspace import Workspace

    overrides: dict[str, Any] = {"show_progress": show_progress}
    if embedder is not None:
        overrides["embedder"] = None if embedder == "none" else embedder
    if options.read_only:
        overrides["read_only"] = True
    if options.index_dir is not None:
        overrides["index_dir"] = options.index_dir
    if options.mounts:
        overrides["mounts"] = options.mounts
    assert options.workspace is not None
    ws = Workspace.from_project(options.workspace, **overrides)
    if now and ws.embedder is not None and hasattr(ws.embedder, "load"):
        ws.embedder.load()  # once, now, not in the first search
    if now and not ws.read_only and options.sync:
        report = ws.sync(show_progress=show_progress)
        notes.append(f"workspace: indexed {ws.root}: {report.summary()}")
    notes.append(f"workspace: {ws!r}{' (read-only)' if ws.read_only else ''}")
    return ws


def _package_version() -> str:
    try:
        return version("workspace-tools")
    except PackageNotFoundError:  # pragma: no cover - always installed
        return "0"


def create_server(served: ServedTools, *, instructions: str | None = None) -> Server[Any, Any]:
    """An MCP server over ``served``: its tools, the skills catalogue and logging."""
    server: Server[Any, Any] = Server(
        served.name, version=_package_version(), instructions=instructions
    )
    by_name = {tool.name: tool for tool in served.tools}
    definitions = [tool_definition(tool) for tool in served.tools]
    live = _live.Live(server, served) if served.workspace is not None else None
    if live is not None:
        definitions.append(_live.status_tool())
    else:  # a docs or skills server: what it serves, within the session's roots
        definitions.append(served_status_tool())

    async def list_tools() -> list[types.Tool]:
        if live is not None:
            live.remember()
        return definitions

    scopes: weakref.WeakKeyDictionary[Any, RootsScope] = weakref.WeakKeyDictionary()
    base = served.workspace.root if served.workspace is not None else None

    def scope() -> RootsScope | None:
        try:
            session = server.request_context.session
        except LookupError:  # pragma: no cover - handlers always run inside a request
            return None
        if session not in scopes:
            scopes[session] = RootsScope(served.allowed, base=base, project=served.project)
        return scopes[session]

    async def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if live is not None:
            live.remember()
            if name == _live.STATUS_TOOL:
                return live.status(await _roots_now())
        elif name == _live.STATUS_TOOL:
            return served_status(served, await _roots_now())
        tool = by_name.get(name)
        if tool is None:
            text = f"Unknown tool {name!r}; this server has: {', '.join(by_name) or 'no tools'}."
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], isError=True
            )
        roots = await _roots_now()
        if roots is not None:  # every result inside the client's roots (mcp/roots.py)
            tool, refused = roots.confine(tool, arguments or {})
            if refused is not None:
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=refused)], isError=True
                )
        if live is not None:
            root = live.workspace.root
            return await live.call(tool, arguments, within=roots.within(root) if roots else None)
        return await call_tool(tool, arguments)

    async def _roots_now() -> RootsScope | None:
        roots = scope()
        if roots is not None:
            await roots.refresh(server.request_context.session)
        return roots

    async def roots_changed(_: Any) -> None:
        # The sender is unknown: every session asks its client again before its next call.
        for roots in list(scopes.values()):
            roots.invalidate()

    async def set_level(level: types.LoggingLevel) -> None:
        logging.getLogger("workspace_tools").setLevel(_LEVELS.get(level, logging.INFO))

    server.list_tools()(list_tools)  # type: ignore[no-untyped-call]
    server.call_tool(validate_input=False)(call)
    server.set_logging_level()(set_level)  # type: ignore[no-untyped-call]
    server.notification_handlers[types.RootsListChangedNotification] = roots_changed

    async def skills_now() -> Any:
        roots = await _roots_now()
        return served.skills if roots is None else roots.skills(served.skills)

    async def status_now() -> str:
        assert live is not None
        result = live.status(await _roots_now())
        return json.dumps(result.structuredContent, indent=2)

    if served.skills is not None or live is not None:
        _add_resources(
            server,
            skills=skills_now if served.skills is not None else None,
            status=status_now if live is not None else None,
        )
    return server


def _add_resources(
    server: Server[Any, Any],
    *,
    skills: Callable[[], Awaitable[Any]] | None,
    status: Callable[[], Awaitable[str]] | None,
) -> None:
    """The skills catalogue (prompt and resources) and the status resource, per session."""
    extra: list[types.Resource] = []
    if status is not None:
        extra.append(
            types.Resource(
                uri=AnyUrl(STATUS_URI),
                name="workspace-status",
                description="What workspace_status says: the index, indexing, watching, and "
                "the allowed directories (the client's roots in effect, those ignored and why).",
                mimeType="application/json",
            )
        )

    async def list_only() -> list[types.Resource]:
        return list(extra)

    async def read_status(uri: AnyUrl) -> str:
        if str(uri) == STATUS_URI and status is not None:
            return await status()
        msg = f"Unknown resource {str(uri)!r}; this server has: {STATUS_URI}."
        raise ValueError(msg)

    if skills is None:
        server.list_resources()(list_only)  # type: ignore[no-untyped-call]
        server.read_resource()(read_status)  # type: ignore[no-untyped-call]
        return
    _add_skills(server, skills, extra=extra, status=status)


def _add_skills(
    server: Server[Any, Any],
    registry_now: Callable[[], Awaitable[Any]],
    *,
    extra: list[types.Resource],
    status: Callable[[], Awaitable[str]] | None,
) -> None:
    prompt = types.Prompt(
        name=CATALOGUE_PROMPT,
        title="Agent Skills",
        description="The skills this server offers and how to load them with the skill tools.",
    )

    async def list_prompts() -> list[types.Prompt]:
        return [prompt]

    async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        if name != CATALOGUE_PROMPT:
            msg = f"Unknown prompt {name!r}; this server has: {CATALOGUE_PROMPT}."
            raise ValueError(msg)
        registry = await registry_now()
        text = render_skills_prompt(registry.catalog()) or "No skills are available."
        message = types.PromptMessage(
            role="user", content=types.TextContent(type="text", text=text)
        )
        return types.GetPromptResult(description=prompt.description, messages=[message])

    async def list_resources() -> list[types.Resource]:
        registry = await registry_now()
        resources = [
            *extra,
            types.Resource(
                uri=AnyUrl(CATALOGUE_URI),
                name="skills-catalogue",
                description="Every skill's name, description and location.",
                mimeType="text/plain",
            ),
        ]
        resources.extend(
            types.Resource(
                uri=skill_uri(skill.name),  # percent-encoded: any name lists and reads back
                name=skill.name,
                description=skill.description,
                mimeType="text/markdown",
            )
            for skill in _resolved_skills(registry.catalog())
        )
        return resources

    async def read_resource(uri: AnyUrl) -> str:
        text = decode_skill_uri(uri)
        if text == STATUS_URI and status is not None:
            return await status()
        registry = await registry_now()
        if text == CATALOGUE_URI:
            return render_skills_prompt(registry.catalog(), instructions=False, budget=None)
        if text.startswith("skills://"):
            return _skill_text(registry.catalog(), text.removeprefix("skills://"))
        msg = f"Unknown resource {text!r}; read {CATALOGUE_URI} for the list of skills."
        raise ValueError(msg)

    server.list_prompts()(list_prompts)  # type: ignore[no-untyped-call]
    server.get_prompt()(get_prompt)  # type: ignore[no-untyped-call]
    server.list_resources()(list_resources)  # type: ignore[no-untyped-call]
    server.read_resource()(read_resource)  # type: ignore[no-untyped-call]


def _resolved_skills(catalog: SkillCatalog) -> list[Skill]:
    """One skill per name: the one a lookup by name resolves to (or the first of a conflict)."""
    seen: dict[str, Skill] = {}
    for skill in catalog.skills:
        seen.setdefault(skill.name, skill)
    return list(seen.values())


def _skill_text(catalog: SkillCatalog, name: str) -> str:
    """The instructions of the skill ``name`` resolves to; for a conflict, the candidates."""
    conflict = catalog.conflicts.get(name)
    if conflict is None:
        return catalog.get(name).body
    where = "\n".join(f"- {skill_location(s, root=catalog.root)} ({s.source})" for s in conflict)
    return (
        f"{len(conflict)} {conflict[0].source} skills are named {name!r}, so the name does not "
        f"resolve to one of them:\n{where}\nLoad one with the `skill` tool, passing its "
        "location instead of the name."
    )
