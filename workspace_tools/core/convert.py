"""Turn a file into text.

Markdown, plain text and source code are read natively. Rich formats (PDF, DOCX, PPTX, XLSX,
HTML, EPUB, EML) go through :mod:`workspace_tools.core.documents`, which needs the
``workspace-tools[documents]`` extra. Anything else is read as text when it looks like text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.errors import ConversionError

__all__ = [
    "DOCUMENT_EXTENSIONS",
    "MARKDOWN_EXTENSIONS",
    "Converted",
    "convert_bytes",
    "looks_binary",
]

MARKDOWN_EXTENSIONS: Final[frozenset[str]] = frozenset({".md", ".mdx", ".markdown", ".qmd"})
"""Extensions chunked with Markdown section awareness."""

DOCUMENT_EXTENSIONS: Final[frozenset[str]] = frozenset(
    {".pdf", ".docx", ".pptx", ".xlsx", ".html", ".htm", ".xhtml", ".epub", ".eml", ".odt"}
)
"""Extensions converted through the documents extra."""

_SNIFF_BYTES: Final = 8192


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


def looks_binary(data: bytes) -> bool:
    """True when the first bytes contain a NUL byte (the heuristic git and grep use)."""
    return b"\x00" in data[:_SNIFF_BYTES]


def convert_bytes(path: Path, data: bytes) -> Converted:
    """Convert the bytes of the file at ``path`` (its name decides the converter).

    Raises:
        ConversionError: the file is binary, corrupt, encrypted or of a format with no converter.
    """
    suffix = path.suffix.lower()
    if suffix in DOCUMENT_EXTENSIONS:
        from workspace_tools.core import documents

        return documents.convert_document(path, data)
    if looks_binary(data):
        msg = f"binary: {path.name} contains NUL bytes and is not a text file"
        raise ConversionError(msg)
    text, had_errors = _decode(data)
    meta: dict[str, Any] = {"encoding_errors": True} if had_errors else {}
    if suffix in MARKDOWN_EXTENSIONS:
        return Converted(text=text, format="markdown", markdown=True, metadata=meta)
    kind = "text" if suffix in {"", ".txt", ".rst", ".log", ".csv", ".tsv"} else "code"
    return Converted(text=text, format=kind, markdown=False, metadata=meta)


def _decode(data: bytes) -> tuple[str, bool]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
        had_errors = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        had_errors = True
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, had_errors
