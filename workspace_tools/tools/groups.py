"""The one builder of tool groups (workspace, skills, docs) for the toolkit and the MCP server."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from langchain_core.tools import BaseTool

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.tools.base import tool_facts

if TYPE_CHECKING:
    from workspace_tools.core.skills import SkillRegistry
    from workspace_tools.core.workspace import Workspace

__all__ = ["RESERVED_TOOL_NAMES", "DocsGroup", "build_tool_groups"]

RESERVED_TOOL_NAMES: Final[frozenset[str]] = frozenset(
    {"grep", "glob", "ls", "read_file", "write_file", "edit_file", "search", "execute", "task"}
)
"""Names of common built-in tools (deepagents, LangChain middleware) that ours must not take."""


@dataclass(frozen=True, kw_only=True)
class DocsGroup:
    """One docs tree (or scope) as the four docs tools; fields as in ``make_docs_tools``."""

    root: Path
    scope: str | None = None
    embedder: Any = None
    vector_cache: bool = False
    embed_in_background: bool = False
    cite_from: Path | None = None


def build_tool_groups(
    *,
    workspace: Workspace | None = None,
    skills: SkillRegistry | None = None,
    docs: Sequence[DocsGroup] = (),
    read_only: bool = False,
    require_approval: Collection[str] = (),
) -> list[BaseTool]:
    """The tools of the chosen groups, in order: workspace, skills, docs.

    Args:
        workspace: Adds the workspace tools over it (``None``: no workspace group).
        skills: Adds ``skill``, ``skill_read`` and ``skill_search`` over it.
        docs: Adds the docs tools of each group.
        read_only: Leave out every tool that writes (also done when ``workspace`` is read-only).
        require_approval: Tool names built to ask a person first (``workspace_index``).

    Raises:
        InvalidInputError: Two tools would share a name.
        ValueError: A tool would take a common built-in tool's name.
    """
    tools: list[BaseTool] = []
    if workspace is not None:
        read_only = read_only or workspace.read_only
        tools.extend(_workspace_tools(workspace, read_only=read_only, approval=require_approval))
    if skills is not None:
        from workspace_tools.tools.skills import skill_tools

        tools.extend(skill_tools(skills))
    if docs:
        from workspace_tools.tools.docs import make_docs_tools

        for group in docs:
            tools.extend(
                make_docs_tools(
                    group.root,
                    scope=group.scope,
                    embedder=group.embedder,
                    vector_cache=group.vector_cache,
                    embed_in_background=group.embed_in_background,
                    cite_from=group.cite_from,
                )
            )
    if read_only:  # leave out every tool that declares it writes
        tools = [t for t in tools if not tool_facts(t).writes]
    names = [t.name for t in tools]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        msg = f"Two tools would be named {', '.join(twice)}; give each docs scope only once."
        raise InvalidInputError(msg)
    clashes = sorted(set(names) & RESERVED_TOOL_NAMES)
    if clashes:  # pragma: no cover - guards future tools
        msg = f"Tool names {clashes} collide with common built-in tools."
        raise ValueError(msg)
    return tools


def _workspace_tools(
    workspace: Workspace, *, read_only: bool, approval: Collection[str]
) -> list[BaseTool]:
    from workspace_tools.tools.read import WorkspaceReadTool
    from workspace_tools.tools.search_documents import SearchDocumentsTool
    from workspace_tools.tools.workspace import WorkspaceIndexTool, WorkspaceSearchTool

    return [
        WorkspaceSearchTool(workspace=workspace),
        WorkspaceIndexTool(workspace=workspace, require_approval="workspace_index" in approval),
        SearchDocumentsTool(workspace=workspace, read_only=read_only),
        WorkspaceReadTool(workspace=workspace),
    ]
