"""The write path of :class:`Workspace`: one change as one transaction, merges, settings load."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.base import (
    backfills,
    compacts,
)
from workspace_tools.core.convert import DOCUMENT_FORMAT_NAMES
from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store.database import (
    ChunkRecord,
    SourceRecord,
    storage_error,
)
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.types import Chunk, SyncReport
from workspace_tools.core.workspace._base import WorkspaceBase
from workspace_tools.core.workspace._compat import (
    check_root,
    check_settings,
    code_as_built,
    root_record,
)
from workspace_tools.core.workspace._ingest import embed_texts, gc_paused

__all__ = ["WritePath"]

logger = logging.getLogger(__name__)

_LOOKUPS: Final = 64
"""A change of up to this many sources reads their old rows one by one, not all rows at once."""


class WritePath(WorkspaceBase):
    """Commit changes, merge the BM25 segments, keep the conversion cache in step."""

    _meta_cache: tuple[tuple[Any, ...], Any, str, str] | None = None
    """``(inputs, saved settings, settings JSON, root record)`` of the last write."""

    def _meta_values(self) -> tuple[str, str]:
        """The settings JSON and the root record every write stores (unchanged ones unwritten).

        Made again only when what they are made of changes: sorting and encoding the stop
        words and the root's path cost each write ~90 us.
        """
        embedder = self.embedder
        inputs = (
            self.tokenizer.config,
            self.chunking,
            self.bm25_config if self.bm25_enabled else None,
            None if embedder is None else (embedder.model_id, embedder.dimension),
            self.root,
            self.index_dir,
        )
        cached = self._meta_cache
        if cached is None or cached[0] != inputs or cached[1] is not self._saved_settings:
            settings = json.dumps(self._settings(), sort_keys=True)
            cached = (
                inputs,
                self._saved_settings,
                settings,
                root_record(self.root, self.index_dir),
            )
            self._meta_cache = cached
        return cached[2], cached[3]

    def _prune_conversions(self) -> None:
        sources = self._sources.all().values()
        live = frozenset(r.content_hash for r in sources if r.format in DOCUMENT_FORMAT_NAMES)
        if live != self._converted_live:  # walk the cache only when its live set moved
            try:
                self._conversions.prune(live)
            except OSError as exc:
                raise storage_error(exc, self._conversions.directory, "prune conversions") from exc
            self._converted_live = live

    def _apply(
        self,
        staged: list[tuple[SourceRecord, list[Chunk]]],
        removed: list[str],
        report: SyncReport,
        *,
        show_progress: bool | None,
        touched: Sequence[SourceRecord] = (),
        previous: Mapping[str, SourceRecord | None] | None = None,
        digests: Mapping[str, str] | None = None,
    ) -> None:
        """Commit staged sources, removals and touched rows as one change.

        ``previous``: the rows the staged sources replace, when the caller just read them
        (else :meth:`_write_change` reads them). ``digests``: ``text -> text_hash(text)`` the
        caller computed already (a one-chunk text's chunk is its whole text: hashed once).
        """
        with gc_paused():  # the records, the commit and the catch-up: no cycles, many objects
            known = digests or {}
            rows = [(record, self._records(record, chunks, known)) for record, chunks in staged]
            self._commit_rows(
                rows, removed, touched, report, show_progress=show_progress, previous=previous
            )

    def _records(
        self, record: SourceRecord, chunks: list[Chunk], digests: Mapping[str, str]
    ) -> list[ChunkRecord]:
        record.chunk_ids = [c.id for c in chunks]
        # No terms: the backend tokenizes the text it is handed (the embedded one straight to
        # term ids, under the lock that keeps its vocabulary); the database stores the text only.
        # A text hashed already (a whole source that is one chunk) is looked up, not hashed: the
        # lookup of the very string object that was hashed compares no characters.
        return [ChunkRecord.of(c, hash=digests.get(c.text) or text_hash(c.text)) for c in chunks]

    def commit_pending_rebuild(self) -> bool:
        """Commit a pending ``rebuild=True`` now: the old index is cleared in this commit.

        A workspace opened with ``rebuild=True`` keeps the previous index on disk until its first
        commit replaces it (an interrupted rebuild leaves the old index, not an empty one). Call
        this to make the clear durable before other work reads the stored state (``save()`` and
        ``ray_index()`` do). Cached vectors are kept when the embedder is unchanged.

        Returns:
            Whether there was a clear to commit (``False``: nothing was written).
        """
        with self._write_lock:
            if not self._clear_on_commit:
                return False
            self._commit_rows([], [], [], SyncReport(), show_progress=False)
            return True

    def _commit_rows(
        self,
        rows: list[tuple[SourceRecord, list[ChunkRecord]]],
        removed: list[str],
        touched: Sequence[SourceRecord],
        report: SyncReport,
        *,
        show_progress: bool | None,
        previous: Mapping[str, SourceRecord | None] | None = None,
    ) -> None:
        """Write one change as one transaction, then catch up with it (and anything else)."""
        if not (rows or removed or touched or self._clear_on_commit):
            return
        vectors: dict[str, npt.NDArray[np.float32]] = {}
        if self.embedder is not None:
            # Only the change's texts are embedded (cache first): the vector index, when this
            # process has it, follows from the change; else the first vector search loads it.
            chunks = [c for _, records in rows for c in records]
            vectors = self._embed(
                {c.hash: c.text for c in chunks}, show_progress=self._show(show_progress)
            )
            report.chunks_embedded += len(vectors)
        with self._lock:
            self._write_change(rows, removed, touched, vectors, report, previous=previous)

    def _write_change(
        self,
        rows: list[tuple[SourceRecord, list[ChunkRecord]]],
        removed: list[str],
        touched: Sequence[SourceRecord],
        vectors: dict[str, npt.NDArray[np.float32]],
        report: SyncReport,
        *,
        previous: Mapping[str, SourceRecord | None] | None = None,
    ) -> None:
        changed = [*removed, *(record.id for record, _ in rows)]
        # A few sources are looked up one by one: loading every source row costs ~1 s at 50k.
        lookup: Callable[[str], SourceRecord | None]
        if previous is not None and all(source_id in previous for source_id in changed):
            lookup = previous.get  # the caller read them just now, under the write lock
        elif len(changed) <= _LOOKUPS:
            lookup = self._sources.get
        else:
            lookup = self._sources.all().get
        documents_left = any(
            (old := lookup(source_id)) is not None and old.format in DOCUMENT_FORMAT_NAMES
            for source_id in changed
        )
        with self._db.write("save the change") as writer:
            if self._clear_on_commit:
                writer.clear(keep_vectors=self._vectors_reusable())
            settings, root = self._meta_values()
            writer.set_meta("settings", settings)
            writer.set_meta("root", root)
            for source_id in removed:
                writer.remove_source(source_id)
            writer.put_sources(rows)
            report.chunks_indexed += sum(len(records) for _, records in rows)
            for record in touched:
                writer.touch_source(record)
            writer.put_vectors(vectors)
        report.commits += 1
        tracker = getattr(self, "_tracker", None)
        if tracker is not None:
            tracker.committed()
        state = self._state
        if self._follower.empty:
            self._clear_on_commit = False
            self._follower.empty = False
            self._follower.reset()
        if writer.version == 1 and self._sources.cursor() is None:
            self._sources.start_empty(0)  # the first commit: nothing was stored before it
        self._follower.committed(writer)  # this write from memory, unless another came between
        if vectors and backfills(state):
            state.add_vectors(vectors)
        if writer.removed_chunks:  # replaced or removed texts may leave unused cached vectors
            self._prune_due = True
        if documents_left:  # a converted document left or changed: its conversion goes too
            self._prune_conversions()

    def _merge(self, *, prune: bool) -> None:
        """Merge and save now; with ``prune``, drop cached vectors no text uses any more."""
        state = self._state
        if not compacts(state):
            return
        if self.embedder is not None:  # the snapshot holds the vector index too
            self._ensure_vectors()
        unsaved = state.has_unsaved()
        # Cached vectors fall out of use only when chunks go: deleted or replaced by this
        # process, or by another one (seen in the log), or before this process opened the
        # index (its first catch-up is a reload). A build that only added keeps every vector.
        removals = self._follower.removals_read
        due = self._prune_due or removals != self._removals_pruned
        if prune and not self.read_only and due:
            with self._db.write("forget unused vectors") as writer:
                writer.prune_vectors()
            self._prune_due = False
            self._removals_pruned = removals
        if unsaved:
            state.merge(save=not self.read_only)

    def _vectors_reusable(self) -> bool:
        saved = self._saved_settings
        if saved is None or self.embedder is None:
            return False
        embedder = saved.get("embedder") or {}
        return bool(
            embedder.get("model_id") == self.embedder.model_id
            and embedder.get("dimension") == self.embedder.dimension
        )

    def _embed(
        self, texts: dict[str, str], *, show_progress: bool
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Vectors of the texts (by content hash) the embedding cache lacks."""
        assert self.embedder is not None
        if not texts:
            return {}
        cached = self._db.vectors(texts) if self._db.exists() and not self._follower.empty else {}
        todo = {h: t for h, t in texts.items() if h not in cached}
        return embed_texts(self.embedder, todo, show_progress=show_progress)

    def _load(self) -> None:
        if not self._db.exists():
            self._db.check_not_format1()
        if not self._db.exists():
            if any(self.index_dir.glob("snapshot-*")):
                msg = (
                    f"The index database {self._db.path} is missing while its derived files "
                    "remain. Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
                )
                raise IndexCorruptError(msg)
            return
        check_root(self._db.meta("root"), root=self.root, index_dir=self.index_dir)
        saved = self._db.settings()
        self._saved_settings = saved
        if saved is None:
            return
        self.chunking = code_as_built(self.chunking, saved)
        embedder = self.embedder
        check_settings(
            saved,
            self._settings(),
            embedder=(embedder.model_id, embedder.dimension) if embedder else None,
            bm25_enabled=self.bm25_enabled,
            index_dir=self.index_dir,
        )
        with self._lock:
            self._follower.refresh(force=True)
