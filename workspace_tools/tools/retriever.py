"""``WorkspaceRetriever``: the workspace search as a LangChain retriever (LCEL, retriever tools).

``search_kwargs`` (``k``, ``filter``, ``mode``, ``vector_weight``, ``score_threshold``) can also
be given per call: ``retriever.invoke("query", k=2)``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, model_validator

from workspace_tools.core.types import SearchResult
from workspace_tools.core.workspace import Workspace

__all__ = ["SEARCH_KWARGS", "SEARCH_TYPES", "WorkspaceRetriever", "result_to_document"]

SEARCH_TYPES: Final = ("similarity", "similarity_score_threshold", "bm25", "vector", "hybrid")
"""``search_type`` values: LangChain's two and the workspace's modes by name."""
SEARCH_KWARGS: Final = ("k", "filter", "mode", "vector_weight", "score_threshold", "min_score")
"""Keys ``search_kwargs`` (and per-call keyword arguments) accept."""


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
    if result.found_by:
        metadata["found_by"] = list(result.found_by)
    return Document(id=result.id, page_content=result.content, metadata=metadata)


def _check_kwargs(options: dict[str, Any], *, where: str) -> None:
    unknown = sorted(set(options) - set(SEARCH_KWARGS))
    if unknown:
        msg = (
            f"{where} has unknown key(s) {', '.join(map(repr, unknown))}; the workspace "
            f"retriever accepts: {', '.join(SEARCH_KWARGS)}."
        )
        raise ValueError(msg)


class WorkspaceRetriever(BaseRetriever):
    """Retrieve workspace chunks as LangChain documents, best first.

    Example::

        retriever = ws.as_retriever(search_kwargs={"k": 3, "filter": {"format": "markdown"}})
        docs = retriever.invoke("how do I deploy?")
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workspace: Workspace
    """The workspace to search."""
    k: int = Field(default=4, ge=1)
    """Documents to return."""
    mode: str | None = None
    """``bm25``, ``vector`` or ``hybrid``; default: the workspace's default mode."""
    filter: dict[str, Any] | None = None
    """Conditions on chunk metadata (``source_id``, ``format``, your own keys; operators)."""
    min_score: float | None = None
    """Drop hits scoring below this."""
    vector_weight: float | None = None
    """Hybrid only: share of the vector side, 0-1 (default: the workspace's)."""
    search_type: str = "similarity"
    """One of :data:`SEARCH_TYPES`."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """LangChain-style options (:data:`SEARCH_KWARGS`); they override the fields above."""

    @model_validator(mode="after")
    def _apply_search_kwargs(self) -> WorkspaceRetriever:
        if self.search_type not in SEARCH_TYPES:
            mmr = self.search_type == "mmr"
            hint = " (maximal marginal relevance is not offered)" if mmr else ""
            msg = (
                f"search_type {self.search_type!r} is not supported{hint}; use one of: "
                f"{', '.join(SEARCH_TYPES)}."
            )
            raise ValueError(msg)
        options = dict(self.search_kwargs)
        _check_kwargs(options, where="search_kwargs")
        if self.search_type in {"bm25", "vector", "hybrid"}:
            if options.get("mode", self.search_type) != self.search_type:
                msg = (
                    f"search_type {self.search_type!r} and search_kwargs mode "
                    f"{options['mode']!r} disagree; give one of them."
                )
                raise ValueError(msg)
            options["mode"] = self.search_type
        if "score_threshold" in options:
            options["min_score"] = options.pop("score_threshold")
        if self.search_type == "similarity_score_threshold" and options.get("min_score") is None:
            msg = (
                "search_type 'similarity_score_threshold' needs search_kwargs "
                "{'score_threshold': <number>} (scores depend on the mode; see docs/tools.md)."
            )
            raise ValueError(msg)
        for key, value in options.items():
            setattr(self, key, value)
        return self

    def _options(self, k: int | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        _check_kwargs(kwargs, where="The retriever call")
        if "score_threshold" in kwargs:
            kwargs = {**kwargs, "min_score": kwargs["score_threshold"]}
        return {
            "top_k": k if k is not None else kwargs.get("k", self.k),
            "mode": kwargs.get("mode", self.mode),
            "min_score": kwargs.get("min_score", self.min_score),
            "filter": kwargs.get("filter", self.filter),
            "vector_weight": kwargs.get("vector_weight", self.vector_weight),
        }

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        results = self.workspace.search(query, **self._options(k, kwargs))
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
