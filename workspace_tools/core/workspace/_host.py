"""What the workspace's collaborators (reader, writer, freshness checks) use of the workspace.

:class:`~workspace_tools.core.workspace._workspace.Workspace` holds its settings and the index
parts (database, change-log follower, source list, search backend) and hands itself to its
reader and writer; this protocol names what they may use of it, so they need not import it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from workspace_tools.core.backends.base import SearchBackend
from workspace_tools.core.backends.follow import ChangeFollower
from workspace_tools.core.backends.source_list import SourceList
from workspace_tools.core.convert import ConversionCache
from workspace_tools.core.embedding.embedder import Embedder
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.store.database import IndexDatabase
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.mounts import Mounts
from workspace_tools.core.text.scan import ScanConfig
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.types import Chunk
from workspace_tools.core.workspace._progress import SyncTracker

__all__ = ["WorkspaceHost"]


class WorkspaceHost(Protocol):
    """The workspace as its reader and writer see it."""

    root: Path
    mounts: Mounts
    index_dir: Path
    default_paths: list[str] | None
    embedder: Embedder | None
    tokenizer: Tokenizer
    bm25_enabled: bool
    bm25_config: BM25Config
    chunking: ChunkingConfig
    scan_config: ScanConfig
    fusion: str
    vector_weight: float
    ranking_prior: bool
    read_only: bool
    show_progress: bool
    batch_files: int
    batch_chunks: int
    batch_seconds: float
    _db: IndexDatabase
    _conversions: ConversionCache
    _converted_live: frozenset[str] | None
    _lock: threading.RLock
    _write_lock: threading.RLock
    _follower: ChangeFollower
    _sources: SourceList
    _state: SearchBackend
    _tracker: SyncTracker
    _clear_on_commit: bool
    _saved_settings: dict[str, Any] | None
    _prune_due: bool
    _removals_pruned: int
    _chunk_cache: dict[int, Chunk]
    _kind_cache: dict[int, Any]

    @property
    def modes(self) -> tuple[str, ...]:
        """Search modes the workspace can run."""
        ...

    def _check_writable(self) -> None: ...

    def _normalise_source_id(self, source_id: str) -> str: ...

    def _root_relative(self, path: str) -> str: ...

    def _refresh(self) -> None: ...

    def _show(self, show: bool | None, /) -> bool:  # noqa: FBT001 - positional-only
        ...

    def _progress(self, items: list[Any], label: str, *, show: bool | None) -> Iterator[Any]: ...

    def _settings(self) -> dict[str, Any]: ...

    def _ensure_vectors(self, *, refreshed: bool = False, embed: bool = True) -> None: ...
