"""Turn a ranked chunk into a :class:`SearchResult` with snippet, line range and headings."""

from __future__ import annotations

from typing import Any, Final

from workspace_tools.core.convert import locate_unit
from workspace_tools.core.store.database import ChunkFields
from workspace_tools.core.text.chunking import heading_path_at, is_markdown_heading
from workspace_tools.core.text.snippets import best_snippet
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.types import Chunk, LineRange, SearchResult

__all__ = ["ChunkFields", "build_result", "snippet_lines"]

_UNIT_KEYS: Final = ("page", "slide", "sheet")
"""Metadata keys of a rich document's unit (``convert/_documents.py`` ``locate_unit``)."""
_UNIT_MARKS: Final = ("\n<!-- page ", "\n## Slide ", "\n## Sheet: ")
"""A unit starting after a chunk's first line."""


def snippet_lines(chunk: Chunk, first: int, last: int) -> LineRange:
    """Source line range of chunk lines ``first..last`` (0-based, inclusive)."""
    start = min(chunk.start_line + first, chunk.end_line)
    end = min(chunk.start_line + last, chunk.end_line)
    return LineRange(start, max(start, end))


def build_result(
    chunk: Chunk | ChunkFields,
    score: float,
    details: dict[str, float],
    terms: list[str],
    tokenizer: Tokenizer,
) -> SearchResult:
    """A result for ``chunk``; its snippet (best window for ``terms``) is computed on access.

    ``chunk`` is a :class:`Chunk` or a snapshot payload's decoded fields (then the
    :class:`Chunk` is only made if the snippet, line range or headings are read).
    """
    cid, source, start, end = chunk.id, chunk.source_id, chunk.start_line, chunk.end_line
    metadata, text = chunk.metadata, chunk.text

    def make_chunk() -> Chunk:
        return chunk if isinstance(chunk, Chunk) else chunk.chunk()

    def resolve() -> tuple[str, LineRange | None, tuple[str, ...]]:
        made = make_chunk()
        snippet = best_snippet(made.text, terms, tokenizer)
        headings = made.headings
        if made.metadata.get("format") == "markdown" or made.headings:
            lines = made.text.split("\n")
            skip_first = bool(made.headings) and is_markdown_heading(lines[0]) is not None
            headings = heading_path_at(
                lines,
                snippet.first_line + 1,
                start=made.headings,
                start_levels=made.heading_levels,
                skip_first=skip_first,
            )
        return snippet.text, snippet_lines(made, snippet.first_line, snippet.last_line), headings

    extra: dict[str, Any] = {}
    resolved: dict[str, Any] = {"resolver": resolve}
    unit_key = next((key for key in _UNIT_KEYS if key in metadata), None)
    if unit_key is not None and any(mark in text for mark in _UNIT_MARKS):
        # The chunk spans units (a page break inside it): the hit's unit is the one in force at
        # the snippet, which needs the snippet now.
        snippet_text, lines, headings = resolve()
        resolved = {"snippet": snippet_text, "line_range": lines, "headings": headings}
        if lines is not None:
            inside = locate_unit(text, lines.start - start + 1).get(unit_key)
            if inside is not None and inside != metadata[unit_key]:
                extra = {unit_key: inside, f"chunk_{unit_key}": metadata[unit_key]}
    return SearchResult(
        id=cid,
        content=text,
        score=score,
        metadata={
            **metadata,
            **extra,
            "source_id": source,
            "chunk_start_line": start,
            "chunk_end_line": end,
        },
        score_details=details,
        **resolved,
    )
