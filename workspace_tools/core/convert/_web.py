"""HTML and EPUB (BeautifulSoup + markdownify) and EML (standard library) to Markdown."""

from __future__ import annotations

import importlib.util
import io
import posixpath
import re
import zipfile
from email import policy
from email.parser import BytesParser
from typing import Any, Final
from urllib.parse import unquote

from workspace_tools.core.convert._common import check_zip, clean_lines, make_soup, require
from workspace_tools.core.errors import ConversionError

__all__ = ["convert_eml", "convert_epub", "convert_html", "html_to_markdown"]

_DROP_TAGS: Final = ("script", "style", "noscript", "template", "svg", "iframe", "object", "canvas")
_DECLARED_CHARSET: Final = re.compile(rb"<meta[^>]+charset|<\\?xml[^>]+encoding", re.IGNORECASE)
_MAX_ATTACHMENT_NAMES: Final = 100
"""Attachment names kept (in the text and the metadata copied onto every chunk)."""
_HTML_TYPES: Final = ("application/xhtml+xml", "text/html")


def html_to_markdown(data: bytes | str, *, suffix: str = ".html") -> tuple[str, str]:
    """Convert HTML to Markdown (non-text elements dropped): ``(markdown, title)``."""
    bs4 = require("bs4", suffix=suffix)
    markdownify = require("markdownify", suffix=suffix)
    soup = make_soup(bs4, data, _parser(), encoding=_fallback_encoding(data))
    title_tag = soup.find("title")
    title = " ".join(title_tag.get_text(" ").split()) if title_tag is not None else ""
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    head = soup.find("head")
    if head is not None:
        head.decompose()
    for image in soup.find_all("img"):
        image.replace_with(image.get("alt") or "")
    converter = markdownify.MarkdownConverter(
        heading_style="ATX",
        bullets="-",
        escape_asterisks=False,
        escape_underscores=False,
        escape_misc=False,
        strip=["img"],
    )
    return converter.convert_soup(soup), title


def _fallback_encoding(data: bytes | str) -> str | None:
    """The encoding to impose when the page declares none: UTF-8 if valid, else windows-1252."""
    if isinstance(data, str) or data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return None
    if _DECLARED_CHARSET.search(data[:4096]):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "windows-1252"
    return "utf-8"


def _parser() -> str:
    """``lxml`` when installed (python-docx brings it; much faster), else the stdlib parser."""
    return "lxml" if importlib.util.find_spec("lxml") is not None else "html.parser"


def convert_html(data: bytes, *, name: str) -> tuple[str, dict[str, Any]]:
    """Convert an HTML page; its ``<title>`` opens the text as a plain line."""
    del name
    markdown, title = html_to_markdown(data)
    lines = [title, ""] if title else []
    meta: dict[str, Any] = {"title": title} if title else {}
    return clean_lines([*lines, markdown]), meta


def convert_epub(data: bytes, *, name: str) -> tuple[str, dict[str, Any]]:
    """Convert an EPUB: its spine documents in reading order, each through the HTML converter."""
    check_zip(data, name=name, kind="EPUB")
    bs4 = require("bs4", suffix=".epub")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())
        if "META-INF/encryption.xml" in names:
            encryption = archive.read("META-INF/encryption.xml").decode("utf-8", "replace")
            if ".xhtml" in encryption or ".html" in encryption:
                msg = f"encrypted: {name} is a DRM-protected EPUB (its chapters are encrypted)"
                raise ConversionError(msg)
        opf_path = _opf_path(archive, bs4, name=name)
        opf = make_soup(bs4, archive.read(opf_path), "html.parser")
        base = posixpath.dirname(opf_path)
        manifest = {
            item.get("id"): (item.get("href") or "", item.get("media-type") or "")
            for item in opf.find_all("item")
        }
        out: list[str] = []
        chapters = 0
        for ref in opf.find_all("itemref"):
            href, media_type = manifest.get(ref.get("idref"), ("", ""))
            if media_type not in _HTML_TYPES:
                continue
            member = posixpath.normpath(posixpath.join(base, unquote(href.split("#", 1)[0])))
            if member not in names:
                continue
            markdown, _ = html_to_markdown(archive.read(member), suffix=".epub")
            out.extend(["", markdown])
            chapters += 1
    title_tag = opf.find("dc:title")
    meta: dict[str, Any] = {"chapters": chapters}
    if title_tag is not None and title_tag.get_text().strip():
        meta["title"] = " ".join(title_tag.get_text().split())
    return clean_lines(out), meta


def _opf_path(archive: zipfile.ZipFile, bs4: Any, *, name: str) -> str:
    try:
        container = make_soup(bs4, archive.read("META-INF/container.xml"), "html.parser")
    except KeyError as exc:
        msg = f"corrupt: {name} is not an EPUB (no META-INF/container.xml)"
        raise ConversionError(msg) from exc
    rootfile = container.find("rootfile")
    path = rootfile.get("full-path") if rootfile is not None else None
    if not path or path not in archive.namelist():
        msg = f"corrupt: {name} names no readable package document (OPF) in its container.xml"
        raise ConversionError(msg)
    return str(path)


def convert_eml(data: bytes, *, name: str) -> tuple[str, dict[str, Any]]:
    """Convert an RFC 822 email: ``# Subject``, the address lines, the body, attachment names."""
    message = BytesParser(policy=policy.default).parsebytes(data)
    subject = " ".join(str(message.get("subject", "") or "").split())
    if not subject and not message.keys():
        msg = f"corrupt: {name} has no email headers"
        raise ConversionError(msg)
    out = [f"# {subject}" if subject else "# (no subject)", ""]
    meta: dict[str, Any] = {"subject": subject}
    for header in ("from", "to", "cc", "date"):
        value = message.get(header)
        if value:
            text = " ".join(str(value).split())
            out.append(f"{header.capitalize()}: {text}")
            meta[header] = text
    out.append("")
    body = message.get_body(preferencelist=("plain", "html"))
    if body is not None:
        content = body.get_content()
        if isinstance(content, bytes):
            content = content.decode("utf-8", "replace")
        if body.get_content_subtype() == "html":
            content, _ = html_to_markdown(content, suffix=".eml")
        out.append(content)
    attachments: list[str] = []
    count = 0
    for count, part in enumerate(message.iter_attachments(), start=1):
        if count <= _MAX_ATTACHMENT_NAMES:
            attachments.append(part.get_filename() or "unnamed")
    if attachments:
        more = f" and {count - len(attachments)} more" if count > len(attachments) else ""
        out.extend(["", "Attachments: " + ", ".join(attachments) + more])
        meta["attachments"] = attachments
        if more:
            meta["attachment_count"] = count
    return clean_lines(out), meta
