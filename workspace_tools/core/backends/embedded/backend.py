"""The embedded backend: one process's in-memory views of an index database, kept in step.

BM25 segments, the FAISS index and chunk metadata (loaded on first use), each at a database
version, caught up by :meth:`EmbeddedBackend.apply`. Merges run on the background worker.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.base import BackendHits, BackendQuery, Hit
from workspace_tools.core.backends.embedded import merge as _merge
from workspace_tools.core.backends.embedded.dense import DenseIndex
from workspace_tools.core.backends.embedded.dense_fill import FlatFill, GraphFill
from workspace_tools.core.backends.embedded.segments import SparseSegments
from workspace_tools.core.backends.embedded.snapshot import (
    ChunkFields,
    SnapshotInfo,
    load_base,
    load_flat,
    load_graph,
    read_pointer,
    verify_flat,
)
from workspace_tools.core.backends.embedded.snapshot_checks import refuse
from workspace_tools.core.backends.embedded.term_ids import TermIds
from workspace_tools.core.backends.embedded.tokenizing import Job
from workspace_tools.core.backends.follow import ChangeFollower, TokenizerCheck
from workspace_tools.core.background import BackgroundWorker
from workspace_tools.core.index.sparse import BM25Config, query_tf_weights
from workspace_tools.core.ranking.filters import Filter, rows_holding
from workspace_tools.core.ranking.source_filter import SourceColumn, split_source_conditions
from workspace_tools.core.store.database import Changes
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.types import Chunk

__all__ = ["SNAPSHOT_MINIMUM", "EmbeddedBackend"]

logger = logging.getLogger(__name__)
_RESULTS_KEPT: Final = 4096
SNAPSHOT_MINIMUM: Final = 100
"""Chunks at which a saving index without a snapshot gets one (else every open tokenizes all)."""
_hit: Final = tuple.__new__
"""``_hit(Hit, (key, score))``: a :class:`Hit` without its ``__new__`` (result lists are long)."""


class EmbeddedBackend:
    """The default search backend: bm25s segments and FAISS over an index database.

    Args:
        follower: The workspace's change-log follower (over the index database).
        tokenizer: The workspace tokenizer (its vocabulary numbers the BM25 terms).
        bm25_config: BM25 parameters.
        hnsw_threshold: Vector count above which FAISS switches to HNSW.
        index_terms: Tokenize the texts of chunks read (``False``: a workspace without BM25).
        token_worker: Tokenize bulk changes in a worker process (``None``: unless
            ``WORKSPACE_TOOLS_TOKEN_WORKER`` is ``0``).
        embedder: ``(model_id, dimension)`` of the workspace's embedder (``None``: no vectors).
        read_only: Merge in memory only (no snapshot is written).
    """

    def __init__(
        self,
        *,
        follower: ChangeFollower,
        tokenizer: Tokenizer,
        bm25_config: BM25Config,
        hnsw_threshold: int,
        index_terms: bool = True,
        token_worker: bool | None = None,
        embedder: tuple[str, int] | None = None,
        read_only: bool = False,
    ) -> None:
        self.follower = follower
        self.db = follower.db
        self.tokenizer = tokenizer
        self._tokenizer_check = TokenizerCheck(tokenizer, follower.db.directory)
        self.terms = TermIds(
            tokenizer,
            check=self._tokenizer_check,
            index_terms=index_terms,
            token_worker=token_worker,
        )
        self.index_terms = index_terms
        self.read_only = read_only
        self.config: dict[str, Any] = {
            "bm25": bm25_config.to_dict(),
            "embedder": None
            if embedder is None
            else {"model_id": embedder[0], "dimension": embedder[1]},
        }
        """What snapshots record they were built with (BM25 parameters, embedder)."""
        self._flat_refused: Path | None = None
        """The snapshot folder whose flat index failed its check (not mapped again)."""
        self._pending: tuple[list[int], Job] | None = None
        """A change's chunk keys and the worker's job making their term ids (:meth:`_settle`)."""
        self.lock = threading.RLock()
        self.worker = BackgroundWorker("workspace-tools-index", finish_at_exit=True)
        self._merge_queued = False
        self._hurry = threading.Event()
        """Set while a caller waits for the worker: a merge waiting for quiet starts now."""
        self._last_apply = 0.0
        self._apply_gap = 0.0
        self.bm25_config = bm25_config
        self.hnsw_threshold = hnsw_threshold
        self.sparse = SparseSegments(bm25_config)
        self.version = -1
        """Database version of :attr:`sparse` (``-1``: not loaded)."""
        self.snapshot_version = -1
        """Version of the snapshot the BM25 base came from (or was saved as)."""
        self.snapshot_dense_current = True
        """The last snapshot this process wrote holds the FAISS index of its own version."""
        self._results: dict[int, ChunkFields] = {}
        """Result rows read from the database (a key's row never changes)."""
        self.dense: DenseIndex | None = None
        self._dense_version = -1
        self._dense_pending: dict[int, str] = {}
        """Chunks whose vectors the embedding cache lacks (filled by the Workspace)."""
        self._metadata: dict[int, tuple[str, str, dict[str, Any]]] | None = None
        self._metadata_version = -1
        self._source_column: tuple[npt.NDArray[np.int64], int, SourceColumn] | None = None
        """The rows' sorted source ids, for the row keys and metadata version they were read at."""
        self.generation = 0
        """Bumped whenever the BM25 state is replaced (a merge in progress then gives up)."""
        follower.follow(self)

    name = "embedded"

    @property
    def empty(self) -> bool:
        """The database counts as empty (``rebuild=True`` until its first commit)."""
        return self.follower.empty

    # -- catching up -------------------------------------------------------------------------

    def cursor(self) -> int:
        """The oldest version of the parts loaded (``-1``: nothing yet)."""
        if self.version < 0:
            return -1
        parts = [self.version]
        if self._metadata is not None:
            parts.append(self._metadata_version)
        if self.dense is not None:
            parts.append(self._dense_version)
        return min(parts)

    def rebuild(self) -> None:
        """Load the BM25 segments: the snapshot's base, else every row of the database."""
        with self.lock:
            self._load_sparse()

    def reset(self) -> None:
        """Forget everything loaded (the follower rebuilds it next time)."""
        with self.lock:
            self._reset()

    def _reset(self) -> None:
        self._pending = None  # its rows come back with the reload
        self.generation += 1
        self.sparse = SparseSegments(self.bm25_config)
        self.version = self.snapshot_version = -1
        self.dense, self._dense_version = None, -1
        self._metadata, self._metadata_version = None, -1
        self._source_column = None

    def _load_sparse(self) -> None:
        self._pending = None
        if self.index_terms:  # a snapshot's terms and the stored texts' are this tokenizer's
            self._tokenizer_check(self.db.meta("settings"))
        info = read_pointer(self.db)
        loaded = None
        if info is not None and info.config.get("bm25") == self.bm25_config.to_dict():
            loaded = load_base(info)
        if loaded is not None and info is not None:
            base, vocab = loaded
            try:
                self.tokenizer.restore_vocabulary(vocab)
            except ValueError as exc:
                raise refuse(info.folder, str(exc)) from exc
            self.sparse.load(base)
            self.version = self.snapshot_version = info.version
            return
        rows = self.db.snapshot_of_rows()
        self.tokenizer.set_vocabulary([])
        keys = [chunk.key for chunk in rows.chunks]
        terms = self.terms.of(rows)
        self.sparse.build(keys, terms, len(self.tokenizer.vocab))
        self.version = rows.version
        self.snapshot_version = -1

    def apply(self, changes: Changes) -> None:
        """Apply each part what was committed after its own version; merge soon if due."""
        with self.lock:
            self._apply(changes)
            now = time.monotonic()
            self._apply_gap, self._last_apply = now - self._last_apply, now
            if self._wants_merge():
                self._merge_soon(bulk=len(changes.chunks) + len(changes.removed_chunks))

    def _apply(self, changes: Changes) -> None:
        self._settle()
        embedder = self.config["embedder"]
        if self.dense is None and embedder and self.version >= 0 and not len(self.sparse):
            # Nothing indexed yet: the vector index starts now, for free, and keeps in step
            self.dense = self._new_dense(int(embedder["dimension"]))
            self._dense_version = self.version
        if self.version < changes.version:  # BM25 rows
            fresh = changes.after(self.version)
            for removed in fresh.removed_chunks:
                self.sparse.remove(removed.key)
            keys = [chunk.key for chunk in fresh.chunks]
            job = self.terms.start(fresh)
            if job is None:
                self.sparse.add_many(keys, self.terms.of(fresh))
            else:  # tokenized by the worker while the caller goes on: added when next needed
                self._pending = (keys, job)
            self.version = changes.version
        if self.dense is not None and self._dense_version < changes.version:  # vectors
            fresh = changes.after(self._dense_version)
            gone = [removed.key for removed in fresh.removed_chunks]
            for key in gone:
                self._dense_pending.pop(key, None)
            self.dense.remove(np.asarray(gone, dtype=np.int64))
            self._add_vectors({chunk.key: chunk.hash for chunk in fresh.chunks}, fresh.vectors)
            self._dense_version = changes.version
        if self._metadata is not None and self._metadata_version < changes.version:  # filters
            fresh = changes.after(self._metadata_version)
            for removed in fresh.removed_chunks:
                self._metadata.pop(removed.key, None)
            for key, record in self.db.chunks([c.key for c in fresh.chunks]).items():
                self._metadata[key] = (record.id, record.source, record.metadata)
            self._metadata_version = changes.version

    # -- search --------------------------------------------------------------------------------

    def cached_chunks(self, keys: list[int]) -> dict[int, Chunk | ChunkFields]:
        """What results show of these chunks: from a small cache, else the database by key."""
        cache = self._results
        out: dict[int, Chunk | ChunkFields] = {}
        missing = []
        for key in keys:
            fields = cache.get(key)
            if fields is None:
                missing.append(key)
            else:
                out[key] = fields
        if missing:
            read = self.db.result_chunks(missing)
            if len(cache) + len(read) > _RESULTS_KEPT:
                cache.clear()
            cache.update(read)
            out.update(read)
        return out

    def __len__(self) -> int:
        with self.lock:
            self._settle()
            return len(self.sparse)

    def filter_mask(self, conditions: Filter) -> npt.NDArray[np.bool_]:
        """Rows (of ``sparse.row_keys()``) whose metadata and ``source_id`` match all conditions."""
        if self._metadata is None:
            version, self._metadata = self.db.metadata_at()
            self._metadata_version = version
            if version != self.version:
                self.follower.refresh(force=True)
        metadata = self._metadata
        keys = self.sparse.row_keys()
        alive = self.sparse.alive_rows()
        by_source, rest = split_source_conditions(conditions.conditions)
        column = self._sources_of(keys, metadata) if by_source else None
        mask = alive.copy() if column is None else column.rows(column.select(by_source)) & alive
        if rest is None:
            return mask
        return rows_holding(conditions.holds, mask, keys, metadata)  # the source part holds

    def _sources_of(
        self,
        keys: npt.NDArray[np.int64],
        metadata: Mapping[int, tuple[str, str, dict[str, Any]]],
    ) -> SourceColumn:
        """The source column of these row keys, kept until the rows or the metadata change."""
        cached = self._source_column
        if cached is not None and cached[0] is keys and cached[1] == self._metadata_version:
            return cached[2]
        get = metadata.get
        column = SourceColumn(
            [None if (entry := get(key)) is None else entry[1] for key in keys.tolist()]
        )
        self._source_column = (keys, self._metadata_version, column)
        return column

    def search(self, query: BackendQuery) -> BackendHits:
        """BM25 and vector hits (see :meth:`SearchBackend.search`); the query text is unused."""
        with self.lock:
            return self._search(query)

    def _settle(self) -> None:
        """Add the rows of a change whose term ids the tokenizing worker was making."""
        pending, self._pending = self._pending, None
        if pending is not None:
            keys, job = pending
            self.sparse.add_many(keys, self.terms.finish(job))

    def _search(self, query: BackendQuery) -> BackendHits:
        self._settle()
        mask = self.filter_mask(query.filter) if query.filter is not None else None
        hits = BackendHits()
        if query.terms:
            hits.bm25 = self.bm25_top(query.terms, k=query.bm25_k, mask=mask)
        if query.vector is not None:
            hits.vector = self.vector_top(query.vector, k=query.vector_k, mask=mask)
        return hits

    def bm25_top(
        self, terms: Mapping[str, int], *, k: int, mask: npt.NDArray[np.bool_] | None
    ) -> list[Hit]:
        """Best ``(key, raw BM25 score)`` pairs for ``term -> count``, optionally in ``mask``."""
        counts = self.tokenizer.id_counts(terms)
        repeats = list(counts.values())
        weights = None  # every rule weighs a term that occurs once by exactly 1
        if any(n != 1 for n in repeats):
            weights = query_tf_weights(repeats, self.sparse.config.query_tf).tolist()
        found = self.sparse.top(list(counts), k=k, mask=mask, weights=weights)
        return [_hit(Hit, pair) for pair in found]

    def vector_top(
        self, vector: npt.NDArray[np.float32], *, k: int, mask: npt.NDArray[np.bool_] | None
    ) -> list[Hit]:
        """Nearest ``(key, cosine)`` pairs, optionally among the rows of ``mask`` (pre-filter)."""
        if self.dense is None:
            return []
        allowed = None
        if mask is not None:
            allowed = self.sparse.row_keys()[mask & self.sparse.alive_rows()]
        return [_hit(Hit, pair) for pair in self.dense.search(vector, k=k, allowed=allowed)]

    # -- vectors ---------------------------------------------------------------------------------

    def vector_count(self) -> int | None:
        """Vectors in the FAISS index (``None`` while it is not loaded)."""
        with self.lock:
            return None if self.dense is None else len(self.dense)

    def ensure_vectors(self, dimension: int, model_id: str) -> dict[int, str]:
        """Load the vector index: its codes from the embedding cache, its graph from the snapshot.

        Returns:
            ``key -> hash`` of chunks without a vector (embedded by the caller).
        """
        with self.lock:
            if self.dense is not None:
                return dict(self._dense_pending)
            self._dense_pending = {}
            if self.empty or not self.db.exists():
                self.dense = self._new_dense(dimension)
                self._dense_version = max(self.version, 0)
                return {}
            info = read_pointer(self.db)
            embedder = {"model_id": model_id, "dimension": dimension}
            graph = None
            if info is not None and info.config.get("embedder") == embedder:
                if self._load_flat(info, dimension):
                    return dict(self._dense_pending)
                graph = load_graph(info, dimension=dimension)
            fill: FlatFill | GraphFill = (
                FlatFill(dimension, hnsw_threshold=self.hnsw_threshold, background=self.worker)
                if graph is None
                else GraphFill(graph, hnsw_threshold=self.hnsw_threshold, background=self.worker)
            )
            table = self.db.vector_table(dimension=dimension, place=fill.place)
            self.dense = fill.finish(table.found, table.extra)
            self._dense_version = table.version
            self._dense_pending = dict(table.missing)
            del table
            self.follower.refresh(force=True)
            return dict(self._dense_pending)

    def _load_flat(self, info: SnapshotInfo, dimension: int) -> bool:
        """Map the snapshot's flat index and catch up; the worker copies it and checks its CRC."""
        if info.folder == self._flat_refused:
            return False
        dense = load_flat(info, dimension=dimension)
        if dense is None:
            return False
        dense.hnsw_threshold, dense.background = self.hnsw_threshold, self.worker
        self.dense, self._dense_version = dense, info.dense_version
        self.follower.refresh(force=True)
        self.worker.submit(lambda: self._own_flat(info, dense))
        return True

    def _own_flat(self, info: SnapshotInfo, dense: DenseIndex) -> None:
        dense.own()
        if verify_flat(info):
            return
        with self.lock:
            self._flat_refused = info.folder
            if self.dense is dense:
                self.dense, self._dense_version = None, -1
        logger.warning("The vector index file of %s is damaged; reading the database", info.folder)

    def _new_dense(self, dimension: int) -> DenseIndex:
        return DenseIndex(dimension, hnsw_threshold=self.hnsw_threshold, background=self.worker)

    def _add_vectors(
        self, hashes: dict[int, str], known: Mapping[str, npt.NDArray[np.float32]]
    ) -> None:
        """Add the vectors of chunks just applied (``key -> hash``): ``known``, else cached ones."""
        if not hashes or self.dense is None:
            return
        unknown = [digest for digest in hashes.values() if digest not in known]
        found = self.db.vectors(unknown) if unknown else {}
        keys, rows = [], []
        for key, digest in hashes.items():
            vector = known.get(digest)
            if vector is None:
                vector = found.get(digest)
            if vector is None:
                self._dense_pending[key] = digest
            else:
                keys.append(key)
                rows.append(vector)
        if keys:
            self.dense.add(np.asarray(keys, dtype=np.int64), np.vstack(rows))

    def add_vectors(self, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        """Add vectors for pending chunks (computed by the caller)."""
        with self.lock:
            self._add_pending(vectors)

    def _add_pending(self, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        if self.dense is None:
            return
        keys = [k for k, h in self._dense_pending.items() if h in vectors and k in self.sparse]
        if keys:
            matrix = np.vstack([vectors[self._dense_pending[k]] for k in keys])
            self.dense.add(np.asarray(keys, dtype=np.int64), matrix)
        self._dense_pending = {}

    # -- merging and snapshots --------------------------------------------------------------------

    def dense_current(self) -> bool:
        """The FAISS index holds every vector of the version held (a snapshot may save it)."""
        return (
            self.dense is not None
            and self._dense_version == self.version
            and not self._dense_pending
        )

    def _wants_merge(self) -> bool:
        """Whether the segments grew past their threshold, or a saving index lacks a snapshot."""
        rows = len(self.sparse) + (len(self._pending[0]) if self._pending else 0)
        return self.sparse.wants_merge() or (
            not self.read_only and self.snapshot_version < 0 and rows >= SNAPSHOT_MINIMUM
        )

    def has_unsaved(self) -> bool:
        """Whether :meth:`merge` has anything to fold in or save (a lagging FAISS file too)."""
        with self.lock:
            self._settle()
            saved = self.sparse.changes == 0 and self.snapshot_version == self.version
            return not saved or (not self.snapshot_dense_current and self.dense_current())

    def close(self) -> None:
        """Stop the tokenizing worker, if one runs (a later bulk change starts another)."""
        with self.lock:
            self._settle()
        self.terms.close()

    def merge(self, *, save: bool) -> None:
        """Fold recent rows and deletions into a new BM25 base now; ``save`` writes a snapshot."""
        self.wait_for_background()
        with self.lock:
            if not self.has_unsaved():  # the background merge did it
                return
            self._settle()
            job = _merge.freeze(self, save=save, config=self.config, background=False)
            _merge.build(job, self.db)
            _merge.adopt(self, job)

    def wait_for_background(self) -> None:
        """Let the background worker finish what it has (a waiting merge starts now)."""
        with self.lock:
            if self.dense is not None:
                self.dense.hurry()
        self._hurry.set()
        try:
            self.worker.wait()
        finally:
            self._hurry.clear()

    def _merge_soon(self, *, bulk: int) -> None:
        """Queue a merge on the background worker (after a bulk change, once writes stop)."""
        if self._merge_queued:
            return
        self._merge_queued = True
        self.worker.submit(lambda: self._merge_in_background(bulk=bulk >= _merge.BULK_ROWS))

    def _merge_in_background(self, *, bulk: bool) -> None:
        """On the worker: freeze and adopt under the lock, build without it (``merge.py``)."""
        try:
            if bulk:
                _merge.wait_for_quiet(self._hurry, self._quiet_since)
            with self.lock:
                self._merge_queued = False
                if self.empty or not self._wants_merge():
                    return
                # With an embedder, save only while FAISS holds every vector or is not loaded
                save = not self.read_only and (
                    self.config["embedder"] is None or self.dense_current() or self.dense is None
                )
                self._settle()
                job = _merge.freeze(self, save=save, config=self.config, background=True)
            _merge.build(job, self.db)
            with self.lock:
                _merge.adopt(self, job)
        except Exception:  # a failed merge loses nothing: a later write or save() merges
            self._merge_queued = False
            logger.warning(
                "Background merge of the index in %s failed", self.db.directory, exc_info=True
            )

    def _quiet_since(self) -> tuple[float, float]:
        """``(monotonic time of the last apply, seconds between the last two)``."""
        return self._last_apply, self._apply_gap
