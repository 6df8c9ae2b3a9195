"""PDF conversion of a two-page, two-column article generated in the test (tests/support/pdfs.py):
ligatures and line-end hyphenation undone, page markers, columns read one after the other."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.support.pdfs import PAGES, TITLE, paragraph_lines, pdf_bytes
from workspace_tools.core.convert._documents import convert_document, locate_unit

pytest.importorskip("pdfminer", reason="needs the documents extra (pdfminer.six)")


def _text() -> str:
    return convert_document(Path("two.pdf"), pdf_bytes()).text


def test_the_generated_pdf_is_typeset_with_ligatures_and_a_hyphenated_word() -> None:
    from pdfminer.high_level import extract_text

    raw = extract_text(io.BytesIO(pdf_bytes()))
    assert "\ufb01" in raw and "\ufb02" in raw  # what the converter must undo below
    assert "alone, and ef-\n\ufb01cient passage retrieval" in raw


def test_pdf_ligatures_and_hyphenation_are_undone() -> None:
    text = _text()
    assert "efficient passage retrieval" in " ".join(text.split())
    assert "\ufb01" not in text and "\ufb02" not in text
    assert "flexibility to have" in text
    assert "ef-" not in text


def test_two_pages_are_marked_and_the_columns_are_read_one_after_the_other() -> None:
    converted = convert_document(Path("two.pdf"), pdf_bytes())
    lines = converted.text.split("\n")
    assert converted.metadata["pages"] == 2
    assert lines[:3] == ["<!-- page 1 -->", "", f"# {TITLE}"]
    marker = lines.index("<!-- page 2 -->") + 1
    assert locate_unit(converted.text, marker - 1) == {"page": 1}
    assert locate_unit(converted.text, marker + 1) == {"page": 2}
    positions = []
    for number, columns in enumerate(PAGES, start=1):
        for paragraphs in columns:
            for paragraph in paragraphs:
                first = paragraph_lines(paragraph)[0]
                where = lines.index(first) + 1
                assert (where > marker) == (number == 2), first
                positions.append(where)
    # left column top to bottom, then the right column, page by page: not line by line across
    assert positions == sorted(positions)
