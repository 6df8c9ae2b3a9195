"""DenseIndex: inner product over L2-normalised vectors (cosine), on FAISS.

Vectors carry stable int64 ids so chunks can be removed. The index is exact (flat) up to
``hnsw_threshold`` vectors and HNSW above it; metadata filters are pre-filters through a FAISS id
selector, so a filtered search still returns ``k`` hits when ``k`` matching vectors exist.

Vectors are kept in float16 (FAISS's scalar quantizer ``QT_fp16``: ``IndexScalarQuantizer`` when
flat, ``IndexHNSWSQ`` above the threshold): half the memory of float32, and a flat scan about
twice as fast (it is memory-bound). Every vector is rounded to float16 by numpy before FAISS sees
it, so a vector read back from the embedding cache (also float16, ``store/_vectors.py``) and one
fresh from the embedder get the same codes and the same scores. A ``QT_fp16`` code is the
vector's float16 bytes, so the cache's rows become the index's codes as they are
(:meth:`DenseIndex.from_codes`: no decoding, no per-vector work).

**Snapshots.** A flat index is saved whole (``dense.flat.faiss``); a process opening the snapshot
maps it (``DenseIndex.mapped``) and copies and checks it on the backend's worker. Above the
threshold only the HNSW graph is saved (FAISS's ``IO_FLAG_SKIP_STORAGE``: the graph without its
vectors, ``dense.graph``) with the id of each node (``dense.ids.npy``); loading it attaches a
storage filled from the database (``dense_fill.GraphFill``). Tombstoned nodes' vectors are no
longer in the database, so their codes are saved beside their ids (``dense.dead.npy``,
``dense.deadcodes.npy``: at most a fifth of the graph).

**The graph is built beside the writes** (``hnsw_build.py``): crossing the threshold starts a
round on the background worker and the exact flat index keeps answering until it is adopted. HNSW
graphs cannot delete in place, so removed ids become tombstones hidden from every search by an
``IDSelectorNot``; once tombstones pass a fifth of the graph the index goes back to flat (the
live codes, no rebuild cost) and builds a new graph in the background.
:attr:`DenseIndex.hnsw_builds` counts the graphs this object adopted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.embedded.dense_files import (
    DEAD,
    DEAD_CODES,
    FLAT,
    GRAPH,
    GRAPH_FILES,
    IDS,
    FrozenDense,
    SavedGraph,
    faiss_module,
    read_graph,
    refused,
)
from workspace_tools.core.backends.embedded.hnsw_build import (
    CodedRows,
    GraphBuild,
    codes_to_float32,
)
from workspace_tools.core.background import BackgroundWorker

__all__ = ["GRAPH_FILES", "HNSW_THRESHOLD", "DenseIndex", "FrozenDense", "SavedGraph", "read_graph"]
_INLINE_ROWS: Final = 256
"""Rows added since a graph round began that are inserted into it in the caller's thread when
it is adopted (a fraction of a second at most); more go to another background round."""

_COMPACT_FRACTION: Final = 0.2
"""HNSW graphs are rebuilt once tombstones exceed this fraction of their vectors."""


def _faiss() -> Any:
    """The faiss module, imported on first use (its import is heavy)."""
    return faiss_module()


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


_HEADROOM_ROWS = 1024
"""Rows of codes a filled index has room for before its array grows (copying every code)."""


def sized_codes(index: Any, rows: int) -> npt.NDArray[np.uint8]:
    """Size an empty flat-codes index to ``rows`` (zeros) and return a numpy view of its codes."""
    faiss = faiss_module()
    size = rows * int(index.code_size)
    # Room to grow first (a vector keeps its capacity when it shrinks): the writes that follow
    # append without copying every code into a larger array.
    index.codes.resize(size + max(_HEADROOM_ROWS, rows // 8) * int(index.code_size))
    index.codes.resize(size)
    index.ntotal = rows
    if size == 0:
        return np.zeros((0, int(index.code_size)), dtype=np.uint8)
    return np.asarray(faiss.rev_swig_ptr(index.codes.data(), size)).reshape(rows, -1)


def set_ids(wrapper: Any, ids: npt.NDArray[np.int64]) -> None:
    """Give an ``IndexIDMap2`` whose inner index holds ``len(ids)`` rows their ids."""
    faiss = faiss_module()
    faiss.copy_array_to_vector(np.ascontiguousarray(ids, dtype=np.int64), wrapper.id_map)
    wrapper.ntotal = len(ids)
    wrapper.construct_rev_map()


class DenseIndex:
    """Vectors with int64 ids and top-k inner-product search."""

    def __init__(
        self,
        dimension: int,
        *,
        hnsw_threshold: int = HNSW_THRESHOLD,
        background: BackgroundWorker | None = None,
    ) -> None:
        self.dimension = dimension
        self.hnsw_threshold = hnsw_threshold
        self.background = background
        """Where graph rounds run (``None``: in the caller's thread)."""
        self._index: Any = self._new_flat()
        self._hnsw = False
        self._dead: set[int] = set()
        self._build: GraphBuild | None = None
        self._keep: list[Any] = []
        self._mapped = False
        """The codes are a snapshot file mapped read-only (:meth:`mapped`) until :meth:`own`."""
        self._owning = threading.RLock()
        """Held while the flat index changes, or is copied (:meth:`own`, a graph round)."""
        """FAISS objects the index points to without owning them (an attached storage)."""
        self.hnsw_builds = 0
        """HNSW graphs this object adopted (a loaded graph is not counted)."""

    def __len__(self) -> int:
        return int(self._index.ntotal) - len(self._dead)

    @property
    def kind(self) -> str:
        """``flat`` or ``hnsw``."""
        return "hnsw" if self._hnsw else "flat"

    @property
    def building(self) -> bool:
        """A graph is being built in the background (the flat index answers meanwhile)."""
        return self._build is not None

    @property
    def code_size(self) -> int:
        """Bytes of one vector's code (float16: two a dimension)."""
        return 2 * self.dimension

    def _new_flat(self) -> Any:
        faiss = _faiss()
        flat = faiss.IndexScalarQuantizer(
            self.dimension, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
        return faiss.IndexIDMap2(flat)

    def _new_graph(self) -> Any:
        faiss = _faiss()
        fp16 = faiss.ScalarQuantizer.QT_fp16
        inner = faiss.IndexHNSWSQ(self.dimension, fp16, _HNSW_M, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efConstruction = 40
        inner.hnsw.efSearch = 128
        return faiss.IndexIDMap2(inner)

    @classmethod
    def from_codes(
        cls,
        dimension: int,
        ids: npt.NDArray[np.int64],
        codes: npt.NDArray[np.uint8],
        *,
        hnsw_threshold: int = HNSW_THRESHOLD,
        background: BackgroundWorker | None = None,
    ) -> DenseIndex:
        """A flat index of float16 codes (the embedding cache's bytes), copied in one call.

        Past ``hnsw_threshold`` a graph build starts in the background. (A load from the
        database writes the codes into FAISS's array as they are read: ``dense_fill.py``.)
        """
        dense = cls(dimension, hnsw_threshold=hnsw_threshold, background=background)
        dense.add_codes(ids, codes)
        return dense

    def add(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Add vectors under ``ids`` (ids must not be present)."""
        if len(ids) == 0:
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(ids), self.dimension):
            msg = f"Expected vectors of shape ({len(ids)}, {self.dimension}), got {vectors.shape}."
            raise ValueError(msg)
        self.add_codes(ids, np.ascontiguousarray(vectors, dtype="<f2").view(np.uint8))

    @classmethod
    def mapped(
        cls,
        path: Path,
        *,
        dimension: int,
        hnsw_threshold: int = HNSW_THRESHOLD,
        background: BackgroundWorker | None = None,
    ) -> DenseIndex:
        """A flat index whose codes stay mapped from the file at ``path`` until it changes.

        Opening reads no vector: :meth:`own` copies them into memory (once) before a change.

        Raises:
            IndexCorruptError: the file is not a flat float16 index of ``dimension``.
        """
        faiss = _faiss()
        try:
            index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)
        except RuntimeError as exc:
            raise refused(path, str(exc).splitlines()[0][-200:]) from exc
        inner = faiss.downcast_index(getattr(index, "index", index))
        if type(inner).__name__ != "IndexScalarQuantizer" or index.d != dimension:
            raise refused(path, f"a {type(inner).__name__} of {index.d} dimensions")
        dense = cls(dimension, hnsw_threshold=hnsw_threshold, background=background)
        dense._index, dense._mapped = index, True  # read_index returns the IndexIDMap2 itself
        return dense

    def own(self) -> None:
        """Copy a mapped index's codes into memory (once), so it can change; no-op otherwise."""
        with self._owning:
            if not self._mapped:
                return
            ids, codes = self._all_ids(), self._codes()
            index = self._new_flat()
            sized_codes(_faiss().downcast_index(index.index), len(ids))[:] = codes
            set_ids(index, ids)
            self._index, self._mapped = index, False

    def add_codes(self, ids: npt.NDArray[np.int64], codes: npt.NDArray[np.uint8]) -> None:
        """Add vectors given as float16 codes (``(n, 2 * dimension)`` bytes) under ``ids``."""
        if len(ids) == 0:
            return
        self.own()
        codes = np.ascontiguousarray(codes, dtype=np.uint8).reshape(len(ids), -1)
        if codes.shape[1] != self.code_size:
            msg = f"Expected codes of {self.code_size} bytes, got {codes.shape[1]}."
            raise ValueError(msg)
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        self._adopt()
        if self._hnsw:  # inserted into the graph (a few rows a write)
            self._index.add_with_ids(codes_to_float32(codes), ids)
        else:
            with self._owning:
                self._index.add_sa_codes(codes, ids)
            self._start_graph()

    def remove(self, ids: npt.NDArray[np.int64]) -> None:
        """Remove the vectors with these ids (unknown ids are ignored)."""
        if len(ids):
            self.own()
        self._adopt()
        if len(ids) == 0 or len(self) == 0:
            return
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if self._hnsw:
            present = ids[np.isin(ids, self._all_ids())]
            self._dead.update(int(i) for i in present)
            if len(self._dead) > _COMPACT_FRACTION * int(self._index.ntotal):
                self._to_flat()
        else:
            with self._owning:
                self._index.remove_ids(_faiss().IDSelectorBatch(ids))

    def search(
        self,
        vector: npt.NDArray[np.float32],
        *,
        k: int,
        allowed: npt.NDArray[np.int64] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest ids and cosine scores, best first, optionally among ``allowed``."""
        faiss = _faiss()

        self._adopt()
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

    # -- the graph -----------------------------------------------------------------------------

    def hurry(self) -> None:
        """A caller waits for the graph being built: its next batches use every core."""
        if self._build is not None:
            self._build.hurry.set()

    def wait_for_graph(self) -> None:
        """Let a background graph build finish, and adopt its graph (``save()`` does)."""
        while self._build is not None:
            self._build.hurry.set()
            self._build.wait()
            self._adopt(inline=None)

    def _start_graph(self) -> None:
        """Start building a graph of the flat vectors once they pass the threshold."""
        if self._hnsw or self._build is not None or len(self) <= self.hnsw_threshold:
            return
        ids = self._all_ids()
        build = GraphBuild(
            self._new_graph(), np.zeros(0, np.int64), ids, self._present_codes(ids), []
        )
        self._build = build
        build.start(self.background)

    def _present_codes(self, ids: npt.NDArray[np.int64]) -> Callable[[], CodedRows]:
        """Returns the ids still here and a copy of their codes, when a graph round runs."""

        def copy() -> CodedRows:
            with self._owning:  # no change to the flat index while its rows are copied
                stored = self._all_ids()
                if np.array_equal(stored[: len(ids)], ids):  # only added since: one block copy
                    return ids, self._codes()[: len(ids)].copy()
                present = ids[np.isin(ids, stored)]
                return present, self._codes()[self._rows(present)]

        return copy

    def _adopt(self, *, inline: int | None = _INLINE_ROWS) -> None:
        """Swap in a finished graph: tombstone what left since, add what came (or go on).

        Args:
            inline: Insert at most this many rows added since the round began here; more
                start another background round on the same graph (``None``: any number).
        """
        build = self._build
        if build is None or not build.done.is_set():
            return
        self._build = None
        if build.error is not None:  # logged by the thread: the flat index goes on answering
            return
        current = self._all_ids()
        added = np.setdiff1d(current, build.ids)
        removed = np.setdiff1d(build.ids, current)
        codes = self._codes()[self._rows(added)] if len(added) else None
        if codes is not None and inline is not None and len(added) > inline:
            self._build = GraphBuild(build.graph, build.ids, added, codes, build.keep)
            self._build.start(self.background)
            return
        if codes is not None:
            build.graph.add_with_ids(codes_to_float32(codes), added)
        self._index, self._hnsw = build.graph, True
        self._dead = {int(i) for i in removed}
        self._keep = build.keep
        self.hnsw_builds += 1
        if len(self._dead) > _COMPACT_FRACTION * int(self._index.ntotal):
            self._to_flat()

    def _to_flat(self) -> None:
        """Back to an exact flat index of the live vectors (tombstones dropped).

        A graph is built again in the background if they are still past the threshold.
        """
        ids = self._all_ids()
        live = ~np.isin(ids, np.fromiter(self._dead, dtype=np.int64)) if self._dead else None
        codes = self._codes()
        if live is not None:
            ids, codes = ids[live], codes[live]
        else:
            codes = codes.copy()
        self._index, self._hnsw, self._dead, self._keep = self._new_flat(), False, set(), []
        if len(ids):
            self._index.add_sa_codes(np.ascontiguousarray(codes), np.ascontiguousarray(ids))
        self._start_graph()

    # -- stored vectors --------------------------------------------------------------------------

    def _all_ids(self) -> npt.NDArray[np.int64]:
        """Ids stored in the FAISS index, tombstones included (row order)."""
        faiss = _faiss()

        return np.asarray(faiss.vector_to_array(self._index.id_map), dtype=np.int64)

    def _rows(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Rows of the inner index holding these (present) ids."""
        stored = self._all_ids()
        order = np.argsort(stored, kind="stable")
        return np.asarray(order[np.searchsorted(stored, ids, sorter=order)], dtype=np.int64)

    def _codes(self) -> npt.NDArray[np.uint8]:
        """The float16 codes of every row, a view of FAISS's own array (no copy)."""
        faiss = _faiss()
        inner = faiss.downcast_index(self._index.index)
        if self._hnsw:
            inner = faiss.downcast_index(inner.storage)
        size = int(inner.ntotal) * int(inner.code_size)
        if size == 0:
            return np.zeros((0, self.code_size), dtype=np.uint8)
        view = faiss.rev_swig_ptr(inner.codes.c_ptr, size)  # owned or mapped
        return np.asarray(view).reshape(-1, int(inner.code_size))

    def _vectors(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The stored vectors of ``ids`` (present ones), decoded to float32."""
        if len(ids) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return codes_to_float32(self._codes()[self._rows(ids)])

    # -- saving and loading ------------------------------------------------------------------

    def save(self, folder: Path) -> list[str]:
        """Write the index's files into ``folder`` (a graph being built is waited for).

        Returns:
            The names of the files written.
        """
        self.wait_for_graph()
        return self.frozen().save(folder)

    def frozen(self) -> FrozenDense:
        """What :meth:`save` writes, serialized in memory now (a merge writes it unlocked).

        A graph still being built is not waited for: the snapshot then holds the flat index.
        """
        faiss = _faiss()

        self._adopt()
        if not self._hnsw:  # the flat index itself, which a process opening the snapshot maps
            return FrozenDense(
                {FLAT: np.asarray(faiss.serialize_index(self._index))}, live=len(self)
            )
        inner = faiss.downcast_index(self._index.index)
        ids = self._all_ids()
        dead = np.fromiter(sorted(self._dead), dtype=np.int64, count=len(self._dead))
        graph = np.asarray(faiss.serialize_index(inner, faiss.IO_FLAG_SKIP_STORAGE))
        dead_codes = self._codes()[self._rows(dead)].copy() if len(dead) else None
        arrays: dict[str, Any] = {GRAPH: graph, IDS: ids, DEAD: dead}
        if dead_codes is not None:
            arrays[DEAD_CODES] = dead_codes
        return FrozenDense(arrays, live=len(self))
