"""Page types (guide, reference, example) and what type of page a query asks for.

A page's type comes from its folders, a query's from its wording (see docs/benchmarks-docs.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

__all__ = ["PagePrior", "page_factor", "page_type", "query_intent"]

_REFERENCE_DIRS: Final = frozenset(
    {"reference", "references", "api", "api-reference", "api_reference", "apis"}
)
_EXAMPLE_DIRS: Final = frozenset(
    {"examples", "example", "cookbook", "cookbooks", "recipes", "samples", "showcase"}
)
_EXAMPLE_WORDS = re.compile(r"\b(?:examples?|samples?|demos?|snippets?)\b")
_REFERENCE_WORDS = re.compile(
    r"\b(?:options|parameters|params|arguments|args|props|properties|signature|returns?|"
    r"return type|accepts?|constructor|fields|methods|api reference)\b"
)
_GUIDE_START = re.compile(r"^(?:how|why|when|where|can|should|is it|what is|what are)\b")


@dataclass(frozen=True, slots=True, kw_only=True)
class PagePrior:
    """Score multipliers by page type (``1.0`` and ``1.0`` switch the prior off)."""

    guide: float = 1.3
    """For guide pages (neither reference nor example)."""
    match: float = 1.5
    """For a page whose type is the one the query asks for."""

    def __post_init__(self) -> None:
        if not (self.guide > 0 and self.match > 0):
            msg = f"Page prior factors must be > 0, got guide={self.guide}, match={self.match}."
            raise ValueError(msg)


def page_type(path: str) -> str:
    """``guide``, ``reference`` or ``example``, from the page's folders."""
    folders = {part.lower() for part in PurePosixPath(path).parts[:-1]}
    if folders & _REFERENCE_DIRS:
        return "reference"
    if folders & _EXAMPLE_DIRS:
        return "example"
    return "guide"


def query_intent(query: str) -> str | None:
    """The page type a query asks for (``example``, ``reference``, ``guide``), else ``None``."""
    text = " ".join(query.lower().split())
    if _EXAMPLE_WORDS.search(text):
        return "example"
    if _REFERENCE_WORDS.search(text):
        return "reference"
    if _GUIDE_START.search(text):
        return "guide"
    return None


def page_factor(page: str, intent: str | None, prior: PagePrior) -> float:
    """The multiplier of a page of type ``page`` for a query asking for ``intent``."""
    factor = prior.guide if page == "guide" else 1.0
    if intent is not None and page == intent:
        factor *= prior.match
    return factor
