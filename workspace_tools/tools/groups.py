"""The one builder of tool groups: the toolkit and the MCP server both assemble their tools here.

Three groups share one core: the workspace (``workspace_search``, ``workspace_index``,
``search_documents``, ``workspace_read``) over one :class:`Workspace`, the skills over one
:class:`SkillRegistry`, and the docs tools of each docs tree (or scope). A read-only build leaves
out every tool whose :class:`~workspace_tools.tools._base.ToolFacts` say it writes; names must
be distinct and must not take a common built-in tool's name.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from langchain_core.tools import BaseTool

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.tools._base import tool_facts

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
    """One docs tree (or one scope of it), served as the four docs tools.

    The fields are :func:`~workspace_tools.tools.docs.make_docs_tools`'s arguments of the same
    names.
    """

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
        InvalidInputError: two tools would share a name (a docs scope given twice).
        ValueError: a tool would take a common built-in tool's name.
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
