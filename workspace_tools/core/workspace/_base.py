"""State every part of :class:`Workspace` shares, and the helpers all of them call."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workspace_tools.core.backends.base import SearchBackend, backfills
from workspace_tools.core.backends.catalog import SourceCatalog
from workspace_tools.core.backends.follow import ChangeFollower
from workspace_tools.core.convert import ConversionCache, ConversionLimits
from workspace_tools.core.embedding.embedder import Embedder
from workspace_tools.core.errors import InvalidInputError, ReadOnlyWorkspaceError
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.store.database import IndexDatabase
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.scan import ScanConfig, normalise_id
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.types import Chunk
from workspace_tools.core.workspace._ingest import embed_texts
from workspace_tools.core.workspace.reporting import progress_bar

__all__ = ["WorkspaceBase"]


class WorkspaceBase:
    """Attributes set by ``Workspace.__init__``; settings, vectors and path helpers."""

    root: Path
    default_paths: list[str] | None
    embedder: Embedder | None
    bm25_enabled: bool
    tokenizer: Tokenizer
    chunking: ChunkingConfig
    bm25_config: BM25Config
    scan_config: ScanConfig
    fusion: str
    vector_weight: float
    ranking_prior: bool
    read_only: bool
    autosave: bool
    show_progress: bool
    hnsw_threshold: int
    index_dir: Path
    conversion_limits: ConversionLimits
    _db: IndexDatabase
    _conversions: ConversionCache
    _converted_live: frozenset[str] | None
    _lock: threading.RLock
    _write_lock: threading.RLock
    _state: SearchBackend
    _follower: ChangeFollower
    _sources: SourceCatalog
    _clear_on_commit: bool
    _chunk_cache: dict[int, Chunk]
    _kind_cache: dict[int, Any]
    _saved_settings: dict[str, Any] | None
    _prune_due: bool
    _removals_pruned: int

    @property
    def modes(self) -> tuple[str, ...]:
        """Search modes this workspace can run."""
        out = []
        if self.bm25_enabled:
            out.append("bm25")
        if self.embedder is not None:
            out.append("vector")
        if len(out) == 2:
            out.append("hybrid")
        return tuple(out)

    def _check_writable(self) -> None:
        if self.read_only:
            msg = (
                f"The workspace at {str(self.root)!r} is read-only: indexing, removing and syncing "
                "are disabled. Open it with read_only=False to change the index."
            )
            raise ReadOnlyWorkspaceError(msg)

    def _normalise_source_id(self, source_id: str) -> str:
        if not isinstance(source_id, str) or not source_id.strip():
            msg = f"A source id must be a non-empty string, got {source_id!r}."
            raise InvalidInputError(msg)
        if "\x00" in source_id:
            msg = f"Source id {source_id!r} contains a NUL byte."
            raise InvalidInputError(msg)
        if "://" in source_id:
            return source_id
        return normalise_id(self.root, self._root_relative(source_id)) or "."

    def _root_relative(self, path: str) -> str:
        """``'/docs/guide.md'`` (Mastra's id style) as ``'docs/guide.md'``.

        An absolute path inside the root keeps its meaning; any other leading slash marks a
        path relative to the workspace root.
        """
        if not path.startswith("/"):
            return path
        candidate = Path(os.path.normpath(path))
        if candidate == self.root or self.root in candidate.parents:
            return path
        return path.lstrip("/") or "."

    def _refresh(self) -> None:
        with self._lock:
            self._follower.refresh()

    def _show(self, show: bool | None, /) -> bool:  # noqa: FBT001 - positional-only
        return self.show_progress if show is None else show

    def _progress(self, items: list[Any], label: str, *, show: bool | None) -> Iterator[Any]:
        bar = progress_bar(len(items), label, show=self._show(show))
        try:
            for item in items:
                yield item
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()

    def _settings(self) -> dict[str, Any]:
        embedder = None
        if self.embedder is not None:
            embedder = {"model_id": self.embedder.model_id, "dimension": self.embedder.dimension}
        elif self._saved_settings is not None:
            embedder = self._saved_settings.get("embedder")
        return {
            "tokenizer": self.tokenizer.fingerprint(),
            "chunking": self.chunking.to_dict(),
            "bm25": self.bm25_config.to_dict() if self.bm25_enabled else None,
            "embedder": embedder,
        }

    def _ensure_vectors(self, *, refreshed: bool = False, embed: bool = True) -> None:
        """Ready the backend's vectors and embed chunks indexed before vectors were enabled.

        ``refreshed``: the caller has just caught up with the database (a search). ``embed``:
        ``False`` leaves chunks without a vector to the next call that embeds.
        """
        state = self._state
        if self.embedder is None or not backfills(state):
            return
        embedder = self.embedder
        with self._lock:  # without the write lock: a search does not wait for a running sync
            if not refreshed:
                self._follower.refresh()
            if not state.ensure_vectors(embedder.dimension, embedder.model_id) or not embed:
                return
        with self._write_lock:
            with self._lock:
                self._follower.refresh()
                pending = state.ensure_vectors(embedder.dimension, embedder.model_id)
            if not pending:
                return
            texts = {r.hash: r.text for r in self._db.chunks(list(pending)).values()}
            vectors = embed_texts(self.embedder, texts, show_progress=self.show_progress)
            if not self.read_only and vectors:
                with self._lock, self._db.write("save vectors") as writer:
                    writer.put_vectors(vectors)
                    writer.set_meta("settings", json.dumps(self._settings(), sort_keys=True))
            with self._lock:
                state.add_vectors(vectors)
