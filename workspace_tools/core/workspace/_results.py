"""Turn a ranked chunk into a :class:`SearchResult` with snippet, line range and headings."""

from __future__ import annotations

from workspace_tools.core.text.chunking import heading_path_at, is_markdown_heading
from workspace_tools.core.text.snippets import best_snippet
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.types import Chunk, LineRange, SearchResult

__all__ = ["build_result", "snippet_lines"]


def snippet_lines(chunk: Chunk, first: int, last: int) -> LineRange:
    """Source line range of chunk lines ``first..last`` (0-based, inclusive)."""
    start = min(chunk.start_line + first, chunk.end_line)
    end = min(chunk.start_line + last, chunk.end_line)
    return LineRange(start, max(start, end))


def build_result(
    chunk: Chunk,
    score: float,
    details: dict[str, float],
    terms: list[str],
    tokenizer: Tokenizer,
) -> SearchResult:
    """A result for ``chunk``; its snippet (best window for ``terms``) is computed on access."""

    def resolve() -> tuple[str, LineRange | None, tuple[str, ...]]:
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

    metadata = {
        **chunk.metadata,
        "source_id": chunk.source_id,
        "chunk_start_line": chunk.start_line,
        "chunk_end_line": chunk.end_line,
    }
    return SearchResult(
        id=chunk.id,
        content=chunk.text,
        score=score,
        metadata=metadata,
        score_details=details,
        resolver=resolve,
    )
