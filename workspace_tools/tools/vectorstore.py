"""``WorkspaceVectorStore``: a Workspace behind LangChain's ``VectorStore`` (no second index)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.retriever import result_to_document

__all__ = ["WorkspaceVectorStore"]

_SEARCH_KEYS = ("mode", "min_score", "vector_weight", "score_threshold")


class WorkspaceVectorStore(VectorStore):
    """A LangChain vector store over a :class:`Workspace` (the same index the tools search).

    Example::

        store = WorkspaceVectorStore(ws)
        store.add_documents([Document(page_content="...", id="notes/a.md")])
        store.similarity_search_with_score("question", k=3, filter={"format": "markdown"})
    """

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    @property
    def embeddings(self) -> Embeddings | None:
        """Not exposed: the workspace embeds (``Workspace.embedder``)."""
        return None

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Index each text as one source; returns the stored ids.

        Raises:
            ValueError: ``metadatas`` or ``ids`` not one per text, or an unknown keyword.
        """
        _no_extra(kwargs, "add_texts")
        items = list(texts)
        metas = metadatas if metadatas is not None else [{} for _ in items]
        chosen = list(ids) if ids is not None else [None] * len(items)
        if len(metas) != len(items) or len(chosen) != len(items):
            msg = (
                f"add_texts got {len(items)} texts, {len(metas)} metadatas and {len(chosen)} "
                "ids; give one of each per text."
            )
            raise ValueError(msg)
        named = [i if i else str(uuid.uuid4()) for i in chosen]
        self.workspace.index_many(
            [(i, t, dict(m)) for i, t, m in zip(named, items, metas, strict=True)],
            show_progress=False,
        )
        return [record.id if (record := self.workspace.source(i)) else i for i in named]

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Remove the sources with these ids (an id naming a folder removes what is under it).

        Returns:
            True when every id named an indexed source.
        """
        _no_extra(kwargs, "delete")
        if not ids:
            return False
        removed = [bool(self.workspace.remove(i)) for i in ids]
        return all(removed)

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """One document per indexed id (its whole text, its metadata); unknown ids are left out."""
        out = []
        for source_id in ids:
            record = self.workspace.source(source_id)
            if record is None:
                continue
            parts, start = [], 1
            while True:
                page = self.workspace.read(record.id, start_line=start, max_chars=100_000)
                parts.append(page.text)
                if not page.more_lines:
                    break
                start = page.end_line + 1
            text = "\n".join(parts)
            out.append(Document(id=record.id, page_content=text, metadata=dict(record.metadata)))
        return out

    def similarity_search(
        self,
        query: str,
        k: int = 4,
        filter: dict[str, Any] | None = None,  # noqa: A002 - LangChain's name
        **kwargs: Any,
    ) -> list[Document]:
        """The ``k`` best chunks as documents (``mode=``, ``vector_weight=`` are accepted)."""
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter, **kwargs)]

    def similarity_search_with_score(
        self,
        query: str,
        k: int = 4,
        filter: dict[str, Any] | None = None,  # noqa: A002 - LangChain's name
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """The ``k`` best chunks with their scores (their scale depends on the mode)."""
        unknown = sorted(set(kwargs) - set(_SEARCH_KEYS))
        if unknown:
            msg = f"Unknown search option(s) {', '.join(unknown)}; use: {', '.join(_SEARCH_KEYS)}."
            raise ValueError(msg)
        floor = kwargs.get("min_score", kwargs.get("score_threshold"))
        results = self.workspace.search(
            query,
            top_k=k,
            mode=kwargs.get("mode"),
            min_score=floor,
            filter=filter,
            vector_weight=kwargs.get("vector_weight"),
        )
        return [(result_to_document(r), r.score) for r in results]

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> WorkspaceVectorStore:
        """A store over a new workspace (``root=``, default a temporary folder; others go to it)."""
        root = kwargs.pop("root", None) or tempfile.mkdtemp(prefix="workspace-store-")
        kwargs.setdefault("config", False)
        store = cls(Workspace(root, embedder=embedding, **kwargs))
        store.add_texts(texts, metadatas, ids=ids)
        return store


def _no_extra(kwargs: dict[str, Any], where: str) -> None:
    if kwargs:
        msg = f"{where} takes no option(s) {', '.join(sorted(kwargs))}."
        raise ValueError(msg)
