"""workspace-tools: a searchable workspace and Agent Skills for LangChain agents.

Public names are imported lazily (no torch, FAISS or LangChain on import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workspace_tools._lazy import lazy_getattr
from workspace_tools.core.adapters import register_adapter

if TYPE_CHECKING:
    from workspace_tools.core.types import LineRange, SearchResult, SyncReport
    from workspace_tools.core.workspace import Workspace

from workspace_tools._version import __version__

_LAZY: dict[str, str] = {
    "Workspace": "workspace_tools.core.workspace._workspace",
    "SearchResult": "workspace_tools.core.types",
    "LineRange": "workspace_tools.core.types",
    "SyncReport": "workspace_tools.core.types",
    "WorkspaceError": "workspace_tools.core.errors",
    "SentenceTransformerEmbedder": "workspace_tools.core.embedding.embedder",
    "TokenizerConfig": "workspace_tools.core.text.tokenizer",
    "ChunkingConfig": "workspace_tools.core.text.chunking",
    "BM25Config": "workspace_tools.core.index.sparse",
    "ScanConfig": "workspace_tools.core.text.scan",
    "DocsIndex": "workspace_tools.core.docs.index",
    "SkillRegistry": "workspace_tools.core.skills",
    "Skill": "workspace_tools.core.skills",
    "render_skills_prompt": "workspace_tools.core.skills",
    "ProjectConfig": "workspace_tools.core.config",
}

__all__ = [
    "BM25Config",
    "ChunkingConfig",
    "DocsIndex",
    "LineRange",
    "ProjectConfig",
    "ScanConfig",
    "SearchResult",
    "SentenceTransformerEmbedder",
    "Skill",
    "SkillRegistry",
    "SyncReport",
    "TokenizerConfig",
    "Workspace",
    "WorkspaceError",
    "__version__",
    "render_skills_prompt",
]


def _retriever(workspace: Workspace, **options: Any) -> Any:
    """``Workspace.as_retriever``: the LangChain retriever, imported only when asked for."""
    try:
        from workspace_tools.tools.retriever import WorkspaceRetriever
    except ImportError as exc:  # pragma: no cover - langchain-core is a base dependency
        from workspace_tools.core.errors import MissingDependencyError

        msg = f"Workspace.as_retriever needs langchain-core ({exc}): pip install langchain-core"
        raise MissingDependencyError(msg) from exc
    return WorkspaceRetriever(workspace=workspace, **options)


register_adapter("retriever", _retriever)

__getattr__ = lazy_getattr("workspace_tools", _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(__all__)
