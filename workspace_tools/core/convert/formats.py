"""The one table of file formats (Markdown, rich documents, their converters) and ``Converted``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "DOCS_PAGE_SUFFIXES",
    "DOCUMENT_EXTENSIONS",
    "DOCUMENT_FORMATS",
    "DOCUMENT_FORMAT_NAMES",
    "MARKDOWN_EXTENSIONS",
    "PLAIN_TEXT_SUFFIXES",
    "UNIT_FORMATS",
    "Converted",
]

MARKDOWN_EXTENSIONS: Final[frozenset[str]] = frozenset({".md", ".mdx", ".markdown", ".qmd"})
"""Extensions chunked with Markdown section awareness."""

DOCS_PAGE_SUFFIXES: Final[tuple[str, ...]] = (".md", ".mdx")
"""Suffixes of pages in a documentation tree (docs search)."""

PLAIN_TEXT_SUFFIXES: Final[frozenset[str]] = frozenset({"", ".txt", ".rst", ".log", ".csv", ".tsv"})
"""Suffixes read as prose (``text``); any other text file is ``code``."""

DOCUMENT_FORMATS: Final[dict[str, tuple[str, str, str]]] = {
    ".pdf": ("pdf", "pdf", "convert_pdf"),
    ".docx": ("docx", "office", "convert_docx"),
    ".pptx": ("pptx", "office", "convert_pptx"),
    ".xlsx": ("xlsx", "office", "convert_xlsx"),
    ".html": ("html", "web", "convert_html"),
    ".htm": ("html", "web", "convert_html"),
    ".xhtml": ("html", "web", "convert_html"),
    ".epub": ("epub", "web", "convert_epub"),
    ".eml": ("eml", "web", "convert_eml"),
    ".odt": ("odt", "odt", "convert_odt"),
}
"""suffix -> (format name, converter module, function)."""

DOCUMENT_EXTENSIONS: Final[frozenset[str]] = frozenset(DOCUMENT_FORMATS)
"""Extensions converted through the documents extra."""

DOCUMENT_FORMAT_NAMES: Final[frozenset[str]] = frozenset(f for f, _, _ in DOCUMENT_FORMATS.values())
"""Format names of rich documents (``pdf``, ``docx``...): their conversions are cached."""

UNIT_FORMATS: Final[frozenset[str]] = frozenset({"pdf", "pptx", "xlsx"})
"""Formats whose text marks units (pages, slides, sheets) that chunks record."""


@dataclass(frozen=True, slots=True)
class Converted:
    """Text of a file plus what conversion learnt about it."""

    text: str
    """The text, with ``\\n`` line ends."""
    format: str
    """Short format name: ``markdown``, ``text``, ``code``, ``pdf``, ``docx``..."""
    markdown: bool
    """Whether the text uses Markdown headings (section-aware chunking applies)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Format facts worth keeping per chunk (page count, sheet names...)."""
