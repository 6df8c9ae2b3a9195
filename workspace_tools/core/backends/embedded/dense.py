"""DenseIndex: inner product over L2-normalised vectors (cosine), on FAISS.

Vectors carry int64 ids and are kept as float16 codes (``QT_fp16``). The index is flat up to
``hnsw_threshold`` vectors and HNSW above it (built in the background while flat answers);
filters are id-selector pre-filters. Removed graph nodes are tombstones until a rebuild.
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
"""Rows added during a graph round that adoption inserts inline; more start another round."""

_COMPACT_FRACTION: Final = 0.2
"""HNSW graphs are rebuilt once tombstones exceed this fraction of their vectors."""


def _faiss() -> Any:
    """The faiss module, imported on first use (its import is heavy)."""
    return faiss_module()


HNSW_THRESHOLD: Final = 50_000
"""Above this many vectors the index switches from exact (flat) search to HNSW."""

_HNSW_M: Final = 32
"""Neighbours per HNSW node (M=16 loses recall@100, which the hybrid candidate pool reads)."""


_HEADROOM_ROWS = 1024
"""Rows of codes a filled index has room for before its array grows (copying every code)."""


def sized_codes(index: Any, rows: int) -> npt.NDArray[np.uint8]:
    """Size an empty flat-codes index to ``rows`` (zeros) and return a numpy view of its codes."""
    faiss = faiss_module()
    size = rows * int(index.code_size)
    # Room to grow first (capacity is kept on shrinking): later writes append without a copy
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
        """FAISS objects the index points to without owning them (an attached storage)."""
        self._mapped = False
        """The codes are a snapshot file mapped read-only (:meth:`mapped`) until :meth:`own`."""
        self._owning = threading.RLock()
        """Held while the flat index changes, or is copied (:meth:`own`, a graph round)."""
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
        """A flat index whose codes stay mapped from the file at ``path`` until :meth:`own`.

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
        # One query is memory-bound: more OpenMP threads only add synchronisation. The setting
        # is per calling thread, so it is restored for later (batched) work.
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
            inline: Most rows added during the round to insert here; more start another round.
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
        """Back to an exact flat index of the live vectors; a new graph starts if still due."""
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
        """What :meth:`save` writes, serialized now (a graph being built is not waited for)."""
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
