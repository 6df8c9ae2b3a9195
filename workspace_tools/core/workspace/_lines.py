"""A page of a source's text by line range or chunk id (``Workspace.read``, ``workspace_read``).

Line numbers are those of the converted text (PDF, DOCX... as Markdown), the same numbers search
results and grep give. A page holds whole lines up to a character budget and says how many lines
follow, so a caller reads on with ``start_line=end_line + 1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from workspace_tools.core.convert import UNIT_FORMATS, locate_unit
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.types import Chunk

__all__ = [
    "DEFAULT_READ_CHARS",
    "MAX_READ_CHARS",
    "MIN_READ_CHARS",
    "TextPage",
    "page_of_lines",
    "text_of_chunks",
]

DEFAULT_READ_CHARS: Final = 8000
"""Characters of one page by default (as ``docs_get_page``)."""
MIN_READ_CHARS: Final = 200
MAX_READ_CHARS: Final = 100_000


@dataclass(frozen=True, slots=True)
class TextPage:
    """Lines ``start_line..end_line`` of a source (1-based, inclusive)."""

    source_id: str
    text: str
    """The lines, joined by ``\\n`` (a single line longer than the budget is cut)."""
    start_line: int
    end_line: int
    total_lines: int
    more_lines: int
    """Lines after ``end_line`` up to the end of the source."""
    truncated: bool
    """The character budget stopped the page before the requested last line."""
    format: str
    chunk_id: str | None = None
    units: dict[str, Any] = field(default_factory=dict)
    """Page, slide or sheet of ``start_line`` (and ``last_page``... of ``end_line``)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "source_id": self.source_id,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "total_lines": self.total_lines,
            "more_lines": self.more_lines,
            "truncated": self.truncated,
            "format": self.format,
            "chunk_id": self.chunk_id,
            **self.units,
            "text": self.text,
        }


def text_of_chunks(chunks: list[Chunk]) -> str:
    """The text of an indexed string, rebuilt line by line from its (overlapping) chunks."""
    lines: dict[int, str] = {}
    for chunk in chunks:
        for offset, line in enumerate(chunk.text.split("\n")):
            lines.setdefault(chunk.start_line + offset, line)
    last = max(lines, default=0)
    return "\n".join(lines.get(n, "") for n in range(1, last + 1))


def page_of_lines(
    source_id: str,
    text: str,
    *,
    fmt: str,
    start_line: int | None,
    end_line: int | None,
    max_chars: int,
    chunk_id: str | None = None,
) -> TextPage:
    """Lines of ``text`` from ``start_line`` (default 1) to ``end_line`` (default: the end).

    Raises:
        InvalidInputError: a line number below 1, ``end_line`` before ``start_line``, a start
            past the last line, or ``max_chars`` outside 200-100,000.
    """
    for name, value in (("start_line", start_line), ("end_line", end_line)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            msg = f"{name} must be a whole number, got {value!r}."
            raise InvalidInputError(msg)
        if value is not None and value < 1:
            msg = f"{name} must be at least 1 (lines count from 1), got {value}."
            raise InvalidInputError(msg)
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        msg = f"max_chars must be a whole number, got {max_chars!r}."
        raise InvalidInputError(msg)
    if not MIN_READ_CHARS <= max_chars <= MAX_READ_CHARS:
        msg = f"max_chars must be between {MIN_READ_CHARS} and {MAX_READ_CHARS:,}, got {max_chars}."
        raise InvalidInputError(msg)
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()  # the final newline does not start a line
    total = len(lines)
    first = start_line or 1
    last = min(end_line, total) if end_line is not None else total
    if end_line is not None and end_line < first:
        msg = f"end_line {end_line} is before start_line {first}; give end_line >= start_line."
        raise InvalidInputError(msg)
    if first > total:
        msg = (
            f"start_line {first} is past the end of {source_id!r}, which has {total:,} "
            f"line(s). Read from start_line=1 to {total}."
        )
        raise InvalidInputError(msg)
    kept: list[str] = []
    size = 0
    cut = False
    for number in range(first, last + 1):
        line = lines[number - 1]
        if kept and size + len(line) + 1 > max_chars:
            break
        if not kept and len(line) > max_chars:
            line, cut = line[:max_chars] + "…", True
        kept.append(line)
        size += len(line) + 1
    end = first + len(kept) - 1
    units: dict[str, Any] = {}
    if fmt in UNIT_FORMATS:
        units = dict(locate_unit(text, first))
        for key, unit in locate_unit(text, end).items():
            if units.get(key) != unit:
                units[f"last_{key}"] = unit
    return TextPage(
        source_id=source_id,
        text="\n".join(kept),
        start_line=first,
        end_line=end,
        total_lines=total,
        more_lines=total - end,
        truncated=cut or end < last,
        format=fmt,
        chunk_id=chunk_id,
        units=units,
    )
