"""DenseIndex: inner product over L2-normalised vectors (cosine), on FAISS.

Vectors carry stable int64 ids so chunks can be removed. The index is exact (flat) up to
``hnsw_threshold`` vectors and HNSW above it; metadata filters are pre-filters through a FAISS id
selector, so a filtered search still returns ``k`` hits when ``k`` matching vectors exist.

Vectors are kept in float16 (FAISS's scalar quantizer ``QT_fp16``: ``IndexScalarQuantizer`` when
flat, ``IndexHNSWSQ`` above the threshold): half the memory and the file of float32, and a flat
scan about twice as fast (it is memory-bound). Every vector is rounded to float16 by numpy before
FAISS sees it, so a vector read back from the embedding cache (also float16,
``store/_vectors.py``) and one fresh from the embedder get the same codes and the same scores.
An index saved before in float32 (``IndexFlatIP``, ``IndexHNSWFlat``) still loads and searches
as it is; it becomes float16 the next time it is rebuilt.

HNSW graphs cannot delete in place, so removed ids become tombstones hidden from every search by
an ``IDSelectorNot``; the graph is rebuilt only once tombstones pass a fifth of it. Tombstones
are saved next to the index (``<name>.dead.npy``). :attr:`DenseIndex.hnsw_builds` counts the
graphs this object built (one when a growing index crosses the threshold, not one per add).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import IndexCorruptError

__all__ = ["HNSW_THRESHOLD", "DenseIndex", "FrozenDense"]

_COMPACT_FRACTION: Final = 0.2
"""HNSW graphs are rebuilt once tombstones exceed this fraction of their vectors."""


def _faiss() -> Any:
    """The faiss module, imported on first use (its import is heavy)."""
    from workspace_tools.core.extras import require_vector

    require_vector("vector search", "faiss")
    import faiss

    return faiss


HNSW_THRESHOLD: Final = 50_000
"""Above this many vectors the index switches from exact (flat) search to HNSW.

Measured with ``tests/benchmarks/faiss_threshold.py`` (384-dim vectors shaped like real MiniLM
ones, one query at a time, 1 OpenMP thread, p50): a float32 flat scan took 0.13 ms at 5k
vectors, 0.42 ms at 10k, 1.4 ms at 20k and 4.9 ms at 50k (~0.1 us a vector), while HNSW (M=32,
efSearch=128) stays at 0.13-0.21 ms with recall@10 1.000 and recall@100 0.995 against flat; flat
passed ~3 ms near 30k vectors, the crossover then. The float16 scan (``QT_fp16``) reads half the
bytes: in one run on the loaded 2-core machine 1.1-1.2 ms at 20k (float32 2.1-4.5), 1.6-1.7 ms
at 30k (3.0), 3.0-4.3 ms at 50k (5.2-7.8), 5.9-12 ms at 100k (12-33), exact either way; so the
~3 ms crossover moved to ~50k. HNSW is not free: a float16 graph of 50k vectors took 7-21 s to
build in that run (float32: 19-28 s), and as HNSW cannot delete in place, removed vectors are
tombstoned and the graph is rebuilt once they pass a fifth of it, so below the crossover exact
search wins outright. See docs/benchmarks-dense.md.
"""

_HNSW_M: Final = 32
"""Neighbours per HNSW node. M=16 built 1.4x faster but lost recall@100 (0.967 against 0.986
at 50k vectors), which the hybrid candidate pool (k=100) reads."""


class DenseIndex:
    """Vectors with int64 ids and top-k inner-product search."""

    def __init__(self, dimension: int, *, hnsw_threshold: int = HNSW_THRESHOLD) -> None:
        self.dimension = dimension
        self.hnsw_threshold = hnsw_threshold
        self._index: Any = self._new_index(hnsw=False)
        self._hnsw = False
        self._dead: set[int] = set()
        self.hnsw_builds = 0
        """HNSW graphs this object built (a loaded graph is not counted)."""

    def __len__(self) -> int:
        return int(self._index.ntotal) - len(self._dead)

    @property
    def kind(self) -> str:
        """``flat`` or ``hnsw``."""
        return "hnsw" if self._hnsw else "flat"

    def _new_index(self, *, hnsw: bool) -> Any:
        faiss = _faiss()

        fp16 = faiss.ScalarQuantizer.QT_fp16
        if hnsw:
            inner = faiss.IndexHNSWSQ(self.dimension, fp16, _HNSW_M, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efConstruction = 40
            inner.hnsw.efSearch = 128
        else:
            inner = faiss.IndexScalarQuantizer(self.dimension, fp16, faiss.METRIC_INNER_PRODUCT)
        return faiss.IndexIDMap2(inner)

    def add(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors under ``ids`` (ids must not be present)."""
        if len(ids) == 0:
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(ids), self.dimension):
            msg = f"Expected vectors of shape ({len(ids)}, {self.dimension}), got {vectors.shape}."
            raise ValueError(msg)
        vectors = np.ascontiguousarray(vectors.astype(np.float16).astype(np.float32))
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if not self._hnsw and len(self) + len(ids) > self.hnsw_threshold:
            # Crossing the threshold: one graph of the flat vectors and these, built once (not
            # these added flat, then everything copied into a graph).
            self._rebuild(hnsw=True, extra=(ids, vectors))
            return
        self._index.add_with_ids(vectors, ids)

    def remove(self, ids: npt.NDArray[np.int64]) -> None:
        """Remove the vectors with these ids (unknown ids are ignored)."""
        if len(ids) == 0 or len(self) == 0:
            return
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if self._hnsw:
            present = ids[np.isin(ids, self._all_ids())]
            self._dead.update(int(i) for i in present)
            if len(self._dead) > _COMPACT_FRACTION * int(self._index.ntotal):
                self._rebuild(hnsw=len(self) > self.hnsw_threshold)
        else:
            faiss = _faiss()

            self._index.remove_ids(faiss.IDSelectorBatch(ids))

    def search(
        self,
        vector: npt.NDArray[np.float32],
        *,
        k: int,
        allowed: npt.NDArray[np.int64] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest ids and cosine scores, best first, optionally among ``allowed``."""
        faiss = _faiss()

        if len(self) == 0 or k <= 0:
            return []
        if allowed is not None and len(allowed) == 0:
            return []
        k = min(k, len(self))
        query = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, -1)
        params = None
        selector = None
        if allowed is not None:  # allowed ids are live ids: tombstones are never among them
            selector = faiss.IDSelectorBatch(np.ascontiguousarray(allowed, dtype=np.int64))
        elif self._dead:
            dead = faiss.IDSelectorBatch(np.fromiter(self._dead, dtype=np.int64))
            selector = faiss.IDSelectorNot(dead)
        if selector is not None:
            params = (
                faiss.SearchParametersHNSW(sel=selector, efSearch=max(128, k))
                if self._hnsw
                else faiss.SearchParameters(sel=selector)
            )
        # One query is memory-bound: a second OpenMP thread only adds synchronisation (measured
        # idle: flat 20k vectors 2.9 -> 1.4 ms; on a busy machine 16 -> 0.13 ms at 5k). The
        # setting is per calling thread, so it is restored for later (batched) work.
        previous = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            scores, ids = self._index.search(query, k, params=params)
        finally:
            faiss.omp_set_num_threads(previous)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i != -1]

    def _all_ids(self) -> npt.NDArray[np.int64]:
        """Ids stored in the FAISS index, tombstones included."""
        faiss = _faiss()

        return np.asarray(faiss.vector_to_array(self._index.id_map), dtype=np.int64)

    def _vectors(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The stored vectors of ``ids`` (present ones), decoded to float32 in one call."""
        if len(ids) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        inner = self._index.index
        every = np.asarray(inner.reconstruct_n(0, int(inner.ntotal)), dtype=np.float32)
        stored = self._all_ids()  # row i of the inner index holds id stored[i]
        order = np.argsort(stored, kind="stable")
        rows = order[np.searchsorted(stored, ids, sorter=order)]
        return np.ascontiguousarray(every[rows])

    def _rebuild(
        self,
        *,
        hnsw: bool,
        extra: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None = None,
    ) -> None:
        """A fresh index of the live vectors (tombstones dropped), plus ``extra`` new ones."""
        ids = self._all_ids()
        if self._dead:
            ids = ids[~np.isin(ids, np.fromiter(self._dead, dtype=np.int64))]
        # rounded as add() rounds: vectors of an index saved in float32 get the codes a fresh
        # build from the (float16) embedding cache gives them
        vectors = self._vectors(ids).astype(np.float16).astype(np.float32)
        if extra is not None:
            ids = np.concatenate([ids, extra[0]])
            vectors = np.concatenate([vectors, extra[1]])
        self._index = self._new_index(hnsw=hnsw)
        self._hnsw = hnsw
        self._dead = set()
        if hnsw:
            self.hnsw_builds += 1
        if len(ids):
            self._index.add_with_ids(np.ascontiguousarray(vectors), np.ascontiguousarray(ids))

    def save(self, path: Path) -> None:
        """Write the index with ``faiss.write_index`` (no pickle)."""
        faiss = _faiss()

        faiss.write_index(self._index, str(path))
        if self._dead:
            dead = np.fromiter(sorted(self._dead), dtype=np.int64)
            np.save(_dead_path(path), dead, allow_pickle=False)

    def frozen(self) -> FrozenDense:
        """The index as it is now, serialized in memory (a merge writes it without a lock)."""
        faiss = _faiss()
        dead = np.fromiter(sorted(self._dead), dtype=np.int64)
        return FrozenDense(np.asarray(faiss.serialize_index(self._index)), dead, len(self))

    @classmethod
    def load(
        cls, path: Path, *, dimension: int, hnsw_threshold: int = HNSW_THRESHOLD
    ) -> DenseIndex:
        """Read an index written by :meth:`save`."""
        faiss = _faiss()

        try:
            index = faiss.read_index(str(path))
        except RuntimeError as exc:
            msg = (
                f"The vector index file {path} is unreadable ({str(exc).splitlines()[0][-200:]}). "
                "Rebuild the index with rebuild=True."
            )
            raise IndexCorruptError(msg) from exc
        if index.d != dimension:
            msg = (
                f"The vector index file {path} holds {index.d}-dimensional vectors, "
                f"expected {dimension}. Rebuild the index with rebuild=True."
            )
            raise IndexCorruptError(msg)
        dense = cls(dimension, hnsw_threshold=hnsw_threshold)
        dense._index = index
        dense._hnsw = "HNSW" in type(faiss.downcast_index(index.index)).__name__
        dead_path = _dead_path(path)
        if dead_path.exists():
            try:
                dead = np.load(dead_path, allow_pickle=False)
            except (OSError, ValueError, EOFError) as exc:
                msg = (
                    f"The tombstone file {dead_path} is damaged ({exc}). Rebuild with rebuild=True."
                )
                raise IndexCorruptError(msg) from exc
            if dead.ndim != 1 or dead.dtype != np.int64:
                msg = f"The tombstone file {dead_path} is malformed. Rebuild with rebuild=True."
                raise IndexCorruptError(msg)
            dense._dead = {int(i) for i in dead}
        return dense


class FrozenDense:
    """A serialized :class:`DenseIndex` that saves the same files as the index itself."""

    def __init__(self, data: npt.NDArray[np.uint8], dead: npt.NDArray[np.int64], live: int) -> None:
        self._data, self._dead, self._live = data, dead, live

    def __len__(self) -> int:
        return self._live

    def save(self, path: Path) -> None:
        """Write the same files as :meth:`DenseIndex.save`."""
        with open(path, "wb") as handle:
            handle.write(self._data.data)
        if len(self._dead):
            np.save(_dead_path(path), self._dead, allow_pickle=False)


def _dead_path(path: Path) -> Path:
    return path.with_name(path.stem + ".dead.npy")
