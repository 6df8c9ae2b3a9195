"""Value objects shared by the core modules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    start_line: int
    """1-based line of the source on which the chunk starts."""
    end_line: int
    """1-based line of the source on which the chunk ends (inclusive)."""
    headings: tuple[str, ...] = ()
    """Markdown heading path in force at the start of the chunk, outermost first."""
    heading_levels: tuple[int, ...] = ()
    """Levels (1-6) of ``headings``."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """User metadata of the source plus what conversion recorded (page, slide, sheet...)."""


class SearchResult:
    """One ranked hit (``snippet``, ``line_range``, ``headings``: the best window, made lazily)."""

    __slots__ = (
        "_headings",
        "_line_range",
        "_resolver",
        "_snippet",
        "content",
        "found_by",
        "id",
        "metadata",
        "score",
        "score_details",
    )

    def __init__(
        self,
        *,
        id: str,  # noqa: A002 - the public field name
        content: str,
        score: float,
        metadata: dict[str, Any] | None = None,
        score_details: dict[str, float] | None = None,
        snippet: str | None = None,
        line_range: LineRange | None = None,
        headings: tuple[str, ...] = (),
        resolver: Callable[[], tuple[str, LineRange | None, tuple[str, ...]]] | None = None,
        found_by: tuple[str, ...] = (),
    ) -> None:
        self.id = id
        """Chunk id (``path`` or ``path#chunk-N``)."""
        self.content = content
        """The whole chunk text."""
        self.score = score
        """Score in the mode used: raw BM25, cosine similarity, or the fused score (see docs)."""
        self.metadata: dict[str, Any] = metadata if metadata is not None else {}
        """Source metadata plus ``source_id``, ``format`` and the chunk's line span."""
        self.score_details: dict[str, float] = score_details if score_details is not None else {}
        """Raw per-mode scores (``bm25``, ``vector``) and ranks behind the final score."""
        self.found_by = found_by
        """The formulations that found this hit, when the search was given several."""
        self._snippet = snippet
        self._line_range = line_range
        self._headings = headings
        self._resolver = None if snippet is not None else resolver

    def _resolve(self) -> None:
        if self._resolver is not None:
            self._snippet, self._line_range, self._headings = self._resolver()
            self._resolver = None

    @property
    def snippet(self) -> str:
        """A short window of the chunk with query hits marked ``<<like this>>``."""
        self._resolve()
        return self._snippet if self._snippet is not None else self.content[:400]

    @property
    def line_range(self) -> LineRange | None:
        """Lines of the source covered by the snippet (1-based, inclusive)."""
        self._resolve()
        return self._line_range

    @property
    def headings(self) -> tuple[str, ...]:
        """Markdown heading path in force at the snippet, outermost first."""
        self._resolve()
        return self._headings

    @property
    def section_heading(self) -> str | None:
        """Innermost Markdown heading in force at the snippet, if any."""
        return self.headings[-1] if self.headings else None

    @property
    def source_id(self) -> str:
        """Id of the file or string this hit comes from."""
        return str(self.metadata.get("source_id", self.id))

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (snippet and line range resolved)."""
        line_range = self.line_range
        found = {"found_by": list(self.found_by)} if self.found_by else {}
        return {
            "id": self.id,
            "source_id": self.source_id,
            "score": self.score,
            "line_range": [line_range.start, line_range.end] if line_range else None,
            "snippet": self.snippet,
            "headings": list(self.headings),
            "metadata": self.metadata,
            "score_details": self.score_details,
            **found,
        }

    def __repr__(self) -> str:
        return f"SearchResult(id={self.id!r}, score={self.score:.4f}, line_range={self.line_range})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SearchResult):
            return NotImplemented
        return self.to_dict() == other.to_dict() and self.content == other.content

    __hash__ = None  # type: ignore[assignment]


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
    commits: int = 0
    """Write transactions the call committed (a sync commits in bounded batches)."""

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
