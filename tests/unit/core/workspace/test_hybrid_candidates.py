"""Hybrid search fuses a pool of candidates larger than ``top_k`` from each side.

The document that answers best overall is often first on neither side: here ``docC`` is second
for BM25 and second for vectors, and first once both are fused. A hybrid search that fetched only
``top_k`` candidates per side would never see it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from workspace_tools.core.workspace import Workspace

_VECTORS = {
    "docA": (0.0, 1.0),  # BM25's best, unrelated in meaning
    "docB": (1.0, 0.0),  # the vector side's best, no query word
    "docC": (0.9, 0.436),  # second on both sides
    "docD": (0.0, -1.0),  # a weak BM25 match, far in meaning
}
_QUERY_VECTOR = (1.0, 0.0)


class TableEmbedder:
    """Vectors chosen per document (by the id word in its text); any other text is the query."""

    model_id = "table-2d"
    dimension = 2
    max_batch_size = 16

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = []
        for text in texts:
            key = next((k for k in _VECTORS if k in text), None)
            rows.append(_VECTORS[key] if key else _QUERY_VECTOR)
        out = np.asarray(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _workspace(tmp_path: Path) -> Workspace:
    ws = Workspace(
        tmp_path, embedder=TableEmbedder(), fusion="weighted", vector_weight=0.5, autosave=False
    )
    ws.index_many(
        [
            ("a.txt", "docA apple apple apple banana"),
            ("b.txt", "docB cherry"),
            ("c.txt", "docC apple cherry words words"),
            ("d.txt", "docD apple " + "filler " * 40),
        ]
    )
    return ws


def test_the_best_fused_hit_is_first_on_neither_side(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert [r.id for r in ws.search("apple", mode="bm25", top_k=2)] == ["a.txt", "c.txt"]
    assert [r.id for r in ws.search("apple", mode="vector", top_k=2)] == ["b.txt", "c.txt"]


def test_hybrid_top_1_finds_it_by_over_fetching(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    assert [r.id for r in ws.search("apple", mode="hybrid", top_k=1)] == ["c.txt"]
    full = [r.id for r in ws.search("apple", mode="hybrid", top_k=4)]
    assert full[0] == "c.txt"
