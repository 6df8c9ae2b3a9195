"""Conversion of rich document formats (PDF, DOCX, PPTX, XLSX, HTML, EPUB, ODT, EML) to Markdown.

Failures start with a reason word (``corrupt:``, ``encrypted:``, ``unsupported:``...);
:func:`locate_unit` reads page, slide and sheet markers back.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.convert._common import STREAM_LIMIT, UNPACKED_LIMIT
from workspace_tools.core.convert.formats import DOCUMENT_EXTENSIONS, DOCUMENT_FORMATS, Converted
from workspace_tools.core.errors import ConversionError

__all__ = ["SUPPORTED_SUFFIXES", "convert_document", "format_of", "locate_unit"]

_Converter = Callable[..., "tuple[str, dict[str, Any]]"]


SUPPORTED_SUFFIXES: Final[frozenset[str]] = DOCUMENT_EXTENSIONS
"""File suffixes :func:`convert_document` converts."""

_UNIT_LINE: Final = re.compile(
    r"^(?:<!-- page (?P<page>\d+) -->"
    r"|## Slide (?P<slide>\d+)(?::.*)?"
    r"|## Sheet: (?P<sheet>.+?))[ \t]*$",
    re.MULTILINE,
)


def format_of(path: Path) -> str | None:
    """The format name of a rich document (``pdf``, ``docx``...), ``None`` for other files."""
    entry = DOCUMENT_FORMATS.get(path.suffix.lower())
    return entry[0] if entry is not None else None


def convert_document(
    path: Path, data: bytes, *, unpacked_bytes: int | None = None, memory_bytes: int | None = None
) -> Converted:
    r"""Convert the bytes of a rich document to Markdown text.

    Args:
        path: The file's path; only its suffix (case-insensitive) and name are used.
        data: The file's bytes.
        unpacked_bytes: Most bytes a ZIP-based document may unpack to (``None``: no limit).
        memory_bytes: The memory budget; a PDF stream may inflate to a quarter of it.

    Returns:
        ``Converted`` with ``\n`` line ends, ``markdown=True``, the format and its metadata.

    Raises:
        ConversionError: The message starts with a reason word, then names the file.
        MemoryError: The converter ran out of memory (left to the caller).
    """
    suffix = path.suffix.lower()
    entry = DOCUMENT_FORMATS.get(suffix)
    if entry is None:
        msg = (
            f"unsupported: no converter for {suffix or 'extension-less'} files ({path.name}); "
            f"supported: {', '.join(sorted(DOCUMENT_FORMATS))}"
        )
        raise ConversionError(msg)
    fmt, module_name, function_name = entry
    if not data:
        msg = f"corrupt: {path.name} is empty (0 bytes)"
        raise ConversionError(msg)
    converter = _converter(module_name, function_name)
    token = UNPACKED_LIMIT.set(unpacked_bytes)
    stream_token = STREAM_LIMIT.set(None if memory_bytes is None else memory_bytes // 4)
    try:
        text, meta = converter(data, name=path.name)
    except (ConversionError, MemoryError):
        raise
    except RecursionError as exc:
        msg = f"corrupt: {path.name} nests too deeply to convert ({fmt})"
        raise ConversionError(msg) from exc
    except Exception as exc:  # a parser library choking on malformed input
        msg = f"corrupt: {path.name} could not be read as {fmt} ({type(exc).__name__}: {exc})"
        raise ConversionError(msg) from exc
    finally:
        UNPACKED_LIMIT.reset(token)
        STREAM_LIMIT.reset(stream_token)
    return Converted(text=text, format=fmt, markdown=True, metadata=meta)


def _converter(module_name: str, function_name: str) -> _Converter:
    import importlib

    module = importlib.import_module(f"workspace_tools.core.convert._{module_name}")
    function: _Converter = getattr(module, function_name)
    return function


def locate_unit(text: str, line: int) -> dict[str, int | str]:
    """The page, slide or sheet that contains ``line`` of a converted document.

    Args:
        text: ``Converted.text`` of the document (recent texts' unit tables are cached).
        line: 1-based line number, for example a chunk's first line.

    Returns:
        ``{"page": 3}``, ``{"slide": 2}`` or ``{"sheet": "Name"}``; ``{}`` before any marker.
    """
    starts, units = _units(text)
    index = bisect.bisect_right(starts, line) - 1
    if index < 0:
        return {}
    key, value = units[index]
    return {key: value}


@lru_cache(maxsize=16)
def _units(text: str) -> tuple[tuple[int, ...], tuple[tuple[str, int | str], ...]]:
    starts: list[int] = []
    units: list[tuple[str, int | str]] = []
    in_fence = False
    for number, raw in enumerate(text.split("\n"), start=1):
        if raw.startswith(("```", "~~~")):
            in_fence = not in_fence
        if in_fence or not raw.startswith(("<!--", "## ")):
            continue
        match = _UNIT_LINE.match(raw)
        if match is None:
            continue
        if match.group("page") is not None:
            units.append(("page", int(match.group("page"))))
        elif match.group("slide") is not None:
            units.append(("slide", int(match.group("slide"))))
        else:
            units.append(("sheet", match.group("sheet")))
        starts.append(number)
    return tuple(starts), tuple(units)
