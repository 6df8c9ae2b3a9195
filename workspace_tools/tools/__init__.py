"""LangChain adapters over the workspace core: tools, toolkit, retriever and middleware (lazy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_tools._lazy import lazy_getattr

if TYPE_CHECKING:
    from workspace_tools.tools.docs import (
        DocsGetPageTool,
        DocsListTool,
        DocsRefreshIndexTool,
        DocsSearchTool,
        make_docs_tools,
    )
    from workspace_tools.tools.middleware import SkillsMiddleware
    from workspace_tools.tools.read import WorkspaceReadTool
    from workspace_tools.tools.retriever import WorkspaceRetriever
    from workspace_tools.tools.search_documents import SearchDocumentsTool
    from workspace_tools.tools.skills import SkillReadTool, SkillSearchTool, SkillTool, skill_tools
    from workspace_tools.tools.toolkit import WorkspaceToolkit
    from workspace_tools.tools.vectorstore import WorkspaceVectorStore
    from workspace_tools.tools.workspace import WorkspaceIndexTool, WorkspaceSearchTool

_LAZY: dict[str, str] = {
    "DocsGetPageTool": "workspace_tools.tools.docs",
    "DocsListTool": "workspace_tools.tools.docs",
    "DocsRefreshIndexTool": "workspace_tools.tools.docs",
    "DocsSearchTool": "workspace_tools.tools.docs",
    "SearchDocumentsTool": "workspace_tools.tools.search_documents",
    "SkillReadTool": "workspace_tools.tools.skills",
    "SkillSearchTool": "workspace_tools.tools.skills",
    "SkillTool": "workspace_tools.tools.skills",
    "SkillsMiddleware": "workspace_tools.tools.middleware",
    "WorkspaceIndexTool": "workspace_tools.tools.workspace",
    "WorkspaceReadTool": "workspace_tools.tools.read",
    "WorkspaceRetriever": "workspace_tools.tools.retriever",
    "WorkspaceSearchTool": "workspace_tools.tools.workspace",
    "WorkspaceToolkit": "workspace_tools.tools.toolkit",
    "WorkspaceVectorStore": "workspace_tools.tools.vectorstore",
    "make_docs_tools": "workspace_tools.tools.docs",
    "skill_tools": "workspace_tools.tools.skills",
}

__all__ = [
    "DocsGetPageTool",
    "DocsListTool",
    "DocsRefreshIndexTool",
    "DocsSearchTool",
    "SearchDocumentsTool",
    "SkillReadTool",
    "SkillSearchTool",
    "SkillTool",
    "SkillsMiddleware",
    "WorkspaceIndexTool",
    "WorkspaceReadTool",
    "WorkspaceRetriever",
    "WorkspaceSearchTool",
    "WorkspaceToolkit",
    "WorkspaceVectorStore",
    "make_docs_tools",
    "skill_tools",
]


__getattr__ = lazy_getattr("workspace_tools.tools", _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(__all__)
