from __future__ import annotations

import pytest

from workspace_tools.core.text.chunking import ChunkingConfig, chunk_text


def test_short_text_is_one_chunk_with_the_source_id() -> None:
    chunks = chunk_text("a\nb\nc\n", source_id="doc.txt")
    assert [c.id for c in chunks] == ["doc.txt"]
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 3)
    assert chunks[0].text == "a\nb\nc"


def test_empty_text_has_no_chunks() -> None:
    assert chunk_text("", source_id="x") == []
    assert chunk_text("  \n\n", source_id="x") == []


def test_long_text_chunks_have_ids_offsets_and_overlap() -> None:
    lines = [f"line number {i:04d}" for i in range(1, 1001)]
    chunks = chunk_text("\n".join(lines), source_id="big.txt")
    assert [c.id for c in chunks] == [f"big.txt#chunk-{i}" for i in range(len(chunks))]
    assert all(len(c.text) <= 4000 for c in chunks)
    for previous, current in zip(chunks, chunks[1:]):
        # 3-line overlap: the next chunk starts 3 lines before the previous one ended.
        assert current.start_line == previous.end_line - 2
        assert current.text.split("\n")[:3] == previous.text.split("\n")[-3:]
    for chunk in chunks:
        assert chunk.text.split("\n")[0] == lines[chunk.start_line - 1]
        assert chunk.text.split("\n")[-1] == lines[chunk.end_line - 1]
    assert chunks[-1].end_line == 1000


def test_chunks_without_overlap_reassemble_exactly() -> None:
    text = "\n".join(f"row {i}" for i in range(500))
    chunks = chunk_text(text, source_id="t", config=ChunkingConfig(max_chars=300, overlap_lines=0))
    assert "\n".join(c.text for c in chunks) == text


def test_over_long_line_is_sliced_sharing_its_line_number() -> None:
    chunks = chunk_text("x" * 10_000, source_id="l")
    assert [len(c.text) for c in chunks] == [4000, 4000, 2000]
    assert {c.start_line for c in chunks} == {1}


def test_markdown_heading_starts_a_chunk_and_paths_are_recorded() -> None:
    body = "# Title\nintro\n## A\n" + "alpha text line\n" * 40 + "## B\n" + "beta text line\n" * 40
    chunks = chunk_text(
        body,
        source_id="d.md",
        markdown=True,
        config=ChunkingConfig(max_chars=2000, min_section_chars=100),
    )
    assert len(chunks) == 2
    assert chunks[1].text.startswith("## B")
    assert chunks[1].headings == ("Title", "B")
    assert chunks[1].heading_levels == (1, 2)
    assert chunks[0].headings == ("Title",)


def test_hash_lines_in_code_fences_are_not_headings() -> None:
    body = "# Real\n```\n# not a heading\n```\ntext\n"
    chunks = chunk_text(body, source_id="d.md", markdown=True)
    assert chunks[0].headings == ("Real",)


def test_code_comments_are_not_headings_outside_markdown() -> None:
    chunks = chunk_text("# comment\nx = 1\n", source_id="a.py")
    assert chunks[0].headings == ()


def test_invalid_config_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_chars must be at least 16"):
        ChunkingConfig(max_chars=1)
    with pytest.raises(ValueError, match="overlap_lines must be >= 0"):
        ChunkingConfig(overlap_lines=-1)
