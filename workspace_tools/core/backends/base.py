"""The search-backend seam: what a Workspace asks of the index that answers its searches.

The SQLite database (``store/database.py``) stays the source of truth for sources, chunk texts,
sync state and the embedding cache; the source catalogue over it is ``backends/catalog.py``. A
backend is a derived index kept in step with the database by the one change-log follower
(``backends/follow.py``), which owns the cursor: the backend says which version it holds
(:meth:`SearchBackend.cursor`), applies what changed since (:meth:`SearchBackend.apply`) and
rebuilds itself from the database when it holds nothing or fell behind the log
(:meth:`SearchBackend.rebuild`). It answers one typed query (:class:`BackendQuery`) with typed
hits (:class:`BackendHits`); result texts come from the database, fusion from
``index/fusion.py``. Tools, MCP and the CLI never see which backend serves them.

Beyond the required members, a backend may offer capabilities the Workspace detects with
``isinstance``: :class:`VectorBackfill` (vectors kept apart from the change log),
:class:`Compacts` (merge and save after writes), :class:`MergesInBackground` (merges beside
writes) and :class:`ResultCache` (result chunks held in memory). Backends are found by name in
``backends/registry.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeGuard, runtime_checkable

import numpy as np
import numpy.typing as npt

from workspace_tools.core.ranking.filters import Filter
from workspace_tools.core.store.database import Changes
from workspace_tools.core.store.snapshot import ChunkFields
from workspace_tools.core.types import Chunk

__all__ = [
    "BackendHits",
    "BackendQuery",
    "Compacts",
    "Hit",
    "MergesInBackground",
    "ResultCache",
    "SearchBackend",
    "VectorBackfill",
    "backfills",
    "caches_results",
    "compacts",
    "merges_in_background",
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
    """The metadata pre-filter, compiled once per search (``index/filters.py``)."""


@dataclass(slots=True)
class BackendHits:
    """The two sides of one search, each best first."""

    bm25: list[Hit] = field(default_factory=list)
    vector: list[Hit] = field(default_factory=list)


@runtime_checkable
class SearchBackend(Protocol):
    """A derived search index kept in step with the index database (seven members).

    Scores keep the embedded backend's meaning whatever the engine: BM25 hits carry a positive
    BM25 score (higher is better; chunks sharing no term with the query never come back), vector
    hits carry the cosine similarity of unit vectors, so ``min_score`` and fusion work the same.
    The Workspace holds the locks; a backend need not be thread-safe on its own.
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
    """A backend that compacts or persists what it holds after writes and on ``save()``."""

    def wants_merge(self, *, snapshot_minimum: int) -> bool:
        """Whether a write that just committed should be followed by :meth:`merge`."""
        ...

    def has_unsaved(self) -> bool:
        """Whether :meth:`merge` has anything to do."""
        ...

    def merge(self, *, save: bool, config: dict[str, Any]) -> None:
        """Compact what this backend holds; with ``save``, persist it (``save()``)."""
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
        """Like :meth:`Compacts.merge`, called without ``lock`` held.

        Hold ``lock`` only to read the state and to swap the result in: writes go on meanwhile.
        """
        ...

    def vectors_can_wait(self, config: dict[str, Any]) -> bool:
        """Writes may leave the vector index unloaded (its saved copy will catch up later).

        ``config`` is the snapshot configuration :meth:`merge_in_background` receives.
        """
        ...


@runtime_checkable
class ResultCache(Protocol):
    """A backend that holds result chunks itself (the rest are read from the database)."""

    def cached_chunks(self, keys: list[int]) -> dict[int, Chunk | ChunkFields]:
        """Chunks of these keys it holds, as :class:`Chunk` objects or decoded result fields."""
        ...


@runtime_checkable
class TokenizesAhead(Protocol):
    """A backend that can start tokenizing a change's texts before the change is written."""

    def expect_change(self, chunks: int, *, kinds: bool = False) -> None:
        """A change of about this many chunks is being staged (get ready to tokenize it).

        ``kinds``: :meth:`KindsAhead.kinds_ahead` is asked first (its kinds come before).
        """
        ...

    def tokenize_ahead(self, texts: Sequence[str]) -> None:
        """The BM25 texts of the chunks a write is about to commit, in their order."""
        ...


class KindsJob(Protocol):
    """Content kinds a backend's helper computes for the last of a change's texts."""

    start: int
    """Index of the first text the helper has."""

    def result(self) -> list[str] | None:
        """The kinds of those texts, in order (``None``: the helper failed; compute them)."""
        ...

    def drop(self) -> None:
        """The kinds are not wanted any more."""
        ...


@runtime_checkable
class KindsAhead(Protocol):
    """A backend whose helper process can compute a change's content kinds meanwhile."""

    def kinds_ahead(
        self, items: Sequence[tuple[str, str, str]], *, here: float, rest: float
    ) -> KindsJob | None:
        """Start the kinds of the last of ``items`` (``(source id, text, format)``).

        ``here``: this process's seconds per kind; ``rest``: its seconds of other work before
        it needs them (the helper's share is chosen so both finish together).
        """
        ...


def _capable(backend: object, capability: type) -> bool:
    """``isinstance(backend, capability)`` for a capability protocol, decided once per class.

    A runtime-checkable protocol's ``isinstance`` looks up each of its members (~12 us); a
    write asked up to five times and every search once. A backend's capabilities are the
    methods of its class, so the answer for one instance is the answer for its class.
    """
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


def merges_in_background(backend: object) -> TypeGuard[MergesInBackground]:
    """The backend is a :class:`MergesInBackground` (decided once per class)."""
    return _capable(backend, MergesInBackground)


def caches_results(backend: object) -> TypeGuard[ResultCache]:
    """The backend is a :class:`ResultCache` (decided once per class)."""
    return _capable(backend, ResultCache)


def tokenizes_ahead(backend: object) -> TypeGuard[TokenizesAhead]:
    """The backend is a :class:`TokenizesAhead` (decided once per class)."""
    return _capable(backend, TokenizesAhead)


def kinds_ahead(backend: object) -> TypeGuard[KindsAhead]:
    """The backend is a :class:`KindsAhead` (decided once per class)."""
    return _capable(backend, KindsAhead)
