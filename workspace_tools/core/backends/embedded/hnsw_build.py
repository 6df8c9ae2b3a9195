"""An HNSW graph built on the background worker while the flat index answers (``dense.py``).

Building a graph of 50,000 vectors takes seconds (docs/benchmarks.md), so no write pays for it:
:class:`DenseIndex` keeps searching its exact flat index and hands a copy of the codes to a
:class:`GraphBuild`, which the backend's background worker (``core/background.py``) adds to a
graph of its own (FAISS releases the GIL while it works); nothing else touches that graph until
the round is done. The index adopts the graph at its next call (an add, a remove, a search
or a save): what was removed since is tombstoned, and what was added since is inserted into the
graph right there when it is a few rows, else by another round of the same thread, which goes on
from the graph it built (each round has fewer rows to add than the last, unless writes outpace
it, and then the flat index keeps answering, exactly).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.background import EXITING, BackgroundWorker

__all__ = ["CodedRows", "GraphBuild", "codes_to_float32"]

CodedRows = tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]
"""Ids and a copy of their float16 codes."""

logger = logging.getLogger(__name__)

INLINE_GRAPH_MAX: Final = 1000
"""A graph of at most this many vectors (only below a lowered ``hnsw_threshold``: the default
is 50,000) is built in the caller's thread: a few tens of milliseconds, and deterministic."""
_BATCH: Final = 8192
"""Vectors decoded to float32 at a time for a graph add (12 MB at 384 dimensions)."""


def codes_to_float32(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """FAISS ``QT_fp16`` codes (float16, little-endian, one row a vector) as float32."""
    return np.ascontiguousarray(np.ascontiguousarray(codes).view("<f2").astype(np.float32))


class GraphBuild:
    """One round of a background graph build: add ``codes`` under ``ids`` to ``graph``.

    Args:
        graph: An ``IndexIDMap2`` over an ``IndexHNSWSQ`` that only this object touches until
            :attr:`done` is set (a new, empty one, or the graph of the previous round).
        covered: The ids already in ``graph``.
        ids: The ids to add.
        codes: Their float16 codes (a copy: the flat index goes on changing), or a function
            called when the round runs that returns the ids still there and a copy of their
            codes.
        keep: FAISS objects ``graph`` needs alive (an attached storage).
    """

    def __init__(
        self,
        graph: Any,
        covered: npt.NDArray[np.int64],
        ids: npt.NDArray[np.int64],
        codes: npt.NDArray[np.uint8] | Callable[[], CodedRows],
        keep: list[Any],
    ) -> None:
        self.graph = graph
        self._covered = covered
        self.keep = keep
        """FAISS objects :attr:`graph` points to without owning them (kept alive with it)."""
        self.ids = np.concatenate([covered, ids])
        """Every id of :attr:`graph` once the round is done."""
        self.error: Exception | None = None
        self.done = threading.Event()
        self.hurry = threading.Event()
        """Set by a caller that waits (``save()``): the next batches use every core."""
        self._work: tuple[npt.NDArray[np.int64], Any] | None = (ids, codes)
        self._background: BackgroundWorker | None = None

    def start(self, background: BackgroundWorker | None) -> None:
        """Start the round on ``background``, or here for a graph of few vectors (or none).

        A graph of at most :data:`INLINE_GRAPH_MAX` vectors is built in the caller's thread. At
        exit a round stops after its current batch: it loses only the graph (derived data).
        """
        if background is None or len(self.ids) <= INLINE_GRAPH_MAX:
            self._run()
            return
        self._background = background
        background.submit(self._run)

    def wait(self) -> None:
        """Block until the round is done."""
        self.done.wait()

    def _run(self) -> None:
        assert self._work is not None
        ids, codes = self._work
        self._work = None  # the copy of the codes goes as soon as the graph has them
        if callable(codes):  # copied here, on the worker: the write that started it did not
            ids, codes = codes()
            self.ids = np.concatenate([self._covered, ids])
        from workspace_tools.core.backends.embedded.dense_files import faiss_module

        faiss = faiss_module()
        cores = os.cpu_count() or 2
        background = self._background is not None and self._background.on_thread()
        try:
            for start in range(0, len(ids), _BATCH):
                if EXITING.is_set():
                    self.error = InterruptedError("the process is exiting")
                    return
                if background:
                    # Beside the writes, leave them a core (the setting is per calling thread:
                    # on the shared 2-core machine a second OpenMP thread only contended with
                    # them); once someone waits for the graph, use them all.
                    faiss.omp_set_num_threads(cores if self.hurry.is_set() else max(1, cores - 1))
                part = slice(start, start + _BATCH)
                self.graph.add_with_ids(codes_to_float32(codes[part]), ids[part])
        except Exception as exc:  # reported by the index that adopts it
            self.error = exc
            logger.warning("Building the HNSW graph failed; searching flat", exc_info=True)
        finally:
            self.done.set()
