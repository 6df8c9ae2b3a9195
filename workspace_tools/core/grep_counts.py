"""Which files match, and how many lines in each: grep's ``files_with_matches`` and ``count``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.grep import (
    DEFAULT_MAX_MATCHES,
    FILE_TIMEOUT,
    MAX_LINE_CHARS,
    TOTAL_TIMEOUT,
    Converter,
    FileSearch,
    collect_files,
    compile_pattern,
    converted_files,
)
from workspace_tools.core.text.mounts import Mounts
from workspace_tools.core.text.scan import ScanConfig
from workspace_tools.core.types import SkippedFile

__all__ = ["GrepCounts", "grep_counts"]


@dataclass(slots=True)
class GrepCounts:
    """What :func:`grep_counts` found: the matching files and their matching-line counts."""

    counts: list[tuple[str, int]] = field(default_factory=list)
    """``(path, matching lines)`` of each file with a match, in path order."""
    files_searched: int = 0
    truncated: bool = False
    """More files match than were returned (``max_files``) or the total time budget ran out."""
    timed_out: list[str] = field(default_factory=list)
    """Files whose matching ran over the per-file budget (their count is a lower bound)."""
    long_lines: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "counts": [{"path": path, "count": count} for path, count in self.counts],
            "files_searched": self.files_searched,
            "truncated": self.truncated,
            "timed_out": list(self.timed_out),
            "long_lines": self.long_lines,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


def grep_counts(
    root: Path,
    pattern: str,
    paths: Sequence[str] | None = None,
    *,
    regex_mode: bool = False,
    ignore_case: bool = False,
    max_files: int = DEFAULT_MAX_MATCHES,
    recursive: bool = True,
    config: ScanConfig | None = None,
    convert: Converter | None = None,
    max_line_chars: int = MAX_LINE_CHARS,
    file_timeout: float = FILE_TIMEOUT,
    total_timeout: float = TOTAL_TIMEOUT,
    within: Sequence[str] | None = None,
    mounts: Mounts | None = None,
) -> GrepCounts:
    """The files with lines matching ``pattern``, and how many lines match in each.

    Arguments and rules as :func:`~workspace_tools.core.grep.grep`.

    Raises:
        InvalidInputError: a bad pattern or argument, a missing path, or no readable file.
        PathOutsideWorkspaceError: a path outside ``root`` (``..``, absolute, symlink escape).
    """
    compiled = compile_pattern(pattern, regex_mode=regex_mode, ignore_case=ignore_case)
    if max_files < 1:
        msg = f"max_files must be at least 1, got {max_files}."
        raise InvalidInputError(msg)
    mounts = mounts or Mounts(root)
    files, skipped = collect_files(
        root, paths, config=config, recursive=recursive, within=within, mounts=mounts
    )
    report = GrepCounts(skipped=skipped)
    deadline = time.monotonic() + total_timeout
    for rel, converted in converted_files(mounts, files, config, convert, report.skipped):
        report.files_searched += 1
        budget = min(time.monotonic() + file_timeout, deadline)
        search = FileSearch(compiled, width=0, max_line_chars=max_line_chars, budget=budget)
        count = search.count(converted)
        report.long_lines += search.long_lines
        if count:
            if len(report.counts) == max_files:
                report.truncated = True
                break
            report.counts.append((rel, count))
        if search.timed_out:
            report.timed_out.append(rel)
            if time.monotonic() >= deadline:
                report.truncated = True
                break
    return report
