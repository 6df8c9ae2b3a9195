"""DOCX (python-docx), PPTX (python-pptx) and XLSX (openpyxl) to Markdown."""

from __future__ import annotations

import datetime as dt
import io
import re
from typing import Any, Final

from workspace_tools.core.convert._common import (
    cell_text,
    check_zip,
    clean_lines,
    escape_line,
    markdown_table,
    require,
)

__all__ = ["convert_docx", "convert_pptx", "convert_xlsx"]

_HEADING_STYLE: Final = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_MAX_SHEET_ROWS: Final = 5000
"""Rows kept per sheet; the rest is counted in ``metadata['truncated_sheets']``."""
_SHAPE_ERRORS: Final = (NotImplementedError, ValueError, KeyError, AttributeError, TypeError)
"""What python-pptx raises for a shape it cannot read (not for a damaged deck)."""
_W_NS: Final = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def convert_docx(data: bytes, *, name: str) -> tuple[str, dict[str, Any]]:
    """Convert DOCX bytes: Word heading styles become ``#`` headings, tables pipe tables."""
    check_zip(data, name=name, kind="DOCX")
    docx = require("docx", suffix=".docx")
    table_mod = require("docx.table", suffix=".docx")
    text_mod = require("docx.text.paragraph", suffix=".docx")
    document = docx.Document(io.BytesIO(data))
    style_names, default_style = _paragraph_styles(document)
    out: list[str] = []
    headings = tables = 0
    for element in document.element.body.iterchildren():
        tag = element.tag
        if tag == f"{_W_NS}p":
            paragraph = text_mod.Paragraph(element, document)
            style_id = element.style  # the pStyle value on the XML, no lookup
            style = style_names.get(style_id, default_style) if style_id else default_style
            line, is_heading = _docx_paragraph(paragraph, style)
            if line is None:
                continue
            headings += is_heading
            out.extend(["", line, ""] if is_heading else [line])
        elif tag == f"{_W_NS}tbl":
            table = table_mod.Table(element, document)
            rows = [[cell_text(cell.text) for cell in row.cells] for row in table.rows]
            out.extend(["", *markdown_table(rows), ""])
            tables += 1
    meta: dict[str, Any] = {"headings": headings, "tables": tables}
    title = (document.core_properties.title or "").strip()
    if title:
        meta["title"] = title
    return clean_lines(_space_paragraphs(out)), meta


def _paragraph_styles(document: Any) -> tuple[dict[str, str], str]:
    """Paragraph style id -> name, and the default style's name (``Paragraph.style`` is slow)."""
    names: dict[str, str] = {}
    default = ""
    for style in document.styles:
        if getattr(style, "type", None) != 1:  # WD_STYLE_TYPE.PARAGRAPH
            continue
        name = style.name or ""
        if style.style_id:
            names[style.style_id] = name
        if style.element.default:
            default = name
    return names, default


def _docx_paragraph(paragraph: Any, style: str) -> tuple[str | None, bool]:
    text = " ".join(paragraph.text.split())
    if not text:
        return None, False
    match = _HEADING_STYLE.match(style.strip())
    if match is not None:
        return "#" * min(int(match.group(1)), 6) + " " + text, True
    if style.strip().lower() == "title":
        return "# " + text, True
    p_pr = paragraph._p.pPr  # list numbering is only on the XML
    num_pr = p_pr.numPr if p_pr is not None else None
    if num_pr is not None or style.lower().startswith("list"):
        level = 0
        if num_pr is not None and num_pr.ilvl is not None and num_pr.ilvl.val is not None:
            level = int(num_pr.ilvl.val)
        marker = "1." if "number" in style.lower() else "-"
        return "  " * level + f"{marker} {text}", False
    return escape_line(text), False


def _space_paragraphs(lines: list[str]) -> list[str]:
    """Put a blank line between consecutive body paragraphs, but keep list items together."""
    out: list[str] = []
    for line in lines:
        if out and line and out[-1]:
            is_item = line.lstrip().startswith(("- ", "1. "))
            was_item = out[-1].lstrip().startswith(("- ", "1. ", "|"))
            if not (is_item and was_item) and not (
                line.startswith("|") and out[-1].startswith("|")
            ):
                out.append("")
        out.append(line)
    return out


def convert_pptx(data: bytes, *, name: str) -> tuple[str, dict[str, Any]]:
    """Convert PPTX bytes: one ``## Slide N: Title`` heading per slide, then its text and notes."""
    check_zip(data, name=name, kind="PPTX")
    pptx = require("pptx", suffix=".pptx")
    presentation = pptx.Presentation(io.BytesIO(data))
    out: list[str] = []
    count = skipped = 0
    for count, slide in enumerate(presentation.slides, start=1):
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
        out.extend(["", f"## Slide {count}: {title}" if title else f"## Slide {count}", ""])
        for shape in slide.shapes:
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            try:
                out.extend(_shape_lines(shape))
            except _SHAPE_ERRORS:  # one odd shape is skipped; the deck is kept
                skipped += 1
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                out.extend(["", "Notes:", *[escape_line(t) for t in notes.text.splitlines()]])
    meta: dict[str, Any] = {"slides": count}
    if skipped:
        meta["skipped_shapes"] = skipped
    return clean_lines(out), meta


def _shape_lines(shape: Any) -> list[str]:
    lines: list[str] = []
    try:
        kind = shape.shape_type
    except NotImplementedError:  # a shape python-pptx cannot classify (no geometry): no group
        kind = None
    if kind == 6:  # MSO_SHAPE_TYPE.GROUP
        for child in shape.shapes:
            lines.extend(_shape_lines(child))
        return lines
    if getattr(shape, "has_table", False):
        rows = [[cell_text(cell.text) for cell in row.cells] for row in shape.table.rows]
        return ["", *markdown_table(rows), ""]
    if getattr(shape, "has_text_frame", False):
        for paragraph in shape.text_frame.paragraphs:
            text = " ".join(paragraph.text.split())
            if text:
                lines.append("  " * paragraph.level + escape_line(text))
        if lines:
            lines = ["", *lines]
    return lines


def convert_xlsx(data: bytes, *, name: str) -> tuple[str, dict[str, Any]]:
    """Convert XLSX bytes: one ``## Sheet: Name`` heading per sheet, then its cells as a table."""
    check_zip(data, name=name, kind="XLSX")
    openpyxl = require("openpyxl", suffix=".xlsx")
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    out: list[str] = []
    names: list[str] = []
    truncated: list[str] = []
    try:
        for sheet in workbook.worksheets:
            names.append(sheet.title)
            out.extend(["", f"## Sheet: {sheet.title}", ""])
            rows: list[list[str]] = []
            for index, values in enumerate(sheet.iter_rows(values_only=True)):
                if index >= _MAX_SHEET_ROWS:
                    truncated.append(sheet.title)
                    break
                rows.append([_cell_value(value) for value in values])
            out.extend(markdown_table(_trim_columns(rows)))
    finally:
        workbook.close()
    meta: dict[str, Any] = {"sheets": len(names), "sheet_names": names}
    if truncated:
        meta["truncated_sheets"] = truncated
    return clean_lines(out), meta


def _cell_value(value: object) -> str:
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return cell_text(value)


def _trim_columns(rows: list[list[str]]) -> list[list[str]]:
    width = 0
    for row in rows:
        for index in range(len(row) - 1, -1, -1):
            if row[index]:
                width = max(width, index + 1)
                break
    return [row[:width] for row in rows]
