"""Conversion of rich document formats (placeholder until the documents extra lands)."""

from __future__ import annotations

from pathlib import Path

from workspace_tools.core.convert import Converted
from workspace_tools.core.errors import ConversionError

__all__ = ["convert_document"]


def convert_document(path: Path, data: bytes) -> Converted:
    """Convert a PDF/DOCX/HTML/... file to Markdown text."""
    del data
    msg = f"unsupported: no converter for {path.suffix} files yet"
    raise ConversionError(msg)
