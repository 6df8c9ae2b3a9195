"""Turn a file into text (rich formats in worker processes within :class:`ConversionLimits`)."""

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
from workspace_tools.core.convert.limits import DEFAULT_LIMITS, ConversionLimits
from workspace_tools.core.errors import ConversionError

__all__ = ["ConversionLimits", "Converted", "convert_bytes", "looks_binary"]

_SNIFF_BYTES: Final = 8192


def looks_binary(data: bytes) -> bool:
    """True when the first bytes contain a NUL byte (the heuristic git and grep use)."""
    return b"\x00" in data[:_SNIFF_BYTES]


def convert_bytes(path: Path, data: bytes, *, limits: ConversionLimits | None = None) -> Converted:
    """Convert the bytes of the file at ``path`` (its name decides the converter).

    Args:
        path: The file (only its name is used).
        data: Its bytes.
        limits: Budgets for rich documents (default :data:`DEFAULT_LIMITS`: 10 s, 512 MB).

    Raises:
        ConversionError: binary, corrupt, encrypted, unsupported, or over a budget.
    """
    suffix = path.suffix.lower()
    if suffix in DOCUMENT_EXTENSIONS:
        return _convert_document(path, data, limits or DEFAULT_LIMITS)
    if looks_binary(data):
        msg = f"binary: {path.name} contains NUL bytes and is not a text file"
        raise ConversionError(msg)
    text, had_errors = _decode(data)
    meta: dict[str, Any] = {"encoding_errors": True} if had_errors else {}
    if suffix in MARKDOWN_EXTENSIONS:
        return Converted(text=text, format="markdown", markdown=True, metadata=meta)
    kind = "text" if suffix in PLAIN_TEXT_SUFFIXES else "code"
    return Converted(text=text, format=kind, markdown=False, metadata=meta)


def _convert_document(path: Path, data: bytes, limits: ConversionLimits) -> Converted:
    fmt = _documents.format_of(path)
    if fmt is None or not data:  # refused at once
        return _documents.convert_document(path, data)
    budget = limits.budget(fmt)
    from workspace_tools.core.convert.pool import isolation_available, shared_pool

    if not limits.isolate or not isolation_available():
        return _documents.convert_document(
            path, data, unpacked_bytes=budget.unpacked_bytes, memory_bytes=budget.memory_bytes
        )
    reply = shared_pool().convert(path.name, data, budget)
    return Converted(
        text=reply["text"],
        format=reply["format"],
        markdown=bool(reply["markdown"]),
        metadata=dict(reply["metadata"]),
    )


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
