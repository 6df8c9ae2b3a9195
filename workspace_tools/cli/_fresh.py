"""The freshness rule of ``workspace-tools search``: never answer silently from a stale index.

Up to :data:`AUTO_SYNC_FILES` changed files (:data:`AUTO_SYNC_BYTES` bytes) are synced first;
more, or a read-only index, stop the search with :data:`STALE_EXIT`.
"""

from __future__ import annotations

import sys
from typing import Any, Final

from workspace_tools.core.text.scan import is_glob
from workspace_tools.core.workspace.freshness import (
    AUTO_SYNC_BYTES,
    AUTO_SYNC_FILES,
    pending_changes,
)

__all__ = ["AUTO_SYNC_BYTES", "AUTO_SYNC_FILES", "STALE_EXIT", "freshen"]

STALE_EXIT: Final = 2
"""Exit code of a search refused because too many files changed (the error exit code)."""


def _files(count: int) -> str:
    return f"{count} file{'' if count == 1 else 's'}"


def _sync(ws: Any, ids: list[str]) -> Any:
    """Sync just ``ids``, so what ``remove`` took out stays out (all: an id reads as a glob)."""
    if any(is_glob(rel) for rel in ids):
        return ws.sync(show_progress=False)
    return ws.sync(ids, show_progress=False)


def freshen(ws: Any, *, quiet: bool, machine: bool) -> int | None:
    """Apply the freshness rule to the workspace ``ws`` before a search.

    Args:
        ws: The open workspace.
        quiet: ``-q``: no note about a sync.
        machine: ``--json``: no note on stderr either.

    Returns:
        ``None`` to go on with the search, else the exit code to stop with.
    """
    pending = pending_changes(ws)
    if not pending.count:
        if pending.touched and not ws.read_only:
            _sync(ws, pending.touched)  # store the mtimes once they are old enough to trust
        return None
    if pending.small() and not ws.read_only:
        report = _sync(ws, pending.ids)
        if not (quiet or machine):
            print(
                f"Synced {_files(pending.count)} changed since the last index first "
                f"({pending.summary()}; {report.chunks_embedded} chunks embedded, "
                f"{report.seconds:.2f}s).",
                file=sys.stderr,
            )
        return None
    if ws.read_only:
        advice = (
            "the index is read-only, so they cannot be indexed here: run with --no-sync to "
            "search the index as it is"
        )
    else:
        advice = (
            "run with --sync to index them first, or --no-sync to search the index as it is "
            f"(a search syncs by itself only up to {AUTO_SYNC_FILES} files and "
            f"{AUTO_SYNC_BYTES // (1 << 20)} MiB)"
        )
    print(
        f"error: {_files(pending.count)} changed since the last index; {advice}. "
        f"Changed: {pending.summary()}.",
        file=sys.stderr,
    )
    return STALE_EXIT
