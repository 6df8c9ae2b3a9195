"""``{a,b}`` brace patterns of globs, expanded into the patterns they stand for."""

from __future__ import annotations

import re
from typing import Final

from workspace_tools.core.errors import InvalidInputError

__all__ = ["MAX_BRACE_PATTERNS", "expand_braces"]

MAX_BRACE_PATTERNS: Final = 256
"""Most patterns one ``{a,b}`` glob may expand to (each one is matched, some walked)."""

_BRACES: Final = re.compile(r"\{([^{}]*)\}")


def expand_braces(pattern: str, *, limit: int = MAX_BRACE_PATTERNS) -> list[str]:
    """All the patterns a ``{a,b}`` brace pattern stands for (at most ``limit``).

    Raises:
        InvalidInputError: The braces multiply to more than ``limit`` patterns.
    """
    out: list[str] = []
    stack = [pattern]
    while stack:
        current = stack.pop()
        match = _BRACES.search(current)
        if match is None:
            out.append(current)
            if len(out) > limit:
                _too_many_patterns(pattern, limit)
            continue
        if len(stack) + len(out) > limit:
            _too_many_patterns(pattern, limit)
        head, tail = current[: match.start()], current[match.end() :]
        stack.extend(head + option + tail for option in reversed(match.group(1).split(",")))
    return out


def _too_many_patterns(pattern: str, limit: int) -> None:
    groups = _BRACES.findall(pattern)
    flat = "".join(f"{{{g}}}" for g in groups).count("{") == pattern.count("{")
    count = 1
    for group in groups:
        count *= len(group.split(","))
    many = f"{count} patterns" if flat else f"more than {limit} patterns"
    msg = (
        f"Glob {pattern[:100]!r} expands to {many} through its {{a,b}} braces; the limit is "
        f"{limit}. Use fewer brace options, or a wildcard such as '*' or '**'."
    )
    raise InvalidInputError(msg)
