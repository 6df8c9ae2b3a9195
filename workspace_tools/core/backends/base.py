"""The search-backend seam: what a Workspace asks of the index that answers its searches.

The SQLite database (``store/database.py``) stays the source of truth for sources, chunk texts,
sync state and the embedding cache. A backend is a derived index kept in step with it through the
database's change log (:meth:`IndexDatabase.changes_since`): on :meth:`SearchBackend.refresh` it
applies the rows written and deleted since the version it holds. It answers BM25 and vector
queries with metadata filters (the operator mapping of ``index/filters.py``), returning
``(chunk key, score)`` pairs; result texts come from the database, fusion from
``index/fusion.py``. Tools, MCP and the CLI never see which backend serves them.

Two backends exist: ``embedded`` (bm25s segments + FAISS in this process, the default) and
``milvus`` (a Milvus Lite file or a Milvus server; the ``milvus`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from workspace_tools.core.store.corpus import SourceRecord
from workspace_tools.core.store.snapshot import ChunkFields
from workspace_tools.core.types import Chunk

__all__ = ["Hits", "MergesInBackground", "SearchBackend"]

Hits = list[tuple[int, float]]
"""``(chunk key, score)`` pairs, best first."""


@runtime_checkable
class SearchBackend(Protocol):
    """A derived search index kept in step with the index database.

    Scores keep the embedded backend's meaning whatever the engine: BM25 hits carry a positive
    BM25 score (higher is better; chunks sharing no term with the query never come back), vector
    hits carry the cosine similarity of unit vectors, so ``min_score`` and fusion work the same.
    The Workspace holds the locks; a backend need not be thread-safe on its own.
    """

    name: str
    """Short name (``embedded``, ``milvus``), for ``stats()`` and messages."""
    empty: bool
    """Pretend the database is empty (``rebuild=True`` until its first commit)."""

    def refresh(self, *, force: bool = False) -> None:
        """Apply what the database committed since this backend's version (cheap when nothing)."""
        ...

    def reset(self) -> None:
        """Forget what is loaded in this process (the next :meth:`refresh` loads again)."""
        ...

    def __len__(self) -> int:
        """Chunks indexed."""
        ...

    def sources(self) -> dict[str, SourceRecord]:
        """Every source, by id, as of the last :meth:`refresh`."""
        ...

    def source(self, source_id: str) -> SourceRecord | None:
        """One source (without loading them all when possible)."""
        ...

    def cached_chunks(self, keys: list[int]) -> dict[int, Chunk | ChunkFields]:
        """Chunks this backend holds itself (the rest are read from the database).

        As :class:`Chunk` objects or as the decoded fields of a snapshot payload row (cheaper:
        the result builds a :class:`Chunk` only if its snippet is read).
        """
        ...

    def search(
        self,
        *,
        query: str,
        terms: Mapping[str, int] | None,
        vector: npt.NDArray[np.float32] | None,
        bm25_k: int,
        vector_k: int,
        filter: Mapping[str, Any] | None,  # noqa: A002 - as in Workspace.search
    ) -> tuple[Hits, Hits]:
        """BM25 and vector hits among the chunks matching ``filter``.

        Args:
            query: The query text (for an engine that analyses it itself).
            terms: Query terms of the workspace tokenizer and their counts in the query
                (``None`` or empty: no BM25 side).
            vector: The unit query vector (``None``: no vector side).
            bm25_k: Most BM25 hits.
            vector_k: Most vector hits.
            filter: Conditions of ``index/filters.py`` (already validated), or ``None``.

        Returns:
            ``(bm25_hits, vector_hits)``, each best first.

        Raises:
            InvalidInputError: the backend cannot express a condition of the filter (the
                message names it).
        """
        ...

    def vector_count(self) -> int | None:
        """Vectors held (``None``: not loaded yet; the Workspace then counts the cache)."""
        ...

    def ensure_vectors(self, dimension: int, model_id: str) -> dict[int, str]:
        """Get ready for vector search.

        Returns:
            ``key -> content hash`` of chunks still without a vector: the Workspace embeds them,
            caches the vectors in the database and passes them to :meth:`add_vectors`.
        """
        ...

    def add_vectors(self, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        """Vectors (by content hash) for chunks :meth:`ensure_vectors` reported pending."""
        ...

    def wants_merge(self, *, snapshot_minimum: int) -> bool:
        """Whether a write that just committed should be followed by :meth:`merge`."""
        ...

    def has_unsaved(self) -> bool:
        """Whether :meth:`merge` has anything to do."""
        ...

    def merge(self, *, save: bool, config: dict[str, Any]) -> None:
        """Compact what this backend holds; with ``save``, persist it (``save()``)."""
        ...

    def close(self) -> None:
        """Release connections (the Workspace may be reopened later)."""
        ...


@runtime_checkable
class MergesInBackground(Protocol):
    """A backend whose merges can run beside writes (the embedded one).

    The Workspace then merges from a background thread instead of inside the write that crossed
    the merge threshold.
    """

    def merge_in_background(
        self, *, save: bool, config: dict[str, Any], lock: AbstractContextManager[Any]
    ) -> None:
        """Like :meth:`SearchBackend.merge`, called without ``lock`` held.

        Hold ``lock`` only to read the state and to swap the result in: writes go on meanwhile.
        """
        ...

    def vectors_can_wait(self, config: dict[str, Any]) -> bool:
        """Writes may leave the vector index unloaded (its saved copy will catch up later).

        ``config`` is the snapshot configuration :meth:`merge_in_background` receives.
        """
        ...
