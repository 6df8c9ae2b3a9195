"""Property tests (hypothesis) for the tokenizer, the chunker and snippets."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workspace_tools.core.text.chunking import ChunkingConfig, chunk_text
from workspace_tools.core.text.snippets import HIT_CLOSE, HIT_OPEN, _region, best_snippet
from workspace_tools.core.text.tokenizer import Tokenizer

TOKENIZER = Tokenizer()
PROFILE = settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)

WORDS = st.sampled_from(
    [
        "alpha",
        "Beta",
        "parseHttpRequest",
        "snake_case",
        "café",
        "Привет",
        "東京タワー",
        "foo.bar",
        "x-y",
        "don't",
        "12",
        "the",
        "#",
        "##",
        "```",
        "-",
        " ",
        "",
        "\t",
        "é",
        "ﬁ",
        "İ",
        "ß",
    ]
)
LINE = st.one_of(
    st.lists(WORDS, max_size=12).map(" ".join),
    st.text(max_size=60),
    st.builds(
        lambda level, title: "#" * level + " " + title,
        st.integers(1, 6),
        st.text(min_size=1, max_size=20),
    ),
)
TEXT = st.lists(LINE, max_size=40).map("\n".join)


@PROFILE
@given(st.text(max_size=400))
def test_tokenizer_never_raises_and_terms_are_nonempty_strings(text: str) -> None:
    for terms in (TOKENIZER.tokenize(text), TOKENIZER.query_terms(text)):
        assert all(isinstance(t, str) and t for t in terms)
        assert all(not t.isspace() for t in terms)


@PROFILE
@given(TEXT, st.booleans(), st.integers(16, 300), st.integers(0, 4), st.integers(0, 200))
def test_chunks_cover_the_text_with_valid_increasing_ranges(
    text: str, markdown: bool, max_chars: int, overlap: int, min_section: int
) -> None:
    config = ChunkingConfig(
        max_chars=max_chars, overlap_lines=overlap, min_section_chars=min_section
    )
    chunks = chunk_text(text, source_id="doc.md", config=config, markdown=markdown)
    if not text.strip():
        assert chunks == []
        return
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    covered: set[int] = set()
    previous_start = 0
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.start_line >= previous_start  # starts never go backwards
        previous_start = chunk.start_line
        covered.update(range(chunk.start_line, chunk.end_line + 1))
        claimed = lines[chunk.start_line - 1 : chunk.end_line]
        if all(len(line) <= max_chars for line in claimed):  # no line was sliced
            assert chunk.text == "\n".join(claimed)
        else:
            assert all(piece in lines[n] for n, piece in _pieces(chunk, lines))
    assert covered == set(range(1, len(lines) + 1))  # every line is in some chunk
    assert chunks[0].start_line == 1 and chunks[-1].end_line == len(lines)


def _pieces(chunk, lines):  # type: ignore[no-untyped-def]
    """Pair each line of a chunk that holds sliced lines with a source line index it may be from."""
    out = []
    for piece in chunk.text.split("\n"):
        for n in range(chunk.start_line - 1, chunk.end_line):
            if piece in lines[n]:
                out.append((n, piece))
                break
        else:
            out.append((chunk.start_line - 1, piece))
    return out


@PROFILE
@given(TEXT, st.lists(WORDS, min_size=1, max_size=4), st.integers(1, 5), st.integers(20, 400))
def test_snippets_come_from_the_chunk(
    text: str, query: list[str], window: int, max_chars: int
) -> None:
    terms = TOKENIZER.query_terms(" ".join(query))
    snippet = best_snippet(text, terms, TOKENIZER, window_lines=window, max_chars=max_chars)
    lines = text.split("\n")
    assert 0 <= snippet.first_line <= snippet.last_line < len(lines)
    assert snippet.last_line - snippet.first_line < window
    plain = snippet.text.replace(HIT_OPEN, "").replace(HIT_CLOSE, "").strip("…")
    window_text = "\n".join(lines[snippet.first_line : snippet.last_line + 1])
    assert plain in window_text


def _region_reference(text: str, spans: list, max_chars: int) -> int:  # type: ignore[type-arg]
    """The quadratic search the sliding window replaced: start of the best stretch."""
    best_key, best_first = None, 0
    for i, (start, _end, _terms) in enumerate(spans):
        covered = [s for s in spans[i:] if s[1] - start <= max_chars]
        key = (len(frozenset().union(*(s[2] for s in covered))), len(covered))
        if best_key is None or key > best_key:
            best_key, best_first = key, start
    return best_first


@PROFILE
@given(
    st.lists(
        st.tuples(
            st.integers(0, 30), st.integers(1, 15), st.sets(st.sampled_from("abcde"), min_size=1)
        ),
        min_size=1,
        max_size=40,
    ),
    st.integers(5, 120),
)
def test_linear_snippet_region_equals_the_quadratic_reference(gaps: list, max_chars: int) -> None:  # type: ignore[type-arg]
    spans, pos = [], 0
    for gap, width, terms in gaps:
        start = pos + gap
        spans.append((start, start + width, frozenset(terms)))
        pos = start + width + 1
    text = "x" * (pos + max_chars + 1)
    begin, _end = _region(text, spans, max_chars)
    expected = _region_reference(text, spans, max_chars)
    reference_begin = max(0, expected - max_chars // 5)
    reference_begin = max(0, min(len(text), reference_begin + max_chars) - max_chars)
    while (
        reference_begin > 0 and text[reference_begin - 1].isalnum() and reference_begin < expected
    ):
        reference_begin += 1
    assert begin == reference_begin
