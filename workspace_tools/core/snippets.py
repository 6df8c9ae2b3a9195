"""Best-matching window of a chunk, with query hits marked ``<<like this>>``."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from workspace_tools.core.tokenize import WORD_PATTERN, Tokenizer

__all__ = ["Snippet", "best_snippet", "mark_hits"]

HIT_OPEN: Final = "<<"
HIT_CLOSE: Final = ">>"


@dataclass(frozen=True, slots=True)
class Snippet:
    """A window of a chunk."""

    text: str
    """The window's lines, hits marked, long lines cut around the first hit."""
    first_line: int
    """0-based index of the window's first line inside the chunk."""
    last_line: int
    """0-based index of the window's last line inside the chunk (inclusive)."""
    hits: int
    """How many words in the window matched a query term."""


def best_snippet(
    text: str,
    query_terms: Collection[str],
    tokenizer: Tokenizer,
    *,
    window_lines: int = 3,
    max_chars: int = 400,
) -> Snippet:
    """Find the window of up to ``window_lines`` lines that covers the most query terms.

    Windows are ranked by the number of distinct query terms they contain, then by the number of
    hits, then by position (earliest wins). With no lexical hit at all (vector search), the window
    is the first non-blank lines of the chunk.
    """
    lines = text.split("\n")
    terms = set(query_terms)
    line_terms: list[set[str]] = []
    line_hits: list[int] = []
    for line in lines:
        found: set[str] = set()
        hits = 0
        if terms:
            for word in WORD_PATTERN.findall(line):
                matched = terms.intersection(tokenizer.word_terms(word))
                if matched:
                    found |= matched
                    hits += 1
        line_terms.append(found)
        line_hits.append(hits)

    best: tuple[int, int, int] | None = None
    best_start = 0
    size = max(1, window_lines)
    for start in range(len(lines)):
        if not line_hits[start]:
            continue  # a window worth showing starts on a hit
        stop = min(len(lines), start + size)
        distinct = len(set().union(*line_terms[start:stop]))
        hits = sum(line_hits[start:stop])
        key = (distinct, hits, -start)
        if best is None or key > best:
            best, best_start = key, start
    if best is None:
        best_start = next((i for i, line in enumerate(lines) if line.strip()), 0)
    stop = min(len(lines), best_start + size)
    while stop - 1 > best_start and (
        not lines[stop - 1].strip() or (best is not None and not line_hits[stop - 1])
    ):
        stop -= 1
    marked = [mark_hits(line, terms, tokenizer) for line in lines[best_start:stop]]
    snippet_text = _cut("\n".join(marked), max_chars)
    return Snippet(
        text=snippet_text,
        first_line=best_start,
        last_line=stop - 1,
        hits=sum(line_hits[best_start:stop]),
    )


def mark_hits(line: str, terms: Collection[str], tokenizer: Tokenizer) -> str:
    """Wrap every word of ``line`` whose terms meet ``terms`` in ``<<`` ``>>``."""
    if not terms:
        return line
    out: list[str] = []
    pos = 0
    for match in WORD_PATTERN.finditer(line):
        if not set(tokenizer.word_terms(match.group())).isdisjoint(terms):
            out.append(line[pos : match.start()])
            out.append(f"{HIT_OPEN}{match.group()}{HIT_CLOSE}")
            pos = match.end()
    out.append(line[pos:])
    return "".join(out)


def _cut(text: str, max_chars: int) -> str:
    """Shorten ``text`` to about ``max_chars`` around its first hit, marking cuts with ``…``."""
    if len(text) <= max_chars:
        return text
    first = text.find(HIT_OPEN)
    start = 0 if first < max_chars // 3 else first - max_chars // 3
    end = start + max_chars
    # Do not cut inside a marker.
    open_at = text.rfind(HIT_OPEN, start, end)
    if open_at != -1 and text.find(HIT_CLOSE, open_at) + len(HIT_CLOSE) > end:
        end = text.find(HIT_CLOSE, open_at) + len(HIT_CLOSE)
    return ("…" if start > 0 else "") + text[start:end] + ("…" if end < len(text) else "")
