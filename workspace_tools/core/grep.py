"""Literal or regex line search over workspace files (converted), with context, headings, caps.

Matching uses the ``regex`` module under per-file and total time budgets.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import regex  # type: ignore[import-untyped]

from workspace_tools.core.convert import UNIT_FORMATS, Converted, convert_bytes, locate_unit
from workspace_tools.core.errors import ConversionError, InvalidInputError
from workspace_tools.core.grep_limits import (
    DEFAULT_MAX_MATCHES,
    DEFAULT_MAX_PER_FILE,
    DEFAULT_WIDTH,
    FILE_TIMEOUT,
    MAX_GROUP_DEPTH,
    MAX_LINE_CHARS,
    MAX_PATTERN_CHARS,
    TOTAL_TIMEOUT,
)
from workspace_tools.core.text.chunking import is_markdown_heading
from workspace_tools.core.text.mounts import Mounts
from workspace_tools.core.text.regex_shape import group_depth, recursive_call
from workspace_tools.core.text.scan import ScanConfig, is_glob, scan
from workspace_tools.core.text.snippets import HIT_CLOSE, HIT_OPEN
from workspace_tools.core.text.validate import check_unicode
from workspace_tools.core.text.within import (
    folders_within,
    keep_within,
    narrow_entries,
    within_entries,
)
from workspace_tools.core.types import SkippedFile

__all__ = [
    "DEFAULT_MAX_MATCHES",
    "DEFAULT_MAX_PER_FILE",
    "FILE_TIMEOUT",
    "MAX_GROUP_DEPTH",
    "MAX_LINE_CHARS",
    "MAX_PATTERN_CHARS",
    "TOTAL_TIMEOUT",
    "FileSearch",
    "GrepMatch",
    "GrepReport",
    "collect_files",
    "compile_pattern",
    "converted_files",
    "grep",
    "looks_like_regex",
]

_FENCE: Final = re.compile(r"^\s*(```|~~~)")
_REGEX_HINT: Final = re.compile(
    r"\\[dwsbDWSB]|\.\*|\.\+|\[[^\]]+\]|\(\?|\|.+|\{\d+(,\d*)?\}|^\^|\$$"
)
Converter = Callable[[Path, bytes], Converted]


@dataclass(frozen=True, slots=True)
class GrepMatch:
    """One matching line."""

    path: str
    """File id: POSIX path relative to the workspace root."""
    line: int
    """1-based line number in the (converted) text."""
    column: int
    """1-based column of the first hit on the line."""
    text: str
    """The line, cut to about the display width around its hits, hits marked ``<<like this>>``."""
    hits: int
    headings: tuple[str, ...] = ()
    """Markdown heading path in force at the line, outermost first."""
    before: tuple[tuple[int, str], ...] = ()
    """Context lines before the match: ``(line, text)``."""
    after: tuple[tuple[int, str], ...] = ()
    """Context lines after the match: ``(line, text)``."""
    units: dict[str, int | str] = field(default_factory=dict)
    """Page, slide or sheet of the line in a rich document (``{"page": 2}``), else empty."""

    @property
    def section_heading(self) -> str | None:
        """Innermost heading in force at the line, if any."""
        return self.headings[-1] if self.headings else None

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "text": self.text,
            "hits": self.hits,
            "section_heading": self.section_heading,
            "headings": list(self.headings),
            "before": [list(pair) for pair in self.before],
            "after": [list(pair) for pair in self.after],
            **self.units,
        }


@dataclass(slots=True)
class GrepReport:
    """What a :func:`grep` found, and what it left out."""

    matches: list[GrepMatch] = field(default_factory=list)
    files_searched: int = 0
    files_matched: int = 0
    truncated: bool = False
    """More matching lines exist than were returned (global cap or total time budget)."""
    capped_files: list[str] = field(default_factory=list)
    """Files that had more matching lines than the per-file cap."""
    timed_out: list[str] = field(default_factory=list)
    """Files whose matching ran over the per-file time budget (partially searched)."""
    long_lines: int = 0
    """Lines longer than ``max_line_chars``, searched only in their first part."""
    skipped: list[SkippedFile] = field(default_factory=list)
    """Files not searched (binary, unconvertible, too large...), with reasons."""

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "matches": [m.to_dict() for m in self.matches],
            "files_searched": self.files_searched,
            "files_matched": self.files_matched,
            "truncated": self.truncated,
            "capped_files": list(self.capped_files),
            "timed_out": list(self.timed_out),
            "long_lines": self.long_lines,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


def looks_like_regex(pattern: str) -> bool:
    """True when a pattern searched literally looks like it was meant as a regex."""
    return bool(_REGEX_HINT.search(pattern))


def compile_pattern(pattern: str, *, regex_mode: bool = False, ignore_case: bool = False) -> Any:
    """Compile ``pattern`` (escaped unless ``regex_mode``) with the ``regex`` module.

    Raises:
        InvalidInputError: empty, too long, multi-line, or an invalid regular expression.
    """
    if not pattern:
        msg = "The search pattern is empty. Give a word, a phrase or a regular expression."
        raise InvalidInputError(msg)
    if len(pattern) > MAX_PATTERN_CHARS:
        msg = f"The pattern is {len(pattern)} characters long; the limit is {MAX_PATTERN_CHARS}."
        raise InvalidInputError(msg)
    if "\n" in pattern:
        msg = "The pattern contains a line break, but grep matches one line at a time."
        raise InvalidInputError(msg)
    check_unicode(pattern, what=f"The pattern {pattern[:80]!r}")
    depth = group_depth(pattern) if regex_mode else 0
    if depth > MAX_GROUP_DEPTH:
        msg = (
            f"Invalid regular expression {pattern[:80]!r}: its groups nest {depth} deep; the "
            f"limit is {MAX_GROUP_DEPTH}. Simplify the pattern, or pass regex=false to search "
            "for the text literally."
        )
        raise InvalidInputError(msg)
    call = recursive_call(pattern) if regex_mode else None
    if call is not None:
        msg = (
            f"Invalid regular expression {pattern[:80]!r}: {call!r} calls a group (or the whole "
            "pattern) recursively, which grep does not support: a recursion that consumes "
            "nothing grows without bound. Write the repetition out, or pass regex=false to "
            "search for the text literally."
        )
        raise InvalidInputError(msg)
    flags = regex.V0 | (regex.IGNORECASE | regex.FULLCASE if ignore_case else 0)
    try:
        return regex.compile(pattern if regex_mode else regex.escape(pattern), flags)
    except (regex.error, ValueError, TypeError, OverflowError, RecursionError) as exc:
        # clashing flags, deep nesting...: a bad pattern, not a crash
        msg = (
            f"Invalid regular expression {pattern!r}: {exc}. Fix the pattern, or pass "
            "regex=false to search for the text literally."
        )
        raise InvalidInputError(msg) from exc


def grep(
    root: Path,
    pattern: str,
    paths: Sequence[str] | None = None,
    *,
    regex_mode: bool = False,
    ignore_case: bool = False,
    context_lines: int = 0,
    max_matches: int = DEFAULT_MAX_MATCHES,
    max_per_file: int = DEFAULT_MAX_PER_FILE,
    recursive: bool = True,
    config: ScanConfig | None = None,
    convert: Converter | None = None,
    width: int = DEFAULT_WIDTH,
    max_line_chars: int = MAX_LINE_CHARS,
    file_timeout: float = FILE_TIMEOUT,
    total_timeout: float = TOTAL_TIMEOUT,
    within: Sequence[str] | None = None,
    mounts: Mounts | None = None,
) -> GrepReport:
    """Find the lines matching ``pattern`` in files under ``root``.

    Args:
        root: Absolute, resolved root; every path must lie inside it (symlinks included).
        pattern: Text to find, or a regular expression with ``regex_mode``.
        paths: Files, directories and globs relative to ``root`` (default: the root).
        regex_mode: Treat ``pattern`` as a regular expression (``regex`` module, ``re`` syntax).
        ignore_case: Case-insensitive matching.
        context_lines: Lines of context kept before and after each match (0-10).
        max_matches: Matching lines returned at most; when more exist, ``truncated`` is set.
        max_per_file: Matching lines taken from one file at most.
        recursive: Walk into subdirectories of directory paths.
        config: Scan limits (gitignore, hidden files, size); default :class:`ScanConfig`.
        convert: File-to-text conversion (default ``convert_bytes``, as ``sync`` uses).
        width: Characters of a line shown around its hits.
        max_line_chars: Only this many leading characters of a line are searched.
        file_timeout: Seconds of matching per file.
        total_timeout: Seconds of matching for the whole search.
        within: Only files in these root-relative folders (``None``: anywhere in ``root``).
        mounts: The folders mounted under prefixes of ``root`` (docs/mounts.md).

    Returns:
        The matches in path and line order, and what was capped, timed out or skipped.

    Raises:
        InvalidInputError: a bad pattern or argument, a missing path, or no readable file.
        PathOutsideWorkspaceError: a path outside ``root`` (``..``, absolute, symlink escape).
    """
    compiled = compile_pattern(pattern, regex_mode=regex_mode, ignore_case=ignore_case)
    if not 0 <= context_lines <= 10:
        msg = f"context_lines must be between 0 and 10, got {context_lines}."
        raise InvalidInputError(msg)
    if max_matches < 1 or max_per_file < 1:
        msg = f"max_matches and max_per_file must be at least 1, got {max_matches}, {max_per_file}."
        raise InvalidInputError(msg)
    mounts = mounts or Mounts(root)
    files, skipped = collect_files(
        root, paths, config=config, recursive=recursive, within=within, mounts=mounts
    )
    report = GrepReport(skipped=skipped)
    deadline = time.monotonic() + total_timeout
    for rel, converted in converted_files(mounts, files, config, convert, report.skipped):
        report.files_searched += 1
        budget = min(time.monotonic() + file_timeout, deadline)
        search = FileSearch(compiled, width=width, max_line_chars=max_line_chars, budget=budget)
        room = max_matches - len(report.matches)
        found = search.run(rel, converted, context_lines, limit=min(max_per_file, room) + 1)
        report.long_lines += search.long_lines
        if found:
            report.files_matched += 1
        if len(found) > room:
            report.matches.extend(found[:room])
            report.truncated = True
            break
        if len(found) > max_per_file:
            report.capped_files.append(rel)
            found = found[:max_per_file]
        report.matches.extend(found)
        if search.timed_out:
            report.timed_out.append(rel)
            if time.monotonic() >= deadline:
                report.truncated = True
                break
    return report


def converted_files(
    mounts: Mounts,
    files: dict[str, Path],
    config: ScanConfig | None,
    convert: Converter | None,
    skipped: list[SkippedFile],
) -> Iterator[tuple[str, Converted]]:
    """Each file's converted text, read inside its folder; the unreadable go to ``skipped``."""
    cfg = config or ScanConfig()
    to_text = convert or convert_bytes
    for rel, absolute in files.items():
        try:
            data, _ = cfg.read(*mounts.route(rel))
            converted = to_text(absolute, data)
        except (ConversionError, InvalidInputError) as exc:  # over a budget, a link swapped...
            skipped.append(SkippedFile(path=rel, reason=str(exc)))
            continue
        except OSError as exc:
            skipped.append(SkippedFile(path=rel, reason=f"unreadable: {exc.strerror or exc}"))
            continue
        yield rel, converted


def collect_files(
    root: Path,
    paths: Sequence[str] | None,
    *,
    config: ScanConfig | None = None,
    recursive: bool = True,
    within: Sequence[str] | None = None,
    mounts: Mounts | None = None,
) -> tuple[dict[str, Path], list[SkippedFile]]:
    """Files named by ``paths`` (files, folders, globs; default the root), checked to lie inside.

    With ``within`` (root-relative folders), only the files in them count; ``mounts``: the
    folders mounted under prefixes of ``root``.

    Returns:
        Id -> absolute path of every file found, and the files left out with reasons.

    Raises:
        PathOutsideWorkspaceError: a path leaves ``root`` (``..``, absolute, symlink escape).
        InvalidInputError: a path does not exist, or no readable file was found.
    """
    mounts = mounts or Mounts(root)
    entries = list(paths) if paths else ["."]
    if not paths and within is not None:
        entries = within_entries(mounts, within)
    for entry in entries:
        if is_glob(entry):
            continue
        resolved = mounts.resolve(entry)
        if not resolved.exists():
            msg = (
                f"No file or folder {entry!r} in the workspace. Give paths relative to the "
                "workspace root (files, folders or globs such as 'docs/**/*.md')."
            )
            raise InvalidInputError(msg)
    if paths and within is not None and recursive:
        entries = narrow_entries(mounts, entries, within)
    cfg = config or ScanConfig()
    if not recursive:
        cfg = dataclasses.replace(cfg, max_depth=0)
    folders = folders_within(within) if within is not None else None
    walk = mounts.scan if mounts else functools.partial(scan, root)
    found = walk(entries, config=cfg, folders=folders)
    skipped = [s for s in found.skipped if recursive or not s.reason.startswith("depth limit")]
    if within is not None and found.files:
        found.files, skipped = keep_within(found.files, skipped, within, entries=entries)
    if not found.files:
        shown = ", ".join(repr(e) for e in entries)
        reasons = "; ".join(f"{s.path}: {s.reason}" for s in skipped[:3])
        msg = (
            f"No readable files in {shown}. Check the paths (relative to the workspace root); "
            "ignored, hidden and oversized files are left out."
            + (f" Left out: {reasons}." if reasons else "")
        )
        raise InvalidInputError(msg)
    return found.files, skipped


class FileSearch:
    """Matching of one compiled pattern over one file's lines, within a time budget."""

    def __init__(self, compiled: Any, *, width: int, max_line_chars: int, budget: float) -> None:
        self.compiled = compiled
        self.width = width
        self.max_line_chars = max_line_chars
        self.budget = budget
        self.long_lines = 0
        self.timed_out = False

    def count(self, converted: Converted) -> int:
        """Matching lines of the text (up to where the time budget ran out)."""
        text = converted.text
        if not _may_span(self.compiled) and not self._any(text):
            return 0
        lines = text.split("\n")
        if len(lines) > 1 and not lines[-1]:
            lines.pop()
        total = 0
        for line in lines:
            spans = self._spans(line)
            if spans is None:
                break
            total += bool(spans)
        return total

    def run(self, rel: str, converted: Converted, context: int, *, limit: int) -> list[GrepMatch]:
        """The first ``limit`` matching lines of the text, with ``context`` lines around."""
        text = converted.text
        if not _may_span(self.compiled) and not self._any(text):
            return []
        units = converted.format in UNIT_FORMATS
        lines = text.split("\n")
        if len(lines) > 1 and not lines[-1]:
            lines.pop()  # the final newline does not start a line
        out: list[GrepMatch] = []
        stack: list[tuple[int, str]] = []
        in_fence = False
        for index, line in enumerate(lines):
            if converted.markdown:
                if _FENCE.match(line):
                    in_fence = not in_fence
                elif not in_fence and (heading := is_markdown_heading(line)) is not None:
                    while stack and stack[-1][0] >= heading[0]:
                        stack.pop()
                    stack.append(heading)
            spans = self._spans(line)
            if spans is None:
                break
            if not spans:
                continue
            out.append(
                GrepMatch(
                    path=rel,
                    line=index + 1,
                    column=spans[0][0] + 1,
                    text=_cut(line, spans, self.width),
                    hits=len(spans),
                    headings=tuple(title for _, title in stack),
                    before=_context(lines, max(0, index - context), index, self.width),
                    after=_context(
                        lines, index + 1, min(len(lines), index + 1 + context), self.width
                    ),
                    units=dict(locate_unit(text, index + 1)) if units else {},
                )
            )
            if len(out) >= limit:
                break
        return out

    def _any(self, text: str) -> bool:
        """Cheap whole-text pre-check (exact for patterns without anchors or lookarounds)."""
        try:
            remaining = max(0.001, self.budget - time.monotonic())
            return self.compiled.search(text, timeout=remaining) is not None
        except TimeoutError:
            return True  # let the line scan spend (and report) the budget

    def _spans(self, line: str) -> list[tuple[int, int]] | None:
        """Hit spans of a line; ``None`` when the time budget ran out."""
        if len(line) > self.max_line_chars:
            self.long_lines += 1
            line = line[: self.max_line_chars]
        remaining = self.budget - time.monotonic()
        if remaining <= 0:
            self.timed_out = True
            return None
        try:
            return [
                m.span()
                for m in self.compiled.finditer(line, timeout=remaining)
                if m.end() > m.start()
            ]
        except TimeoutError:
            self.timed_out = True
            return None


def _may_span(compiled: Any) -> bool:
    """Whether a whole-text pre-check could miss a line match (anchors and lookarounds)."""
    return any(token in compiled.pattern for token in ("^", "$", "\\A", "\\Z", "(?", "\\b", "\\B"))


def _context(lines: list[str], start: int, stop: int, width: int) -> tuple[tuple[int, str], ...]:
    return tuple((i + 1, _clip(lines[i], width)) for i in range(start, stop))


def _clip(line: str, width: int) -> str:
    return line if len(line) <= width else line[:width] + "…"


def _cut(line: str, spans: list[tuple[int, int]], width: int) -> str:
    """The line around its first hit, at most about ``width`` characters, hits marked."""
    begin, end = 0, len(line)
    if len(line) > width:
        first_start, first_end = spans[0]
        begin = max(0, first_start - width // 4)
        end = min(len(line), max(begin + width, first_end))
    parts: list[str] = ["…" if begin > 0 else ""]
    pos = begin
    for start, stop in spans:
        if start < pos or stop > end:
            continue
        parts.append(line[pos:start])
        parts.append(f"{HIT_OPEN}{line[start:stop]}{HIT_CLOSE}")
        pos = stop
    parts.append(line[pos:end])
    if end < len(line):
        parts.append("…")
    return "".join(parts)
