"""Value objects shared by the core modules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Chunk",
    "LineRange",
    "SearchResult",
    "SkippedFile",
    "SyncReport",
]


@dataclass(frozen=True, slots=True)
class LineRange:
    """A 1-based, inclusive range of lines in a source."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 1 or self.end < self.start:
            msg = f"Invalid line range {self.start}-{self.end}: need 1 <= start <= end."
            raise ValueError(msg)

    def __str__(self) -> str:
        return f"{self.start}-{self.end}"


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a source, the unit that is indexed and returned by search."""

    id: str
    """Chunk id: the source id, or ``<source>#chunk-<n>`` when the source has several chunks."""
    source_id: str
    """Id of the file or string the chunk was cut from."""
    text: str
    """The chunk's text."""
    start_line: int
    """1-based line of the source on which the chunk starts."""
    end_line: int
    """1-based line of the source on which the chunk ends (inclusive)."""
    headings: tuple[str, ...] = ()
    """Markdown heading path in force at the start of the chunk, outermost first."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """User metadata of the source plus what conversion recorded (page, slide, sheet...)."""


@dataclass(slots=True)
class SearchResult:
    """One ranked hit.

    ``snippet`` and ``line_range`` point at the best-matching window of the chunk, not at the
    first and last line that mention any query word.
    """

    id: str
    """Chunk id (``path`` or ``path#chunk-N``)."""
    content: str
    """The whole chunk text."""
    score: float
    """Score in the mode used: raw BM25, cosine similarity, or the fused score (see docs)."""
    line_range: LineRange | None
    """Lines of the source covered by the snippet (1-based, inclusive)."""
    snippet: str
    """A short window of the chunk with query hits marked ``<<like this>>``."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Source metadata, ``source_id``, ``headings`` and chunk line range."""
    score_details: dict[str, float] = field(default_factory=dict)
    """Raw per-mode scores (``bm25``, ``vector``) and ranks behind the final score."""

    @property
    def source_id(self) -> str:
        """Id of the file or string this hit comes from."""
        return str(self.metadata.get("source_id", self.id))

    @property
    def section_heading(self) -> str | None:
        """Innermost Markdown heading in force at the snippet, if any."""
        headings = self.metadata.get("headings") or []
        return str(headings[-1]) if headings else None


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file that a scan or sync left out, and why."""

    path: str
    reason: str


@dataclass(slots=True)
class SyncReport:
    """What one ``Workspace.sync()`` or ``index_many()`` did."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    chunks_indexed: int = 0
    chunks_embedded: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    formats: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        """True when the index content changed."""
        return bool(self.added or self.updated or self.removed)

    def skipped_by_reason(self) -> dict[str, int]:
        """Count skipped files per reason."""
        counts: dict[str, int] = {}
        for item in self.skipped:
            key = item.reason.split(":", 1)[0]
            counts[key] = counts.get(key, 0) + 1
        return counts

    def summary(self) -> str:
        """One line a person can read."""
        parts = [
            f"{len(self.added)} added",
            f"{len(self.updated)} updated",
            f"{len(self.removed)} removed",
            f"{self.unchanged} unchanged",
            f"{self.chunks_indexed} chunks indexed",
            f"{self.chunks_embedded} embedded",
        ]
        if self.skipped:
            reasons = ", ".join(f"{k}: {v}" for k, v in sorted(self.skipped_by_reason().items()))
            parts.append(f"{len(self.skipped)} skipped ({reasons})")
        return ", ".join(parts) + f" in {self.seconds:.2f}s"
