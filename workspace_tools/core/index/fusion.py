"""Hybrid fusion of BM25 and vector results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["RRF_K", "FusedHit", "reciprocal_rank_fusion", "weighted_fusion"]

RRF_K: Final = 60
"""Constant of reciprocal rank fusion (Cormack et al.)."""


@dataclass(frozen=True, slots=True)
class FusedHit:
    """A fused hit with the raw scores and ranks behind it."""

    key: int
    score: float
    bm25: float | None
    vector: float | None
    bm25_rank: int | None
    vector_rank: int | None


def _check_weight(vector_weight: float) -> None:
    if not 0.0 <= vector_weight <= 1.0:
        msg = f"vector_weight must be between 0 and 1, got {vector_weight}."
        raise ValueError(msg)


def weighted_fusion(
    bm25: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    *,
    vector_weight: float = 0.5,
) -> list[FusedHit]:
    """Mastra's rule: ``w * vector + (1 - w) * minmax(bm25)``, missing side counts 0.

    BM25 scores are min-max normalised over the candidate pool; when they are all equal (one
    hit included) each becomes 1.
    """
    _check_weight(vector_weight)
    bm25_map = dict(bm25)
    vec_map = dict(vector)
    norm: dict[int, float] = {}
    if bm25_map:
        low, high = min(bm25_map.values()), max(bm25_map.values())
        span = high - low
        norm = {k: (1.0 if span == 0 else (v - low) / span) for k, v in bm25_map.items()}
    return _combine(
        bm25,
        vector,
        lambda key: (
            vector_weight * vec_map.get(key, 0.0) + (1.0 - vector_weight) * norm.get(key, 0.0)
        ),
    )


def reciprocal_rank_fusion(
    bm25: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    *,
    vector_weight: float = 0.5,
    k: int = RRF_K,
) -> list[FusedHit]:
    """Weighted RRF: ``2 * (w / (k + rank_vec) + (1 - w) / (k + rank_bm25))``, ranks from 1.

    The factor 2 makes equal weights give the textbook ``sum 1 / (k + rank)``.
    """
    _check_weight(vector_weight)
    bm25_rank = {key: rank for rank, (key, _) in enumerate(bm25, start=1)}
    vec_rank = {key: rank for rank, (key, _) in enumerate(vector, start=1)}

    def score(key: int) -> float:
        total = 0.0
        if key in vec_rank:
            total += vector_weight / (k + vec_rank[key])
        if key in bm25_rank:
            total += (1.0 - vector_weight) / (k + bm25_rank[key])
        return 2.0 * total

    return _combine(bm25, vector, score)


def _combine(
    bm25: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    score: Callable[[int], float],
) -> list[FusedHit]:
    bm25_map = dict(bm25)
    vec_map = dict(vector)
    bm25_rank = {key: rank for rank, (key, _) in enumerate(bm25, start=1)}
    vec_rank = {key: rank for rank, (key, _) in enumerate(vector, start=1)}
    keys = list(dict.fromkeys([k for k, _ in vector] + [k for k, _ in bm25]))
    hits = [
        FusedHit(
            key=key,
            score=float(score(key)),
            bm25=bm25_map.get(key),
            vector=vec_map.get(key),
            bm25_rank=bm25_rank.get(key),
            vector_rank=vec_rank.get(key),
        )
        for key in keys
    ]
    hits.sort(key=lambda h: (-h.score, h.key))
    return hits
