"""Turn a ranked chunk into a :class:`SearchResult` with snippet, line range and headings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from workspace_tools.core.convert import locate_unit
from workspace_tools.core.store.snapshot import ChunkFields
from workspace_tools.core.text.chunking import heading_path_at, is_markdown_heading
from workspace_tools.core.text.snippets import best_snippet
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.types import Chunk, LineRange, SearchResult

__all__ = ["ChunkFields", "build_result", "chunk_of_fields", "metadata_of", "snippet_lines"]

_UNIT_KEYS: Final = ("page", "slide", "sheet")
"""Metadata keys of a rich document's unit (``convert/_documents.py`` ``locate_unit``)."""
_UNIT_MARKS: Final = ("\n<!-- page ", "\n## Slide ", "\n## Sheet: ")
"""A unit starting after a chunk's first line."""


def chunk_of_fields(fields: ChunkFields) -> Chunk:
    """The :class:`Chunk` of decoded payload fields."""
    cid, source, start, end, headings, levels, metadata, text = fields
    return Chunk(
        id=cid,
        source_id=source,
        text=text,
        start_line=start,
        end_line=end,
        headings=headings,
        heading_levels=levels,
        metadata=metadata,
    )


def metadata_of(chunk: Chunk | ChunkFields) -> Mapping[str, Any]:
    """The metadata of a :class:`Chunk` or of decoded payload fields."""
    return chunk.metadata if isinstance(chunk, Chunk) else chunk[6]


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
    make_chunk: Callable[[], Chunk]
    if isinstance(chunk, Chunk):
        made = chunk
        cid, source, start, end, metadata, text = (
            made.id,
            made.source_id,
            made.start_line,
            made.end_line,
            made.metadata,
            made.text,
        )

        def make_chunk() -> Chunk:
            return made
    else:
        fields = chunk
        cid, source, start, end, _headings, _levels, metadata, text = fields

        def make_chunk() -> Chunk:
            return chunk_of_fields(fields)

    def resolve() -> tuple[str, LineRange | None, tuple[str, ...]]:
        chunk = make_chunk()
        snippet = best_snippet(chunk.text, terms, tokenizer)
        headings = chunk.headings
        if chunk.metadata.get("format") == "markdown" or chunk.headings:
            lines = chunk.text.split("\n")
            skip_first = bool(chunk.headings) and is_markdown_heading(lines[0]) is not None
            headings = heading_path_at(
                lines,
                snippet.first_line + 1,
                start=chunk.headings,
                start_levels=chunk.heading_levels,
                skip_first=skip_first,
            )
        return snippet.text, snippet_lines(chunk, snippet.first_line, snippet.last_line), headings

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
