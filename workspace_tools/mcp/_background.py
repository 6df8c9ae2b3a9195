"""What a server does behind the protocol: load the model, index, watch, and say how far it got."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from workspace_tools.core.background import BackgroundWorker

__all__ = ["Background", "status"]

_LOG = logging.getLogger("workspace_tools.mcp")


class Background:
    """Model load, first sync and watching of one served workspace, on a background worker.

    Args:
        workspace: The served workspace.
        sync: Index new and changed files (ignored when the workspace is read-only).
        watch: Keep following the files after that (ignored when read-only).
    """

    def __init__(self, workspace: Any, *, sync: bool, watch: bool) -> None:
        self.workspace = workspace
        writable = not workspace.read_only
        self.sync = sync and writable
        self.watch = watch and writable
        self.watcher: Any = None
        self.model = "not loaded"
        self.last_error: str | None = None
        self.started = 0.0
        self._worker: BackgroundWorker | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the work (once)."""
        with self._lock:
            if self._worker is not None:
                return
            self.started = time.time()
            self._worker = BackgroundWorker("workspace-tools-background")
            self._worker.submit(self._run)

    def stop(self) -> None:
        """Stop watching (a sync in progress keeps its committed batches)."""
        if self.watcher is not None:
            self.watcher.stop(timeout=2.0)

    @property
    def busy(self) -> bool:
        """The first sync (or a watch sync) is running now."""
        return bool(self.workspace.sync_progress.running) or self.pending_start

    @property
    def pending_start(self) -> bool:
        """The first sync is due but has not begun yet."""
        ws = self.workspace
        return self.sync and not ws.sync_progress.started and self._alive()

    def _alive(self) -> bool:
        if self.watcher is not None and self.watcher.running:
            return bool(self.watcher.stats.syncs == 0)  # its first sync is still to come
        return self._worker is not None and self._worker.busy()

    def note(self, *, within: Any = None) -> str | None:
        """The line a search carries while the index is being built (files in ``within``)."""
        progress = self.workspace.sync_progress.within(within)
        if progress.running:
            return (
                f"{progress.line()} (results come from what is committed so far; "
                "call workspace_status for details)"
            )
        if self.pending_start:
            return "indexing: starting (results come from what is committed so far)"
        return None

    def _run(self) -> None:
        ws = self.workspace
        try:
            self._load_model()
            if self.watch:
                self.watcher = ws.watch(initial_sync=self.sync)
                _LOG.info("watching %s for changes", ws.root)
            elif self.sync:
                report = ws.sync(show_progress=False)
                _LOG.info("workspace: indexed %s: %s", ws.root, report.summary())
            if ws.embedder is not None:  # beside the watcher's first sync, if it runs
                started = time.perf_counter()
                ws.warm_up(embed=not ws.read_only)
                _LOG.info("dense index loaded in %.2f s", time.perf_counter() - started)
        except Exception as exc:  # a server keeps serving what is committed
            self.last_error = f"{type(exc).__name__}: {exc}"
            _LOG.warning("indexing %s in the background failed: %s", ws.root, self.last_error)

    def _load_model(self) -> None:
        embedder = self.workspace.embedder
        if embedder is None or not hasattr(embedder, "load"):
            self.model = "none" if embedder is None else "ready"
            return
        self.model = "loading"
        started = time.perf_counter()
        embedder.load()
        self.model = "ready"
        _LOG.info("embedding model loaded in %.2f s", time.perf_counter() - started)


def status(
    workspace: Any, background: Background | None, *, within: Any = None
) -> tuple[str, dict[str, Any]]:
    """The ``workspace_status`` answer: text and structured content (counted within ``within``)."""
    stats = workspace.stats(within=within)
    progress = workspace.sync_progress.within(within)
    indexing = {
        "running": progress.running,
        "files_total": progress.files_total,
        "files_committed": progress.files_committed,
        "pending": progress.pending,
        "commits": progress.commits,
        "started": progress.started or None,
        "finished": progress.finished or None,
        "error": progress.error,
    }
    watch: dict[str, Any] = {"mode": "off"}
    watcher = background.watcher if background is not None else None
    if watcher is not None:
        s = watcher.stats
        watch = {
            "mode": s.mode,
            "syncs": s.syncs,
            "commits": s.commits,
            "bursts": s.bursts,
            "ignored_bursts": s.ignored,
            "last_sync": s.last_sync or None,
            "last_change": s.last_report.summary() if s.last_report is not None else None,
        }
    elif workspace.read_only:
        watch = {"mode": "read-only (each call sees what other processes committed)"}
    elif background is not None and background.watch:
        watch = {"mode": "starting", "syncs": 0, "commits": 0}
    errors = [
        e
        for e in (
            background.last_error if background is not None else None,
            watcher.stats.last_error if watcher is not None else None,
            progress.error,
        )
        if e
    ]
    data: dict[str, Any] = {
        "root": stats["root"],
        "index": {
            "sources": stats["sources"],
            "chunks": stats["chunks"],
            "vectors": stats["vectors"],
            "modes": stats["modes"],
        },
        "indexing": indexing,
        "model": background.model if background is not None else None,
        "watch": watch,
        "last_error": errors[0] if errors else None,
    }
    where = ""
    if within is not None:
        whole = workspace.stats()
        data["workspace"] = {k: whole[k] for k in ("sources", "chunks", "vectors")}
        data["within"] = list(within)
        shown = ", ".join(f"{w}/" for w in within) or "none"
        where = (
            f" in the client's roots ({shown}; the whole index: {whole['sources']} sources, "
            f"{whole['chunks']} chunks)"
        )
    lines = [
        f"Workspace {stats['root']}: {stats['sources']} sources, {stats['chunks']} chunks "
        f"indexed{where} ({', '.join(stats['modes'])}).",
        f"Sync: {progress.line()}"
        + (f", {progress.pending} files pending." if progress.running else "."),
        f"Watch: {watch['mode']}"
        + (f", {watch['syncs']} syncs ({watch['commits']} commits)." if watcher else "."),
    ]
    if data["model"] is not None:
        lines.append(f"Embedding model: {data['model']}.")
    if data["last_error"]:
        lines.append(f"Last error: {data['last_error']}")
    return "\n".join(lines), data
