"""The ``workspace-tools`` command: index a folder, search it, manage skills and docs."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from workspace_tools import __version__
from workspace_tools.cli._grammar import ProgramParser, mounts_of, resolve_root
from workspace_tools.cli._report import skipped_lines, summarise_skipped
from workspace_tools.core.errors import InvalidInputError, WorkspaceError

__all__ = ["build_parser", "main", "plural", "summarise_skipped"]


def plural(count: int, noun: str) -> str:
    """``"1 result"``, ``"2 results"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def add_root_option(parser: argparse.ArgumentParser) -> None:
    """Accept ``--root`` after a subcommand too (for parsers that are no ``CommandParser``)."""
    if "--root" not in parser._option_string_actions:
        parser.add_argument("--root", default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def _workspace(args: argparse.Namespace, *, read_only: bool = False) -> Any:
    """The workspace of ``--root`` with its ``workspace-tools.yaml`` settings; flags win."""
    from workspace_tools.core.workspace import Workspace

    overrides: dict[str, Any] = {
        "rebuild": getattr(args, "rebuild", False),
        "show_progress": not args.quiet,
    }
    if args.embedder is not None:
        overrides["embedder"] = None if args.embedder == "none" else args.embedder
    elif vectors_off(args):
        overrides["embedder"] = None  # said once, by `index`, not on every call
    if read_only:
        overrides["read_only"] = True
    if getattr(args, "index_dir", None):
        overrides["index_dir"] = args.index_dir
    overrides["mounts"] = mounts_of(args)
    backend_uri = getattr(args, "backend_uri", None)
    if backend_uri is not None:
        overrides["backend"] = {"type": args.backend or "milvus", "uri": backend_uri}
    elif getattr(args, "backend", None) is not None:
        overrides["backend"] = args.backend
    return Workspace(args.root, **overrides)


def vectors_off(args: argparse.Namespace) -> bool:
    """The default model is asked for (no --embedder, none in the config) but not installed.

    Raises:
        InvalidInputError: ``--mode vector`` or ``hybrid`` was asked for all the same.
    """
    from workspace_tools.core.extras import VECTOR_INSTALL, missing_vector_packages

    missing = missing_vector_packages()
    if not missing:
        return False
    from workspace_tools.core.config import ProjectConfig
    from workspace_tools.core.workspace.settings import workspace_options

    root = os.path.abspath(args.root)
    if not os.path.isdir(root):
        return False  # the workspace reports the bad root
    if workspace_options(ProjectConfig.load(root))[0].get("embedder", "default") != "default":
        return False
    if getattr(args, "mode", None) in ("vector", "hybrid"):
        msg = (
            f"--mode {args.mode} needs vectors, but the 'vector' extra is not installed "
            f"(missing {', '.join(missing)}): {VECTOR_INSTALL}. Keyword search works: --mode bm25."
        )
        raise InvalidInputError(msg)
    args.vectors_off = (
        f"Vector search is off: the 'vector' extra is not installed; {VECTOR_INSTALL}"
    )
    return True


def _print_report(report: Any, *, quiet: bool) -> None:
    print(
        f"Indexed: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {plural(report.unchanged, 'unchanged file')}; "
        f"{plural(report.chunks_indexed, 'chunk')} ({report.chunks_embedded} embedded) "
        f"in {report.seconds:.2f}s"
    )
    if report.formats:
        formats = ", ".join(f"{name} {count}" for name, count in sorted(report.formats.items()))
        print(f"Formats: {formats}")
    if report.skipped:
        reasons = summarise_skipped(report.skipped)
        print(f"Skipped {plural(len(report.skipped), 'file')} ({reasons})" + ("" if quiet else ":"))
        for line in [] if quiet else skipped_lines(report.skipped):
            print(line)


def cmd_index(args: argparse.Namespace) -> int:
    """Index files under the root (incrementally)."""
    ws = _workspace(args)
    paths = [_root_relative(p, ws.mounts) for p in args.paths] or None
    if args.ray is None:
        try:
            report = ws.sync(paths)
        except KeyboardInterrupt:
            _print_interrupted(ws)
            raise
    else:
        from workspace_tools.core.distributed import index_on_ray

        distributed = index_on_ray(ws, paths, address=args.ray or None)
        print(distributed.summary().rsplit("\n", 1)[0])
        report = distributed.sync
    _print_report(report, quiet=args.quiet)
    stats = ws.stats()
    print(
        f"Index: {plural(stats['sources'], 'source')}, {plural(stats['chunks'], 'chunk')}, "
        f"modes {', '.join(stats['modes'])} -> {stats['index_dir']}"
    )
    if getattr(args, "vectors_off", None) and not args.quiet:
        print(f"({args.vectors_off} for vector and hybrid search)", file=sys.stderr)
    return 0


def _print_interrupted(ws: Any) -> None:
    """Say how far an interrupted sync got (its finished batches are committed)."""
    progress = ws.sync_progress
    print(
        f"Interrupted: committed {progress.files_committed} of {progress.files_total} files "
        f"({plural(progress.commits, 'commit')}); running `workspace-tools index` again "
        "continues from there.",
        file=sys.stderr,
    )


def _root_relative(path: str, mounts: Any) -> str:
    """``path``, given relative to the current folder, as a source id (globs stay).

    Raises:
        InvalidInputError: the path does not exist or lies outside the root.
    """
    from pathlib import Path

    from workspace_tools.core.text.scan import is_glob

    head = path.lstrip("/").partition("/")[0]
    if is_glob(path) or (head in mounts.folders and not os.path.exists(path)):
        return path  # a glob, or an id under a mount's prefix
    absolute = Path(path).expanduser().absolute()
    try:
        exists = absolute.exists()
    except OSError as exc:  # a name too long for the file system, and the like
        raise InvalidInputError(os_error_message(exc)) from None
    if not exists:
        msg = (
            f"Path {path!r} does not exist (looked for {absolute}). Paths on the command line "
            "are relative to the current folder; give an existing file or folder."
        )
        raise InvalidInputError(msg)
    found = mounts.source_id(absolute.resolve())
    if found is None:
        msg = f"Path {path!r} ({absolute}) is outside the workspace root {mounts.root}" + (
            " and its mounts." if mounts else "."
        )
        raise InvalidInputError(msg)
    return found or "."


def cmd_search(args: argparse.Namespace) -> int:
    """Search the index (indexing the folder first, or freshening it: ``cli/_fresh.py``)."""
    ws = _workspace(args)
    fresh = not ws.has_index  # an index emptied by `remove` stays empty: no whole-folder sync
    if (fresh and not args.no_sync) or args.sync:
        if fresh and not (args.json or args.quiet):
            print(f"No index in {ws.index_dir} yet: indexing {ws.root} first.", file=sys.stderr)
        report = ws.sync(show_progress=fresh and not args.quiet)  # unchanged files: one stat
        if (fresh or report.changed) and not (args.json or args.quiet):
            _print_report(report, quiet=True)
    elif not args.no_sync:  # sync a few changed files first, or refuse: cli/_fresh.py
        from workspace_tools.cli._fresh import freshen

        stop = freshen(ws, quiet=args.quiet, machine=args.json)
        if stop is not None:
            return stop
    if (args.mode or ws.default_mode) != "bm25" and hasattr(ws.embedder, "load"):
        # keep the one-off model load out of the search time (queries only: lean when it can)
        getattr(ws.embedder, "load_for_queries", ws.embedder.load)()
    started = time.perf_counter()
    results = ws.search(args.query, top_k=args.k, mode=args.mode, filter=_search_filter(args))
    elapsed = time.perf_counter() - started
    mode = args.mode or ws.default_mode
    if args.json:
        print(
            json.dumps(
                {"query": args.query, "mode": mode, "results": [r.to_dict() for r in results]},
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0 if results else 1
    if not results:
        print(f"No results for {args.query!r} ({mode} search).")
        return 1
    for rank, hit in enumerate(results, start=1):
        where = f"{hit.source_id}:{hit.line_range}" if hit.line_range else hit.source_id
        where += "".join(
            f" ({k} {', '.join(v) if isinstance(v := hit.metadata[k], list) else v})"
            for k in ("page", "slide", "symbol")
            if k in hit.metadata
        )
        heading = f"  § {hit.section_heading}" if hit.section_heading else ""
        print(f"{rank:2}. {where}  score {hit.score:.4f}{heading}")
        for line in hit.snippet.splitlines() or [""]:
            print(f"      {line}")
    print(f"--- {plural(len(results), 'result')} ({mode} search, {elapsed * 1000:.1f} ms)")
    return 0


def _search_filter(args: argparse.Namespace) -> dict[str, Any] | None:
    """``--filter`` (JSON) and ``--symbol``, both when both are given."""
    parts: list[dict[str, Any]] = []
    if args.filter is not None:
        try:
            parts.append(json.loads(args.filter))
        except json.JSONDecodeError as exc:
            msg = f'--filter takes a JSON object, e.g. \'{{"format": "code"}}\': {exc}.'
            raise InvalidInputError(msg) from None
    if args.symbol is not None:
        parts.append({"symbol": args.symbol})
    return None if not parts else parts[0] if len(parts) == 1 else {"$and": parts}


def cmd_stats(args: argparse.Namespace) -> int:
    """Print what the index holds."""
    ws = _workspace(args, read_only=True)
    print(json.dumps(ws.stats(), indent=2))
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    """Remove sources by id, folder prefix or glob."""
    ws = _workspace(args)
    removed = ws.remove(args.target)
    if not removed:
        print(f"Nothing indexed matches {args.target!r}.")
        return 1
    print(
        f"Removed {plural(len(removed), 'source')}. Files still on disk come back at the next "
        "`index` (or `search --sync`) unless excluded (.gitignore or workspace.paths)."
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (sub-commands from the skills and docs modules included)."""
    parser = ProgramParser(
        prog="workspace-tools",
        description="Index a folder and search it by keyword (BM25), meaning (vectors) or both.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="index files (new and changed files only)")
    p.add_argument(
        "paths",
        nargs="*",
        help="files or folders (relative to the current folder) or glob patterns (relative "
        "to the root)",
    )
    p.add_argument("--rebuild", action="store_true", help="discard the existing index first")
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="convert, chunk and embed on a Ray cluster (the ray extra): ADDRESS 'auto' joins "
        "the cluster `ray start` made here, 'host:6379' or 'ray://host:10001' a remote one; "
        "none: $RAY_ADDRESS, else a private local cluster",
    )
    add_root_option(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search the index")
    p.add_argument("query", help="words, a question or code identifiers")
    p.add_argument("-k", type=int, default=10, help="number of results (default 10)")
    p.add_argument(
        "--mode", choices=["bm25", "vector", "hybrid"], help="default: hybrid when vectors exist"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--filter",
        metavar="JSON",
        help='only chunks whose metadata match, e.g. \'{"format": "code"}\' (operators as in '
        "Workspace.search: $in, $gte, $exists, $and...)",
    )
    p.add_argument(
        "--symbol",
        metavar="NAME",
        help="only the chunks of this definition in source code, e.g. SparseIndex.search",
    )
    sync = p.add_mutually_exclusive_group()
    sync.add_argument(
        "--sync", action="store_true", help="sync the folder first (new, changed, deleted files)"
    )
    sync.add_argument(
        "--no-sync",
        action="store_true",
        help="never index, even when there is no index yet (default: index only then)",
    )
    add_root_option(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("stats", help="show index counts and settings")
    add_root_option(p)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("remove", help="remove sources by id, folder or glob")
    p.add_argument(
        "target", help="a source id (docs/a.md), a folder prefix (docs) or a glob (**/*.pdf)"
    )
    add_root_option(p)
    p.set_defaults(func=cmd_remove)

    for module, name in (
        ("workspace_tools.cli.grep", "add_grep_parser"),
        ("workspace_tools.cli.skills", "add_skills_parser"),
        ("workspace_tools.cli.docs", "add_docs_parser"),
        ("workspace_tools.cli.mcp", "add_mcp_parser"),
        ("workspace_tools.cli.watch", "add_watch_parser"),
    ):
        try:
            register = getattr(__import__(module, fromlist=[name]), name)
        except (ImportError, AttributeError):
            continue
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``workspace-tools`` command.

    Returns:
        The exit status (docs/cli.md): 0 done, 1 nothing found, 2 usage or input error,
        130 on Ctrl-C, 141 when the output's reader went away.
    """
    try:
        os.getcwd()
    except FileNotFoundError:
        print(
            "error: the working directory no longer exists (it was deleted or moved); "
            "cd into an existing folder and run the command again.",
            file=sys.stderr,
        )
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    resolve_root(args)
    try:
        with _quiet_if(args.quiet):
            code: int = args.func(args)
        sys.stdout.flush()
    except WorkspaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the system refuses (name too long, permission denied...)
        if isinstance(exc, BrokenPipeError):
            return _broken_pipe()
        print(f"error: {os_error_message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code


def _quiet_if(quiet: bool) -> Any:  # noqa: FBT001 - one flag, one meaning
    if not quiet:
        return contextlib.nullcontext()
    from workspace_tools.cli._quiet import silence_third_party

    return silence_third_party()


def _broken_pipe() -> int:
    # The reader closed the pipe: stop quietly, without an error at exit's flush.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


def os_error_message(exc: OSError) -> str:
    """``File name too long: 'aaaa...' (312 characters). Give a shorter path.``, and the like."""
    name = exc.filename
    shown = repr(name) if name is not None else "a path"
    if isinstance(name, str) and len(name) > 80:
        shown = f"{name[:60]!r}... ({len(name)} characters)"
    reason = exc.strerror or str(exc)
    return f"{reason}: {shown}. Check the path and try again."
