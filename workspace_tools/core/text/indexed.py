"""The text whose BM25 terms are indexed: a chunk's text, Markdown link targets left out.

One rule for every process: the writer tokenizes it, and so does any process that reads another
process's chunk from the database (the stored text is the one source of a chunk's terms).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["bm25_text"]

_LINK_TARGET: Final = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")


def bm25_text(text: str, format: object) -> str:  # noqa: A002 - the metadata key's name
    """The part of ``text`` whose terms are indexed (``format``: the chunk's ``format`` metadata).

    In Markdown, link targets (URLs, paths, anchors) are left out: ``[guide](docs/a.md)`` indexes
    ``guide``.
    """
    if format == "markdown" and "](" in text:
        return _LINK_TARGET.sub("]", text)
    return text
