"""Line-based chunking that prefers Markdown section boundaries.

Whole lines up to ``max_chars`` with overlap (Mastra's rule); Markdown also cuts at headings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from workspace_tools.core.types import Chunk

__all__ = ["CODE_RULES", "ChunkingConfig", "chunk_text", "heading_path_at", "is_markdown_heading"]

CODE_RULES: Final = 1
"""Version of the code-aware cutting rules (``code_chunks.py``), recorded with the index."""

_HEADING: Final = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE: Final = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkingConfig:
    """Chunk sizes. Stored in the index manifest."""

    max_chars: int = 4000
    """Largest chunk, in characters (joining newlines included)."""
    overlap_lines: int = 3
    """Lines repeated at the start of the next chunk when a section is split."""
    min_section_chars: int = 400
    """A heading (or code definition) starts a new chunk once the current one is this long."""
    code: bool | None = None
    """Cut source files at functions and classes (the ``code`` extra); ``None``: automatic."""

    def __post_init__(self) -> None:
        if self.max_chars < 16:
            msg = f"max_chars must be at least 16, got {self.max_chars}."
            raise ValueError(msg)
        if self.overlap_lines < 0:
            msg = f"overlap_lines must be >= 0, got {self.overlap_lines}."
            raise ValueError(msg)

    def to_dict(self) -> dict[str, int]:
        """Plain-JSON form for the manifest (``code``: the rules' version, when on)."""
        out = {
            "max_chars": self.max_chars,
            "overlap_lines": self.overlap_lines,
            "min_section_chars": self.min_section_chars,
        }
        return {**out, "code": CODE_RULES} if self.code else out


def is_markdown_heading(line: str) -> tuple[int, str] | None:
    """Return ``(level, text)`` when the line is an ATX Markdown heading."""
    match = _HEADING.match(line)
    if match is None:
        return None
    return len(match.group(1)), match.group(2).strip()


def chunk_text(
    text: str,
    *,
    source_id: str,
    config: ChunkingConfig | None = None,
    markdown: bool = False,
    metadata: Mapping[str, Any] | None = None,
) -> list[Chunk]:
    r"""Cut a source into chunks.

    Args:
        text: The whole source text (``\\n`` line ends).
        source_id: Id of the source; chunk ids are it, or ``source_id#chunk-<n>`` for several.
        config: Chunk sizes.
        markdown: Treat ``#`` lines outside code fences as headings.
        metadata: Metadata copied onto every chunk.

    Returns:
        The chunks in source order; an empty or blank text gives none.
    """
    cfg = config or ChunkingConfig()
    meta = dict(metadata or {})
    if not text.strip():
        return []
    if not markdown and len(text) <= cfg.max_chars:
        body = text[:-1] if text.endswith("\n") else text
        return [
            Chunk(
                id=source_id,
                source_id=source_id,
                text=body,
                start_line=1,
                end_line=body.count("\n") + 1,
                metadata=meta,
            )
        ]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    pieces: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if len(line) <= cfg.max_chars:
            pieces.append((number, line))
        else:
            pieces.extend(
                (number, line[i : i + cfg.max_chars]) for i in range(0, len(line), cfg.max_chars)
            )
    if markdown:
        paths, levels, heading_at = _heading_paths(pieces)
    else:
        paths, levels, heading_at = [()] * len(pieces), [()] * len(pieces), [False] * len(pieces)

    spans: list[tuple[int, int]] = []
    start, count = 0, len(pieces)
    while start < count:
        end, size, at_heading = start, 0, False
        while end < count:
            add = len(pieces[end][1]) + (1 if end > start else 0)
            if end > start and size + add > cfg.max_chars:
                break
            if end > start and heading_at[end] and size >= cfg.min_section_chars:
                at_heading = True
                break
            size += add
            end += 1
        spans.append((start, end))
        if end >= count:
            break
        overlap_start = end - cfg.overlap_lines
        start = end if at_heading or overlap_start <= start else overlap_start

    several = len(spans) > 1
    chunks = []
    for index, (first, stop) in enumerate(spans):
        body = "\n".join(piece for _, piece in pieces[first:stop])
        chunks.append(
            Chunk(
                id=f"{source_id}#chunk-{index}" if several else source_id,
                source_id=source_id,
                text=body,
                start_line=pieces[first][0],
                end_line=pieces[stop - 1][0],
                headings=paths[first],
                heading_levels=levels[first],
                metadata=meta,
            )
        )
    return chunks


def heading_path_at(
    lines: list[str],
    upto: int,
    *,
    start: tuple[str, ...] = (),
    start_levels: tuple[int, ...] = (),
    skip_first: bool = False,
) -> tuple[str, ...]:
    """Heading path after ``lines[:upto]`` from ``start`` (``skip_first``: ignore line 0)."""
    path = list(start)
    levels = list(start_levels) if len(start_levels) == len(start) else [0] * len(path)
    in_fence = False
    for line in lines[1 if skip_first else 0 : upto]:
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        heading = None if in_fence else is_markdown_heading(line)
        if heading is None:
            continue
        level, title = heading
        while levels and levels[-1] >= level:
            levels.pop()
            path.pop()
        levels.append(level)
        path.append(title)
    return tuple(path)


def _heading_paths(
    pieces: list[tuple[int, str]],
) -> tuple[list[tuple[str, ...]], list[tuple[int, ...]], list[bool]]:
    paths: list[tuple[str, ...]] = []
    levels: list[tuple[int, ...]] = []
    heading_at: list[bool] = []
    stack: list[tuple[int, str]] = []
    in_fence = False
    previous_line = 0
    for number, piece in pieces:
        is_heading = False
        if number != previous_line:  # only the first slice of a line can be a heading
            if _FENCE.match(piece):
                in_fence = not in_fence
            elif not in_fence:
                heading = is_markdown_heading(piece)
                if heading is not None:
                    level, title = heading
                    while stack and stack[-1][0] >= level:
                        stack.pop()
                    stack.append((level, title))
                    is_heading = True
        previous_line = number
        paths.append(tuple(title for _, title in stack))
        levels.append(tuple(level for level, _ in stack))
        heading_at.append(is_heading)
    return paths, levels, heading_at
