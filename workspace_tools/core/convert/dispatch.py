"""Turn a file into text.

Markdown, plain text and source code are read natively. Rich formats (PDF, DOCX, PPTX, XLSX,
HTML, EPUB, EML) go through :mod:`workspace_tools.core.convert._documents`, which needs the
``workspace-tools[documents]`` extra. Anything else is read as text when it looks like text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from workspace_tools.core.convert import _documents
from workspace_tools.core.convert.formats import (
    DOCUMENT_EXTENSIONS,
    MARKDOWN_EXTENSIONS,
    PLAIN_TEXT_SUFFIXES,
    Converted,
)
from workspace_tools.core.errors import ConversionError

__all__ = ["Converted", "convert_bytes", "looks_binary"]

_SNIFF_BYTES: Final = 8192


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
        return _documents.convert_document(path, data)
    if looks_binary(data):
        msg = f"binary: {path.name} contains NUL bytes and is not a text file"
        raise ConversionError(msg)
    text, had_errors = _decode(data)
    meta: dict[str, Any] = {"encoding_errors": True} if had_errors else {}
    if suffix in MARKDOWN_EXTENSIONS:
        return Converted(text=text, format="markdown", markdown=True, metadata=meta)
    kind = "text" if suffix in PLAIN_TEXT_SUFFIXES else "code"
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
