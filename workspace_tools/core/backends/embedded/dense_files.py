"""The files of a saved HNSW graph (``dense.py``): written from memory, read and checked.

A graph is saved without its vectors (the database holds them), beside each node's chunk key
and the tombstoned nodes' codes; files that do not fit together are refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import IndexCorruptError

__all__ = [
    "DEAD",
    "DEAD_CODES",
    "FLAT",
    "GRAPH",
    "GRAPH_FILES",
    "IDS",
    "FrozenDense",
    "SavedGraph",
    "faiss_module",
    "load_ids",
    "read_graph",
    "refused",
]

GRAPH: Final = "dense.graph"
"""The HNSW graph without its vectors (``IO_FLAG_SKIP_STORAGE``)."""
IDS: Final = "dense.ids.npy"
"""The chunk key of each node, in node order (int64)."""
DEAD: Final = "dense.dead.npy"
"""Tombstoned node keys (int64)."""
DEAD_CODES: Final = "dense.deadcodes.npy"
"""The float16 codes of the tombstoned nodes, in the order of :data:`DEAD`."""
GRAPH_FILES: Final = (GRAPH, IDS, DEAD, DEAD_CODES)
"""The files of a saved graph (:data:`GRAPH` is there whenever one was saved)."""
FLAT: Final = "dense.flat.faiss"
"""A flat index in FAISS's format: float16 codes and chunk keys (mapped read-only on load)."""


def faiss_module() -> Any:
    """The faiss module, imported on first use (its import is heavy)."""
    from workspace_tools.core.extras import require_vector

    require_vector("vector search", "faiss")
    import faiss

    return faiss


class SavedGraph:
    """A graph read from a snapshot (:func:`read_graph`), before its storage is attached."""

    def __init__(
        self,
        owner: Any,
        index: Any,
        ids: npt.NDArray[np.int64],
        dead: npt.NDArray[np.int64],
        dead_codes: npt.NDArray[np.uint8],
    ) -> None:
        self.owner, self.index, self.ids, self.dead, self.dead_codes = (
            owner,
            index,
            ids,
            dead,
            dead_codes,
        )
        self.dimension = int(index.d)


def read_graph(folder: Path, *, dimension: int) -> SavedGraph:
    """Read the graph files :meth:`DenseIndex.save` wrote (their CRC-32s checked by the caller).

    Raises:
        IndexCorruptError: A file is unreadable or they do not fit together.
    """
    faiss = faiss_module()
    path = folder / GRAPH
    try:
        owner = faiss.read_index(str(path), faiss.IO_FLAG_SKIP_STORAGE)
    except RuntimeError as exc:
        raise refused(path, str(exc).splitlines()[0][-200:]) from exc
    index = faiss.downcast_index(owner)
    if type(index).__name__ != "IndexHNSWSQ" or index.storage is not None:
        raise refused(path, f"a {type(index).__name__} with its storage, not a graph alone")
    if index.d != dimension:
        raise refused(path, f"{index.d}-dimensional vectors, expected {dimension}")
    ids = load_ids(folder / IDS)
    if len(ids) != index.ntotal or len(np.unique(ids)) != len(ids):
        raise refused(folder / IDS, f"{len(ids)} ids for a graph of {index.ntotal} nodes")
    dead = load_ids(folder / DEAD) if (folder / DEAD).exists() else np.zeros(0, np.int64)
    dead_codes = np.zeros((0, 2 * dimension), dtype=np.uint8)
    if len(dead):
        try:
            dead_codes = np.load(folder / DEAD_CODES, allow_pickle=False)
        except (OSError, ValueError, EOFError, SyntaxError) as exc:
            raise refused(folder / DEAD_CODES, str(exc)) from exc
    if not np.isin(dead, ids).all() or dead_codes.shape != (len(dead), 2 * dimension):
        raise refused(folder / DEAD, "its tombstones do not match the graph")
    return SavedGraph(owner, index, ids, dead, np.asarray(dead_codes, dtype=np.uint8))


def load_ids(path: Path) -> npt.NDArray[np.int64]:
    """The FAISS ids saved beside a graph (checked to be a 1-d int64 array)."""
    try:
        ids = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, SyntaxError) as exc:
        raise refused(path, str(exc)) from exc
    if ids.ndim != 1 or ids.dtype != np.int64:
        raise refused(path, f"an array of {ids.dtype} in {ids.ndim} dimensions, not int64 ids")
    return np.asarray(ids)


def refused(path: Path, problem: str) -> IndexCorruptError:
    """The error for a vector index file that is unusable (rebuilt from the database)."""
    return IndexCorruptError(
        f"The vector index file {path} is unusable ({problem}). It is rebuilt from the database; "
        "if this repeats, rebuild the index with rebuild=True."
    )


class FrozenDense:
    """What :meth:`DenseIndex.save` writes, in memory (a graph's files, or a flat index's codes)."""

    def __init__(self, arrays: dict[str, Any], *, live: int) -> None:
        self._arrays, self._live = arrays, live

    def __len__(self) -> int:
        return self._live

    def save(self, folder: Path) -> list[str]:
        """Write the graph files into ``folder``; returns their names."""
        for name, array in self._arrays.items():
            if name in {GRAPH, FLAT}:
                with open(folder / name, "wb") as handle:
                    handle.write(array.data)
            else:
                np.save(folder / name, array, allow_pickle=False)
        return list(self._arrays)
