"""PDF to Markdown with pdfminer.six: page markers, and headings guessed from font sizes."""

from __future__ import annotations

import io
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from workspace_tools.core.convert._common import (
    STREAM_LIMIT,
    clean_lines,
    escape_line,
    page_marker,
    require,
)
from workspace_tools.core.errors import ConversionError

__all__ = ["convert_pdf"]

_HEADING_RATIO: Final = 1.15
"""A line whose font is this much larger than the body font may be a heading."""
_MAX_HEADING_CHARS: Final = 120
_MAX_HEADING_LINES: Final = 3
_MAX_HEADING_SHARE: Final = 0.3
"""More heading lines than this share of all lines means the sizes say nothing: no headings."""
_TAIL_BYTES: Final = 2048
_MAX_REFERENCE_HOPS: Final = 16
"""References followed to find the title; a cycle (``5 0 R`` is ``5 0 R``) ends here."""
_LIGATURES: Final = {
    code: unicodedata.normalize("NFKC", chr(code)) for code in range(0xFB00, 0xFB07)
}
"""Typographic ligatures (fi, fl, ffi...) become plain letters so words match queries."""


@dataclass(slots=True)
class _Line:
    page: int
    box: int
    text: str
    size: float
    chars: int


def convert_pdf(data: bytes, *, name: str) -> tuple[str, dict[str, Any]]:
    """Convert PDF bytes to Markdown text and metadata (``pages``, ``headings``, ``title``).

    Raises:
        ConversionError: ``corrupt``, ``encrypted`` or ``missing extra`` (see ``documents``).
    """
    head = data[:1024]
    if b"%PDF-" not in head:
        msg = f"corrupt: {name} is not a PDF file (no %PDF- header); it may be renamed or damaged"
        raise ConversionError(msg)
    if b"%%EOF" not in data[-_TAIL_BYTES:]:
        msg = f"corrupt: {name} is a truncated PDF (no %%EOF marker at the end of the file)"
        raise ConversionError(msg)
    lines, page_count, title = _read_lines(data, name=name)
    levels = _heading_levels(lines)
    paragraphs = _paragraph_boxes(lines, levels)
    out: list[str] = []
    current_page = 0
    previous_box = (-1, -1)
    previous_heading: tuple[int, str] | None = None
    headings = 0
    for line in lines:
        if line.page != current_page:
            current_page = line.page
            out.extend(["", page_marker(current_page), ""])
            previous_heading = None
        box = (line.page, line.box)
        level = None
        if box not in paragraphs and _heading_candidate(line):
            level = levels.get(round(line.size * 2) / 2)
        if level is not None:
            if (
                previous_heading is not None
                and previous_heading[0] == level
                and box == previous_box
            ):
                out[-2] = f"{out[-2]} {line.text}"  # a heading that wraps over two lines
            else:
                out.extend(["", "#" * level + " " + line.text, ""])
                headings += 1
            previous_heading = (level, line.text)
        else:
            if box != previous_box:
                out.append("")
                out.append(escape_line(line.text))
            elif _hyphenated(out[-1], line.text):
                out[-1] = out[-1][:-1] + line.text  # "ef-" + "ficient" -> "efficient"
            else:
                out.append(escape_line(line.text))
            previous_heading = None
        previous_box = box
    if page_count > current_page:  # trailing pages without text still get their markers
        for number in range(current_page + 1, page_count + 1):
            out.extend(["", page_marker(number), ""])
    meta: dict[str, Any] = {"pages": page_count, "headings": headings}
    if title:
        meta["title"] = title
    if not lines:
        meta["no_text"] = True
    return clean_lines(out), meta


class _StreamTooLargeError(Exception):
    """A Flate stream inflated past :data:`STREAM_LIMIT` (turned into a ``ConversionError``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


class _BoundedInflater:
    """``zlib.decompressobj()`` whose output stops at :data:`STREAM_LIMIT` bytes."""

    def __init__(self, limit: int | None) -> None:
        self._inflater = zlib.decompressobj()
        self._limit = limit
        self._total = 0

    def decompress(self, data: bytes) -> bytes:
        """Inflate ``data``, raising :class:`_StreamTooLargeError` past the limit."""
        if self._limit is None:
            return self._inflater.decompress(data)
        out = self._inflater.decompress(data, self._limit - self._total + 1)
        self._total += len(out)
        if self._total > self._limit:
            raise _StreamTooLargeError(self._limit)
        return out


class _BoundedZlib:
    """The ``zlib`` module as ``pdfminer.pdftypes`` sees it, bounded to :data:`STREAM_LIMIT`."""

    error = zlib.error

    @staticmethod
    def decompress(data: bytes) -> bytes:
        """``zlib.decompress(data)`` with the output bounded (counted piece by piece first)."""
        limit = STREAM_LIMIT.get()
        if limit is not None and _inflates_past(data, limit):
            raise _StreamTooLargeError(limit)
        return zlib.decompress(data)

    @staticmethod
    def decompressobj() -> _BoundedInflater:
        """A streaming inflater with the output bounded (pdfminer's reader of damaged data)."""
        return _BoundedInflater(STREAM_LIMIT.get())


_PIECE: Final = 1 << 20
"""Bytes inflated at a time while a stream's size is counted."""


def _inflates_past(data: bytes, limit: int) -> bool:
    """Whether the Flate stream ``data`` inflates to more than ``limit`` bytes (errors: no)."""
    inflater = zlib.decompressobj()
    total = 0
    pending = data
    try:
        while not inflater.eof:
            total += len(inflater.decompress(pending, _PIECE))
            if total > limit:
                return True
            pending = inflater.unconsumed_tail
            if not pending:
                total += len(inflater.flush())
                break
    except zlib.error:  # raised again by zlib.decompress, for pdfminer
        return False
    return total > limit


def _bound_streams(pdftypes: Any) -> None:
    """Install :class:`_BoundedZlib` in ``pdfminer.pdftypes`` (once; the limit is read per call)."""
    if not isinstance(pdftypes.__dict__.get("zlib"), _BoundedZlib):
        pdftypes.zlib = _BoundedZlib()


def _too_large(name: str, limit: int) -> ConversionError:
    from workspace_tools.core.convert.limits import format_bytes

    return ConversionError(
        f"unpacked size limit: {name} has a compressed stream that inflates to more than "
        f"{format_bytes(limit)}, the limit for one stream (a quarter of the conversion's "
        f"{format_bytes(limit * 4)} memory budget); it may be a decompression bomb. Raise "
        "ConversionLimits(memory_bytes=...) or per_format={'pdf': {'memory_bytes': ...}} if "
        "the file is trusted."
    )


def _read_lines(data: bytes, *, name: str) -> tuple[list[_Line], int, str]:
    high_level = require("pdfminer.high_level", suffix=".pdf")
    layout = require("pdfminer.layout", suffix=".pdf")
    pdfdocument = require("pdfminer.pdfdocument", suffix=".pdf")
    pdfparser = require("pdfminer.pdfparser", suffix=".pdf")
    _bound_streams(require("pdfminer.pdftypes", suffix=".pdf"))
    lines: list[_Line] = []
    page_count = 0
    try:
        for page_count, page in enumerate(
            high_level.extract_pages(io.BytesIO(data), laparams=layout.LAParams(all_texts=True)),
            start=1,
        ):
            for box_index, text_line in _text_lines(page, layout):
                line = _to_line(text_line, layout, page_count, box_index)
                if line is not None:
                    lines.append(line)
        title = _title(data, pdfparser, pdfdocument, require("pdfminer.pdftypes", suffix=".pdf"))
    except (ConversionError, MemoryError):
        raise
    except _StreamTooLargeError as exc:
        raise _too_large(name, exc.limit) from None
    except Exception as exc:
        reason = _reason(exc)
        msg = f"{reason}: {name} could not be read as a PDF ({type(exc).__name__}: {exc})"
        raise ConversionError(msg) from exc
    return lines, page_count, title


def _text_lines(container: Any, layout: Any) -> Iterator[tuple[int, Any]]:
    """Text lines in layout order with a box number, descending into figures (text in forms)."""
    box_number = 0
    stack = [iter(container)]
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
            continue
        box_number += 1
        if isinstance(element, layout.LTTextLine):
            yield box_number, element
        elif isinstance(element, layout.LTTextContainer):
            for text_line in element:
                if isinstance(text_line, layout.LTTextLine):
                    yield box_number, text_line
        elif isinstance(element, layout.LTFigure):
            stack.append(iter(element))


def _to_line(text_line: Any, layout: Any, page: int, box: int) -> _Line | None:
    text = " ".join(text_line.get_text().translate(_LIGATURES).split())
    if not text:
        return None
    sizes: Counter[float] = Counter()
    for char in text_line:
        if isinstance(char, layout.LTChar) and not char.get_text().isspace():
            sizes[round(float(char.size), 1)] += 1
    size = sizes.most_common(1)[0][0] if sizes else 0.0
    return _Line(page=page, box=box, text=text, size=size, chars=sum(sizes.values()))


def _hyphenated(previous: str, text: str) -> bool:
    return (
        len(previous) > 1
        and previous.endswith("-")
        and previous[-2].isalpha()
        and text[:1].islower()
    )


def _heading_candidate(line: _Line) -> bool:
    text = line.text
    return (
        len(text) <= _MAX_HEADING_CHARS
        and sum(c.isalpha() for c in text) >= 2
        and not text.endswith((",", ";"))
    )


def _paragraph_boxes(lines: list[_Line], levels: dict[float, int]) -> set[tuple[int, int]]:
    """Boxes with more than three large-font lines: a lead paragraph, not a heading."""
    counts: Counter[tuple[int, int]] = Counter(
        (line.page, line.box) for line in lines if round(line.size * 2) / 2 in levels
    )
    return {box for box, count in counts.items() if count > _MAX_HEADING_LINES}


def _heading_levels(lines: list[_Line]) -> dict[float, int]:
    """Map rounded font sizes to heading levels: the body size is the one most characters use."""
    weights: Counter[float] = Counter()
    for line in lines:
        weights[round(line.size * 2) / 2] += line.chars
    if not weights:
        return {}
    body = weights.most_common(1)[0][0]
    big = {
        round(line.size * 2) / 2
        for line in lines
        if line.size >= body * _HEADING_RATIO and _heading_candidate(line)
    }
    candidates = [line for line in lines if round(line.size * 2) / 2 in big]
    if not candidates or len(candidates) > _MAX_HEADING_SHARE * len(lines):
        return {}
    return {size: min(rank, 6) for rank, size in enumerate(sorted(big, reverse=True), start=1)}


def _title(data: bytes, pdfparser: Any, pdfdocument: Any, pdftypes: Any) -> str:
    parser = pdfparser.PDFParser(io.BytesIO(data))
    document = pdfdocument.PDFDocument(parser)
    for info in document.info:
        raw = _resolve(info.get("Title"), pdftypes)
        if isinstance(raw, bytes):
            if raw.startswith(b"\xfe\xff"):
                return raw[2:].decode("utf-16-be", errors="replace").strip()
            return raw.decode("latin-1").strip()
        if isinstance(raw, str):
            return raw.strip()
    return ""


def _resolve(value: Any, pdftypes: Any) -> Any:
    """Follow object references a few hops (``resolve1`` loops forever on ``5 0 R -> 5 0 R``)."""
    for _ in range(_MAX_REFERENCE_HOPS):
        if not isinstance(value, pdftypes.PDFObjRef):
            return value
        value = value.resolve()
    return None


def _reason(exc: Exception) -> str:
    kind = type(exc).__name__
    if "Password" in kind or "Encrypt" in kind:
        return "encrypted"
    return "corrupt"
