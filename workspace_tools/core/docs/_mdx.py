"""Markdown and MDX pages: frontmatter, sections, and MDX noise blanked (lines kept)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final

import yaml

from workspace_tools.core.text.chunking import is_markdown_heading
from workspace_tools.core.text.safe_yaml import UnsafeYamlError, load_yaml

__all__ = ["DocsPage", "first_paragraph", "parse_page"]

logger = logging.getLogger(__name__)

MAX_FRONTMATTER_CHARS: Final = 64_000
"""Frontmatter longer than this is ignored (with a warning) before YAML sees it."""
MAX_FIELD_CHARS: Final = 1000
"""Title and description are cut to this many characters."""
_FRONTMATTER: Final = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*$\n?", re.S | re.M)
_FENCE: Final = re.compile(r"^\s*(```|~~~)")
_IMPORT_EXPORT: Final = re.compile(r"^(?:import|export)\s")
_COMMENT: Final = re.compile(r"\{/\*.*?\*/\}|<!--.*?-->")
_TAG_NAME: Final = (
    r"(?:[A-Z][\w.]*|a|b|br|code|details|div|em|hr|i|iframe|img|kbd|li|ol|p|pre|source|span"
    r"|strong|sub|summary|sup|table|tbody|td|th|thead|tr|u|ul|video)"
)
_TAG: Final = re.compile(rf"</?{_TAG_NAME}(?:\s(?:[^<>{{}}]|\{{[^{{}}]*\}})*)?/?>")
_OPEN_TAG: Final = re.compile(rf"^\s*<{_TAG_NAME}(?:\s|$)")
_NOISE_ATTR: Final = re.compile(
    r"\b(?:className|class|src|srcSet|href|style|width|height|key|id|data-[\w-]+)\s*=\s*"
    r"(?:\"[^\"]*\"|'[^']*'|\{[^}]*\}+)"
)
"""Markup attributes whose values are not prose (kept: alt, title, props such as content)."""
_STRING: Final = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'|`([^`]*)`')
_INLINE_CODE: Final = re.compile(r"(`[^`]*`)")
_LINK: Final = re.compile(r"!?\[([^\]]*)\]\([^)\s]*(?:\s\"[^\"]*\")?\)")
"""A Markdown link or image: its text is kept, its target (a URL or path) is not prose."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DocsPage:
    """One documentation page."""

    path: str
    """Path relative to the docs root, with ``/`` separators."""
    title: str
    """Frontmatter title, else the first heading, else the file name."""
    description: str
    """Frontmatter description, or ``""``."""
    content: str
    """The page text after the frontmatter, as written (MDX included)."""
    body_line: int
    """1-based file line where ``content`` starts (after the frontmatter)."""


def parse_page(path: str, text: str) -> tuple[DocsPage, list[tuple[str, int, str]]]:
    """Split a page into its record and its sections.

    Args:
        path: Page path relative to the docs root.
        text: The whole file.

    Returns:
        The page, and its sections as ``(heading, first file line, cleaned text)``.
    """
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    meta: dict[str, Any] = {}
    body, body_line = text, 1
    match = _FRONTMATTER.match(text)
    if match:
        body, body_line = text[match.end() :], 1 + text[: match.end()].count("\n")
        loaded = _frontmatter(path, match.group(1))
        meta = loaded if isinstance(loaded, dict) else {}
    lines = body.split("\n")
    cleaned = _clean(lines)
    sections: list[tuple[str, int, str]] = []
    start, heading, in_fence = 0, "", False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        found = None if in_fence else is_markdown_heading(line)
        if found is None:
            continue
        if number > start and (heading or any(s.strip() for s in cleaned[start:number])):
            sections.append((heading, body_line + start, "\n".join(cleaned[start:number])))
        start, heading = number, found[1]
        cleaned[number] = ""  # the heading is indexed in its own field
    if heading or any(s.strip() for s in cleaned[start:]):
        sections.append((heading, body_line + start, "\n".join(cleaned[start:])))
    first_heading = next((h for h, _, _ in sections if h), "")
    title = _text(meta.get("title")) or first_heading or PurePosixPath(path).stem
    page = DocsPage(
        path=path,
        title=title,
        description=_text(meta.get("description")),
        content=body,
        body_line=body_line,
    )
    return page, sections


def first_paragraph(texts: Iterable[str], *, limit: int = 300) -> str:
    """The first prose paragraph of cleaned section texts (stands in for a missing description)."""
    for text in texts:
        paragraph: list[str] = []
        for line in text.split("\n"):
            stripped = line.strip()
            if stripped and (paragraph or stripped[0].isalpha()):
                paragraph.append(stripped)
            elif paragraph:
                break
        if paragraph:
            return " ".join(paragraph)[:limit]
    return ""


def _frontmatter(path: str, raw: str) -> Any:
    """``yaml.safe_load`` of a page's frontmatter; ``None`` when too big or an alias bomb."""
    try:
        if len(raw) > MAX_FRONTMATTER_CHARS:
            logger.warning("Ignoring the frontmatter of %s: over %d characters", path, len(raw))
            return None
        return load_yaml(raw)
    except (UnsafeYamlError, yaml.YAMLError) as exc:
        logger.warning("Ignoring the frontmatter of %s: %s", path, exc)
        return None


def _text(value: object) -> str:
    return "" if value is None else str(value).strip()[:MAX_FIELD_CHARS]


def _clean(lines: list[str]) -> list[str]:
    """Blank MDX noise line by line (same number of lines out as in)."""
    out: list[str] = []
    in_fence, in_tag = False, False
    depth = 0
    for line in lines:
        if in_tag:
            out.append(_strings(line))
            in_tag, depth = _tag_open(line, depth)
            continue
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append("")
        elif in_fence:
            out.append(line)
        elif _IMPORT_EXPORT.match(line):
            out.append("")
        elif _OPEN_TAG.match(line) and _tag_open(line.lstrip()[1:], 0)[0]:
            in_tag, depth = _tag_open(line.lstrip()[1:], 0)
            out.append(_strings(line))
        else:
            parts = _INLINE_CODE.split(_COMMENT.sub(" ", line))
            out.append("".join(p if i % 2 else _prose(p) for i, p in enumerate(parts)))
    return out


def _prose(text: str) -> str:
    return _LINK.sub(r"\1", _TAG.sub(" ", text))


def _tag_open(text: str, depth: int) -> tuple[bool, int]:
    """Whether a JSX opening tag is still open after ``text``, and its ``{}`` depth."""
    quote = ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'`":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ">" and depth <= 0:
            return False, 0
    return True, depth


def _strings(line: str) -> str:
    """The string literals of a line of component props."""
    line = _NOISE_ATTR.sub(" ", line)
    return " ".join(next(g for g in m.groups() if g is not None) for m in _STRING.finditer(line))
