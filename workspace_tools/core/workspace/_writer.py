"""Writes of a :class:`Workspace`: one change as one transaction, syncs in batches, save."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
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
from workspace_tools.core.workspace._compat import (
    check_root,
    check_settings,
    code_as_built,
    root_record,
)
from workspace_tools.core.workspace._host import WorkspaceHost
from workspace_tools.core.workspace._ingest import (
    DocumentLike,
    embed_texts,
    gc_paused,
    stage_file,
    stage_texts,
    unpack_document,
)
from workspace_tools.core.workspace.freshness import record_skipped

__all__ = ["IndexWriter"]

logger = logging.getLogger(__name__)

_LOOKUPS: Final = 64
"""A change of up to this many sources reads their old rows one by one, not all rows at once."""


class IndexWriter:
    """Commits changes to the index of a workspace (its collaborator for writes)."""

    def __init__(self, ws: WorkspaceHost) -> None:
        self.ws = ws
        self._meta_cache: tuple[tuple[Any, ...], Any, str, str] | None = None
        """``(inputs, saved settings, settings JSON, root record)`` of the last write."""
        self._probe: SourceRecord | None = None
        """The last record of the batch being committed (see :meth:`_settle_progress`)."""

    def _meta_values(self) -> tuple[str, str]:
        """The settings JSON and the root record every write stores (unchanged ones unwritten).

        Made again only when what they are made of changes: sorting and encoding the stop
        words and the root's path cost each write ~90 us.
        """
        embedder = self.ws.embedder
        inputs = (
            self.ws.tokenizer.config,
            self.ws.chunking,
            self.ws.bm25_config if self.ws.bm25_enabled else None,
            None if embedder is None else (embedder.model_id, embedder.dimension),
            self.ws.root,
            self.ws.index_dir,
        )
        cached = self._meta_cache
        if cached is None or cached[0] != inputs or cached[1] is not self.ws._saved_settings:
            settings = json.dumps(self.ws._settings(), sort_keys=True)
            cached = (
                inputs,
                self.ws._saved_settings,
                settings,
                root_record(self.ws.root, self.ws.index_dir),
            )
            self._meta_cache = cached
        return cached[2], cached[3]

    def _prune_conversions(self) -> None:
        sources = self.ws._sources.all().values()
        live = frozenset(r.content_hash for r in sources if r.format in DOCUMENT_FORMAT_NAMES)
        if live != self.ws._converted_live:  # walk the cache only when its live set moved
            try:
                self.ws._conversions.prune(live)
            except OSError as exc:
                raise storage_error(
                    exc, self.ws._conversions.directory, "prune conversions"
                ) from exc
            self.ws._converted_live = live

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
        """Commit a pending ``rebuild=True`` now: the old index is cleared in this commit."""
        with self.ws._write_lock:
            if not self.ws._clear_on_commit:
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
        if not (rows or removed or touched or self.ws._clear_on_commit):
            return
        vectors: dict[str, npt.NDArray[np.float32]] = {}
        if self.ws.embedder is not None:
            # Only the change's texts are embedded (cache first): the vector index, when this
            # process has it, follows from the change; else the first vector search loads it.
            chunks = [c for _, records in rows for c in records]
            vectors = self._embed(
                {c.hash: c.text for c in chunks}, show_progress=self.ws._show(show_progress)
            )
            report.chunks_embedded += len(vectors)
        with self.ws._lock:
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
            lookup = self.ws._sources.get
        else:
            lookup = self.ws._sources.all().get
        documents_left = any(
            (old := lookup(source_id)) is not None and old.format in DOCUMENT_FORMAT_NAMES
            for source_id in changed
        )
        with self.ws._db.write("save the change") as writer:
            if self.ws._clear_on_commit:
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
        tracker = getattr(self.ws, "_tracker", None)
        if tracker is not None:
            tracker.committed()
        state = self.ws._state
        if self.ws._follower.empty:
            self.ws._clear_on_commit = False
            self.ws._follower.empty = False
            self.ws._follower.reset()
        if writer.version == 1 and self.ws._sources.cursor() is None:
            self.ws._sources.start_empty(0)  # the first commit: nothing was stored before it
        self.ws._follower.committed(writer)  # this write from memory, unless another came between
        if vectors and backfills(state):
            state.add_vectors(vectors)
        if writer.removed_chunks:  # replaced or removed texts may leave unused cached vectors
            self.ws._prune_due = True
        if documents_left:  # a converted document left or changed: its conversion goes too
            self._prune_conversions()

    def _merge(self, *, prune: bool) -> None:
        """Merge and save now; with ``prune``, drop cached vectors no text uses any more."""
        state = self.ws._state
        if not compacts(state):
            return
        if self.ws.embedder is not None:  # the snapshot holds the vector index too
            self.ws._ensure_vectors()
        unsaved = state.has_unsaved()
        # Cached vectors fall out of use only when chunks go: deleted or replaced by this
        # process, or by another one (seen in the log), or before this process opened the
        # index (its first catch-up is a reload). A build that only added keeps every vector.
        removals = self.ws._follower.removals_read
        due = self.ws._prune_due or removals != self.ws._removals_pruned
        if prune and not self.ws.read_only and due:
            with self.ws._db.write("forget unused vectors") as writer:
                writer.prune_vectors()
            self.ws._prune_due = False
            self.ws._removals_pruned = removals
        if unsaved:
            state.merge(save=not self.ws.read_only)

    def _vectors_reusable(self) -> bool:
        saved = self.ws._saved_settings
        if saved is None or self.ws.embedder is None:
            return False
        embedder = saved.get("embedder") or {}
        return bool(
            embedder.get("model_id") == self.ws.embedder.model_id
            and embedder.get("dimension") == self.ws.embedder.dimension
        )

    def _embed(
        self, texts: dict[str, str], *, show_progress: bool
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Vectors of the texts (by content hash) the embedding cache lacks."""
        assert self.ws.embedder is not None
        if not texts:
            return {}
        cached = (
            self.ws._db.vectors(texts)
            if self.ws._db.exists() and not self.ws._follower.empty
            else {}
        )
        todo = {h: t for h, t in texts.items() if h not in cached}
        return embed_texts(self.ws.embedder, todo, show_progress=show_progress)

    def _load(self) -> None:
        if not self.ws._db.exists():
            self.ws._db.check_not_format1()
        if not self.ws._db.exists():
            if any(self.ws.index_dir.glob("snapshot-*")):
                msg = (
                    f"The index database {self.ws._db.path} is missing while its derived files "
                    "remain. Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
                )
                raise IndexCorruptError(msg)
            return
        check_root(self.ws._db.meta("root"), root=self.ws.root, index_dir=self.ws.index_dir)
        saved = self.ws._db.settings()
        self.ws._saved_settings = saved
        if saved is None:
            return
        self.ws.chunking = code_as_built(self.ws.chunking, saved)
        embedder = self.ws.embedder
        check_settings(
            saved,
            self.ws._settings(),
            embedder=(embedder.model_id, embedder.dimension) if embedder else None,
            bm25_enabled=self.ws.bm25_enabled,
            index_dir=self.ws.index_dir,
        )
        with self.ws._lock:
            self.ws._follower.refresh(force=True)

    def _settle_progress(self) -> None:
        """After an interrupt: count the batch in flight if its commit landed.

        A signal that arrives during the ``COMMIT`` itself (its fsync) is raised right after it,
        before the progress is updated; the database says whether the batch is in.
        """
        probe, self._probe = self._probe, None
        if probe is None:
            return
        try:
            row = self.ws._db.source(probe.id)
        except Exception:  # only a better count is at stake
            return
        if row is None:
            return
        if (row.content_hash, row.mtime_ns) == (probe.content_hash, probe.mtime_ns):
            self.ws._tracker.committed()

    def _sync_files(
        self,
        files: list[tuple[str, Path]],
        in_scope: Callable[[str], bool],
        report: SyncReport,
        *,
        show_progress: bool | None,
    ) -> None:
        """Stage and commit ``files`` in bounded batches; removals go with the last one."""
        with self.ws._lock:
            sources = dict(self.ws._sources.all())
        kept: set[str] = set()
        staged: list[tuple[SourceRecord, list[Chunk]]] = []
        touched: list[SourceRecord] = []
        chunks = 0
        batch_started = time.monotonic()
        for done, (rel, path) in enumerate(
            self.ws._progress(files, "Reading", show=show_progress), start=1
        ):
            outcome = stage_file(
                rel,
                path,
                sources.get(rel),
                report,
                conversions=self.ws._conversions,
                chunking=self.ws.chunking,
                read_only=self.ws.read_only,
                mounts=self.ws.mounts,
                scan_config=self.ws.scan_config,
            )
            if outcome is not None:
                kept.add(rel)
                if outcome is True:
                    touched.append(sources[rel])
                elif outcome is not False:
                    staged.append(outcome)
                    chunks += len(outcome[1])
            self.ws._tracker.update(done=done)
            full = (
                len(staged) + len(touched) >= self.ws.batch_files or chunks >= self.ws.batch_chunks
            )
            late = time.monotonic() - batch_started >= self.ws.batch_seconds
            if (staged or touched) and (full or late) and done < len(files):
                self.ws._tracker.stage(done)
                self._probe = staged[-1][0] if staged else touched[-1]
                self._apply(staged, [], report, show_progress=show_progress, touched=touched)
                self._probe = None
                staged, touched, chunks = [], [], 0
                batch_started = time.monotonic()
        removed = [
            sid
            for sid, rec in sources.items()
            if rec.kind == "file" and sid not in kept and in_scope(sid)
        ]
        report.removed = removed
        self.ws._tracker.stage(len(files))
        self._apply(staged, removed, report, show_progress=show_progress, touched=touched)
        self.ws._tracker.committed(wrote=False)  # when the last batch had nothing to write

    def sync(
        self, paths: Sequence[str] | str | None = None, *, show_progress: bool | None = None
    ) -> SyncReport:
        """Bring the index in line with files under the root."""
        self.ws._check_writable()
        started = time.perf_counter()
        if isinstance(paths, str):
            paths = [paths]
        whole_scope = paths is None
        if paths is None:
            paths = self.ws.default_paths
        with self.ws._write_lock:
            self.ws._refresh()
            found = self.ws.mounts.scan(paths, config=self.ws.scan_config)
            index_rel = self._index_rel()
            files = [
                (rel, path)
                for rel, path in found.files.items()
                if not (index_rel and (rel == index_rel or rel.startswith(index_rel + "/")))
            ]
            report = SyncReport(skipped=list(found.skipped))
            self.ws._tracker.start(len(files), files=[rel for rel, _ in files])
            try:
                self._sync_files(files, found.in_scope, report, show_progress=show_progress)
            except BaseException as exc:  # Ctrl-C, SIGTERM, a crash: finished batches stay
                self._settle_progress()
                self.ws._tracker.finish(error=f"{type(exc).__name__}: {exc}".rstrip(": "))
                raise
            self.ws._tracker.finish()
            # the files seen but kept out, for the stat walk of freshness.py
            record_skipped(self.ws, [item.path for item in report.skipped], complete=whole_scope)
        report.seconds = time.perf_counter() - started
        return report

    def _index_rel(self) -> str | None:
        try:
            return self.ws.index_dir.relative_to(self.ws.root).as_posix()
        except ValueError:
            return None

    def _index_documents(
        self, documents: Iterable[DocumentLike], *, show_progress: bool | None
    ) -> tuple[SyncReport, dict[str, list[str]]]:
        """:meth:`index_many`, and the chunk ids of each source id (normalised) it was given."""
        self.ws._check_writable()
        started = time.perf_counter()
        report = SyncReport()
        chunk_ids: dict[str, list[str]] = {}
        previous_of: dict[str, SourceRecord | None] = {}
        digests: dict[str, str] = {}
        with self.ws._write_lock:
            self.ws._refresh()
            latest: dict[str, tuple[str, dict[str, Any]]] = {}
            for doc in documents:
                doc_id, content, metadata = unpack_document(doc)
                latest[self.ws._normalise_source_id(doc_id)] = (content, metadata)
            with gc_paused():  # many small objects, no cycles: no collection passes over them
                with self.ws._lock:
                    previous = self.ws._sources.get_many(latest)
                staged = stage_texts(
                    latest,
                    previous,
                    chunking=self.ws.chunking,
                    report=report,
                    chunk_ids=chunk_ids,
                    previous_of=previous_of,
                    digests=digests,
                )
            self._apply(
                staged,
                [],
                report,
                show_progress=show_progress,
                previous=previous_of,
                digests=digests,
            )
        report.seconds = time.perf_counter() - started
        chunk_ids.update((record.id, list(record.chunk_ids)) for record, _ in staged)
        return report, chunk_ids
