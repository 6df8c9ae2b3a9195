"""``workspace-tools grep``: literal or regex line search over the workspace's files.

The ``search_documents`` tool's grep mode on converted files, printed like grep's output
(``path:line: text``); exit status 0 on a match, 1 on none, 2 on a bad pattern or path.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from workspace_tools.core.errors import InvalidInputError, WorkspaceError

__all__ = ["add_grep_parser", "cmd_grep"]


def add_grep_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``grep PATTERN [PATHS ...]``.

    Args:
        subparsers: The object returned by ``parser.add_subparsers()``.

    Returns:
        The ``grep`` parser.
    """
    from workspace_tools.core.grep_limits import DEFAULT_MAX_MATCHES

    p = subparsers.add_parser(
        "grep",
        help="find matching lines in the files (literal or regex), PDFs and DOCX included",
        description="Print the lines matching PATTERN in the workspace's files, like grep.",
    )
    p.add_argument("pattern", help="text to find (literal unless -E)")
    p.add_argument(
        "paths",
        nargs="*",
        help="files or folders (relative to the current folder) or glob patterns (relative to "
        "the root); default: the whole root",
    )
    kind = p.add_mutually_exclusive_group()
    kind.add_argument(
        "-E", "--regex", action="store_true", help="PATTERN is a regular expression (re syntax)"
    )
    kind.add_argument(
        "-F", "--fixed-strings", action="store_true", help="PATTERN is literal text (the default)"
    )
    p.add_argument("-i", "--ignore-case", action="store_true", help="case-insensitive matching")
    p.add_argument(
        "-C", "--context", type=int, default=0, metavar="N", help="lines of context (0-10)"
    )
    p.add_argument(
        "-k",
        "--limit",
        type=int,
        default=DEFAULT_MAX_MATCHES,
        metavar="N",
        help=f"most matching lines (default {DEFAULT_MAX_MATCHES})",
    )
    p.add_argument(
        "--glob",
        action="append",
        default=[],
        metavar="GLOB",
        help="only files matching this glob, relative to the root (repeatable)",
    )
    p.add_argument(
        "--no-recursive", action="store_true", help="do not walk into subfolders of PATHS"
    )
    p.add_argument("--json", action="store_true", help="print the grep report as JSON")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "-l",
        "--files-with-matches",
        action="store_true",
        help="print only the paths of files with a matching line",
    )
    mode.add_argument(
        "-c", "--count", action="store_true", help="print each matching file's count of lines"
    )
    p.set_defaults(func=cmd_grep)
    return p


def cmd_grep(args: argparse.Namespace) -> int:
    """Print the matching lines; 0 when some matched, 1 when none did."""
    from workspace_tools.core.grep import grep, looks_like_regex

    mounts, scan, converter = _context(args, index_dir=getattr(args, "index_dir", None))
    paths = _paths(args, mounts, scan)
    if args.files_with_matches or args.count:
        return _cmd_counts(args, mounts, paths, scan=scan, converter=converter)
    try:
        report = grep(
            mounts.root,
            args.pattern,
            paths or None,
            regex_mode=args.regex,
            ignore_case=args.ignore_case,
            context_lines=args.context,
            max_matches=args.limit,
            recursive=not args.no_recursive,
            config=scan,
            convert=converter,
            mounts=mounts,
        )
    except InvalidInputError as exc:  # the core speaks of the tool's arguments
        text = str(exc).replace("pass regex=false", "drop -E").replace("context_lines", "-C")
        raise InvalidInputError(text.replace("max_matches and max_per_file", "-k")) from None
    if args.json:
        print(json.dumps({"pattern": args.pattern, **report.to_dict()}, indent=2))
        return 0 if report.matches else 1
    units = _units(report.matches, mounts, converter)
    for line in _lines(report.matches, context=args.context > 0, units=units):
        print(line)
    if not args.quiet:
        for note in _notes(report, pattern=args.pattern, regex=args.regex):
            print(note, file=sys.stderr)
    if not report.matches:
        _none_found(args.pattern, report.files_searched)
    quiet_miss = report.matches or args.quiet or args.regex
    if not quiet_miss and looks_like_regex(args.pattern):
        print("(PATTERN was matched literally; add -E to use it as a regex)", file=sys.stderr)
    return 0 if report.matches else 1


def _none_found(pattern: str, searched: int) -> None:
    """Say on stderr that no line matched (stdout keeps only matches, as grep's)."""
    files = f"{searched} file{'s' if searched != 1 else ''}"
    print(f"No line matches {pattern!r} ({files} searched).", file=sys.stderr)


def _cmd_counts(
    args: argparse.Namespace, mounts: Any, paths: list[str], *, scan: Any, converter: Any
) -> int:
    """``-l`` / ``-c``: the matching files (and their counts), as ``grep -l`` / ``grep -c``."""
    from workspace_tools.core.grep_counts import grep_counts

    try:
        report = grep_counts(
            mounts.root,
            args.pattern,
            paths or None,
            regex_mode=args.regex,
            ignore_case=args.ignore_case,
            max_files=args.limit,
            recursive=not args.no_recursive,
            config=scan,
            convert=converter,
            mounts=mounts,
        )
    except InvalidInputError as exc:
        raise InvalidInputError(str(exc).replace("pass regex=false", "drop -E")) from None
    if args.json:
        print(json.dumps({"pattern": args.pattern, **report.to_dict()}, indent=2))
        return 0 if report.counts else 1
    for path, count in report.counts:
        print(f"{path}:{count}" if args.count else path)
    if report.truncated and not args.quiet:
        print(f"(stopped after {len(report.counts)} files; give -k N for more)", file=sys.stderr)
    if not report.counts:
        _none_found(args.pattern, report.files_searched)
    return 0 if report.counts else 1


def _context(args: argparse.Namespace, *, index_dir: str | None = None) -> tuple[Any, Any, Any]:
    """The root and its mounts, the project's scan rules, a converter reading the conversions.

    Raises:
        InvalidInputError: the root is not a folder.
    """
    from workspace_tools.cli._grammar import mounts_of
    from workspace_tools.core.config import ProjectConfig
    from workspace_tools.core.convert import CachedConverter, ConversionCache
    from workspace_tools.core.text.mounts import Mounts
    from workspace_tools.core.text.scan import ScanConfig
    from workspace_tools.core.workspace.settings import workspace_options

    root = Path(args.root).expanduser().absolute()
    if not root.is_dir():
        msg = f"Workspace root {str(root)!r} is not a folder. Pass --root with an existing folder."
        raise InvalidInputError(msg)
    root = root.resolve()
    options, _ = workspace_options(ProjectConfig.load(root))
    index = Path(index_dir or options.get("index_dir", root / ".workspace_tools" / "index"))
    cache = ConversionCache(index.parent / "converted", limits=options.get("conversion_limits"))
    mounts = Mounts.merged(root, options.get("mounts"), mounts_of(args))
    return mounts, options.get("scan_config", ScanConfig()), CachedConverter(disk=cache)


def _paths(args: argparse.Namespace, mounts: Any, scan: Any) -> list[str]:
    """The paths to search: ``PATHS``, narrowed to the files matching a ``--glob``.

    Raises:
        InvalidInputError: a path does not exist, or no file under ``PATHS`` matches.
    """
    from workspace_tools.cli import _root_relative
    from workspace_tools.core.grep import collect_files

    root = mounts.root
    paths = [_root_relative(p, mounts) for p in args.paths]
    if not args.glob or not paths:
        return paths or list(args.glob)
    recursive = not args.no_recursive
    inside, _ = collect_files(root, paths, config=scan, recursive=recursive, mounts=mounts)
    matching, _ = collect_files(root, args.glob, config=scan, mounts=mounts)
    both = sorted(set(inside) & set(matching))
    if not both:
        msg = (
            f"No file under {', '.join(map(repr, args.paths))} matches --glob "
            f"{', '.join(map(repr, args.glob))} (globs are relative to the root {root})."
        )
        raise InvalidInputError(msg)
    return both


def _strip_marks(text: str) -> str:
    from workspace_tools.core.text.snippets import HIT_CLOSE, HIT_OPEN

    return text.replace(HIT_OPEN, "").replace(HIT_CLOSE, "")


def _units(matches: list[Any], mounts: Any, converter: Any) -> dict[tuple[str, int], str]:
    """``page 2`` (or ``slide 3``, ``sheet Name``) of each match in a PDF, PPTX or XLSX."""
    from workspace_tools.core.convert import DOCUMENT_EXTENSIONS, locate_unit

    out: dict[tuple[str, int], str] = {}
    texts: dict[str, str] = {}
    for match in matches:
        known = getattr(match, "units", None)  # when the core reports it
        if known:
            out[(match.path, match.line)] = " ".join(f"{k} {v}" for k, v in known.items())
            continue
        if Path(match.path).suffix.lower() not in DOCUMENT_EXTENSIONS:
            continue
        if match.path not in texts:
            absolute = mounts.path(match.path)
            try:  # the converter remembers the text grep just read: no second conversion
                texts[match.path] = converter(absolute, absolute.read_bytes()).text
            except (OSError, WorkspaceError):
                texts[match.path] = ""
        unit = locate_unit(texts[match.path], match.line)
        if unit:
            [(kind, value)] = unit.items()
            out[(match.path, match.line)] = f"{kind} {value}"
    return out


def _lines(
    matches: list[Any], *, context: bool, units: dict[tuple[str, int], str] | None = None
) -> list[str]:
    """Lines as grep prints them: ``path:line: text``, ``path-line- context``, ``--`` gaps."""
    rows: dict[tuple[str, int], str] = {}
    order: dict[str, int] = {}
    for match in matches:
        order.setdefault(match.path, len(order))
        for number, text in (*match.before, *match.after):
            context_line = f"{match.path}-{number}- {_strip_marks(text)}".rstrip()
            rows.setdefault((match.path, number), context_line)
        unit = (units or {}).get((match.path, match.line))
        where = f"[{unit}] " if unit else ""
        rows[(match.path, match.line)] = (
            f"{match.path}:{match.line}: {where}{_strip_marks(match.text)}"
        )
    out: list[str] = []
    previous: tuple[str, int] | None = None
    for key in sorted(rows, key=lambda k: (order[k[0]], k[1])):
        gap = previous is None or key[0] != previous[0] or key[1] > previous[1] + 1
        if context and gap and previous is not None:
            out.append("--")
        out.append(rows[key])
        previous = key
    return out


def _notes(report: Any, *, pattern: str, regex: bool) -> list[str]:
    del pattern, regex
    notes: list[str] = []
    if report.truncated:
        notes.append(
            f"(stopped after {len(report.matches)} matching lines; give -k N for more, or "
            "narrow the paths)"
        )
    if report.capped_files:
        notes.append(
            f"(only the first matching lines of {', '.join(report.capped_files[:5])} were kept)"
        )
    if report.timed_out:
        notes.append(
            f"(matching stopped early in {', '.join(report.timed_out[:5])}: the pattern is too "
            "slow on this text)"
        )
    left_out = [s for s in report.skipped if not s.reason.startswith("binary")]  # as grep -I
    if left_out:
        from workspace_tools.cli._report import summarise_skipped

        notes.append(f"(not searched: {summarise_skipped(left_out)}; --json lists them)")
    return notes
