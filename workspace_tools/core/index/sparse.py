"""SparseIndex: BM25 over pre-tokenized documents, on bm25s (an immutable score matrix)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.index.bm25_build import make_bm25

__all__ = ["BM25_METHODS", "QUERY_TF_RULES", "BM25Config", "SparseIndex", "query_tf_weights"]

logger = logging.getLogger(__name__)

BM25_METHODS: Final[tuple[str, ...]] = ("lucene", "robertson", "atire", "bm25l", "bm25+")
"""The bm25s scoring variants :attr:`BM25Config.method` may name."""
QUERY_TF_RULES: Final[tuple[str, ...]] = ("saturated", "count", "distinct")
"""How often a repeated query term counts; see :func:`query_tf_weights`."""
_K3_TERMS_PER_UNIT: Final = 4.0
"""The ``saturated`` rule's k3 is the number of distinct query terms over this."""
_BLOCK_ROWS: Final = 64
"""Shortest block for :func:`top_positive`'s lower bound (shorter: no bound, rank every match)."""
_SORT_ALL: Final = 256
"""Up to this many candidates :func:`top_positive` sorts them all (cheaper than selecting)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BM25Config:
    """BM25 parameters. Stored in the index manifest."""

    k1: float = 1.35
    """Term-frequency saturation (chosen with ``b`` and ``query_tf`` on four collections)."""
    b: float = 0.6
    """Length normalisation; see docs/benchmarks.md, "Defaults across collections"."""
    method: str = "lucene"
    """bm25s scoring variant: ``lucene``, ``robertson``, ``atire``, ``bm25l`` or ``bm25+``."""
    query_tf: str = "saturated"
    """How a repeated query term counts (see :func:`query_tf_weights`); not in the manifest."""

    def __post_init__(self) -> None:
        if self.k1 < 0 or not 0 <= self.b <= 1:
            msg = f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}."
            raise ValueError(msg)
        if self.method not in BM25_METHODS:
            msg = f"Unknown BM25 method {self.method!r}. Use one of: {', '.join(BM25_METHODS)}."
            raise ValueError(msg)
        if self.query_tf not in QUERY_TF_RULES:
            msg = (
                f"Unknown query_tf rule {self.query_tf!r}. Use one of: {', '.join(QUERY_TF_RULES)}."
            )
            raise ValueError(msg)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form for the manifest (the settings the saved matrix depends on)."""
        return {"k1": self.k1, "b": self.b, "method": self.method}


def query_tf_weights(counts: Sequence[int], rule: str) -> npt.NDArray[np.float32]:
    """Weight of each distinct query term from how often it occurs in the query.

    ``saturated``: ``(k3 + 1) n / (k3 + n)`` with ``k3 = distinct terms / 4`` (see
    docs/benchmarks.md); ``count``: ``n``, like bm25s and Lucene; ``distinct``: 1.
    """
    values = np.asarray(counts, dtype=np.float32)
    if rule == "count":
        return values
    if rule == "distinct":
        return np.ones_like(values)
    if rule != "saturated":
        msg = f"Unknown query_tf rule {rule!r}. Use one of: {', '.join(QUERY_TF_RULES)}."
        raise ValueError(msg)
    k3 = np.float32(len(values) / _K3_TERMS_PER_UNIT)
    return np.asarray((k3 + 1) * values / (k3 + values), dtype=np.float32)


class SparseIndex:
    """BM25 scores for a fixed list of tokenized documents."""

    def __init__(self, config: BM25Config | None = None) -> None:
        self.config = config or BM25Config()
        self._retriever: Any = None
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def build(self, documents: Sequence[Sequence[str]]) -> None:
        """Index the token lists; document ``i`` is row ``i`` of every score array."""
        self._size = len(documents)
        if not documents:
            self._retriever = None
            return
        retriever = self._new_retriever()
        retriever.index([list(doc) for doc in documents], show_progress=False)
        self._retriever = retriever

    def build_ids(self, documents: Sequence[Sequence[int]], vocab: dict[str, int]) -> None:
        """Index documents given as term ids of ``vocab`` (faster than :meth:`build`)."""
        self._size = len(documents)
        if not documents:
            self._retriever = None
            return
        retriever = self._new_retriever()
        vocab_copy = dict(vocab) if vocab else {"": 0}
        retriever.index((documents, vocab_copy), show_progress=False)
        self._retriever = retriever

    def _new_retriever(self) -> Any:
        cfg = self.config
        return make_bm25(k1=cfg.k1, b=cfg.b, method=cfg.method)

    def scores_ids(
        self, ids: Sequence[int], weights: Sequence[float] | None = None
    ) -> npt.NDArray[np.float32]:
        """BM25 score of every document for distinct term ids, each scaled by its ``weights``."""
        if self._retriever is None or self._size == 0:
            return np.zeros(self._size, dtype=np.float32)
        limit = len(self._retriever.scores["indptr"]) - 1
        weight_of = dict(zip(ids, weights, strict=True)) if weights is not None else {}
        known = [i for i in dict.fromkeys(ids) if 0 <= i < limit]
        if not known:
            return np.zeros(self._size, dtype=np.float32)
        if not weight_of or all(weight_of[i] == 1 for i in known):
            return np.asarray(self._retriever.get_scores_from_ids(known), dtype=np.float32)
        return self._weighted_scores(known, [weight_of[i] for i in known])

    def _weighted_scores(self, ids: list[int], weights: list[float]) -> npt.NDArray[np.float32]:
        matrix = self._retriever.scores
        indptr, indices, data = matrix["indptr"], matrix["indices"], matrix["data"]
        rows = [indices[indptr[i] : indptr[i + 1]] for i in ids]
        values = [
            data[indptr[i] : indptr[i + 1]] * np.float32(w)
            for i, w in zip(ids, weights, strict=True)
        ]
        return np.bincount(
            np.concatenate(rows), weights=np.concatenate(values), minlength=self._size
        ).astype(np.float32)

    def vocabulary(self) -> list[str]:
        """Every term in the index."""
        if self._retriever is None:
            return []
        return [t for t in self._retriever.vocab_dict if t]

    def scores(self, terms: Sequence[str]) -> npt.NDArray[np.float32]:
        """BM25 score of every document for the (distinct) query terms."""
        if self._retriever is None or self._size == 0:
            return np.zeros(self._size, dtype=np.float32)
        vocab = self._retriever.vocab_dict
        ids = [vocab[t] for t in dict.fromkeys(terms) if t in vocab]
        if not ids:
            return np.zeros(self._size, dtype=np.float32)
        return np.asarray(self._retriever.get_scores_from_ids(ids), dtype=np.float32)

    def save(self, directory: Path) -> None:
        """Write the bm25s index (no pickle) into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "sparse.json").write_text(json.dumps({"size": self._size}))
        if self._retriever is not None:
            self._retriever.save(str(directory / "bm25s"), allow_pickle=False)

    @classmethod
    def load(cls, directory: Path, *, config: BM25Config) -> SparseIndex | None:
        """Read an index written by :meth:`save`; ``None`` when it is absent or unreadable."""
        import bm25s

        index = cls(config)
        try:
            index._size = int(json.loads((directory / "sparse.json").read_text())["size"])
            if index._size:
                index._retriever = bm25s.BM25.load(str(directory / "bm25s"), mmap=False)
        except (OSError, ValueError, KeyError, EOFError) as exc:
            logger.warning("Rebuilding the BM25 index: the saved one is unreadable (%s)", exc)
            return None
        return index


def top_positive(scores: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
    """Indices and values of the ``k`` largest positive scores, best first (ties: lower index)."""
    if k <= 0 or scores.size == 0:
        return []
    blocks = scores.size // k
    bound = np.float32(0)
    if blocks >= _BLOCK_ROWS:
        bound = scores[: k * blocks].reshape(k, blocks).max(axis=1).min()
    rows = np.flatnonzero(scores >= bound) if bound > 0 else np.flatnonzero(scores > 0)
    if rows.size == 0:
        return []
    values = scores[rows]
    if rows.size > max(k, _SORT_ALL):  # many ties at the bound: keep k first
        kth = np.sort(values)[rows.size - k]  # the k-th largest
        above = np.flatnonzero(values > kth)
        tied = np.flatnonzero(values == kth)[: k - above.size]  # the lowest rows among ties
        chosen = np.concatenate([above, tied])
        rows, values = rows[chosen], values[chosen]
    order = np.lexsort((rows, -values))[:k].tolist()
    rows_list, values_list = rows.tolist(), values.tolist()
    return [(rows_list[i], values_list[i]) for i in order]
