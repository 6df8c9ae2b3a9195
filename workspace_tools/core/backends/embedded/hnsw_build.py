"""An HNSW graph built on the background worker while the flat index answers (``dense.py``).

The index adopts a finished graph at its next call, tombstoning what was removed since and
inserting what was added (or starting another round for many rows).
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
"""A graph of at most this many vectors is built in the caller's thread (fast, deterministic)."""
_BATCH: Final = 8192
"""Vectors decoded to float32 at a time for a graph add."""


def codes_to_float32(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """FAISS ``QT_fp16`` codes (float16, little-endian, one row a vector) as float32."""
    return np.ascontiguousarray(np.ascontiguousarray(codes).view("<f2").astype(np.float32))


class GraphBuild:
    """One round of a background graph build: add ``codes`` under ``ids`` to ``graph``.

    Args:
        graph: An ``IndexIDMap2`` over an ``IndexHNSWSQ``, only this object's until :attr:`done`.
        covered: The ids already in ``graph``.
        ids: The ids to add.
        codes: Their float16 codes (a copy), or a function giving the ids still there and codes.
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
        """Start the round on ``background``, or here for a graph of few vectors (or none)."""
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
                    # Leave the writes a core (per calling thread); once someone waits, use all
                    faiss.omp_set_num_threads(cores if self.hurry.is_set() else max(1, cores - 1))
                part = slice(start, start + _BATCH)
                self.graph.add_with_ids(codes_to_float32(codes[part]), ids[part])
        except Exception as exc:  # reported by the index that adopts it
            self.error = exc
            logger.warning("Building the HNSW graph failed; searching flat", exc_info=True)
        finally:
            self.done.set()
