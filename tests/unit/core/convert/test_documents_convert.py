"""Conversion of the mixed-docs fixture set (PDF, DOCX, PPTX, XLSX, HTML, EPUB, EML, ODT)."""

from __future__ import annotations

import csv
import re
import unicodedata
from pathlib import Path

import pytest

from tests.support.paths import BENCHMARKS, missing
from workspace_tools.core.convert import Converted, convert_bytes
from workspace_tools.core.convert._documents import (
    SUPPORTED_SUFFIXES,
    convert_document,
    locate_unit,
)

MIXED = BENCHMARKS / "mixed-docs"

pytestmark = [
    pytest.mark.skipif(not MIXED.is_dir(), reason=missing(MIXED)),
]
for _module in ("pdfminer", "docx", "pptx", "openpyxl", "bs4", "markdownify"):
    pytest.importorskip(_module, reason="needs the documents extra")


def _manifest() -> list[dict[str, str]]:
    if not MIXED.is_dir():
        return []
    with (MIXED / "MANIFEST.tsv").open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream, delimiter="\t"))


ROWS = _manifest()


def convert(path: Path) -> Converted:
    """Rich formats through the documents layer, the rest through the core path."""
    data = path.read_bytes()
    if path.suffix.lower() in SUPPORTED_SUFFIXES:
        return convert_document(path, data)
    return convert_bytes(path, data)


def words(text: str) -> list[str]:
    return re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower())


def headings(text: str) -> list[tuple[int, str]]:
    found = []
    for line in text.split("\n"):
        match = re.match(r"^(#{1,6})\s+(.+?)\s*$", line)
        if match:
            found.append((len(match.group(1)), match.group(2)))
    return found


@pytest.mark.parametrize("row", ROWS, ids=[row["file"] for row in ROWS])
def test_every_manifest_file_converts_and_holds_its_first_text(row: dict[str, str]) -> None:
    path = MIXED / row["file"]
    converted = convert(path)
    assert converted.text.strip(), f"{row['file']} converted to nothing"
    assert "\r" not in converted.text
    assert converted.format == row["format"] or (row["format"] == "md")
    # The listed first text was extracted by another tool, in its own reading order, and cut
    # mid-word: every whole word of it must be in our text (U+FFFD marks its own decoding error).
    expected = words(row["text_start"].split("\ufffd")[0])[:-1]
    have = set(words(converted.text))
    missing = [word for word in expected if word not in have]
    assert not missing, f"{row['file']}: words of the first text missing: {missing}"


def test_manifest_lists_every_format() -> None:
    formats = {row["format"] for row in ROWS}
    assert {"pdf", "docx", "pptx", "xlsx", "html", "epub", "eml", "odt"} <= formats


def test_the_five_all2md_files_have_the_same_section_headings() -> None:
    names = ["basic.md", "basic.html", "basic.docx", "basic.odt", "basic.pdf"]
    found = {name: headings(convert(MIXED / "all2md" / name).text) for name in names}
    expected = [
        (1, "Document Heading 1"),
        (2, "First Section Heading"),
        (2, "Second Section Heading"),
    ]
    for name, heads in found.items():
        assert heads == expected, f"{name}: {heads}"


def test_all2md_table_survives_as_a_pipe_table() -> None:
    for name in ["basic.html", "basic.docx", "basic.odt"]:
        text = convert(MIXED / "all2md" / name).text
        assert "| Header A | Header B | Header C | Header D |" in text, name
        assert "| Row 2, Col 1 | Row 2, Col 2 | Row 2, Col 3 | Row 2, Col 4 |" in text, name


def test_pdf_pages_are_marked_counted_and_located() -> None:
    converted = convert(MIXED / "unstructured" / "reliance.pdf")
    assert converted.metadata["pages"] == 3
    lines = converted.text.split("\n")
    markers = [i for i, line in enumerate(lines, start=1) if line.startswith("<!-- page ")]
    assert len(markers) == 3
    assert locate_unit(converted.text, 1) == {"page": 1}
    assert locate_unit(converted.text, markers[1]) == {"page": 2}
    assert locate_unit(converted.text, markers[1] + 1) == {"page": 2}
    assert locate_unit(converted.text, len(lines)) == {"page": 3}
    page_two = "\n".join(lines[markers[1] : markers[2]])
    assert "Fortune 500 company" in page_two


def test_pptx_slides_and_xlsx_sheets_are_headings_and_units() -> None:
    deck = convert(MIXED / "unstructured" / "fake-power-point.pptx")
    assert deck.metadata["slides"] == 1
    assert "## Slide 1: Adding a Bullet Slide" in deck.text
    assert locate_unit(deck.text, len(deck.text.split("\n"))) == {"slide": 1}
    book = convert(MIXED / "unstructured" / "stanley-cups.xlsx")
    assert book.metadata["sheets"] == 2
    assert book.metadata["sheet_names"] == ["Stanley Cups", "Stanley Cups Since 67"]
    lines = book.text.split("\n")
    second = lines.index("## Sheet: Stanley Cups Since 67") + 1
    assert locate_unit(book.text, second + 3) == {"sheet": "Stanley Cups Since 67"}
    assert locate_unit(book.text, 3) == {"sheet": "Stanley Cups"}
    assert "| Maple Leafs | TOR | 13.0 |" in book.text


def test_locate_unit_is_empty_without_markers() -> None:
    text = convert(MIXED / "all2md" / "basic.docx").text
    assert locate_unit(text, 1) == {}
    assert locate_unit("intro\n<!-- page 1 -->\nbody\n", 1) == {}
    assert locate_unit("intro\n<!-- page 1 -->\nbody\n", 3) == {"page": 1}
    assert locate_unit("```\n## Sheet: not a sheet\n```\n", 2) == {}


def test_email_headers_and_body() -> None:
    mail = convert(MIXED / "unstructured" / "fake-email.eml")
    assert mail.text.startswith("# Test Email\n")
    assert "From: Matthew Robinson <mrobinson@unstructured.io>" in mail.text
    assert "Roses are red" in mail.text
    assert mail.metadata["subject"] == "Test Email"


def test_html_drops_scripts_and_reads_undeclared_cp1252() -> None:
    page = convert(MIXED / "unstructured" / "example-with-scripts.html")
    assert "function(" not in page.text
    assert page.metadata["title"].startswith("Russian Offensive Campaign Assessment")
    legacy = convert(MIXED / "unstructured" / "fake-html-cp1252.html")
    assert "Die schöne Frau" in legacy.text
    assert "El niño comió paella" in legacy.text


def test_epub_chapters_in_reading_order() -> None:
    book = convert(MIXED / "unstructured" / "winter-sports.epub")
    assert book.metadata["title"] == "Winter Sports in Switzerland"
    assert book.metadata["chapters"] >= 2
    assert len(headings(book.text)) > 10
    order = [book.text.index(f"## CHAPTER {n} ") for n in ("I", "II", "III", "VIII")]
    assert order == sorted(order)
