"""Filling a :class:`DenseIndex` from the database: the codes go straight into FAISS's arrays.

:class:`FlatFill` gives one slot per key in key order, :class:`GraphFill` a saved graph's node
(keys added since are inserted, nodes whose key is gone tombstoned).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.embedded import dense as _dense
from workspace_tools.core.backends.embedded.dense import set_ids, sized_codes
from workspace_tools.core.backends.embedded.dense_files import SavedGraph, faiss_module
from workspace_tools.core.backends.embedded.hnsw_build import GraphBuild, codes_to_float32
from workspace_tools.core.background import BackgroundWorker

__all__ = ["FlatFill", "GraphFill", "with_graph"]


class FlatFill:
    """A flat index filled in key order (see the module docstring)."""

    def __init__(
        self, dimension: int, *, hnsw_threshold: int, background: BackgroundWorker | None = None
    ) -> None:
        self.dense = _dense.DenseIndex(
            dimension, hnsw_threshold=hnsw_threshold, background=background
        )
        self._keys = np.zeros(0, dtype=np.int64)

    def place(
        self, keys: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
        """FAISS's codes sized for every key, and each key's row in them."""
        faiss = faiss_module()
        self._keys = keys
        inner = faiss.downcast_index(self.dense._index.index)
        return sized_codes(inner, len(keys)), np.arange(len(keys), dtype=np.int64)

    def finish(
        self, found: npt.NDArray[np.bool_], extra: npt.NDArray[np.uint8]
    ) -> _dense.DenseIndex:
        """The index, once every found key's code is written (``extra`` is empty here)."""
        dense = self.dense
        if found.all():
            set_ids(dense._index, self._keys)
        else:  # chunks not embedded yet (pending): their rows are left out
            codes = dense._codes()[found].copy()
            dense._index = dense._new_flat()
            dense.add_codes(self._keys[found], codes)
        dense._start_graph()
        return dense


class GraphFill:
    """A saved graph's storage filled node by node (see the module docstring)."""

    def __init__(
        self,
        graph: SavedGraph,
        *,
        hnsw_threshold: int,
        background: BackgroundWorker | None = None,
    ) -> None:
        faiss = faiss_module()
        self.graph = graph
        self.dense = _dense.DenseIndex(
            graph.dimension, hnsw_threshold=hnsw_threshold, background=background
        )
        self.storage = faiss.IndexScalarQuantizer(
            graph.dimension, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
        self._keys = np.zeros(0, dtype=np.int64)
        self._slots = np.zeros(0, dtype=np.int64)
        self._view: npt.NDArray[np.uint8] | None = None

    def place(
        self, keys: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
        """The storage sized for the graph's nodes, and each key's node (``-1``: not in it)."""
        ids = self.graph.ids
        order = np.argsort(ids, kind="stable")
        where = np.minimum(np.searchsorted(ids, keys, sorter=order), max(len(ids) - 1, 0))
        node = order[where] if len(ids) else np.zeros(len(keys), dtype=np.int64)
        hit = ids[node] == keys if len(ids) else np.zeros(len(keys), dtype=bool)
        self._keys = keys
        self._slots = np.where(hit, node, -1).astype(np.int64)
        self._view = sized_codes(self.storage, len(ids))
        return self._view, self._slots

    def finish(
        self, found: npt.NDArray[np.bool_], extra: npt.NDArray[np.uint8]
    ) -> _dense.DenseIndex:
        """Attach the storage to the graph; tombstone what is gone, add what is new."""
        faiss = faiss_module()
        graph, dense, view = self.graph, self.dense, self._view
        assert view is not None
        ids = graph.ids
        live = np.zeros(len(ids), dtype=bool)
        live[self._slots[(self._slots >= 0) & found]] = True
        if len(graph.dead):  # deleted before the save: their codes were saved with them
            order = np.argsort(ids, kind="stable")
            view[order[np.searchsorted(ids, graph.dead, sorter=order)]] = graph.dead_codes
        outside = self._slots < 0
        added = self._keys[outside & found]
        new_codes = extra[found[outside]]
        inner = graph.index
        inner.storage = self.storage
        inner.own_fields = False
        placeholder = faiss.IndexHNSWSQ(
            graph.dimension, faiss.ScalarQuantizer.QT_fp16, 32, faiss.METRIC_INNER_PRODUCT
        )
        wrapper = faiss.IndexIDMap2(placeholder)
        wrapper.index = inner
        set_ids(wrapper, ids)
        keep = [graph.owner, inner, self.storage, placeholder]
        self._view = None
        if len(added) <= _dense._INLINE_ROWS:
            dense._index, dense._hnsw, dense._keep = wrapper, True, keep
            dense._dead = {int(i) for i in ids[~live]}
            if len(added):
                dense._index.add_with_ids(codes_to_float32(new_codes), added)
            if len(dense._dead) > _dense._COMPACT_FRACTION * int(dense._index.ntotal):
                dense._to_flat()
            return dense
        build = GraphBuild(wrapper, ids, added, np.ascontiguousarray(new_codes), keep)
        dense._build = build  # set first: the flat adds below start no build of their own
        dense.add_codes(ids[live], view[live].copy())
        dense.add_codes(added, new_codes)
        build.start(dense.background)
        return dense


def with_graph(
    graph: SavedGraph,
    *,
    keys: npt.NDArray[np.int64],
    codes: npt.NDArray[np.uint8],
    hnsw_threshold: int = _dense.HNSW_THRESHOLD,
    background: BackgroundWorker | None = None,
) -> _dense.DenseIndex:
    """A saved graph with a storage of these codes (what :class:`GraphFill` does as rows are read).

    Args:
        graph: What ``read_graph`` read.
        keys: Every chunk key with a vector now, sorted.
        codes: Their vectors' float16 codes, row for row.
        hnsw_threshold: As for :class:`DenseIndex`.
        background: Where a graph round runs (``None``: in the caller's thread).
    """
    fill = GraphFill(graph, hnsw_threshold=hnsw_threshold, background=background)
    target, slots = fill.place(keys)
    inside = slots >= 0
    target[slots[inside]] = codes[inside]
    return fill.finish(np.ones(len(keys), dtype=bool), codes[~inside])
