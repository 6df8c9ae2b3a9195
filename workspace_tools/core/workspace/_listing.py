"""The listings of :class:`Workspace`: its size, sources, chunks, stats, and id matching."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workspace_tools.core.backends.base import VectorBackfill
from workspace_tools.core.store.database import SourceRecord
from workspace_tools.core.text.within import is_within, normalise_within
from workspace_tools.core.types import Chunk
from workspace_tools.core.workspace._base import WorkspaceBase

__all__ = ["ListingPath"]


class ListingPath(WorkspaceBase):
    """What is indexed, read from the source catalogue and the search backend."""

    def __len__(self) -> int:
        with self._lock:
            self._follower.refresh()
            return len(self._state)

    def __repr__(self) -> str:
        return (
            f"Workspace(root={str(self.root)!r}, sources={len(self.source_ids())}, "
            f"chunks={len(self)}, modes={self.modes})"
        )

    def source_ids(self) -> list[str]:
        """Ids of every indexed file and string."""
        with self._lock:
            self._follower.refresh()
            return list(self._sources.all())

    def source(self, source_id: str) -> SourceRecord | None:
        """The manifest row of a source, if indexed."""
        with self._lock:
            self._follower.refresh()
            return self._sources.get(self._normalise_source_id(source_id))

    def chunks_of(self, source_id: str) -> list[Chunk]:
        """Chunks of a source, in order."""
        with self._lock:
            if self._follower.empty or not self._db.exists():
                return []
            return [r.chunk() for r in self._db.chunks_of(self._normalise_source_id(source_id))]

    def stats(self, *, within: Sequence[str] | None = None) -> dict[str, Any]:
        """Counts and settings, for people and tools.

        Args:
            within: Count only the sources in these folders of the root (and their chunks),
                as an MCP client's roots confine a session; ``None``: every source. Vectors
                are then counted only when every chunk has one (else ``None``: not known).
        """
        within = normalise_within(within)
        with self._lock:
            self._follower.refresh()
            state = self._state
            vectors = state.vector_count() if isinstance(state, VectorBackfill) else None
            if vectors is None:
                no_vectors = self.embedder is None or self._follower.empty or not self._db.exists()
                vectors = 0 if no_vectors else self._db.count_embedded()
            sources, chunks = len(self._sources.all()), len(self._state)
            if within is not None:
                inside = [r for s, r in self._sources.all().items() if is_within(s, within)]
                every = vectors >= chunks
                sources, chunks = len(inside), sum(len(r.chunk_ids) for r in inside)
                vectors = chunks if every and vectors else (0 if not vectors else None)
            return {
                "root": str(self.root),
                "index_dir": str(self.index_dir),
                "sources": sources,
                "chunks": chunks,
                "modes": list(self.modes),
                "embedder": self.embedder.model_id if self.embedder else None,
                "vectors": vectors,
                "backend": self._state.name,
            }

    def _matching(self, target: str) -> list[str]:
        """Sources ``target`` names: itself, or everything under it as a folder."""
        with self._lock:
            if target in {"", "."}:
                return list(self._sources.all())
            single = self._sources.get(target) is not None
            if single and (self._follower.empty or not self._db.has_children(target)):
                return [target]
            return [s for s in self._sources.all() if s == target or s.startswith(target + "/")]
