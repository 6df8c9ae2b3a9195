"""Checks on text that arrives from agents and callers before it is stored or used as a path."""

from __future__ import annotations

import re
from typing import Final

from workspace_tools.core.errors import InvalidInputError

__all__ = ["check_unicode"]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def check_unicode(value: str, *, what: str) -> None:
    """Refuse a string holding a lone surrogate (valid in JSON, not encodable as UTF-8).

    Args:
        value: The text.
        what: What it is, for the message (``"Content of 'notes.md'"``, ``"Path 'a/b'"``).

    Raises:
        InvalidInputError: Names the position and the code point.
    """
    if value.isascii():
        return
    try:
        value.encode("utf-8")  # fails exactly on a lone surrogate
    except UnicodeEncodeError:
        pass
    else:
        return
    match = _SURROGATE.search(value)
    if match is None:
        return
    msg = (
        f"{what} contains a lone surrogate \\u{ord(match.group()):04x} at position "
        f"{match.start()} (half of a UTF-16 pair, e.g. a cut emoji), which cannot be stored as "
        "UTF-8. Send whole characters: fix or drop the broken one."
    )
    raise InvalidInputError(msg)
