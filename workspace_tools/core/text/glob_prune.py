"""Which folders a glob walk must enter: the ones a match can lie in or under.

For ``src/*/tests/**/*.py``: ``src/app`` may hold a match, ``src/app/docs`` cannot.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Final

__all__ = ["both", "folder_filter"]

_MAX_STARS: Final = 4
"""Patterns with more ``**`` segments than this are not pruned (the test grows with them)."""
_UNSURE: Final = re.compile(r"\\")


def _segment_matches(name: str, segment: str) -> bool:
    if _UNSURE.search(segment):
        return True
    return fnmatch.fnmatchcase(name, segment)


def _could_hold(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Whether a path in or under the folder ``parts`` can match ``pattern`` (or lie in a match)."""

    @cache
    def step(p: int, d: int) -> bool:
        if d == len(parts) or p == len(pattern):
            return True  # the folder is a prefix of a match, or under a matched folder
        segment = pattern[p]
        if segment == "**":
            return step(p + 1, d) or step(p, d + 1)
        return _segment_matches(parts[d], segment) and step(p + 1, d + 1)

    return step(0, 0)


def folder_filter(patterns: Sequence[str]) -> Callable[[str], bool] | None:
    """Whether a match of ``patterns`` (no braces) may lie in or under a folder; ``None``: any."""
    split: list[tuple[str, ...]] = []
    for pattern in patterns:
        parts = tuple(part for part in pattern.strip("/").split("/") if part)
        if not parts or parts.count("**") > _MAX_STARS:
            return None
        split.append(parts)

    def may_hold(rel: str) -> bool:
        folder = tuple(rel.split("/")) if rel else ()
        return any(_could_hold(parts, folder) for parts in split)

    return may_hold


def both(
    first: Callable[[str], bool] | None, second: Callable[[str], bool] | None
) -> Callable[[str], bool] | None:
    """A folder predicate holding where both do (``None`` stands for "every folder")."""
    if first is None or second is None:
        return first or second
    return lambda rel: first(rel) and second(rel)
