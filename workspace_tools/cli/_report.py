"""How the CLI prints skipped files: one line per distinct reason, not one per file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

__all__ = ["MAX_SHOWN", "skipped_lines", "summarise_skipped"]

MAX_SHOWN: Final = 50
"""Most lines printed for skipped files; the rest are counted."""
_NAMES: Final = 3


def summarise_skipped(skipped: Sequence[Any]) -> str:
    """``binary 1, missing extra 3``: the count per reason word."""
    counts: dict[str, int] = {}
    for item in skipped:
        key = item.reason.split(":", 1)[0]
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{reason} {count}" for reason, count in sorted(counts.items()))


def skipped_lines(skipped: Sequence[Any]) -> list[str]:
    """One ``  path: reason`` line per reason; files sharing a reason are named together."""
    groups: dict[str, list[str]] = {}
    for item in skipped:
        groups.setdefault(item.reason, []).append(item.path)
    lines: list[str] = []
    for reason, paths in groups.items():
        if len(paths) == 1:
            lines.append(f"  {paths[0]}: {reason}")
            continue
        named = ", ".join(paths[:_NAMES])
        more = f" and {len(paths) - _NAMES} more" if len(paths) > _NAMES else ""
        lines.append(f"  {len(paths)} files ({named}{more}): {reason}")
    if len(lines) > MAX_SHOWN:
        lines = [*lines[:MAX_SHOWN], f"  ... and {len(lines) - MAX_SHOWN} more"]
    return lines
