"""``WorkspaceRetriever``: the workspace search as a LangChain retriever (LCEL, retriever tools)."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from workspace_tools.core.types import SearchResult
from workspace_tools.core.workspace import Workspace

__all__ = ["WorkspaceRetriever", "result_to_document"]


def result_to_document(result: SearchResult) -> Document:
    """A ``Document`` for a search hit: the chunk text, with score, source and lines in metadata."""
    lines = result.line_range
    metadata = {
        **result.metadata,
        "score": result.score,
        "source": result.source_id,
        "chunk_id": result.id,
        "line_start": lines.start if lines else None,
        "line_end": lines.end if lines else None,
        "section_heading": result.section_heading,
        "headings": list(result.headings),
        "snippet": result.snippet,
        "score_details": dict(result.score_details),
    }
    return Document(id=result.id, page_content=result.content, metadata=metadata)


class WorkspaceRetriever(BaseRetriever):
    """Retrieve workspace chunks as LangChain documents, best first.

    ``k`` can also be given per call: ``retriever.invoke("query", k=2)``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workspace: Workspace
    """The workspace to search."""
    k: int = Field(default=4, ge=1)
    """Documents to return."""
    mode: str | None = None
    """``bm25``, ``vector`` or ``hybrid``; default: the workspace's default mode."""
    filter: dict[str, Any] | None = None
    """Exact-match conditions on chunk metadata (``source_id``, ``format``, your own keys)."""
    min_score: float | None = None
    """Drop hits scoring below this."""

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        results = self.workspace.search(
            query,
            top_k=k if k is not None else self.k,
            mode=kwargs.get("mode", self.mode),
            min_score=kwargs.get("min_score", self.min_score),
            filter=kwargs.get("filter", self.filter),
        )
        return [result_to_document(r) for r in results]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        return await asyncio.to_thread(
            self._get_relevant_documents,
            query,
            run_manager=run_manager.get_sync(),
            k=k,
            **kwargs,
        )
