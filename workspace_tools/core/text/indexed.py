"""The text whose BM25 terms are indexed: a chunk's text, link targets out, symbols in."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["bm25_text"]

_LINK_TARGET: Final = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")


def bm25_text(text: str, metadata: Mapping[str, Any]) -> str:
    """The indexed text of a chunk: Markdown link targets out, a code chunk's symbols in."""
    format = metadata.get("format")  # noqa: A001 - the metadata key's name
    if format == "markdown" and "](" in text:
        return _LINK_TARGET.sub("]", text)
    if format == "code" and (symbol := metadata.get("symbol")):
        names = " ".join(map(str, symbol)) if isinstance(symbol, list) else str(symbol)
        return f"{text}\n{names} {names.replace('.', ' ')}"
    return text
