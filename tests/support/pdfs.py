"""A two-page, two-column PDF written by hand (no PDF library can draw text in the base venv).

``write_two_column_pdf`` writes a small article: a title over both columns, then two columns of
Helvetica text on each page, typeset as a paper is: "fi" and "fl" are ligature glyphs (so the
converter must undo them, U+FB01 and U+FB02 after extraction) and one word is hyphenated over a
line end ("ef-" / "ficient"). The tests of PDF pages and reading order use it instead of the
shared data set's ``multi-column-2p.pdf``, so they run on a plain clone.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Final

__all__ = [
    "LEFT_X",
    "PAGES",
    "RIGHT_X",
    "TITLE",
    "paragraph_lines",
    "pdf_bytes",
    "write_two_column_pdf",
]

TITLE: Final = "Dense Passage Retrieval for Open-Domain Question Answering"

_PAGE_ONE_LEFT: Final = (
    "Open-domain question answering relies on efficient passage retrieval to select candidate "
    "contexts, where traditional sparse vector space models such as TF-IDF or BM25 are the de "
    "facto method.",
    # hyphenated by hand over a line end, as a typesetter does: "ef-" then "ficient"
    "\n".join(
        (
            "In this work, we show that retrieval can be practically",
            "implemented using dense representations alone, and ef-",
            "ficient passage retrieval works well with embeddings",
            "learned from a small number of questions and passages",
            "by a simple dual-encoder framework.",
        )
    ),
    "When evaluated on a wide range of open-domain QA datasets, our dense retriever outperforms "
    "a strong Lucene-BM25 system greatly by nine to nineteen percent absolute in terms of top "
    "twenty passage retrieval accuracy.",
)
_PAGE_ONE_RIGHT: Final = (
    "Retrieval in open-domain question answering is usually implemented using TF-IDF or BM25, "
    "which matches keywords efficiently with an inverted index and can be seen as representing "
    "the question and context in high-dimensional, sparse vectors with weighting.",
    "Conversely, the dense, latent semantic encoding is complementary to sparse representations "
    "by design. For example, synonyms or paraphrases that consist of completely different "
    "tokens may still be mapped to vectors close to each other.",
    "Dense encodings are also learnable by adjusting the embedding functions, which provides "
    "additional flexibility to have a task-specific representation.",
)
_PAGE_TWO_LEFT: Final = (
    "Although pretraining with the inverse cloze task is effective on several QA datasets, it "
    "also suffers from two weaknesses. First, such pretraining is computationally intensive and "
    "it is not completely clear that regular sentences are good surrogates of questions.",
    "Second, because the context encoder is not fine-tuned using pairs of questions and answers, "
    "the corresponding representations could be suboptimal.",
    "In this paper, we address the question: can we train a better dense embedding model using "
    "only pairs of questions and passages, without additional pretraining?",
)
_PAGE_TWO_RIGHT: Final = (
    "Our contributions are twofold. First, we demonstrate that with the proper training setup, "
    "simply fine-tuning the question and passage encoders on existing question-passage pairs is "
    "sufficient to greatly outperform BM25.",
    "Second, we verify that, in the context of open-domain question answering, a higher "
    "retrieval precision indeed translates to a higher end-to-end QA accuracy.",
    "By applying a modern reader model to the top retrieved passages, we achieve comparable or "
    "better results on multiple QA datasets in the open-retrieval setting, compared to several, "
    "much more complicated systems.",
)

PAGES: Final = (
    (_PAGE_ONE_LEFT, _PAGE_ONE_RIGHT),
    (_PAGE_TWO_LEFT, _PAGE_TWO_RIGHT),
)
"""Per page, the left and the right column's paragraphs (a newline is a line break of its own)."""

LEFT_X: Final = 56
RIGHT_X: Final = 316
"""Where the columns start, in points (US letter, 612 by 792; a column is 240 points wide)."""

_WRAP: Final = 50
_SIZE: Final = 9
_LEADING: Final = 11
_PARAGRAPH_GAP: Final = 14
_TOP: Final = 720
_TITLE_SIZE: Final = 16
_LIGATURE_CODES: Final = {"fi": "\x01", "fl": "\x02"}
_FONT: Final = (
    "<< /Type /Font /Subtype /Type1 /BaseFont /{base} /Encoding << /Type /Encoding "
    "/BaseEncoding /WinAnsiEncoding /Differences [1 /fi 2 /fl] >> >>"
)


def paragraph_lines(paragraph: str) -> list[str]:
    """The lines a paragraph is set in: its own line breaks if it has any, else wrapped."""
    if "\n" in paragraph:
        return paragraph.split("\n")
    return textwrap.wrap(paragraph, _WRAP, break_on_hyphens=False)


def _pdf_string(text: str) -> str:
    for pair, code in _LIGATURE_CODES.items():
        text = text.replace(pair, code)
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"({escaped})"


def _column(x: int, top: int, paragraphs: tuple[str, ...]) -> list[str]:
    ops: list[str] = []
    y = top
    for paragraph in paragraphs:
        lines = paragraph_lines(paragraph)
        ops.append(f"BT /F1 {_SIZE} Tf {_LEADING} TL {x} {y} Td")
        ops.extend(f"{_pdf_string(line)} Tj T*" for line in lines)
        ops.append("ET")
        y -= _LEADING * len(lines) + _PARAGRAPH_GAP
    return ops


def _page_stream(number: int, left: tuple[str, ...], right: tuple[str, ...]) -> bytes:
    ops: list[str] = []
    top = _TOP
    if number == 1:
        ops.append(f"BT /F2 {_TITLE_SIZE} Tf {LEFT_X} {_TOP} Td {_pdf_string(TITLE)} Tj ET")
        top -= 40
    ops += _column(LEFT_X, top, left) + _column(RIGHT_X, top, right)
    return "\n".join(ops).encode("latin-1")


def pdf_bytes() -> bytes:
    """The PDF file's bytes (objects, a cross-reference table with exact offsets, a trailer)."""
    page_ids = [5 + 2 * index for index in range(len(PAGES))]
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        (
            f"<< /Type /Pages /Kids [{' '.join(f'{i} 0 R' for i in page_ids)}] "
            f"/Count {len(PAGES)} >>"
        ).encode(),
        _FONT.format(base="Helvetica").encode(),
        _FONT.format(base="Helvetica-Bold").encode(),
    ]
    for number, (left, right) in enumerate(PAGES, start=1):
        stream = _page_stream(number, left, right)
        content_id = page_ids[number - 1] + 1
        objects.append(
            (
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents {content_id} 0 R >>"
            ).encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def write_two_column_pdf(path: Path) -> Path:
    """Write the two-page, two-column article to ``path`` and return ``path``."""
    path.write_bytes(pdf_bytes())
    return path
