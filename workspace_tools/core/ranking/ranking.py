"""Search modes, metadata pre-filters and the fusion of BM25 and vector hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from workspace_tools.core.errors import SearchModeError
from workspace_tools.core.ranking.fusion import FusedHit, fusion_rule

__all__ = ["MODES", "SearchMode", "fuse", "resolve_mode"]

SearchMode = Literal["bm25", "vector", "hybrid"]
MODES: Final[tuple[str, ...]] = ("bm25", "vector", "hybrid")


def resolve_mode(mode: str | None, available: Sequence[str]) -> str:
    """The mode to run: ``mode`` when available, else a :class:`SearchModeError` naming them."""
    if mode is None:
        return "hybrid" if "hybrid" in available else available[0]
    if mode not in MODES:
        msg = f"Unknown search mode {mode!r}. Use one of: {', '.join(available)}."
        raise SearchModeError(msg)
    if mode not in available:
        hint = (
            "Pass an embedder to enable vector search."
            if mode != "bm25"
            else "Open it with bm25=True."
        )
        msg = (
            f"Search mode {mode!r} is not available in this workspace; configured modes: "
            f"{', '.join(available)}. {hint}"
        )
        raise SearchModeError(msg)
    return mode


def fuse(
    mode: str,
    bm25_hits: Sequence[tuple[int, float]],
    vector_hits: Sequence[tuple[int, float]],
    *,
    k: int,
    fusion: str,
    vector_weight: float,
) -> list[FusedHit]:
    """The ``k`` best hits: one side's (without ranks), or both sides fused."""
    if mode == "bm25":
        return [FusedHit(key, s, s, None, None, None) for key, s in bm25_hits[:k]]
    if mode == "vector":
        return [FusedHit(key, s, None, s, None, None) for key, s in vector_hits[:k]]
    return fusion_rule(fusion)(bm25_hits, vector_hits, vector_weight=vector_weight)[:k]
