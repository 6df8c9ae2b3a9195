"""The batched sync of :class:`Workspace`: stage files, commit every bounded batch."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from workspace_tools.core.store.database import SourceRecord
from workspace_tools.core.text.scan import scan
from workspace_tools.core.types import Chunk, SyncReport
from workspace_tools.core.workspace._freshness import record_skipped
from workspace_tools.core.workspace._ingest import stage_file
from workspace_tools.core.workspace._progress import SyncProgress, SyncTracker
from workspace_tools.core.workspace._writes import WritePath

__all__ = ["SyncPath"]


class SyncPath(WritePath):
    """Reconcile files with the index, one bounded, committed batch at a time."""

    _tracker: SyncTracker
    batch_files: int
    batch_chunks: int
    batch_seconds: float

    _probe: SourceRecord | None = None
    """The last record of the batch being committed (see :meth:`_settle_progress`)."""

    def _settle_progress(self) -> None:
        """After an interrupt: count the batch in flight if its commit landed.

        A signal that arrives during the ``COMMIT`` itself (its fsync) is raised right after it,
        before the progress is updated; the database says whether the batch is in.
        """
        probe, self._probe = self._probe, None
        if probe is None:
            return
        try:
            row = self._db.source(probe.id)
        except Exception:  # only a better count is at stake
            return
        if row is None:
            return
        if (row.content_hash, row.mtime_ns) == (probe.content_hash, probe.mtime_ns):
            self._tracker.committed()

    @property
    def sync_progress(self) -> SyncProgress:
        """How far the running (or last) sync of this object got; safe from any thread."""
        return self._tracker.snapshot()

    def _sync_files(
        self,
        files: list[tuple[str, Path]],
        in_scope: Callable[[str], bool],
        report: SyncReport,
        *,
        show_progress: bool | None,
    ) -> None:
        """Stage and commit ``files`` in bounded batches; removals go with the last one."""
        with self._lock:
            sources = dict(self._sources.all())
        kept: set[str] = set()
        staged: list[tuple[SourceRecord, list[Chunk]]] = []
        touched: list[SourceRecord] = []
        chunks = 0
        batch_started = time.monotonic()
        for done, (rel, path) in enumerate(
            self._progress(files, "Reading", show=show_progress), start=1
        ):
            outcome = stage_file(
                rel,
                path,
                sources.get(rel),
                report,
                conversions=self._conversions,
                chunking=self.chunking,
                read_only=self.read_only,
                root=self.root,
                scan_config=self.scan_config,
            )
            if outcome is not None:
                kept.add(rel)
                if outcome is True:
                    touched.append(sources[rel])
                elif outcome is not False:
                    staged.append(outcome)
                    chunks += len(outcome[1])
            self._tracker.update(done=done)
            full = len(staged) + len(touched) >= self.batch_files or chunks >= self.batch_chunks
            late = time.monotonic() - batch_started >= self.batch_seconds
            if (staged or touched) and (full or late) and done < len(files):
                self._tracker.stage(done)
                self._probe = staged[-1][0] if staged else touched[-1]
                self._apply(staged, [], report, show_progress=show_progress, touched=touched)
                self._probe = None
                staged, touched, chunks = [], [], 0
                batch_started = time.monotonic()
        removed = [
            sid
            for sid, rec in sources.items()
            if rec.kind == "file" and sid not in kept and in_scope(sid)
        ]
        report.removed = removed
        self._tracker.stage(len(files))
        self._apply(staged, removed, report, show_progress=show_progress, touched=touched)
        self._tracker.committed(wrote=False)  # when the last batch had nothing to write

    def sync(
        self, paths: Sequence[str] | str | None = None, *, show_progress: bool | None = None
    ) -> SyncReport:
        """Bring the index in line with files under the root.

        New and changed files are converted, chunked and embedded (vectors come from the cache
        first); files deleted from disk leave both indexes; unchanged files cost one ``stat``.

        Args:
            paths: Files, directories and glob patterns relative to the root (default: the root).
            show_progress: Show a progress bar (default: the workspace setting).

        Changes are committed in bounded batches (``batch_files`` changed files,
        ``batch_chunks`` new chunks or ``batch_seconds`` of reading, whichever comes first;
        removals go with the last batch), so an interrupt, a kill or a crash keeps every
        finished batch and the next sync continues without embedding them again.
        :attr:`sync_progress` says how far a running sync got, from any thread.

        Returns:
            What was added, updated, removed and skipped (with reasons).
        """
        self._check_writable()
        started = time.perf_counter()
        if isinstance(paths, str):
            paths = [paths]
        whole_scope = paths is None
        if paths is None:
            paths = self.default_paths
        with self._write_lock:
            self._refresh()
            found = scan(self.root, paths, config=self.scan_config)
            index_rel = self._index_rel()
            files = [
                (rel, path)
                for rel, path in found.files.items()
                if not (index_rel and (rel == index_rel or rel.startswith(index_rel + "/")))
            ]
            report = SyncReport(skipped=list(found.skipped))
            self._tracker.start(len(files), files=[rel for rel, _ in files])
            try:
                self._sync_files(files, found.in_scope, report, show_progress=show_progress)
            except BaseException as exc:  # Ctrl-C, SIGTERM, a crash: finished batches stay
                self._settle_progress()
                self._tracker.finish(error=f"{type(exc).__name__}: {exc}".rstrip(": "))
                raise
            self._tracker.finish()
            # the files seen but kept out, for the stat walk of _freshness.py
            record_skipped(self, [item.path for item in report.skipped], complete=whole_scope)
        report.seconds = time.perf_counter() - started
        return report

    def _index_rel(self) -> str | None:
        try:
            return self.index_dir.relative_to(self.root).as_posix()
        except ValueError:
            return None
