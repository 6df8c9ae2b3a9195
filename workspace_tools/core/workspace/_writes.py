"""The write path of :class:`Workspace`: one change as one transaction, merges, settings load."""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends import _merge as merges
from workspace_tools.core.backends.base import (
    Compacts,
    MergesInBackground,
    backfills,
    compacts,
    merges_in_background,
    tokenizes_ahead,
)
from workspace_tools.core.convert import DOCUMENT_FORMAT_NAMES
from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store.database import (
    ChunkRecord,
    SourceRecord,
    storage_error,
)
from workspace_tools.core.store.migrate import migrate_legacy, remove_legacy
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.text.indexed import bm25_text
from workspace_tools.core.text.token_split import WORKER_MIN_TEXTS
from workspace_tools.core.types import Chunk, SyncReport
from workspace_tools.core.workspace._base import WorkspaceBase
from workspace_tools.core.workspace._compat import (
    check_root,
    check_settings,
    code_as_built,
    root_record,
)
from workspace_tools.core.workspace._ingest import embed_texts, gc_paused
from workspace_tools.core.workspace._kinds_ahead import AskKinds, KindRates, kinds_asker

__all__ = ["WritePath"]

logger = logging.getLogger(__name__)

_SNAPSHOT_MINIMUM: Final = 100
"""An index without a snapshot gets one once it holds this many chunks (was 1,000: without a
snapshot every open tokenizes every stored text, the database holding no terms; 900 chunks
opened and answered in 150-190 ms that way, 6-30 ms from a snapshot)."""
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
            self._tokenize_ahead(staged)
            known = digests or {}
            rows = [(record, self._records(record, chunks, known)) for record, chunks in staged]
            self._commit_rows(
                rows, removed, touched, report, show_progress=show_progress, previous=previous
            )

    def _expect_change(self, chunks: int, *, kinds: bool = False) -> None:
        """About ``chunks`` chunks are coming (a bulk change's tokenizing worker starts now).

        ``kinds``: the worker is asked for content kinds first (:meth:`_kinds_asker`).
        """
        if self.bm25_enabled and tokenizes_ahead(self._state):
            with self._lock:
                self._state.expect_change(chunks, kinds=kinds)

    def _kinds_asker(self) -> AskKinds | None:
        """How staging hands content kinds to the backend's worker (``None``: not at all)."""
        return kinds_asker(self._state, self._lock) if self.bm25_enabled else None

    @functools.cached_property
    def _kind_rates(self) -> KindRates:
        """This process's staging rates, as the last bulk change measured them."""
        return KindRates()

    def _tokenize_ahead(self, staged: list[tuple[SourceRecord, list[Chunk]]]) -> None:
        """Hand a bulk change's texts to the backend before writing it (tokenized meanwhile)."""
        state = self._state
        if not (self.bm25_enabled and tokenizes_ahead(state)):
            return
        if sum(len(chunks) for _, chunks in staged) < WORKER_MIN_TEXTS:
            return
        texts = [bm25_text(c.text, c.metadata) for _, cs in staged for c in cs]
        with self._lock:
            state.tokenize_ahead(texts)

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
            state = self._state
            with self._lock:
                # Loading FAISS costs seconds at 50k chunks: while the saved file will do, the
                # write only stores its vectors in the database, and the first vector search or
                # save() loads FAISS and catches up. Else keep FAISS in step, as it always is
                # once loaded (and embed chunks indexed before vectors were enabled).
                wait = merges_in_background(state) and state.vectors_can_wait(
                    self._snapshot_config()
                )
            if not wait:
                self._ensure_vectors()
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
        follower = self._follower
        with follower.preparing(), self._db.write("save the change") as writer:
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
            # The backend starts the change's term ids while the COMMIT waits for the disk
            writer.before_commit = functools.partial(follower.prepare, writer)
        report.commits += 1
        tracker = getattr(self, "_tracker", None)
        if tracker is not None:
            tracker.committed()
        state = self._state
        if self._follower.empty:
            self._clear_on_commit = False
            self._follower.empty = False
            self._follower.reset()
            remove_legacy(self.index_dir)
        if writer.version == 1 and self._sources.cursor() is None:
            self._sources.start_empty(0)  # the first commit: nothing was stored before it
        self._follower.committed(writer)  # this write from memory, unless another came between
        if vectors and backfills(state):
            state.add_vectors(vectors)
        if writer.removed_chunks:  # replaced or removed texts may leave unused cached vectors
            self._prune_due = True
        self._last_write = time.monotonic()  # caught up too: a deferred merge waits from here
        if compacts(state) and state.wants_merge(snapshot_minimum=_SNAPSHOT_MINIMUM):
            if merges_in_background(state):
                written = sum(len(records) for _, records in rows) + len(removed)
                self._merge_soon(bulk=written >= merges.BULK_ROWS)
            else:
                self._merge(prune=bool(removed))
        if documents_left:  # a converted document left or changed: its conversion goes too
            self._prune_conversions()

    def _merge_soon(self, *, bulk: bool = False) -> None:
        """Merge in a background thread (unless one runs): the write does not wait for it.

        After a ``bulk`` write the thread first waits for the writes to stop
        (``_merge.Deferral``): the next batch of a bulk build would cross the threshold again.
        The thread is not a daemon, so a process that exits right after a write still leaves
        the merged snapshot behind (the interpreter waits for it). ``save()`` waits for it too.
        """
        thread = self._merge_thread
        if thread is not None and thread.is_alive():
            return
        deferral = (
            merges.Deferral(busy=self._writing, last_write=self._last_written) if bulk else None
        )
        self._merge_deferral = deferral
        thread = threading.Thread(
            target=self._merge_in_background, args=(deferral,), name="workspace-tools-merge"
        )
        self._merge_thread = thread
        thread.start()

    def _writing(self) -> bool:
        """Whether another thread holds the write lock (a write of this process is running)."""
        if not self._write_lock.acquire(blocking=False):
            return True
        self._write_lock.release()
        return False

    def _last_written(self) -> float:
        return self._last_write

    def _merge_in_background(self, deferral: merges.Deferral | None = None) -> None:
        state = self._state
        assert isinstance(state, MergesInBackground)
        assert isinstance(state, Compacts)
        try:
            if deferral is not None:
                deferral.wait()
            with self._lock:
                if self._follower.empty or not state.wants_merge(
                    snapshot_minimum=_SNAPSHOT_MINIMUM
                ):
                    return
                config = self._snapshot_config()
            state.merge_in_background(save=not self.read_only, config=config, lock=self._lock)
        except Exception:  # a failed merge loses nothing: the next write or save() retries
            logger.warning(
                "Background merge of the index in %s failed", self.index_dir, exc_info=True
            )

    def _wait_for_merge(self) -> None:
        """Let a background merge finish (called without holding the locks it needs).

        A merge still waiting for bulk writes to stop starts at once.
        """
        thread = self._merge_thread
        if thread is not None and thread is not threading.current_thread():
            deferral = self._merge_deferral
            if deferral is not None:
                deferral.release()
            thread.join()

    def _merge(self, *, prune: bool) -> None:
        """Merge and save now; with ``prune``, drop cached vectors no text uses any more."""
        state = self._state
        if not compacts(state):
            return
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
        if not unsaved:
            return
        if self.embedder is not None:
            self._ensure_vectors()
        state.merge(save=not self.read_only, config=self._snapshot_config())

    def _snapshot_config(self) -> dict[str, Any]:
        embedder = None
        if self.embedder is not None:
            embedder = {"model_id": self.embedder.model_id, "dimension": self.embedder.dimension}
        return {"bm25": self.bm25_config.to_dict(), "embedder": embedder}

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
            migrate_legacy(self._db, read_only=self.read_only)
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
