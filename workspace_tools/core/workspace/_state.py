"""IndexState: what an index holds in memory and how it changes, loads and saves.

The corpus rows (sources, chunks, term ids, cached vectors), the BM25 matrix built over them in
row order, and the FAISS vectors keyed by each chunk's stable integer key. The Workspace drives
it and holds the locks; this class is not thread-safe on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from workspace_tools.core.index.dense import DenseIndex
from workspace_tools.core.index.sparse import BM25Config, SparseIndex, query_tf_weights
from workspace_tools.core.store.corpus import ChunkRow, Corpus, SourceRecord
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.types import Chunk

__all__ = ["IndexState"]


class IndexState:
    """Corpus rows, their BM25 matrix and their vectors.

    Args:
        tokenizer: The workspace tokenizer (its vocabulary numbers the BM25 terms).
        bm25_config: BM25 parameters.
        bm25_enabled: Build the BM25 matrix at all.
        hnsw_threshold: Vector count above which FAISS switches to HNSW.
    """

    def __init__(
        self,
        *,
        tokenizer: Tokenizer,
        bm25_config: BM25Config,
        bm25_enabled: bool,
        hnsw_threshold: int,
    ) -> None:
        self.tokenizer = tokenizer
        self.bm25_enabled = bm25_enabled
        self.hnsw_threshold = hnsw_threshold
        self.corpus = Corpus()
        self.sparse = SparseIndex(bm25_config)
        self.dense: DenseIndex | None = None
        self.needs_backfill = False
        """Chunks exist that have no vector yet (vectors were enabled after they were indexed)."""
        self._sparse_dirty = True
        self._row_ids: list[str] = []
        self._row_of_key: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.corpus.chunks)

    # -- rows and BM25 -------------------------------------------------------------------------

    def ensure_sparse(self) -> None:
        """Rebuild the BM25 matrix and the row maps after a change (cheap when nothing changed)."""
        if not self._sparse_dirty:
            return
        rows = list(self.corpus.chunks.values())
        if self.bm25_enabled:
            self.sparse.build_ids([r.terms for r in rows], self.tokenizer.vocab)
        self._index_rows(rows)

    def _index_rows(self, rows: list[ChunkRow]) -> None:
        self._row_ids = [r.chunk.id for r in rows]
        self._row_of_key = {r.key: i for i, r in enumerate(rows)}
        self._sparse_dirty = False

    def chunk_of_key(self, key: int) -> Chunk | None:
        """The chunk stored under a vector key, if it is still indexed."""
        row = self._row_of_key.get(key)
        return None if row is None else self.corpus.chunks[self._row_ids[row]].chunk

    def row_chunks(self) -> list[Chunk]:
        """Chunks in BM25 row order."""
        return [self.corpus.chunks[c].chunk for c in self._row_ids]

    def bm25_top(
        self, terms: Mapping[str, int], *, k: int, mask: npt.NDArray[np.bool_] | None
    ) -> list[tuple[int, float]]:
        """Best ``(key, raw BM25 score)`` pairs, optionally among the rows of ``mask``.

        ``terms`` maps each distinct query term to its count in the query; the BM25 config's
        ``query_tf`` rule turns counts into term weights.
        """
        counts = self.tokenizer.id_counts(terms)
        ids = list(counts)
        weights = query_tf_weights(list(counts.values()), self.sparse.config.query_tf)
        rows = self.sparse.top_ids(ids, k=k, mask=mask, weights=weights.tolist())
        return [(self._key_of_row(r), s) for r, s in rows]

    def vector_top(
        self, vector: npt.NDArray[np.float32], *, k: int, mask: npt.NDArray[np.bool_] | None
    ) -> list[tuple[int, float]]:
        """Nearest ``(key, cosine)`` pairs, optionally among the rows of ``mask`` (pre-filter)."""
        if self.dense is None:
            return []
        allowed = None
        if mask is not None:
            allowed = np.asarray(
                [self._key_of_row(int(r)) for r in np.flatnonzero(mask)], dtype=np.int64
            )
        return self.dense.search(vector, k=k, allowed=allowed)

    def _key_of_row(self, row: int) -> int:
        return self.corpus.chunks[self._row_ids[row]].key

    # -- changes -------------------------------------------------------------------------------

    def apply(
        self,
        new_rows: list[tuple[SourceRecord, list[ChunkRow]]],
        removed: list[str],
        vectors: Mapping[str, npt.NDArray[np.float32]],
    ) -> int:
        """Drop ``removed`` sources, insert or replace ``new_rows``; returns chunks indexed.

        ``vectors`` holds the new texts' embeddings (the cache has the others).
        """
        dead: list[int] = []
        for source_id in removed:
            dead.extend(self.corpus.drop(source_id))
        indexed = 0
        for record, rows in new_rows:
            for row in rows:
                row.key = self.corpus.new_key()
            dead.extend(self.corpus.put(record, rows))
            indexed += len(rows)
        self.corpus.vectors.update(vectors)
        if self.dense is not None:
            self.dense.remove(np.asarray(dead, dtype=np.int64))
            fresh = [r for _, rows in new_rows for r in rows]
            self._add_vectors(fresh)
        if new_rows or removed:
            self._sparse_dirty = True
        return indexed

    def ensure_dense(self, dimension: int) -> None:
        """Create the vector index when vectors are first enabled (flags a backfill)."""
        if self.dense is None:
            self.dense = DenseIndex(dimension, hnsw_threshold=self.hnsw_threshold)
            self.needs_backfill = bool(self.corpus.chunks)

    def fill_dense(self, dimension: int, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        """Rebuild the vector index from the cache plus ``vectors`` for every chunk."""
        self.corpus.vectors.update(vectors)
        self.dense = DenseIndex(dimension, hnsw_threshold=self.hnsw_threshold)
        self._add_vectors(list(self.corpus.chunks.values()))
        self.needs_backfill = False

    def _add_vectors(self, rows: list[ChunkRow]) -> None:
        if rows and self.dense is not None:
            keys = np.asarray([r.key for r in rows], dtype=np.int64)
            self.dense.add(keys, np.vstack([self.corpus.vectors[r.hash] for r in rows]))

    # -- persistence ---------------------------------------------------------------------------

    def writer(self, *, settings: dict[str, Any]) -> Callable[[Path], None]:
        """A function writing this state into a generation folder (BM25 brought up to date)."""
        self.ensure_sparse()
        corpus, sparse, dense = self.corpus, self.sparse, self.dense
        vocabulary = self.tokenizer.vocab

        def write(folder: Path) -> None:
            corpus.save(folder, settings=settings, vocabulary=vocabulary)
            sparse.save(folder / "sparse")
            if dense is not None and len(dense):
                dense.save(folder / "dense.faiss")

        return write

    def read(
        self,
        folder: Path,
        *,
        check: Callable[[dict[str, Any]], None],
        with_vectors: bool,
    ) -> None:
        """Load a generation written by :meth:`writer`.

        Args:
            folder: The generation folder.
            check: Raises when the saved settings do not fit (see ``compat.check_settings``).
            with_vectors: The workspace has an embedder (else vectors are not loaded).
        """
        corpus, saved, vocabulary = Corpus.load(folder)
        check(saved)
        self.corpus = corpus
        self.tokenizer.set_vocabulary(vocabulary)
        if self.bm25_enabled:
            sparse = SparseIndex.load(folder / "sparse", config=self.sparse.config)
            if sparse is not None and len(sparse) == len(corpus.chunks):
                self.sparse = sparse
                self._index_rows(list(corpus.chunks.values()))
        if not with_vectors:
            return
        saved_embedder = saved.get("embedder")
        if saved_embedder is None:
            corpus.vectors.clear()  # vectors of an unknown model must not be reused
            self.needs_backfill = bool(corpus.chunks)
            return
        dimension = int(saved_embedder["dimension"])
        path = folder / "dense.faiss"
        if path.exists():
            dense = DenseIndex.load(path, dimension=dimension, hnsw_threshold=self.hnsw_threshold)
            if len(dense) == len(corpus.chunks):
                self.dense = dense
                return
        self.dense = DenseIndex(dimension, hnsw_threshold=self.hnsw_threshold)
        self.needs_backfill = bool(corpus.chunks)
