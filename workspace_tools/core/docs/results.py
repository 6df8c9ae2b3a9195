"""The docs index's value objects: field weights, a ranked section, the stats of a build."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["DocsHit", "DocsStats", "FieldWeights"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldWeights:
    """How much a query term found in each field counts."""

    title: float = 5.0
    description: float = 3.0
    """Page description (frontmatter; without one, the page's first paragraph)."""
    heading: float = 2.0
    content: float = 1.0

    def __post_init__(self) -> None:
        values = (self.title, self.description, self.heading, self.content)
        if min(values) < 0 or max(values) == 0:
            msg = f"Field weights must be >= 0 and not all 0, got {values}."
            raise ValueError(msg)


@dataclass(frozen=True, slots=True, kw_only=True)
class DocsHit:
    """One ranked section."""

    path: str
    """Page path relative to the docs root."""
    title: str
    heading: str
    """Section heading (``""`` for text before the first heading)."""
    snippet: str
    """Best lines of the section, query hits marked ``<<like this>>``."""
    score: float
    """Weighted per-field BM25 score times the page-type factor (hybrid: fused); higher: better."""
    line: int
    """1-based file line of the snippet's first line."""

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "path": self.path,
            "title": self.title,
            "heading": self.heading,
            "snippet": self.snippet,
            "score": self.score,
            "line": self.line,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class DocsStats:
    """What one build indexed."""

    pages: int
    sections: int
    seconds: float
    """Wall time of the build."""
    build: int
    """Build number of this index object, from 1."""
