"""``workspace-tools watch``: keep the index in step with the files, in the foreground."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any

__all__ = ["add_watch_parser"]


def add_watch_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``watch``.

    Args:
        subparsers: The object returned by ``parser.add_subparsers()``.

    Returns:
        The ``watch`` parser.
    """
    from workspace_tools.cli import add_root_option

    parser = subparsers.add_parser(
        "watch",
        help="keep the index in step with the files until Ctrl-C",
        description="Sync the folder, then follow its changes (one incremental sync per burst).",
    )
    parser.add_argument(
        "--debounce",
        type=int,
        default=1_600,
        metavar="MS",
        help="longest wait gathering one burst of changes (default 1600 ms)",
    )
    parser.add_argument(
        "--poll",
        type=float,
        default=None,
        metavar="SECONDS",
        help="no file events: sync by stat every SECONDS (for file systems without events)",
    )
    add_root_option(parser)
    parser.set_defaults(func=_watch)
    return parser


def _watch(args: argparse.Namespace) -> int:
    from workspace_tools.cli import _workspace, plural

    if args.debounce < 1 or (args.poll is not None and args.poll <= 0):
        print("error: --debounce and --poll take positive numbers.", file=sys.stderr)
        return 2
    ws = _workspace(args)
    changed = threading.Event()
    tty = sys.stdout.isatty() and not args.quiet

    def on_sync(report: Any) -> None:
        if report.changed:
            changed.set()
            if not tty:
                print(f"{time.strftime('%H:%M:%S')} {report.summary()}", flush=True)

    watcher = ws.watch(
        debounce_ms=args.debounce,
        poll_seconds=args.poll or 2.0,
        force_polling=args.poll is not None,
        on_sync=on_sync,
    )
    if not args.quiet:
        print(f"Watching {ws.root} (Ctrl-C stops)", flush=True)
    try:
        while True:
            if tty:
                line = _status_line(ws, watcher, plural)
                sys.stdout.write("\r\x1b[2K" + line[: _width() - 1])
                sys.stdout.flush()
            changed.wait(0.5)
            changed.clear()
    except KeyboardInterrupt:
        watcher.stop()
        if tty:
            sys.stdout.write("\n")
        stats, progress = watcher.stats, ws.sync_progress
        held = f"index: {plural(len(ws.source_ids()), 'source')}, {plural(len(ws), 'chunk')}"
        print(
            f"Stopped: {plural(stats.syncs, 'sync')}, {plural(stats.commits, 'commit')}; "
            f"{progress.line() if progress.error else held}.",  # not the last sync's count
            file=sys.stderr,
        )
        raise


def _status_line(ws: Any, watcher: Any, plural: Any) -> str:
    progress = ws.sync_progress
    stats = watcher.stats
    if progress.running:
        return f"{progress.line()} · {stats.mode}"
    last = stats.last_report
    change = ""
    if stats.last_sync and last is not None:
        when = time.strftime("%H:%M:%S", time.localtime(stats.last_sync))
        change = (
            f" · last sync {when}: {len(last.added)} added, {len(last.updated)} updated, "
            f"{len(last.removed)} removed"
        )
    warning = f" · {stats.last_error}" if stats.mode != "events" and stats.last_error else ""
    return f"watching ({stats.mode}) · {plural(len(ws), 'chunk')}{change}{warning}"


def _width() -> int:
    import shutil

    return shutil.get_terminal_size((100, 20)).columns
