"""The shape of a regular expression, read before it is compiled: group depth, recursive calls."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import regex  # type: ignore[import-untyped]

__all__ = ["group_depth", "recursive_call"]

_RECURSION: Final = regex.compile(r"\(\?(?:R|[+-]?\d|&|P>)")
"""``(?R)``, ``(?1)``, ``(?+1)``, ``(?-1)``, ``(?&name)``, ``(?P>name)``: recursive calls."""


def _parentheses(pattern: str) -> Iterator[int]:
    """Positions of the ``(`` and ``)`` that open and close groups (escapes, classes skipped)."""
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "]":
                index += 1  # a leading ] is a literal inside the class
        elif char in "()":
            yield index
        index += 1


def recursive_call(pattern: str) -> str | None:
    """The first recursive call in ``pattern``, or None."""
    for index in _parentheses(pattern):
        if pattern[index] == "(" and _RECURSION.match(pattern, index) is not None:
            end = pattern.find(")", index)
            return pattern[index : end + 1 if end > 0 else index + 8]
    return None


def group_depth(pattern: str) -> int:
    """Deepest nesting of groups in ``pattern``."""
    depth = deepest = 0
    for index in _parentheses(pattern):
        if pattern[index] == "(":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest
