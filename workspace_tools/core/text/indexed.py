"""The text whose BM25 terms are indexed: a chunk's text, link targets out, symbols in.

One rule for every process: the writer tokenizes it, and so does any process that reads another
process's chunk from the database (the stored text is the one source of a chunk's terms).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["bm25_text"]

_LINK_TARGET: Final = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")


def bm25_text(text: str, metadata: Mapping[str, Any]) -> str:
    """The text whose terms are indexed for a chunk of ``text`` with ``metadata``.

    In Markdown, link targets (URLs, paths, anchors) are left out: ``[guide](docs/a.md)`` indexes
    ``guide``. A source file's chunk (format ``code``) adds its ``symbol`` names, whole and by
    part: ``SparseIndex.search`` (or ``SparseIndex search``) finds the method cut from its class.
    """
    format = metadata.get("format")  # noqa: A001 - the metadata key's name
    if format == "markdown" and "](" in text:
        return _LINK_TARGET.sub("]", text)
    if format == "code" and (symbol := metadata.get("symbol")):
        names = " ".join(map(str, symbol)) if isinstance(symbol, list) else str(symbol)
        return f"{text}\n{names} {names.replace('.', ' ')}"
    return text
