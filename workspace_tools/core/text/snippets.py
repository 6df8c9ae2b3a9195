"""Best-matching window of a chunk, with query hits marked ``<<like this>>``."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from workspace_tools.core.text.tokenizer import WORD_PATTERN, Tokenizer

__all__ = ["HIT_CLOSE", "HIT_OPEN", "Snippet", "best_snippet", "mark_hits"]

HIT_OPEN: Final = "<<"
HIT_CLOSE: Final = ">>"

_Span = tuple[int, int, frozenset[str]]


@dataclass(frozen=True, slots=True)
class Snippet:
    """A window of a chunk."""

    text: str
    """The window's lines, hits marked, cut to about ``max_chars`` around the densest hits."""
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
    """The window of up to ``window_lines`` lines that covers the most query terms, hits marked."""
    lines = text.split("\n")
    terms = frozenset(query_terms)
    spans = [_hit_spans(line, terms, tokenizer) if terms else [] for line in lines]
    size = max(1, window_lines)
    best: tuple[int, int, int] | None = None
    best_start = 0
    for start, line_spans in enumerate(spans):
        if not line_spans:
            continue
        stop = min(len(lines), start + size)
        window = [s for row in spans[start:stop] for s in row]
        distinct = len(frozenset().union(*(s[2] for s in window)))
        key = (distinct, len(window), -start)
        if best is None or key > best:
            best, best_start = key, start
    if best is None:
        best_start = next((i for i, line in enumerate(lines) if line.strip()), 0)
    stop = min(len(lines), best_start + size)
    while stop - 1 > best_start and (
        not lines[stop - 1].strip() or (best is not None and not spans[stop - 1])
    ):
        stop -= 1
    joined: list[str] = []
    window_spans: list[_Span] = []
    offset = 0
    for index in range(best_start, stop):
        joined.append(lines[index])
        window_spans.extend((a + offset, b + offset, t) for a, b, t in spans[index])
        offset += len(lines[index]) + 1
    window_text = "\n".join(joined)
    begin, end = _region(window_text, window_spans, max_chars)
    marked = _mark(
        window_text, [s for s in window_spans if s[0] >= begin and s[1] <= end], begin, end
    )
    prefix = "…" if begin > 0 else ""
    suffix = "…" if end < len(window_text) else ""
    return Snippet(
        text=prefix + marked + suffix,
        first_line=best_start,
        last_line=stop - 1,
        hits=len(window_spans),
    )


def mark_hits(line: str, terms: Collection[str], tokenizer: Tokenizer) -> str:
    """Wrap every word of ``line`` whose terms meet ``terms`` in ``<<`` ``>>``."""
    spans = _hit_spans(line, frozenset(terms), tokenizer)
    return _mark(line, spans, 0, len(line))


def _hit_spans(line: str, terms: frozenset[str], tokenizer: Tokenizer) -> list[_Span]:
    word_terms = tokenizer.word_terms
    hitting: dict[str, frozenset[str]] = {}
    for word in set(WORD_PATTERN.findall(line)):
        matched = terms.intersection(word_terms(word))
        if matched:
            hitting[word] = matched
    if not hitting:
        return []
    spans: list[_Span] = []
    for match in WORD_PATTERN.finditer(line):
        word = match.group()
        if word in hitting:
            spans.append((match.start(), match.end(), hitting[word]))
    return spans


def _region(text: str, spans: list[_Span], max_chars: int) -> tuple[int, int]:
    """The stretch of at most ``max_chars`` characters holding the most distinct hit terms."""
    if len(text) <= max_chars:
        return 0, len(text)
    if not spans:
        return 0, max_chars
    best_key: tuple[int, int] | None = None
    best_first = 0
    counts: dict[str, int] = {}
    stop = 0
    for i, (start, _end, terms) in enumerate(spans):
        stop = max(stop, i)
        while stop < len(spans) and spans[stop][1] - start <= max_chars:
            for term in spans[stop][2]:
                counts[term] = counts.get(term, 0) + 1
            stop += 1
        key = (len(counts), stop - i)
        if best_key is None or key > best_key:
            best_key, best_first = key, start
        if stop > i:
            for term in terms:
                counts[term] -= 1
                if not counts[term]:
                    del counts[term]
    begin = max(0, best_first - max_chars // 5)  # some left context
    end = min(len(text), begin + max_chars)
    begin = max(0, end - max_chars)
    while begin > 0 and text[begin - 1].isalnum() and begin < best_first:
        begin += 1
    while end < len(text) and end > begin and text[end - 1].isalnum() and text[end].isalnum():
        end -= 1
    return begin, end


def _mark(text: str, spans: list[_Span], begin: int, end: int) -> str:
    out: list[str] = []
    pos = begin
    for start, stop, _terms in spans:
        if text.startswith(HIT_OPEN, start - len(HIT_OPEN)) and text.startswith(HIT_CLOSE, stop):
            continue  # already marked in the source text (e.g. a documented snippet)
        out.append(text[pos:start])
        out.append(f"{HIT_OPEN}{text[start:stop]}{HIT_CLOSE}")
        pos = stop
    out.append(text[pos:end])
    return "".join(out)
