"""The ``workspace-tools`` command: index a folder, search it, manage skills and docs."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from workspace_tools import __version__
from workspace_tools.core.errors import InvalidInputError, WorkspaceError

__all__ = ["build_parser", "main", "plural"]

ROOT_HELP = "workspace folder (default: $WORKSPACE_TOOLS_ROOT, else the current folder)"


def plural(count: int, noun: str) -> str:
    """``"1 result"``, ``"2 results"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def add_root_option(parser: argparse.ArgumentParser) -> None:
    """Accept ``--root`` after a subcommand too (it then wins over one given before).

    Its help is shown once, with the global options (docs/cli.md documents it there).
    """
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
    if read_only:
        overrides["read_only"] = True
    if getattr(args, "index_dir", None):
        overrides["index_dir"] = args.index_dir
    backend_uri = getattr(args, "backend_uri", None)
    if backend_uri is not None:
        overrides["backend"] = {"type": args.backend or "milvus", "uri": backend_uri}
    elif getattr(args, "backend", None) is not None:
        overrides["backend"] = args.backend
    return Workspace(args.root, **overrides)


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
        reasons = ", ".join(f"{r} {n}" for r, n in sorted(report.skipped_by_reason().items()))
        print(f"Skipped {plural(len(report.skipped), 'file')} ({reasons}):")
        shown = report.skipped if not quiet else report.skipped[:0]
        for item in shown[:50]:
            print(f"  {item.path}: {item.reason}")
        if len(shown) > 50:
            print(f"  ... and {len(shown) - 50} more")


def cmd_index(args: argparse.Namespace) -> int:
    """Index files under the root (incrementally)."""
    ws = _workspace(args)
    paths = [_root_relative(p, ws.root) for p in args.paths] or None
    if args.ray is None:
        report = ws.sync(paths)
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
    return 0


def _root_relative(path: str, root: Any) -> str:
    """``path``, given relative to the current folder, made relative to the root.

    Glob patterns stay relative to the root.

    Raises:
        InvalidInputError: the path does not exist or lies outside the root.
    """
    from pathlib import Path

    from workspace_tools.core.text.scan import is_glob

    if is_glob(path):
        return path
    absolute = Path(path).expanduser().absolute()
    if not absolute.exists():
        msg = (
            f"Path {path!r} does not exist (looked for {absolute}). Paths given to index are "
            "relative to the current folder; give an existing file or folder."
        )
        raise InvalidInputError(msg)
    try:
        return absolute.resolve().relative_to(root).as_posix() or "."
    except ValueError:
        msg = f"Path {path!r} ({absolute}) is outside the workspace root {root}."
        raise InvalidInputError(msg) from None


def cmd_search(args: argparse.Namespace) -> int:
    """Search the index (indexing the folder first when it has no index yet).

    An existing index is first compared with the folder (one ``stat`` per file): a few changed
    files are synced, more make the search stop with an error (``cli/_fresh.py``).
    """
    ws = _workspace(args)
    fresh = not ws.has_index  # an index emptied by `remove` stays empty: no whole-folder sync
    if (fresh and not args.no_sync) or args.sync:
        if fresh and not args.json:
            print(f"No index in {ws.index_dir} yet: indexing {ws.root} first.", file=sys.stderr)
        report = ws.sync(show_progress=fresh and not args.quiet)  # unchanged files: one stat
        if (fresh or report.changed) and not args.json:
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
    results = ws.search(args.query, top_k=args.k, mode=args.mode)
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
        return 0
    if not results:
        print(f"No results for {args.query!r} ({mode} search).")
        return 0
    for rank, hit in enumerate(results, start=1):
        where = f"{hit.source_id}:{hit.line_range}" if hit.line_range else hit.source_id
        where += "".join(
            f" ({k} {hit.metadata[k]})" for k in ("page", "slide") if k in hit.metadata
        )
        heading = f"  § {hit.section_heading}" if hit.section_heading else ""
        print(f"{rank:2}. {where}  score {hit.score:.4f}{heading}")
        for line in hit.snippet.splitlines() or [""]:
            print(f"      {line}")
    print(f"--- {plural(len(results), 'result')} ({mode} search, {elapsed * 1000:.1f} ms)")
    return 0


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
    parser = argparse.ArgumentParser(
        prog="workspace-tools",
        description="Index a folder and search it by keyword (BM25), meaning (vectors) or both.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--root", default=os.environ.get("WORKSPACE_TOOLS_ROOT", "."), help=ROOT_HELP
    )
    parser.add_argument(
        "--embedder",
        default=None,
        help="'default' (packaged all-MiniLM-L6-v2), 'none', or a sentence-transformers model "
        "name or path (default: the config file's, else 'default')",
    )
    parser.add_argument(
        "--backend",
        default=None,
        choices=["embedded", "milvus"],
        help="search backend (default: the config file's, else 'embedded'); 'milvus' needs "
        'pip install "workspace-tools[milvus]"',
    )
    parser.add_argument(
        "--backend-uri",
        default=None,
        metavar="URI",
        help="Milvus server URI or Milvus Lite file (implies --backend milvus; token: "
        "$WORKSPACE_TOOLS_MILVUS_TOKEN)",
    )
    parser.add_argument(
        "--index-dir",
        default=os.environ.get("WORKSPACE_TOOLS_INDEX_DIR") or None,
        metavar="DIR",
        help="index folder (default: $WORKSPACE_TOOLS_INDEX_DIR, else the config file's, else "
        "<root>/.workspace_tools/index); unlike the config file's, it may lie outside the root",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress bars, shorter output"
    )
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
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10, help="number of results (default 10)")
    p.add_argument(
        "--mode", choices=["bm25", "vector", "hybrid"], help="default: hybrid when vectors exist"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
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
    p.add_argument("target")
    add_root_option(p)
    p.set_defaults(func=cmd_remove)

    for module, name in (
        ("workspace_tools.cli.skills", "add_skills_parser"),
        ("workspace_tools.cli.docs", "add_docs_parser"),
        ("workspace_tools.cli.mcp", "add_mcp_parser"),
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
        0 on success, 1 when there was nothing to do (``remove`` matched nothing), 2 on wrong
        input (``error: ...`` on stderr), 130 on Ctrl-C, 141 when the reader of the output went
        away (``... | head``).
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
    try:
        code: int = args.func(args)
        sys.stdout.flush()
    except WorkspaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader closed the pipe (`| head`): stop quietly, and keep Python from printing
        # a second error when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    return code
