"""Dense vectors over docs sections, and their fusion with the weighted lexical ranking.

A :class:`~workspace_tools.core.docs.index.DocsIndex` given an embedder (the workspace's, or any
object with ``embed(texts)``) embeds one text per section: the page title, the section heading
and the section's text. Vectors are cached by the hash of that text, so a refresh embeds only
the sections that changed. At query time the lexical scores and the cosine similarities each
keep their best candidates, and a fusion rule of :mod:`workspace_tools.core.index.fusion` (by
default ``zscore``) merges the two pools.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.index.embedder import Embedder, embed_query, normalise
from workspace_tools.core.index.fusion import fusion_rule
from workspace_tools.core.text.hashing import text_hash

__all__ = ["HybridConfig", "SectionVectors", "fuse_scores", "section_text"]

MAX_SECTION_CHARS: Final = 2000
"""Characters of a section's text that are embedded (the model reads about 256 tokens)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HybridConfig:
    """How vectors and the lexical ranking are fused."""

    vector_weight: float = 0.5
    """Weight of the vector side (0: lexical only, 1: vectors only)."""
    fusion: str = "zscore"
    """A fusion rule of :data:`~workspace_tools.core.index.fusion.FUSION_RULES`."""
    pool: int = 100
    """Candidates each side brings to the fusion."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.vector_weight <= 1.0:
            msg = f"vector_weight must be between 0 and 1, got {self.vector_weight}."
            raise ValueError(msg)
        if self.pool < 1:
            msg = f"pool must be at least 1, got {self.pool}."
            raise ValueError(msg)
        fusion_rule(self.fusion)  # raises ValueError naming the known rules


def section_text(title: str, heading: str, text: str) -> str:
    """The text embedded for one section: page title, heading, then the section's text."""
    head = f"{title}: {heading}" if heading and heading != title else title
    body = " ".join(text.split())[:MAX_SECTION_CHARS]
    return f"{head}\n{body}" if body else head


class SectionVectors:
    """An embedder and a cache of section vectors by text hash."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache: dict[str, npt.NDArray[np.float32]] = {}
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """The embedder's model id."""
        return str(getattr(self.embedder, "model_id", type(self.embedder).__name__))

    def embed_sections(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit-length row per text; cached texts are not embedded again."""
        keys = [text_hash(t) for t in texts]
        with self._lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            vectors = normalise(
                np.asarray(self.embedder.embed([by_key[k] for k in missing]), dtype=np.float32)
            )
            with self._lock:
                self._cache.update(zip(missing, vectors, strict=True))
                live = set(keys)
                for stale in [k for k in self._cache if k not in live]:
                    del self._cache[stale]
        with self._lock:
            rows = [self._cache[k] for k in keys]
        if not rows:
            return np.zeros((0, 1), dtype=np.float32)
        return np.ascontiguousarray(np.stack(rows), dtype=np.float32)

    def query(self, text: str) -> npt.NDArray[np.float32]:
        """The unit-length vector of a query."""
        vector = np.asarray(embed_query(self.embedder, text), dtype=np.float32).reshape(1, -1)
        return np.asarray(normalise(vector)[0], dtype=np.float32)


def _top(scores: npt.NDArray[np.float32], pool: int) -> list[tuple[int, float]]:
    keep = np.flatnonzero(scores > 0)
    if len(keep) > pool:
        keep = keep[np.argpartition(-scores[keep], pool - 1)[:pool]]
    order = keep[np.argsort(-scores[keep], kind="stable")]
    return [(int(i), float(scores[i])) for i in order]


def fuse_scores(
    lexical: npt.NDArray[np.float32],
    cosine: npt.NDArray[np.float32],
    config: HybridConfig,
) -> npt.NDArray[np.float32]:
    """Fused section scores: positive for the fused candidates (best highest), 0 elsewhere.

    ``lexical`` and ``cosine`` hold one score per section (already weighed by page kind and
    zeroed outside the folder asked for). The fused scores are shifted so the weakest candidate
    stays above 0 and keeps its place.
    """
    rule = fusion_rule(config.fusion)
    fused = rule(
        _top(lexical, config.pool), _top(cosine, config.pool), vector_weight=config.vector_weight
    )
    out = np.zeros_like(lexical)
    if not fused:
        return out
    low = min(hit.score for hit in fused)
    for rank, hit in enumerate(fused):
        # keep the rule's order exactly (ties broken as the rule did), all above zero
        out[hit.key] = hit.score - low + 1e-6 * (len(fused) - rank)
    return out
