"""Several formulations of one search: check the list, fuse the rankings by RRF.

A hit's score is the sum over the formulations that found it of ``1 / (RRF_K + rank)``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.ranking.fusion import RRF_K

__all__ = ["MAX_QUERIES", "MultiHit", "check_queries", "fuse_rankings"]

MAX_QUERIES: Final = 5
"""Most formulations one search accepts."""

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class MultiHit(Generic[K]):
    """One fused hit: its key, fused score and which formulations found it."""

    key: K
    score: float
    found_by: tuple[int, ...]
    """Indices (into the formulations) of the rankings that hold the key, in order."""
    ranks: tuple[int, ...]
    """Its rank (from 1) in each of those rankings."""


def check_queries(query: object, *, max_chars: int) -> list[str]:
    """The formulations of ``query`` (a string or a list of strings), checked; blanks, repeats out.

    Raises:
        InvalidInputError: a bad type, an empty or too long list, or a too long formulation.
    """
    if isinstance(query, str):
        items: list[object] = [query]
    elif isinstance(query, Sequence) and not isinstance(query, bytes | bytearray):
        items = list(query)
        if not items:
            msg = "query is an empty list; give a string or a list of 1 to 5 strings."
            raise InvalidInputError(msg)
        if len(items) > MAX_QUERIES:
            msg = (
                f"query lists {len(items)} formulations; the limit is {MAX_QUERIES}. Keep the "
                "few that differ most, or search in several calls."
            )
            raise InvalidInputError(msg)
    else:
        msg = f"query must be a string or a list of strings, got {type(query).__name__}."
        raise InvalidInputError(msg)
    out: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str):
            msg = f"query[{index}] must be a string, got {type(item).__name__}."
            raise InvalidInputError(msg)
        if len(item) > max_chars:
            which = "The query" if isinstance(query, str) else f"query[{index}]"
            msg = (
                f"{which} is {len(item)} characters long; the limit is {max_chars}. "
                "Search with the key words or a short passage instead."
            )
            raise InvalidInputError(msg)
        if item.strip() and item.strip() not in {q.strip() for q in out}:
            out.append(item)
    return out


def fuse_rankings(rankings: Sequence[Sequence[K]], *, k: int = RRF_K) -> list[MultiHit[K]]:
    """Reciprocal rank fusion of several rankings (keys best first), best first (stable)."""
    scores: dict[K, float] = {}
    found: dict[K, list[tuple[int, int]]] = {}
    for which, ranking in enumerate(rankings):
        for rank, key in enumerate(ranking, start=1):
            if key in found and found[key][-1][0] == which:
                continue  # a key twice in one ranking counts once
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
            found.setdefault(key, []).append((which, rank))
    order = sorted(scores, key=lambda key: -scores[key])
    return [
        MultiHit(
            key=key,
            score=scores[key],
            found_by=tuple(w for w, _ in found[key]),
            ranks=tuple(r for _, r in found[key]),
        )
        for key in order
    ]
