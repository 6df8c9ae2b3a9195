"""Which files changed since the last sync, from a stat walk (nothing unchanged is read).

:func:`pending_changes` walks what ``sync()`` walks (the one walker, the workspace's default
paths and scan rules) and compares each file's ``stat`` with the size and mtime the index
stored for it, as ``sync()`` does before it reads a file:

- an indexed file whose size or mtime differs is *changed* (not read: the sync reads it);
- an indexed file recorded inside the racy-timestamp window (mtime stored as 0, see
  ``_ingest._trusted_mtime``) with its size unchanged is read and hashed, the one case a stat
  cannot settle;
- an indexed file no longer found is *deleted*;
- a file found but not indexed is *new*, unless it is a file the index keeps out on purpose
  with the same size and mtime: one the last complete sync skipped (binary, unreadable, not
  convertible) or one ``remove()`` took out. Those are listed in ``unindexed.json`` in the index
  folder (:func:`record_skipped`, :func:`record_removed`); touching such a file makes it count
  again. One skipped inside the racy-timestamp window is listed with its content hash instead
  of its mtime, and read and hashed as an indexed one is.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.text.mounts import Mounts
from workspace_tools.core.workspace._host import WorkspaceHost
from workspace_tools.core.workspace._ingest import RACY_WINDOW_NS

__all__ = [
    "AUTO_SYNC_BYTES",
    "AUTO_SYNC_FILES",
    "UNINDEXED_FILE",
    "PendingChanges",
    "pending_changes",
    "record_removed",
    "record_skipped",
]

AUTO_SYNC_FILES: Final = 20
"""Most changed files (new, changed, deleted) a search syncs by itself before it answers."""
AUTO_SYNC_BYTES: Final = 1 << 20
"""Most bytes of new and changed files a search syncs by itself (1 MiB)."""
UNINDEXED_FILE: Final = "unindexed.json"
"""File in the index folder listing the files kept out of the index on purpose."""
_FORMAT: Final = 1


@dataclass(slots=True)
class PendingChanges:
    """Files on disk that differ from the index (ids relative to the root, sorted)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    bytes: int = 0
    """Total size of the new and changed files (what a sync would read)."""
    touched: list[str] = field(default_factory=list)
    """Files whose recorded mtime was too recent to trust but whose content is the same."""

    @property
    def ids(self) -> list[str]:
        """The new, changed and deleted files (what a ``sync(ids)`` brings up to date)."""
        return [*self.added, *self.changed, *self.deleted]

    @property
    def count(self) -> int:
        """Number of new, changed and deleted files."""
        return len(self.added) + len(self.changed) + len(self.deleted)

    def small(self, *, max_files: int = AUTO_SYNC_FILES, max_bytes: int = AUTO_SYNC_BYTES) -> bool:
        """True when at most ``max_files`` files and ``max_bytes`` bytes changed."""
        return self.count <= max_files and self.bytes <= max_bytes

    def summary(self, *, limit: int = 5) -> str:
        """``"2 new, 1 changed: a.md, b.md, c.md"`` (at most ``limit`` ids named)."""
        parts = [
            f"{len(ids)} {name}"
            for name, ids in (
                ("new", self.added),
                ("changed", self.changed),
                ("deleted", self.deleted),
            )
            if ids
        ]
        ids = self.ids
        named = ", ".join(ids[:limit]) + (
            f", ... ({len(ids) - limit} more)" if len(ids) > limit else ""
        )
        return f"{', '.join(parts)}: {named}" if ids else "none"


# -- the files kept out on purpose -----------------------------------------------------------


_Kept = tuple[int, int] | tuple[int, int, str]
"""``(mtime_ns, size)``, or ``(0, size, content hash)`` for a file recorded while racy."""


def _unindexed(index_dir: Path) -> dict[str, _Kept]:
    """``id -> (mtime_ns, size[, hash])`` of the files kept out of the index on purpose."""
    try:
        raw = json.loads((index_dir / UNINDEXED_FILE).read_text(encoding="utf-8"))
        files = raw["files"] if raw.get("format") == _FORMAT else {}
        return {
            str(k): (int(v[0]), int(v[1]), str(v[2])) if len(v) > 2 else (int(v[0]), int(v[1]))
            for k, v in files.items()
        }
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return {}


def _write_unindexed(index_dir: Path, files: Mapping[str, _Kept]) -> None:
    """Replace the list atomically; a folder that cannot be written only loses the list."""
    target = index_dir / UNINDEXED_FILE
    staging = target.with_name(f".{UNINDEXED_FILE}.{os.getpid()}")
    record = {"format": _FORMAT, "files": {k: list(v) for k, v in sorted(files.items())}}
    try:
        staging.write_text(json.dumps(record), encoding="utf-8")
        os.replace(staging, target)
    except OSError:
        staging.unlink(missing_ok=True)


def _stats(mounts: Mounts, ids: Iterable[str]) -> dict[str, tuple[int, int]]:
    """``(mtime_ns, size)`` of the ids found on disk."""
    out: dict[str, tuple[int, int]] = {}
    for rel in ids:
        try:
            stat = mounts.path(rel).stat()
        except (OSError, ValueError):
            continue
        out[rel] = (stat.st_mtime_ns, stat.st_size)
    return out


def record_skipped(workspace: WorkspaceHost, skipped: Iterable[str], *, complete: bool) -> None:
    """After a sync: the files it saw but did not index are kept out until they change.

    A ``complete`` sync (of the default paths) replaces the list: it re-added what ``remove()``
    took out, and saw every file.
    """
    if not workspace.index_dir.is_dir():
        return
    now = time.time_ns()
    found: dict[str, _Kept] = {}
    for rel, (mtime, size) in _stats(workspace.mounts, skipped).items():
        if now - mtime >= RACY_WINDOW_NS:
            found[rel] = (mtime, size)
        elif (digest := _digest(workspace, rel)) is not None:  # too recent: content decides
            found[rel] = (0, size, digest)
    if not complete:
        found = {**_unindexed(workspace.index_dir), **found}
    _write_unindexed(workspace.index_dir, found)


def record_removed(workspace: WorkspaceHost, removed: Iterable[str]) -> None:
    """After ``remove()``: its files still on disk are kept out until they change."""
    found = _stats(workspace.mounts, removed)
    if found and workspace.index_dir.is_dir():
        _write_unindexed(workspace.index_dir, {**_unindexed(workspace.index_dir), **found})


# -- the stat walk ---------------------------------------------------------------------------


def _digest(workspace: WorkspaceHost, rel: str) -> str | None:
    """The content hash of the file ``rel`` (read through the safe reader), if it reads."""
    try:
        data, _ = workspace.scan_config.read(*workspace.mounts.route(rel))
    except (OSError, InvalidInputError):
        return None
    return text_hash(data)


def _same_content(workspace: WorkspaceHost, rel: str, digest: str) -> bool:
    """Whether the file ``rel`` still hashes to ``digest``."""
    return _digest(workspace, rel) == digest


def pending_changes(workspace: WorkspaceHost) -> PendingChanges:
    """The files a ``sync()`` (of the default paths) would add, update or remove.

    One ``stat`` per file; only files recorded inside the racy-timestamp window are read.
    """
    found = workspace.mounts.scan(workspace.default_paths, config=workspace.scan_config)
    try:
        index_rel: str | None = workspace.index_dir.relative_to(workspace.root).as_posix()
    except ValueError:
        index_rel = None
    with workspace._lock:
        workspace._follower.refresh()
        sources = dict(workspace._sources.all())
    kept_out = _unindexed(workspace.index_dir)
    pending = PendingChanges()
    seen: set[str] = set()
    for rel, path in found.files.items():
        if index_rel and (rel == index_rel or rel.startswith(index_rel + "/")):
            continue
        seen.add(rel)
        try:
            stat = path.stat()
        except OSError:
            continue  # gone since the walk: a sync would skip it too
        now = (stat.st_mtime_ns, stat.st_size)
        record = sources.get(rel)
        if record is None or record.kind != "file":
            kept = kept_out.get(rel)
            if kept is not None and len(kept) > 2 and kept[1] == stat.st_size:
                if _same_content(workspace, rel, kept[2]):
                    pending.touched.append(rel)  # a sync records its mtime once trusted
                    continue
            elif kept == now:
                continue
            pending.added.append(rel)
            pending.bytes += stat.st_size
            continue
        if (record.mtime_ns, record.size) == now:
            continue
        racy = record.mtime_ns == 0 and record.size == stat.st_size
        if racy and _same_content(workspace, rel, record.content_hash):
            pending.touched.append(rel)
            continue
        pending.changed.append(rel)
        pending.bytes += stat.st_size
    pending.deleted = [
        sid
        for sid, record in sources.items()
        if record.kind == "file" and sid not in seen and found.in_scope(sid)
    ]
    for ids in (pending.added, pending.changed, pending.deleted):
        ids.sort()
    return pending
