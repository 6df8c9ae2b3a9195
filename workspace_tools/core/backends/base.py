"""The search-backend seam: what a Workspace asks of the index that answers its searches.

A backend is a derived index kept in step with the database by the change-log follower; it
answers a :class:`BackendQuery` with :class:`BackendHits`. Optional capabilities are detected
with ``isinstance``: :class:`VectorBackfill`, :class:`Compacts` and :class:`ResultCache`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, TypeGuard, runtime_checkable

import numpy as np
import numpy.typing as npt

from workspace_tools.core.ranking.filters import Filter
from workspace_tools.core.store.database import Changes, ChunkFields
from workspace_tools.core.types import Chunk

__all__ = [
    "BackendHits",
    "BackendQuery",
    "Compacts",
    "Hit",
    "ResultCache",
    "SearchBackend",
    "VectorBackfill",
    "backfills",
    "caches_results",
    "compacts",
]

_CAPABLE: dict[tuple[type, type], bool] = {}


class Hit(NamedTuple):
    """One chunk a side of the search found."""

    key: int
    """The chunk's key in the database."""
    score: float
    """Raw BM25 score, or the cosine similarity of unit vectors (higher is better)."""


@dataclass(frozen=True, slots=True)
class BackendQuery:
    """One search, as the backend receives it."""

    text: str
    """The query text (for an engine that analyses it itself)."""
    terms: Mapping[str, int] | None
    """Workspace tokenizer terms and their counts in the query (``None``: no BM25 side)."""
    vector: npt.NDArray[np.float32] | None
    """The unit query vector (``None``: no vector side)."""
    bm25_k: int
    """Most BM25 hits."""
    vector_k: int
    """Most vector hits."""
    filter: Filter | None = None
    """The metadata pre-filter, compiled once per search (``ranking/filters.py``)."""


@dataclass(slots=True)
class BackendHits:
    """The two sides of one search, each best first."""

    bm25: list[Hit] = field(default_factory=list)
    vector: list[Hit] = field(default_factory=list)


@runtime_checkable
class SearchBackend(Protocol):
    """A derived search index kept in step with the index database (eight members).

    BM25 hits carry a positive BM25 score, vector hits the cosine of unit vectors, whatever the
    engine. The Workspace holds the locks; a backend need not be thread-safe.
    """

    name: str
    """Short name (``embedded``, ``milvus``), for ``stats()`` and messages."""

    def search(self, query: BackendQuery) -> BackendHits:
        """BM25 and vector hits among the chunks matching ``query.filter``.

        Raises:
            InvalidInputError: the backend cannot express a condition of the filter (the
                message names it).
        """
        ...

    def __len__(self) -> int:
        """Chunks indexed."""
        ...

    def cursor(self) -> int:
        """The database version this backend holds (``-1``: nothing yet, rebuild me)."""
        ...

    def apply(self, changes: Changes) -> None:
        """Apply what was committed after :meth:`cursor` (``changes.after`` narrows it)."""
        ...

    def rebuild(self) -> None:
        """Load (or rebuild) from the database in full (it exists)."""
        ...

    def reset(self) -> None:
        """Forget what is loaded in this process (the follower rebuilds it next time)."""
        ...

    def close(self) -> None:
        """Release connections (the Workspace may be reopened later)."""
        ...


@runtime_checkable
class VectorBackfill(Protocol):
    """A backend whose vectors may lag the change log (the embedding cache fills them in)."""

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


@runtime_checkable
class Compacts(Protocol):
    """A backend that compacts and persists what it holds on ``save()``."""

    def has_unsaved(self) -> bool:
        """Whether :meth:`merge` has anything to do."""
        ...

    def merge(self, *, save: bool) -> None:
        """Compact what this backend holds now; with ``save``, persist it (``save()``)."""
        ...


@runtime_checkable
class ResultCache(Protocol):
    """A backend that holds result chunks itself (the rest are read from the database)."""

    def cached_chunks(self, keys: list[int]) -> dict[int, Chunk | ChunkFields]:
        """Chunks of these keys it holds, as :class:`Chunk` objects or decoded result fields."""
        ...


def _capable(backend: object, capability: type) -> bool:
    """``isinstance(backend, capability)`` for a capability protocol, decided once per class."""
    key = (type(backend), capability)
    found = _CAPABLE.get(key)
    if found is None:
        found = _CAPABLE[key] = isinstance(backend, capability)
    return found


def backfills(backend: object) -> TypeGuard[VectorBackfill]:
    """The backend is a :class:`VectorBackfill` (decided once per class)."""
    return _capable(backend, VectorBackfill)


def compacts(backend: object) -> TypeGuard[Compacts]:
    """The backend is a :class:`Compacts` (decided once per class)."""
    return _capable(backend, Compacts)


def caches_results(backend: object) -> TypeGuard[ResultCache]:
    """The backend is a :class:`ResultCache` (decided once per class)."""
    return _capable(backend, ResultCache)
