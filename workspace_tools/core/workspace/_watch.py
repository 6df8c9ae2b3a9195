"""Follow a workspace's files: file events (``watchfiles``) -> one incremental sync per burst.

:class:`Watcher` runs in a background thread. ``watchfiles`` (Rust ``notify`` underneath)
debounces events and hands over the set of paths a burst touched; while a sync runs, new events
pile up in the watcher and arrive as the next set, so a burst of thousands of writes costs one
sync (itself committed in bounded batches). Paths a full scan would not reach (``.gitignore``,
hidden and excluded folders, the index folder) cost nothing. When events cannot be had (the root
was deleted or moved, the inotify watch limit, a file system without events) the watcher logs a
warning and syncs by ``stat`` every ``poll_seconds`` instead; when the root comes back it syncs
it whole and watches it again. No error ends the thread except :meth:`Watcher.stop`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from workspace_tools.core.background import BackgroundWorker
from workspace_tools.core.convert import ConversionCache
from workspace_tools.core.errors import WorkspaceError
from workspace_tools.core.text.mounts import Mounts
from workspace_tools.core.text.safe_read import is_inside
from workspace_tools.core.text.scan import PathRules, ScanConfig
from workspace_tools.core.types import SyncReport

__all__ = ["FULL_SYNC_PATHS", "WatchStats", "Watcher"]

logger = logging.getLogger(__name__)

FULL_SYNC_PATHS: Final = 512
"""A burst naming more paths than this syncs the whole root (one stat walk) instead."""
_CONFIG_FILES: Final = frozenset({".gitignore", "workspace-tools.yaml"})
"""Files whose change can move what a scan finds: the next sync walks the whole root."""
_MISSING: Final = "missing:"
_IDLE_MS: Final = 200
"""Longest wait for events before the watcher looks at the root (deleted? replaced?) again."""


class Watched(Protocol):
    """What a :class:`Watcher` needs of a :class:`Workspace`."""

    root: Path
    mounts: Mounts
    index_dir: Path
    scan_config: ScanConfig
    default_paths: list[str] | None

    @property
    def conversion_cache(self) -> ConversionCache: ...

    def _check_writable(self) -> None: ...

    def source_ids(self) -> list[str]: ...

    def sync(
        self, paths: list[str] | None = None, *, show_progress: bool | None = None
    ) -> SyncReport: ...


@dataclass(kw_only=True)
class WatchStats:
    """What a :class:`Watcher` did so far (read :attr:`Watcher.stats`)."""

    mode: str = "starting"
    """``"events"`` (file events), ``"polling"`` (stat walks every ``poll_seconds``),
    ``"waiting"`` (the root is missing) or ``"stopped"``."""
    bursts: int = 0
    """Sets of changed paths received and handled (counted after the burst's sync or its
    dismissal, so a reader who sees the count also sees what became of the burst)."""
    ignored: int = 0
    """Bursts that touched nothing a scan reaches (no sync)."""
    syncs: int = 0
    """Syncs run (the initial one included); counted last, after :attr:`commits`,
    :attr:`last_report` and :attr:`last_sync`, so a reader who sees the count sees that sync."""
    commits: int = 0
    """Write transactions those syncs committed."""
    last_report: SyncReport | None = None
    """The last sync's report."""
    last_sync: float = 0.0
    """``time.time()`` at the end of the last sync."""
    last_error: str | None = None
    """The last warning (a failed sync, a fallback to polling), if any."""
    warnings: list[str] = field(default_factory=list)
    """Every warning, oldest first (at most 20 kept)."""


class Watcher:
    """Keep a writable workspace in step with its files from a background thread.

    Made (and started) by :meth:`Workspace.watch`; a context manager, sync or async::

        with ws.watch():          # or: async with ws.watch():
            ...                   # edits under ws.root reach the index within about a second

    Args:
        workspace: A writable workspace.
        initial_sync: Sync the whole root once the watch is up (catches what changed while no
            one watched).
        debounce_ms: Longest wait gathering one burst (``watchfiles``' ``debounce``).
        step_ms: Quiet time that ends a burst (``watchfiles``' ``step``).
        poll_seconds: Period of the stat-based syncs when events are not available (and of the
            checks for a missing root).
        force_polling: Never use file events (periodic stat walks only).
        on_sync: Called with each sync's report, in the watcher thread.
    """

    def __init__(
        self,
        workspace: Watched,
        *,
        initial_sync: bool = True,
        debounce_ms: int = 1_600,
        step_ms: int = 50,
        poll_seconds: float = 2.0,
        force_polling: bool = False,
        on_sync: Callable[[SyncReport], None] | None = None,
    ) -> None:
        workspace._check_writable()
        self.workspace = workspace
        self.root = workspace.root
        self.initial_sync = initial_sync
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.poll_seconds = poll_seconds
        self.force_polling = force_polling
        self.on_sync = on_sync
        self.stats = WatchStats()
        self._stop = threading.Event()
        self._worker: BackgroundWorker | None = None
        self._had_index = False
        self._skip = [workspace.index_dir, workspace.conversion_cache.directory]

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> Watcher:
        """Start following the files on a background worker (once); returns ``self``."""
        if self._worker is None:
            self._worker = BackgroundWorker(f"workspace-tools-watch {self.root}")
            self._worker.submit(self._run)
        return self

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop watching; waits up to ``timeout`` seconds for a running sync to finish."""
        self._stop.set()
        if self._worker is not None:
            self._worker.wait(timeout)
        self.stats.mode = "stopped"

    @property
    def running(self) -> bool:
        """The watch loop runs."""
        return self._worker is not None and self._worker.busy()

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Watcher:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    # -- the watch loop ----------------------------------------------------------------------------

    def _run(self) -> None:
        pending_full = self.initial_sync
        while not self._stop.is_set():
            if not self._root_ok():
                self._wait_for_root()
                pending_full = True
                continue
            if self.force_polling:
                self._poll()
                continue
            try:
                pending_full = self._watch_events(full=pending_full)
            except Exception as exc:
                self._warn(
                    f"watching {self.root} for file events failed ({type(exc).__name__}: {exc}); "
                    f"syncing by stat every {self.poll_seconds:g} s instead"
                )
                self._poll()

    def _watch_events(self, *, full: bool) -> bool:
        """Follow file events until the root goes away; True when the root must be walked."""
        import watchfiles

        identity = _identity(self.root)
        self.stats.mode = "events"
        outside = [f for _, f in self.workspace.mounts if not is_inside(self.root, f)]
        for changes in watchfiles.watch(
            self.root,
            *outside,  # the mount folders not under the root
            watch_filter=self._wanted,
            debounce=self.debounce_ms,
            step=self.step_ms,
            stop_event=self._stop,
            rust_timeout=_IDLE_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
            ignore_permission_denied=True,
        ):
            if self._stop.is_set():
                return False
            if _identity(self.root) != identity:  # deleted, moved or replaced
                self._warn(f"the watched root {self.root} was deleted or moved")
                return True
            if full:  # the first (empty) yield: the watch is up, nothing can be missed now
                self._sync(None)
                full = False
            if changes:
                try:
                    self._burst({path for _, path in changes})
                finally:  # counted once handled: whoever sees the count sees the outcome
                    self.stats.bursts += 1
        return False

    def _poll(self) -> None:
        """Stat-based syncing until stopped or the root goes away."""
        self.stats.mode = "polling"
        while not self._stop.is_set() and self._root_ok():
            self._sync(None)
            self._stop.wait(self.poll_seconds)

    def _wait_for_root(self) -> None:
        self.stats.mode = "waiting"
        self._warn(
            f"the watched root {self.root} is missing; checking every {self.poll_seconds:g} s "
            "until it comes back"
        )
        while not self._stop.is_set() and not self._root_ok():
            self._stop.wait(self.poll_seconds)

    def _root_ok(self) -> bool:
        if not self.root.is_dir():
            return False
        if self.workspace.index_dir.exists():
            self._had_index = True
        elif self._had_index:
            # The index lived inside the root and went with it: nothing to write into.
            self._warn(
                f"the index folder {self.workspace.index_dir} was deleted with the root; "
                "open the workspace again to rebuild it"
            )
            self._stop.wait(self.poll_seconds)
            return False
        return True

    # -- one burst -----------------------------------------------------------------------------

    def _wanted(self, _change: Any, path: str) -> bool:
        """The filter watchfiles applies: drop the index and conversion folders at the source."""
        return not any(_under(path, skip) for skip in self._skip)

    def _burst(self, paths: Iterable[str]) -> None:
        rels: set[str] = set()
        full = False
        for path in paths:
            rel = self.workspace.mounts.source_id(Path(path))
            if not rel:
                continue
            if rel.rsplit("/", 1)[-1] in _CONFIG_FILES:
                full = True
            rels.add(rel)
        if full or self.workspace.default_paths is not None or len(rels) > FULL_SYNC_PATHS:
            self._sync(None)
            return
        relevant = self._relevant(rels)
        if not relevant:
            self.stats.ignored += 1
            return
        self._sync(sorted(relevant))

    def _relevant(self, rels: set[str]) -> set[str]:
        """The paths a scan reaches, or that name an indexed file (or folder of them)."""
        rules: dict[Path, PathRules] = {}  # one per folder: the root's, each mount's
        indexed: set[str] | None = None
        out: set[str] = set()
        for rel in rels:
            folder, inner = self.workspace.mounts.route(rel)
            absolute = self.workspace.mounts.path(rel)
            if absolute.exists():
                if folder not in rules:
                    rules[folder] = PathRules(folder, self.workspace.scan_config)
                if rules[folder].admits(inner, is_dir=absolute.is_dir()):
                    out.add(rel)
                continue
            if indexed is None:
                indexed = _with_parents(self.workspace.source_ids())
            if rel in indexed:  # deleted or moved away: it leaves the index
                out.add(rel)
        return out

    def _sync(self, paths: list[str] | None) -> None:
        try:
            report = self.workspace.sync(paths, show_progress=False)
        except (WorkspaceError, OSError) as exc:
            self._warn(f"sync of {self.root} failed: {exc}")
            return
        except Exception as exc:
            logger.exception("sync of %s failed", self.root)
            self._warn(f"sync of {self.root} failed: {type(exc).__name__}: {exc}")
            return
        report.skipped = [s for s in report.skipped if not s.reason.startswith(_MISSING)]
        self.stats.commits += report.commits
        self.stats.last_report = report
        self.stats.last_sync = time.time()
        self.stats.syncs += 1  # last: whoever sees the count sees this sync's report
        if report.changed:
            logger.info("watch: %s", report.summary())
        if self.on_sync is not None:
            try:
                self.on_sync(report)
            except Exception:  # a listener's bug is logged, not fatal
                logger.exception("watch: the on_sync callback failed")

    def _warn(self, message: str) -> None:
        logger.warning("%s", message)
        self.stats.last_error = message
        self.stats.warnings = [*self.stats.warnings[-19:], message]


def _under(path: str, folder: Path) -> bool:
    text = os.fspath(folder)
    return path == text or path.startswith(text + os.sep)


def _identity(root: Path) -> tuple[int, int] | None:
    try:
        st = root.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _with_parents(ids: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for source_id in ids:
        out.add(source_id)
        parts = source_id.split("/")
        for depth in range(1, len(parts)):
            out.add("/".join(parts[:depth]))
    return out
