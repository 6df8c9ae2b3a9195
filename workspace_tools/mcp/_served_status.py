"""The status tool of a server without a workspace (``--docs`` only, ``--skills`` only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from mcp import types

from workspace_tools.core.text.within import is_within

__all__ = ["served_status", "served_status_tool"]

_MAX_NAMES: Final = 50
"""Skill names listed in the text (every name is in the structured content)."""

_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "description": "What a docs or skills server serves to this session.",
    "properties": {
        "docs": {
            "type": "object",
            "description": "The docs tree: root, pages (within the roots), sections, ranking; "
            "with roots in effect also pages_total and within (folders of the docs root).",
        },
        "skills": {
            "type": "object",
            "description": "The skills this session sees: count, names, and errors and "
            "warnings found while loading them.",
        },
        "directories": {
            "type": "object",
            "description": "What this session serves (list_allowed_directories): allowed, "
            "client_roots (absent: the client offers none), served, ignored.",
        },
    },
}


def served_status_tool() -> types.Tool:
    """The MCP definition of ``workspace_status`` on a server without a workspace."""
    from workspace_tools.mcp.live import status_definition

    return status_definition(
        title="Server status",
        description=(
            "What this server serves: the docs tree (pages, sections, how searches rank) and "
            "the skills (names, load problems), counted within the directories this session "
            "serves (the client's roots within the allowed folders), and those directories."
        ),
        output_schema=_SCHEMA,
    )


def _docs_status(index: Any, roots: Any) -> tuple[dict[str, Any], str]:
    stats = index.stats
    within = roots.within(Path(index.root)) if roots is not None else None
    pages = index.list_pages()
    data: dict[str, Any] = {
        "root": str(index.root),
        "pages": len(pages),
        "sections": stats.sections,
        "ranking": index.status(),
    }
    where = ""
    if index.scope:
        data["scope"] = index.scope
    if within is not None:
        inside = sum(is_within(p.path, within) for p in pages)
        data.update(pages=inside, pages_total=len(pages), within=list(within))
        shown = ", ".join(f"{w}/" for w in within) or "none"
        where = f" in the client's roots ({shown}; {len(pages)} in the tree)"
    text = (
        f"Docs {index.root}: {data['pages']} pages{where}, {stats.sections} sections in the "
        f"index; {data['ranking']}."
    )
    return data, text


def _skills_status(registry: Any, roots: Any) -> tuple[dict[str, Any], str]:
    view = roots.skills(registry) if roots is not None else registry
    names = sorted({skill.name for skill in view.catalog().skills})
    problems = registry.diagnostics()
    errors = sum(d.severity == "error" for d in problems)
    data = {
        "count": len(names),
        "names": names,
        "errors": errors,
        "warnings": len(problems) - errors,
    }
    shown = ", ".join(names[:_MAX_NAMES]) + (" ..." if len(names) > _MAX_NAMES else "")
    text = f"Skills: {len(names)} ({shown or 'none'})"
    if problems:
        text += f"; {errors} failed to load, {len(problems) - errors} warnings"
    return data, text + "."


def served_status(served: Any, roots: Any) -> types.CallToolResult:
    """The status of a server without a workspace, for one session (``roots``: its scope)."""
    from workspace_tools.mcp.live import _without_nulls

    data: dict[str, Any] = {}
    lines: list[str] = []
    indexes = {id(t.index): t.index for t in served.tools if getattr(t, "index", None)}
    for index in indexes.values():  # one docs tree per server
        data["docs"], text = _docs_status(index, roots)
        lines.append(text)
    if served.skills is not None:
        data["skills"], text = _skills_status(served.skills, roots)
        lines.append(text)
    if roots is not None:
        data["directories"] = roots.report()
        lines.extend(roots.report_lines())
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="\n".join(lines) or "Nothing served.")],
        structuredContent=_without_nulls(data),
        isError=False,
    )
