"""OpenDocument Text (ODT) to Markdown, reading ``content.xml`` with BeautifulSoup."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from workspace_tools.core.convert._common import (
    cell_text,
    check_zip,
    clean_lines,
    escape_line,
    make_soup,
    markdown_table,
    require,
)
from workspace_tools.core.errors import ConversionError

__all__ = ["convert_odt"]


def convert_odt(data: bytes, *, name: str) -> tuple[str, dict[str, Any]]:
    """Convert ODT bytes: ``text:h`` outline levels become headings, lists items, tables tables."""
    check_zip(data, name=name, kind="ODT")
    bs4 = require("bs4", suffix=".odt")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        try:
            content = archive.read("content.xml")
        except KeyError as exc:
            msg = f"corrupt: {name} is not an OpenDocument file (no content.xml)"
            raise ConversionError(msg) from exc
    soup = make_soup(bs4, content, "html.parser")
    body = soup.find("office:text")
    if body is None:
        msg = f"unsupported: {name} holds no text document (office:text missing)"
        raise ConversionError(msg)
    out: list[str] = []
    counts = {"headings": 0, "tables": 0}
    for child in body.find_all(recursive=False):
        _block(child, out, counts, depth=0)
    return clean_lines(out), dict(counts)


def _block(tag: Any, out: list[str], counts: dict[str, int], *, depth: int) -> None:
    name = tag.name
    if name == "text:h":
        level = int(tag.get("text:outline-level", "1") or 1)
        out.extend(["", "#" * min(max(level, 1), 6) + " " + _text(tag), ""])
        counts["headings"] += 1
    elif name == "text:p":
        text = _text(tag)
        if text:
            out.extend([escape_line(text), ""])
    elif name == "text:list":
        for item in tag.find_all("text:list-item", recursive=False):
            for part in item.find_all(recursive=False):
                if part.name == "text:list":
                    _block(part, out, counts, depth=depth + 1)
                elif _text(part):
                    out.append("  " * depth + "- " + _text(part))
        out.append("")
    elif name == "table:table":
        rows = [
            [cell_text(_text(cell)) for cell in row.find_all("table:table-cell")]
            for row in tag.find_all("table:table-row")
        ]
        out.extend(["", *markdown_table(rows), ""])
        counts["tables"] += 1
    elif name in {"text:section", "text:soft-page-break"} or name.startswith("text:"):
        for child in tag.find_all(recursive=False):
            _block(child, out, counts, depth=depth)


def _text(tag: Any) -> str:
    for space in tag.find_all(["text:s", "text:tab", "text:line-break"]):
        space.replace_with(" ")
    return " ".join(tag.get_text().split())
