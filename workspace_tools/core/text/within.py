"""Confining a call to folders of the workspace: ``within``, a tuple of root-relative paths.

``None``: the whole root; ``("src", "docs/a.md")``: those and all under them; ``()``: nothing.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.text.mounts import Mounts
from workspace_tools.core.text.scan import is_glob
from workspace_tools.core.types import SkippedFile

__all__ = [
    "and_filters",
    "folders_within",
    "is_within",
    "keep_within",
    "narrow_entries",
    "normalise_within",
    "within_entries",
    "within_filter",
]

_AFTER_SLASH: Final = "/\x01"
"""Lower bound of the ids under a folder ``p`` (``p + "/"`` itself would be rewritten)."""
_PAST_SLASH: Final = chr(ord("/") + 1)
"""``"0"``: ``p + "0"`` is the first string after every ``p + "/..."``."""


def normalise_within(paths: Iterable[str] | None) -> tuple[str, ...] | None:
    """``paths`` as clean POSIX prefixes without duplicates or nesting; ``None``: the whole root."""
    if paths is None:
        return None
    cleaned: list[str] = []
    for raw in paths:
        text = posixpath.normpath(raw.replace("\\", "/").strip("/")) if raw.strip("/") else "."
        if text in {".", ""}:
            return None
        cleaned.append(text)
    kept = [p for p in dict.fromkeys(cleaned) if not any(_under(p, q) for q in cleaned if q != p)]
    return tuple(sorted(kept))


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def is_within(source_id: str, within: Sequence[str] | None) -> bool:
    """Whether ``source_id`` (a root-relative POSIX path) lies in ``within``."""
    if within is None:
        return True
    return any(_under(source_id, prefix) for prefix in within)


def folders_within(within: Sequence[str]) -> Callable[[str], bool]:
    """Which folders a walk confined to ``within`` enters: those in it and those around it."""
    return lambda rel: is_within(rel, within) or any(_under(w, rel) for w in within)


def within_filter(
    within: Sequence[str], *, sources: Container[str] | None = None
) -> dict[str, Any]:
    """A ``source_id`` filter holding exactly for the ids in ``within`` (none for ``()``).

    Args:
        within: The folders (see :func:`normalise_within`).
        sources: The ids that are sources (only those get an equality test); ``None``: any.
    """
    if not within:
        return {"source_id": {"$in": []}}
    alternatives: list[dict[str, Any]] = []
    for prefix in within:
        if sources is None or prefix in sources:
            alternatives.append({"source_id": prefix})
        alternatives.append(
            {"source_id": {"$gte": prefix + _AFTER_SLASH, "$lt": prefix + _PAST_SLASH}}
        )
    return alternatives[0] if len(alternatives) == 1 else {"$or": alternatives}


def and_filters(first: Mapping[str, Any] | None, second: Mapping[str, Any]) -> dict[str, Any]:
    """Both filters must hold (``second`` alone when ``first`` is empty)."""
    if not first:
        return dict(second)
    return {"$and": [dict(first), dict(second)]}


# -- file collection (grep, its counts, search_documents' keyword scope) ------------------------


def _shown(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in values) or "none"


def within_entries(mounts: Mounts, within: Sequence[str]) -> list[str]:
    """What to walk for "the whole root" confined to ``within``: its folders that exist.

    Raises:
        InvalidInputError: none of them exists.
    """
    entries = [w for w in within if mounts.path(w).exists()]
    if not entries:
        msg = (
            f"No readable files in the folders this search may see ({_shown(within)}). Index "
            "or add files there, or search the parts of the workspace that are served."
        )
        raise InvalidInputError(msg)
    return entries


def narrow_entries(mounts: Mounts, entries: Sequence[str], within: Sequence[str]) -> list[str]:
    """``entries`` with each folder around ``within`` replaced by ``within``'s folders in it.

    Raises:
        InvalidInputError: no entry meets ``within``.
        PathOutsideWorkspaceError: an entry leaves the root (or its mount).
    """
    out: list[str] = []
    for entry in entries:
        if is_glob(entry):
            out.append(entry)
            continue
        rel = mounts.source_id(mounts.resolve(entry)) or "."
        if rel != "." and is_within(rel, within):
            out.append(entry)
            continue
        inner = [w for w in within if rel == "." or is_within(w, (rel,))]
        out.extend(w for w in inner if mounts.path(w).exists())
    if not out:
        raise _outside(entries, within)
    return list(dict.fromkeys(out))


def keep_within(
    files: dict[str, Path],
    skipped: list[SkippedFile],
    within: Sequence[str],
    *,
    entries: Sequence[str],
) -> tuple[dict[str, Path], list[SkippedFile]]:
    """The collected ``files`` (and ``skipped``) that lie in ``within``.

    Raises:
        InvalidInputError: none of ``files`` does.
    """
    kept = {rel: path for rel, path in files.items() if is_within(rel, within)}
    if not kept:
        raise _outside(entries, within)
    return kept, [s for s in skipped if is_within(s.path, within)]


def _outside(entries: Sequence[str], within: Sequence[str]) -> InvalidInputError:
    return InvalidInputError(
        f"No file of {_shown(entries)} lies in the folders this search may see "
        f"({_shown(within)}). Give paths inside them."
    )
