"""Helpers shared by the converters: lazy imports, Markdown building, error wording."""

from __future__ import annotations

import contextvars
import importlib
import re
import warnings
import zipfile
from types import ModuleType
from typing import Any, Final

from workspace_tools.core.errors import ConversionError
from workspace_tools.core.extras import install_hint

__all__ = [
    "EXTRA_HINT",
    "OLE_MAGIC",
    "STREAM_LIMIT",
    "UNPACKED_LIMIT",
    "cell_text",
    "check_zip",
    "clean_lines",
    "escape_line",
    "make_soup",
    "markdown_table",
    "page_marker",
    "require",
]

EXTRA_HINT: Final = install_hint("documents")
OLE_MAGIC: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
"""Compound File header: legacy .doc/.xls/.ppt, and password-protected OOXML files."""

UNPACKED_LIMIT: Final[contextvars.ContextVar[int | None]] = contextvars.ContextVar(
    "unpacked_limit", default=None
)
"""Most bytes the members of a ZIP-based document may unpack to (set per conversion)."""
STREAM_LIMIT: Final[contextvars.ContextVar[int | None]] = contextvars.ContextVar(
    "stream_limit", default=None
)
"""Most bytes one compressed stream (a PDF's Flate stream) may inflate to (set per conversion)."""

_BLOCK_START: Final = re.compile(r"^(\s*)(#{1,6}\s|>|<!--)")
_BLANK_RUN: Final = re.compile(r"\n{3,}")


def require(module: str, *, suffix: str) -> ModuleType:
    """Import ``module`` or explain which extra brings it.

    Args:
        module: Dotted module name, for example ``"pdfminer.high_level"``.
        suffix: The file suffix being converted, named in the message.

    Raises:
        ConversionError: ``missing extra: ...`` when the module is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".", 1)[0]
        msg = (
            f"missing extra: {EXTRA_HINT} to read {suffix} files "
            f"(the Python module {top!r} is not installed: {exc})"
        )
        raise ConversionError(msg) from exc


def check_zip(data: bytes, *, name: str, kind: str) -> None:
    """Fail early and clearly when a ZIP-based document (DOCX, PPTX, XLSX, EPUB) is not a ZIP.

    Raises:
        ConversionError: ``encrypted:``, ``unsupported:``, ``corrupt:``, ``unpacked size limit:``.
    """
    if data.startswith(OLE_MAGIC):
        if b"E\x00n\x00c\x00r\x00y\x00p\x00t\x00i\x00o\x00n\x00I\x00n\x00f\x00o" in data:
            msg = (
                f"encrypted: {name} is a password-protected {kind} file; save it without a password"
            )
            raise ConversionError(msg)
        msg = (
            f"unsupported: {name} is a legacy binary Office file (OLE), not {kind}; "
            "save it in the modern format"
        )
        raise ConversionError(msg)
    if not data.startswith(b"PK"):
        msg = (
            f"corrupt: {name} is not a {kind} file (no ZIP container); it may be renamed or damaged"
        )
        raise ConversionError(msg)
    import io

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        msg = f"corrupt: {name} is a truncated or damaged {kind} file ({exc})"
        raise ConversionError(msg) from exc
    limit = UNPACKED_LIMIT.get()
    if limit is not None and unpacked > limit:
        from workspace_tools.core.convert.limits import format_bytes

        msg = (
            f"unpacked size limit: {name} unpacks to {format_bytes(unpacked)}, over the "
            f"{format_bytes(limit)} limit for {kind} files; it may be a decompression bomb. "
            "Raise it with ConversionLimits(unpacked_bytes=...) if the file is trusted."
        )
        raise ConversionError(msg)


def escape_line(line: str) -> str:
    """Keep body text from reading as Markdown structure (a leading ``#`` is no heading)."""
    match = _BLOCK_START.match(line)
    if match is None:
        return line
    indent = match.group(1)
    return f"{indent}\\{line[len(indent) :]}"


def cell_text(value: object) -> str:
    """One table cell on one line, with pipes escaped."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return " ".join(text.split()).replace("|", "\\|")


def markdown_table(rows: list[list[str]]) -> list[str]:
    """Render rows (first row = header) as a pipe table, padding short rows."""
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        return []
    width = max(len(row) for row in rows)
    padded = [row + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + " --- |" * width]
    lines.extend("| " + " | ".join(row) + " |" for row in padded[1:])
    return lines


def page_marker(number: int) -> str:
    """The marker line that starts page ``number`` (read back by ``locate_unit``)."""
    return f"<!-- page {number} -->"


def clean_lines(lines: list[str]) -> str:
    """Join lines, strip trailing spaces, collapse runs of blank lines, end with one newline."""
    text = "\n".join(line.rstrip() for line in lines)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
    text = _BLANK_RUN.sub("\n\n", text).strip("\n")
    return text + "\n" if text else ""


def make_soup(bs4: Any, data: bytes | str, parser: str, *, encoding: str | None = None) -> Any:
    """Parse with BeautifulSoup, quiet about XHTML/XML read by an HTML parser (intended here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bs4.XMLParsedAsHTMLWarning)
        if encoding is not None and isinstance(data, bytes):
            return bs4.BeautifulSoup(data, parser, from_encoding=encoding)
        return bs4.BeautifulSoup(data, parser)
