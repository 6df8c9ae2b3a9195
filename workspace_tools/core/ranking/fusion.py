"""Hybrid fusion of BM25 and vector results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_FUSION",
    "FUSION_RULES",
    "RRF_K",
    "FusedHit",
    "fusion_rule",
    "minmax_fusion",
    "reciprocal_rank_fusion",
    "spread_fusion",
    "weighted_fusion",
    "zscore_fusion",
]

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

    def details(self) -> dict[str, float]:
        """The raw scores and ranks behind :attr:`score` (``SearchResult.score_details``)."""
        details: dict[str, float] = {}
        if self.bm25 is not None:
            details["bm25"] = self.bm25
            if self.bm25_rank is not None:
                details["bm25_rank"] = float(self.bm25_rank)
        if self.vector is not None:
            details["vector"] = self.vector
            if self.vector_rank is not None:
                details["vector_rank"] = float(self.vector_rank)
        return details


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
    """Mastra's rule: ``w * vector + (1 - w) * minmax(bm25)``, missing side counts 0."""
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
    """Weighted RRF: ``2 * (w / (k + rank_vec) + (1 - w) / (k + rank_bm25))``, ranks from 1."""
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


def _minmax(scores: dict[int, float]) -> dict[int, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {k: (1.0 if span == 0 else (v - low) / span) for k, v in scores.items()}


def _zscores(scores: dict[int, float]) -> tuple[dict[int, float], float]:
    """Standard scores over the candidate pool, and the score a key outside the pool gets."""
    if not scores:
        return {}, 0.0
    values = list(scores.values())
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    if std == 0:
        return dict.fromkeys(scores, 0.0), 0.0
    z = {k: (v - mean) / std for k, v in scores.items()}
    return z, min(z.values())


def minmax_fusion(
    bm25: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    *,
    vector_weight: float = 0.5,
) -> list[FusedHit]:
    """Both sides min-max normalised over their pools, then ``w * vec + (1 - w) * bm25``."""
    _check_weight(vector_weight)
    vec, lex = _minmax(dict(vector)), _minmax(dict(bm25))
    return _combine(
        bm25,
        vector,
        lambda key: vector_weight * vec.get(key, 0.0) + (1 - vector_weight) * lex.get(key, 0.0),
    )


def zscore_fusion(
    bm25: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    *,
    vector_weight: float = 0.5,
) -> list[FusedHit]:
    """Each side as standard scores over its pool, then weighted (missing: the side's lowest)."""
    _check_weight(vector_weight)
    vec, vec_floor = _zscores(dict(vector))
    lex, lex_floor = _zscores(dict(bm25))
    return _combine(
        bm25,
        vector,
        lambda key: (
            vector_weight * vec.get(key, vec_floor) + (1 - vector_weight) * lex.get(key, lex_floor)
        ),
    )


def spread_fusion(
    bm25: Sequence[tuple[int, float]],
    vector: Sequence[tuple[int, float]],
    *,
    vector_weight: float = 0.5,
) -> list[FusedHit]:
    """Standard scores as :func:`zscore_fusion`, the weight scaled by each side's top z-score."""
    _check_weight(vector_weight)
    vec, vec_floor = _zscores(dict(vector))
    lex, lex_floor = _zscores(dict(bm25))
    vec_peak = max(vec.values(), default=0.0)
    lex_peak = max(lex.values(), default=0.0)
    weight = vector_weight
    if vec_peak > 0 and lex_peak > 0:
        vec_part, lex_part = vector_weight * vec_peak, (1 - vector_weight) * lex_peak
        weight = vec_part / (vec_part + lex_part)
    return _combine(
        bm25,
        vector,
        lambda key: weight * vec.get(key, vec_floor) + (1 - weight) * lex.get(key, lex_floor),
    )


FUSION_RULES: Final[dict[str, Callable[..., list[FusedHit]]]] = {
    "weighted": weighted_fusion,
    "rrf": reciprocal_rank_fusion,
    "minmax": minmax_fusion,
    "zscore": zscore_fusion,
    "spread": spread_fusion,
}
"""Every hybrid fusion rule by name (``Workspace(fusion=...)``)."""


DEFAULT_FUSION: Final = "zscore"
"""The rule a workspace uses unless told otherwise (measured: docs/benchmarks.md)."""


def fusion_rule(name: str) -> Callable[..., list[FusedHit]]:
    """The fusion function called ``name``.

    Raises:
        ValueError: an unknown name, listing the known ones.
    """
    rule = FUSION_RULES.get(name)
    if rule is None:
        msg = f"Unknown fusion rule {name!r}. Use one of: {', '.join(FUSION_RULES)}."
        raise ValueError(msg)
    return rule


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
